package agentapi

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// putArtifact takes the build's artifact in one streamed PUT (a service without presigned parts,
// such as kiln serve with its file store): the body goes straight into the artifact store under
// the build's one key, its size and MD5 measured on the way; nothing is held in memory. The host
// then completes the build with that size and MD5 as after a multipart upload; the completion
// checks them against the stored file again.
func (s *Server) putArtifact(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	if s.Artifacts == nil || s.Uploads != nil {
		return kiln.Errorf(kiln.EServiceUnavailable, "this service takes artifacts in presigned parts only")
	}
	key, err := s.queryKey(r, b) // the artifact, or with ?object=manifest or cache that object
	if err != nil {
		return err
	}
	cache := isCache(r)
	var why string
	if cache {
		var room int64
		if room, why, err = s.cacheRoom(r.Context(), b, true); err != nil {
			return err
		}
		if why != "" && r.ContentLength > room {
			return cacheTooLarge(why) // said up front: nothing is written
		}
		if why != "" {
			r.Body = http.MaxBytesReader(w, r.Body, room)
		}
	}
	// The artifact may take longer than the server's read timeout for a whole request.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	sum := md5.New()
	var size int64
	err = s.Artifacts.Put(r.Context(), key, func(w io.Writer) error {
		n, err := io.Copy(io.MultiWriter(w, sum), r.Body)
		size = n
		return err
	})
	var tooLarge *http.MaxBytesError
	switch {
	case err != nil && cache && errors.As(err, &tooLarge):
		s.dropUpload(r.Context(), b, key, "larger than "+why)
		return cacheTooLarge(why)
	case errors.As(err, &tooLarge):
		return kiln.Errorf(kiln.EPayloadTooLarge, "the artifact is larger than the service's limit")
	case err != nil && r.Context().Err() != nil:
		return kiln.Errorf(kiln.EBadRequest, "the upload was cut off")
	case err != nil:
		return err
	case cache:
		if err := s.stillRunning(r.Context(), b, key); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, StreamedArtifact{Size: size, MD5: hex.EncodeToString(sum.Sum(nil))})
	return nil
}

// streamed checks and removes the artifacts of streamed uploads.
type streamed struct{ artifacts.Store }

// ChecksumMD5 reads the stored file: the service measures what it stored.
func (s streamed) ChecksumMD5(ctx context.Context, key string) (int64, string, error) {
	return artifacts.ReadMD5(ctx, s.Store, key)
}

func (s streamed) Stat(ctx context.Context, key string) (int64, error) {
	obj, err := s.Open(ctx, key)
	if err != nil {
		return 0, err
	}
	defer obj.Close()
	return obj.Size(), nil
}
