package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/auth"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// DownloadURLLifetime is how long a signed artifact URL works.
const DownloadURLLifetime = 24 * time.Hour

// downloadSignature signs (organization, build, expiry) with the download key, which lives with
// the service's state, so a URL stays valid across restarts.
func (s *Server) downloadSignature(orgID, buildID string, expires int64) string {
	m := hmac.New(sha256.New, s.downloadKey)
	m.Write([]byte("download\x00" + orgID + "\x00" + buildID + "\x00" + strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

type downloadBody struct {
	URL         string `json:"url"`
	ExpiresAt   string `json:"expiresAt"`
	SizeBytes   int64  `json:"sizeBytes"`
	ChecksumMD5 string `json:"checksumMd5"`
}

// getDownload answers GET /builds/:id/download: a signed URL of the build's artifact, valid 24 h.
func (s *Server) getDownload(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	id := r.PathValue("id")
	if !kiln.ValidID(id) {
		return kiln.NotFound("build")
	}
	if _, err := s.store.GetBuild(r.Context(), p.Organization.ID, id); err != nil {
		return err
	}
	a, err := s.store.GetArtifact(r.Context(), p.Organization.ID, id)
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.Errorf(kiln.ENotFound, "this build has no artifact: it did not complete, or its artifact was deleted by retention")
	}
	if err != nil {
		return err
	}
	expires := s.now().Add(DownloadURLLifetime).Truncate(time.Second)
	sig := s.downloadSignature(p.Organization.ID, id, expires.Unix())
	url := s.publicURL + "/downloads/" + p.Organization.ID + "/" + id + ".tar.gz?expires=" +
		strconv.FormatInt(expires.Unix(), 10) + "&signature=" + sig
	writeJSON(w, http.StatusOK, downloadBody{URL: url, ExpiresAt: timestamp(expires), SizeBytes: a.SizeBytes, ChecksumMD5: a.ChecksumMD5})
	return nil
}

// serveDownload answers GET /downloads/:org/:build.tar.gz?expires&signature, the signed URL:
// no bearer token; a tampered or expired URL is 403; Range requests are served.
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
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("signature")), []byte(s.downloadSignature(orgID, buildID, expires))) {
		return forbidden
	}
	if s.now().Unix() > expires {
		return forbidden
	}
	a, err := s.store.GetArtifact(r.Context(), orgID, buildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return kiln.Errorf(kiln.ENotFound, "the artifact was deleted")
	}
	if err != nil {
		return err
	}
	obj, err := s.artifacts.Open(r.Context(), a.Key)
	if err != nil {
		return err
	}
	defer obj.Close()
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+buildID+`.tar.gz"`)
	w.Header().Set("ETag", `"`+a.ChecksumMD5+`"`)
	w.Header().Set("Cache-Control", "private, max-age=0")
	var content io.ReadSeeker = obj
	if f, ok := obj.(interface{ OSFile() *os.File }); ok {
		content = f.OSFile() // a plain file lets the kernel send it (sendfile)
	}
	http.ServeContent(w, r, "", obj.ModTime(), content)
	return nil
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return "", false
}
