// Package miniotest starts a MinIO server (an S3-compatible object store) for tests: on
// 127.0.0.1 with a free port and a temporary data directory, stopped by the test. The binary is
// the one scripts/install-minio.sh builds into <repo>/.cache/minio/bin (or $KILN_MINIO).
package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kilnbuild/kiln/shared/awslocal/minio"
)

// Region is the region MinIO answers for.
const Region = minio.Region

// Server is a running MinIO server with a temporary data directory.
type Server struct {
	*minio.Server
	dir string
}

// Binary finds the MinIO binary (see minio.Binary).
func Binary() (string, error) { return minio.Binary() }

// Start starts MinIO with its data in a new temporary directory, with the root credentials of
// $MINIO_ROOT_USER and $MINIO_ROOT_PASSWORD, or random ones when they are not set, and waits
// until it answers. Stop stops it and removes the directory.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "kiln-minio-")
	if err != nil {
		return nil, err
	}
	o := minio.Options{DataDir: filepath.Join(dir, "data"), User: os.Getenv("MINIO_ROOT_USER"), Password: os.Getenv("MINIO_ROOT_PASSWORD"), KillWithParent: true}
	if o.User == "" || o.Password == "" {
		o.User, o.Password = "kiln-test", randomHex(20)
	}
	if o.Addr, err = freeAddr(); err == nil {
		o.ConsoleAddr, err = freeAddr()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s, err := minio.Start(context.Background(), o)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Server{Server: s, dir: dir}, nil
}

// Stop kills the server and removes its data.
func (s *Server) Stop() {
	s.Server.Stop()
	os.RemoveAll(s.dir)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
