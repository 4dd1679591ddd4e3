package httpapi

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/downloads"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// getDownload answers GET /builds/:id/download: a signed URL of the build's artifact, valid 24 h.
func (s *Server) getDownload(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	b, err := s.history.GetBuild(r.Context(), p.Organization.ID, id)
	if err != nil {
		return err
	}
	a, err := s.history.GetArtifact(r.Context(), p.Organization.ID, id)
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.Errorf(kiln.ENotFound, "this build has no artifact: it did not complete, or its artifact was deleted by retention")
	}
	if err != nil {
		return err
	}
	expires := s.now().Add(downloads.Lifetime).Truncate(time.Second)
	url := s.downloads.URL(p.Organization.ID, id, expires)
	name, err := s.artifactFileName(r.Context(), b)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.DownloadLink{URL: url, ExpiresAt: timestamp(expires), SizeBytes: a.SizeBytes, ChecksumMD5: a.ChecksumMD5, FileName: name})
	return nil
}

// serveDownload answers GET /downloads/:org/:build.tar.gz?expires&signature, the signed URL:
// no bearer token; a tampered or expired URL is 403; Range requests are served, or, for an
// artifact store that presigns (S3), 302 to the storage.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	if err := s.download(w, r); err != nil {
		writeError(w, r, err)
	}
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) error {
	orgID, file := r.PathValue("org"), r.PathValue("file")
	buildID, ok := cutSuffix(file, ".tar.gz")
	forbidden := kiln.Errorf(eForbidden, "this download link is not valid or has expired; ask for a new one with GET /builds/{id}/download")
	if !ok || !kiln.ValidID(orgID) || !kiln.ValidID(buildID) {
		return forbidden
	}
	q := r.URL.Query()
	if !s.downloads.Valid(orgID, buildID, q.Get("expires"), q.Get("signature"), s.now()) {
		return forbidden
	}
	a, err := s.history.GetArtifact(r.Context(), orgID, buildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.Errorf(kiln.ENotFound, "the artifact was deleted")
	}
	if err != nil {
		return err
	}
	b, err := s.history.GetBuild(r.Context(), orgID, buildID)
	if err != nil {
		return err
	}
	name, err := s.artifactFileName(r.Context(), b)
	if err != nil {
		return err
	}
	if p, ok := s.artifacts.(artifacts.Presigner); ok {
		return s.redirectDownload(w, r, p, a.Key, name, q.Get("expires"))
	}
	obj, err := s.artifacts.Open(r.Context(), a.Key)
	if err != nil {
		return err
	}
	defer obj.Close()
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("ETag", `"`+a.ChecksumMD5+`"`)
	w.Header().Set("Cache-Control", "private, max-age=0")
	var content io.ReadSeeker = obj
	if f, ok := obj.(interface{ OSFile() *os.File }); ok {
		content = f.OSFile() // a plain file lets the kernel send it (sendfile)
	}
	http.ServeContent(w, r, "", obj.ModTime(), content)
	return nil
}

// redirectDownload answers a valid signed URL of an artifact kept where clients can fetch it
// themselves (S3) with 302 to a presigned GET of it: no artifact byte passes through kiln. The
// presigned URL works for up to artifacts.MaxPresignLifetime, and never past the signed URL's own
// expiry; it names the file name (see artifactFileName). Clients that follow redirects resend Range and the
// conditional headers, which the storage answers.
func (s *Server) redirectDownload(w http.ResponseWriter, r *http.Request, p artifacts.Presigner, key, name, expires string) error {
	exp, err := strconv.ParseInt(expires, 10, 64) // checked by Valid
	if err != nil {
		return err
	}
	lifetime := min(artifacts.MaxPresignLifetime, time.Unix(exp, 0).Sub(s.now()))
	url, err := p.PresignGet(r.Context(), key, name, max(lifetime, time.Second))
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.Errorf(kiln.ENotFound, "the artifact was deleted")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // the target expires within minutes
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Location", url)
	w.WriteHeader(http.StatusFound)
	return nil
}

// artifactFileName is the name b's artifact is saved under (kiln.Build.ArtifactFileName), with
// the name of its project; a deleted project's builds fall back to the build id.
func (s *Server) artifactFileName(ctx context.Context, b *kiln.Build) (string, error) {
	if b.Number <= 0 {
		return b.ArtifactFileName(""), nil
	}
	p, err := s.projects.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return b.ArtifactFileName(""), nil
	}
	if err != nil {
		return "", err
	}
	return b.ArtifactFileName(p.Name), nil
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return "", false
}
