package sfn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// HostCredentials keeps values by name where CodeBuild reads them at a build's start (SSM
// Parameter Store SecureStrings in AWS, package hostcred/ssmparam): the claim puts a CodeBuild
// host's credential there and RunOnCodeBuild passes CodeBuild only its name, so the credential
// is never in an execution's input, output or history.
type HostCredentials interface {
	// Put stores value under name, replacing what is there (a repeated claim).
	Put(ctx context.Context, name, value string) error
	// Delete removes name; a name that does not exist is not an error.
	Delete(ctx context.Context, name string) error
}

// HostCredentialStore is where the claim keeps CodeBuild hosts' credentials: one parameter
// per build, <Path>/<build id>/<key>, deleted when the build's execution ends (the Finish and
// HostEnded tasks, and the ended function for an execution that ended without them).
//
// Every host's CodeBuild role may read the whole path (CodeBuild reads the parameter with it,
// before any id of the CodeBuild build could name it), and a host runs a tenant's code with
// that role's credentials. So the name is a capability: its key is 128 bits derived from the
// credential's hash, which only the service holds (on the build), and the role may not list
// parameters (ssm:DescribeParameters, GetParametersByPath), so another build's host cannot name
// it.
type HostCredentialStore struct {
	Params HostCredentials
	// Path is the parameters' path (KILN_HOST_CREDENTIAL_PATH, "/<stack>/hosts"): the task and
	// ended functions may write and delete under it, the hosts' CodeBuild role read it.
	Path string
}

// credentialPathRe is what a parameter path may be: Parameter Store's name characters, a
// leading slash, no trailing one.
var credentialPathRe = regexp.MustCompile(`^(/[A-Za-z0-9_.-]+)+$`)

// CheckCredentialPath checks a parameter path for host credentials.
func CheckCredentialPath(path string) error {
	if !credentialPathRe.MatchString(path) || len(path) > 512 {
		return fmt.Errorf("%q is not a parameter path such as /kiln/hosts (a leading slash, letters, digits, _.- and slashes, no trailing slash)", path)
	}
	return nil
}

// Name is the parameter of build id's host credential whose hash is hash (hostcred.Hash).
func (s HostCredentialStore) Name(buildID, hash string) string {
	key := sha256.Sum256([]byte("kiln host credential parameter\x00" + hash))
	return s.Path + "/" + buildID + "/" + hex.EncodeToString(key[:16])
}

// put stores build id's credential and returns its parameter's name.
func (s HostCredentialStore) put(ctx context.Context, buildID, credential string) (string, error) {
	if s.Params == nil || s.Path == "" {
		return "", errors.New("no parameter store for host credentials is configured (KILN_HOST_CREDENTIAL_PATH): a CodeBuild host cannot get its credential")
	}
	name := s.Name(buildID, hostcred.Hash(credential))
	if err := s.Params.Put(ctx, name, credential); err != nil {
		return "", fmt.Errorf("store the host credential as parameter %s: %w", name, err)
	}
	return name, nil
}

// remove deletes the credential parameter of a build claimed for a CodeBuild host, if any. A
// failure is logged, not returned: the build's end does not wait on it, and the credential
// left behind is refused anyway once the build ended (package hostcred); the log line names the
// parameter to delete by hand.
func (s HostCredentialStore) remove(ctx context.Context, b *kiln.Build, logger *slog.Logger) {
	if s.Params == nil || s.Path == "" || b == nil || b.HostCredentialHash == "" || !strings.HasPrefix(b.Host, HostCodeBuild) {
		return
	}
	s.removeName(ctx, b.ID, s.Name(b.ID, b.HostCredentialHash), logger)
}

// removeName deletes the parameter name of build id (see remove).
func (s HostCredentialStore) removeName(ctx context.Context, buildID, name string, logger *slog.Logger) {
	if s.Params == nil {
		return
	}
	if err := s.Params.Delete(ctx, name); err != nil {
		logger.ErrorContext(ctx, "delete a build host's credential parameter; delete it by hand (the credential is refused anyway once its build ended)",
			slog.String("build_id", buildID), slog.String("parameter", name), slog.String("error", err.Error()))
		return
	}
	logger.InfoContext(ctx, "build host's credential parameter deleted", slog.String("build_id", buildID), slog.String("parameter", name))
}
