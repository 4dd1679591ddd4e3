package agentapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
)

// The artifact upload: the host streams its artifact in parts to presigned URLs of the one key
// of its build; the service completes the upload with the parts' ETags, then checks the object
// when the host completes the build. The upload id comes from the host, but a presigned URL is
// made for the build's key, so an id of another upload cannot reach another object.

func (s *Server) uploads() (Uploads, error) {
	if s.Uploads == nil {
		return nil, kiln.Errorf(kiln.EServiceUnavailable, "this service has no artifact storage for build hosts")
	}
	return s.Uploads, nil
}

// objects is where the host's artifact is checked and discarded: the presigned uploads' store,
// else the store of streamed uploads.
func (s *Server) objects() (objects, error) {
	if s.Uploads != nil {
		return s.Uploads, nil
	}
	if s.Artifacts != nil {
		return streamed{s.Artifacts}, nil
	}
	return nil, kiln.Errorf(kiln.EServiceUnavailable, "this service has no artifact storage for build hosts")
}

// objects checks and removes stored artifacts.
type objects interface {
	Stat(ctx context.Context, key string) (int64, error)
	ChecksumMD5(ctx context.Context, key string) (size int64, sum string, err error)
	Delete(ctx context.Context, key string) error
}

func (s *Server) createUpload(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	var in CreateUploadRequest
	if err := decode(r, &in); err != nil {
		return err // the host names no key: the service chooses it
	}
	key, err := s.uploadKey(b, in.Object)
	if err != nil {
		return err
	}
	if s.Uploads == nil && s.Artifacts != nil {
		writeJSON(w, http.StatusCreated, Upload{Key: key, Stream: true})
		return nil
	}
	up, err := s.uploads()
	if err != nil {
		return err
	}
	id, err := up.CreateUpload(r.Context(), key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, Upload{UploadID: id, Key: key, PartSize: cmp.Or(s.PartSize, DefaultPartSize)})
	return nil
}

// uploadKey is the key of the build's object: its artifact, the artifact's size manifest, or its
// build cache (under the key the service derives from the build).
func (s *Server) uploadKey(b *kiln.Build, object string) (string, error) {
	switch object {
	case "", UploadArtifact:
		return artifactKey(b), nil
	case UploadManifest:
		return manifest.Key(artifactKey(b)), nil
	case UploadCache:
		key, err := s.cacheKey(b)
		if err != nil {
			return "", err
		}
		return buildcache.ObjectKey(key, b.ID)
	}
	return "", invalid("object", "artifact, manifest or cache")
}

// queryKey is the key of the object an upload call names in its query ("object").
func (s *Server) queryKey(r *http.Request, b *kiln.Build) (string, error) {
	return s.uploadKey(b, r.URL.Query().Get("object"))
}

// uploadID reads the upload id of the path: S3's are URL-safe, opaque and short.
func uploadID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if len(id) > 1024 || !uploadIDPattern.MatchString(id) {
		return "", kiln.Errorf(kiln.ENotFound, "no such upload")
	}
	return id, nil
}

// upload reads what every call on a multipart upload names: the upload id of the path and the
// object (?object=) of a build that still runs, on a service that takes presigned parts.
func (s *Server) upload(r *http.Request, b *kiln.Build) (up Uploads, key, id string, err error) {
	if err := running(b); err != nil {
		return nil, "", "", err
	}
	if up, err = s.uploads(); err != nil {
		return nil, "", "", err
	}
	if id, err = uploadID(r); err != nil {
		return nil, "", "", err
	}
	if key, err = s.queryKey(r, b); err != nil {
		return nil, "", "", err
	}
	return up, key, id, nil
}

var uploadIDPattern = regexp.MustCompile(`^[A-Za-z0-9._~+=-]+$`)

func (s *Server) presignPart(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	up, key, id, err := s.upload(r, b)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 32)
	if err != nil || n < 1 || n > 10_000 {
		return invalid("n", "part numbers are 1 to 10000")
	}
	if isCache(r) {
		room, why, err := s.cacheRoom(r.Context(), b, false)
		if err != nil {
			return err
		}
		if why != "" && (n-1)*cmp.Or(s.PartSize, DefaultPartSize) >= room {
			if err := up.AbortUpload(r.Context(), key, id); err != nil {
				s.log().WarnContext(r.Context(), "abort a build cache upload past its room", slog.String("build_id", b.ID), slog.String("error", err.Error()))
			}
			return cacheTooLarge(why)
		}
	}
	url, err := up.PresignPart(r.Context(), key, id, int32(n), PartURLLifetime)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, PartURL{URL: url})
	return nil
}

func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	up, key, id, err := s.upload(r, b)
	if err != nil {
		return err
	}
	var in CompleteUploadRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if len(in.Parts) == 0 || len(in.Parts) > 10_000 {
		return invalid("parts", "1 to 10000 parts")
	}
	for i, p := range in.Parts {
		if p.Number != int32(i+1) || p.ETag == "" || len(p.ETag) > 256 {
			return invalid("parts", "parts are numbered 1, 2, 3 ... in order, each with the ETag its PUT answered")
		}
	}
	if err := up.CompleteUpload(r.Context(), key, id, in.Parts); err != nil {
		// S3's refusal of a wrong ETag or part is the host's mistake; log the cause.
		s.log().WarnContext(r.Context(), "complete an artifact upload", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		return kiln.Errorf(kiln.EValidation, "the upload could not be completed with these parts")
	}
	if isCache(r) {
		if err := s.keepCompletedCache(r.Context(), b, up, key); err != nil {
			return err
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) abortUpload(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	up, key, id, err := s.upload(r, b)
	if err != nil {
		return err
	}
	if err := up.AbortUpload(r.Context(), key, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var md5Pattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// complete checks the uploaded artifact (it exists, with the size and MD5 the host reports, as the
// store measures them) and
// completes the build with it. A repeat after it succeeded answers the same; a build that ended
// otherwise is invalid_state and its uploaded artifact is removed.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	up, err := s.objects()
	if err != nil {
		return err
	}
	var in CompleteRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	switch {
	case in.Size <= 0:
		return invalid("size", "the artifact's size in bytes")
	case !md5Pattern.MatchString(in.MD5):
		return invalid("md5", "the artifact's MD5 in lower-case hex")
	}
	key := artifactKey(b)
	if b.Status.Terminal() && b.Status != kiln.StatusComplete {
		s.discard(r, b, key)
		return running(b)
	}
	size, err := up.Stat(r.Context(), key)
	if kiln.IsCode(err, kiln.ENotFound) {
		return invalid("size", "no artifact was uploaded for the build")
	} else if err != nil {
		return err
	}
	if size != in.Size {
		return invalid("size", "the uploaded artifact has "+strconv.FormatInt(size, 10)+" bytes")
	}
	if s.ArtifactMax > 0 && size > s.ArtifactMax {
		s.discard(r, b, key)
		return invalid("size", "the artifact is larger than the service's limit")
	}
	// The host's MD5 is checked against the stored object, never taken on its word.
	size, sum, err := up.ChecksumMD5(r.Context(), key)
	if err != nil {
		return fmt.Errorf("check the uploaded artifact of build %s: %w", b.ID, err)
	}
	if size != in.Size {
		return invalid("size", "the uploaded artifact has "+strconv.FormatInt(size, 10)+" bytes")
	}
	if sum != in.MD5 {
		s.log().WarnContext(r.Context(), "a host reported an MD5 its uploaded artifact does not have", slog.String("build_id", b.ID),
			slog.String("org_id", b.OrganizationID), slog.String("reported", in.MD5), slog.String("stored", sum))
		return invalid("md5", "the uploaded artifact's MD5 is "+sum+", not the one reported")
	}
	a := &kiln.Artifact{
		BuildID: b.ID, OrganizationID: b.OrganizationID, ProjectID: b.ProjectID, BuildSettingID: b.BuildSettingID,
		Platform: b.Platform, BuildType: b.BuildType, UEVersion: b.UEVersion, Branch: b.Branch, Commit: b.Commit,
		Key: key, SizeBytes: size, ChecksumMD5: sum, CreatedAt: s.now(),
	}
	done, err := s.Lifecycle.Complete(r.Context(), a)
	if kiln.IsCode(err, kiln.EInvalidState) {
		s.discard(r, b, key) // it ended otherwise meanwhile: that stands, and its artifact goes
		return err
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BuildStatus{Status: string(done.Status)})
	return nil
}

// discard removes the artifact of a build that will not complete, and its manifest.
func (s *Server) discard(r *http.Request, b *kiln.Build, key string) {
	up, err := s.objects()
	if err != nil {
		return
	}
	for _, k := range []string{manifest.Key(key), key} {
		if err := up.Delete(r.Context(), k); err != nil && !errors.Is(err, artifacts.ErrInvalidKey) {
			s.log().WarnContext(r.Context(), "discard the artifact of a build that ended otherwise",
				slog.String("build_id", b.ID), slog.String("key", k), slog.String("error", err.Error()))
		}
	}
}
