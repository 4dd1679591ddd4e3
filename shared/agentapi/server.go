package agentapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
)

// Store is what the host API reads.
type Store interface {
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	GetOrganization(ctx context.Context, id string) (*kiln.Organization, error)
}

// Lifecycle is what the host API changes of a build (builds.Lifecycle).
type Lifecycle interface {
	// StartOnHost starts a pending build reserved for host: its host runs it from now on.
	StartOnHost(ctx context.Context, orgID, id, host, runs string) (*kiln.Build, error)
	Heartbeat(ctx context.Context, orgID, id, host string) error
	Progress(ctx context.Context, orgID, id string, edit func(b *kiln.Build)) (*kiln.Build, error)
	Complete(ctx context.Context, a *kiln.Artifact) (*kiln.Build, error)
	Fail(ctx context.Context, orgID, id, reason string) (*kiln.Build, error)
}

// Uploads receives artifacts that hosts send in parts to presigned URLs (s3artifacts.Store).
type Uploads interface {
	CreateUpload(ctx context.Context, key string) (uploadID string, err error)
	PresignPart(ctx context.Context, key, uploadID string, number int32, lifetime time.Duration) (string, error)
	CompleteUpload(ctx context.Context, key, uploadID string, parts []artifacts.UploadedPart) error
	AbortUpload(ctx context.Context, key, uploadID string) error
	// Stat is the stored artifact's size; kiln.NotFound when there is none.
	Stat(ctx context.Context, key string) (int64, error)
	// ChecksumMD5 is the stored artifact's size and MD5 (lower-case hex) as the store has them
	// (S3's own, or read from the object); kiln.NotFound when there is none.
	ChecksumMD5(ctx context.Context, key string) (size int64, sum string, err error)
	Delete(ctx context.Context, key string) error
}

// GitHub is what the host API asks of the GitHub App: where a repository clones from and a
// token of the build's own to clone it with (github.Client).
type GitHub interface {
	CloneURL(ctx context.Context, installationID int64, fullName string) (string, error)
	HostToken(ctx context.Context, installationID int64, fullName string) (token string, expires time.Time, err error)
}

// TaskHeartbeats passes a host's heartbeat on to the workflow that waits for the host: Step
// Functions' SendTaskHeartbeat with the waiting state's task token (in the AWS deployment, the
// AWS SDK's sfn client).
type TaskHeartbeats interface {
	SendTaskHeartbeat(ctx context.Context, taskToken string) error
}

// Server is the host API: an http.Handler for the paths under PathPrefix.
type Server struct {
	Store     Store
	Lifecycle Lifecycle
	Logs      builds.LogWriter
	Uploads   Uploads // nil: no presigned parts; Artifacts takes streamed uploads, if set
	// Artifacts takes a host's artifact in one streamed PUT when the service has no presigned
	// parts (kiln serve's file store); nil with Uploads nil: uploads answer service_unavailable.
	Artifacts artifacts.Store
	GitHub    GitHub // nil when no GitHub App is configured
	// TaskHeartbeats gets the task token of every heartbeat that carries one; nil: none (kiln
	// serve, and deployments without Step Functions).
	TaskHeartbeats TaskHeartbeats
	// Caches are the build caches hosts restore and save (GET /host/v1/cache, the upload of the
	// object "cache"); nil: none, and hosts build without one. CacheMaxPerOrg caps each
	// organization's caches after a save (oldest removed, never the one just saved; 0: no cap).
	Caches         *buildcache.Cache
	CacheMaxPerOrg int64
	// DiskRoom is how many bytes the volume the Artifacts store writes to takes before its free
	// space falls below the service's reserve (kiln serve's KILN_DISK_RESERVE): a cache upload is
	// never larger. Nil: no such volume (S3), only CacheMaxPerOrg bounds it.
	DiskRoom func(ctx context.Context) (int64, error)
	// OpenSealed opens the organizations' sealed Perforce tickets (keyring.Sealer.Open).
	OpenSealed perforce.OpenFunc
	// RenewPerforce, when set, logs in with an organization's saved Perforce password for a fresh
	// ticket before a host is given one (nil: hosts get the saved ticket as it is).
	RenewPerforce *perforce.Connector
	// TimeLimit is the service's build time limit (a setting may lower it; 0: none), MaxLogLines
	// the most lines a build's log keeps (0: builds' default), ArtifactMax the largest artifact
	// (0: no limit).
	TimeLimit   time.Duration
	MaxLogLines int
	ArtifactMax int64
	// PartSize is the size of the parts hosts upload (0: DefaultPartSize).
	PartSize int64
	Logger   *slog.Logger
	Now      func() time.Time
}

// DefaultPartSize is the part size hosts upload in unless Server.PartSize says otherwise.
const DefaultPartSize = 16 << 20

// PartURLLifetime is how long a presigned part URL works: a part is sent right after its URL
// is asked for.
const PartURLLifetime = 15 * time.Minute

// Body limits; a log batch carries up to MaxLogBatch lines of up to MaxLogMessage bytes each
// (the longest line every log store keeps: hosts cut longer ones as the stores do).
const (
	maxBody       = 1 << 20
	maxLogBody    = 8 << 20
	MaxLogBatch   = 1000
	MaxLogMessage = buildlog.MaxLineBytes
)

// hostHandler is an endpoint, called with the build its credential names, already checked.
type hostHandler func(w http.ResponseWriter, r *http.Request, b *kiln.Build) error

// Handler returns the host API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	routes := map[string]hostHandler{
		"POST /host/v1/start":                           s.start,
		"POST /host/v1/heartbeat":                       s.heartbeat,
		"POST /host/v1/progress":                        s.progress,
		"POST /host/v1/logs":                            s.appendLogs,
		"GET /host/v1/logs/last":                        s.lastLog,
		"POST /host/v1/artifact/uploads":                s.createUpload,
		"POST /host/v1/artifact/uploads/{id}/parts/{n}": s.presignPart,
		"POST /host/v1/artifact/uploads/{id}/complete":  s.completeUpload,
		"DELETE /host/v1/artifact/uploads/{id}":         s.abortUpload,
		"PUT /host/v1/artifact":                         s.putArtifact,
		"GET /host/v1/cache":                            s.cacheLatest,
		"GET /host/v1/cache/{build}":                    s.cacheObject,
		"POST /host/v1/cache/saved":                     s.cacheSaved,
		"POST /host/v1/complete":                        s.complete,
		"POST /host/v1/fail":                            s.fail,
	}
	for pattern, h := range routes {
		mux.Handle(pattern, s.authenticated(h))
	}
	mux.Handle(PathPrefix, s.authenticated(func(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
		return kiln.Errorf(kiln.ENotFound, "no such host API endpoint: %s %s", r.Method, r.URL.Path)
	}))
	return mux
}

// authenticated checks the bearer credential against the build it names; any doubt is 401.
func (s *Server) authenticated(h hostHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := kiln.NewRequestID()
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(withRequestID(r.Context(), id))
		b, err := s.authenticate(r)
		if err == nil {
			limit := int64(maxBody)
			switch {
			case strings.HasPrefix(r.URL.Path, PathPrefix+"logs"):
				limit = maxLogBody
			case r.URL.Path == PathPrefix+"artifact" && isCache(r):
				limit = 0 // a build cache, streamed: putArtifact bounds it by its room (cachecap.go)
			case r.URL.Path == PathPrefix+"artifact":
				limit = s.ArtifactMax // the artifact itself, streamed (0: no limit)
			}
			if limit > 0 {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
			err = h(w, r, b)
		}
		if err != nil {
			s.writeError(w, r, b, err)
		}
	})
}

func (s *Server) authenticate(r *http.Request) (*kiln.Build, error) {
	refused := kiln.Errorf(kiln.EInvalidToken, "a build host credential is required: Authorization: Bearer <credential>")
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return nil, refused
	}
	orgID, buildID, err := hostcred.Parse(cred)
	if err != nil {
		return nil, refused
	}
	b, err := s.Store.GetBuild(r.Context(), orgID, buildID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, refused
	}
	if err != nil {
		return nil, err
	}
	if !hostcred.Matches(cred, b.HostCredentialHash) {
		return nil, refused
	}
	return b, nil
}

// running refuses the calls of a host whose build ended: it should stop.
func running(b *kiln.Build) error {
	if b.Status != kiln.StatusRunning {
		return kiln.Errorf(kiln.EInvalidState, "the build is %s: its host has nothing more to do", b.Status)
	}
	return nil
}

// artifactKey is the one key a build's artifact is stored under: the host never chooses it.
func artifactKey(b *kiln.Build) string { return b.OrganizationID + "/" + b.ID + ".tar.gz" }

func (s *Server) now() time.Time { return kiln.Now(s.Now) }

func (s *Server) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
