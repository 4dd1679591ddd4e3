package hostclient

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/artifacts"
)

// putStream sends the artifact write produces in one streamed PUT /host/v1/artifact (a
// service without presigned parts), through a pipe: nothing is held in memory beyond the
// pipe's copy buffer. The service answers the size and MD5 it stored, which must be what was
// sent.
func (c *Client) putStream(ctx context.Context, query string, write func(w io.Writer) error) error {
	pr, pw := io.Pipe()
	sum := md5.New()
	var sent int64
	written := make(chan struct{})
	go func() {
		defer close(written)
		cw := &countWriter{w: io.MultiWriter(pw, sum), n: &sent}
		pw.CloseWithError(write(artifacts.ContextWriter(ctx, cw)))
	}()
	defer pr.Close() // stops write if the request ended first
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, strings.TrimRight(c.BaseURL, "/")+agentapi.PathPrefix+"artifact"+query, pr)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Credential)
	req.Header.Set("Content-Type", "application/gzip")
	resp, err := c.streamHTTP().Do(req)
	if err != nil {
		return fmt.Errorf("host API PUT artifact: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return errorAnswer(resp, http.MethodPut, "artifact")
	}
	var got agentapi.StreamedArtifact
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&got); err != nil {
		return fmt.Errorf("host API PUT artifact: the answer is not JSON: %w", err)
	}
	<-written // the service read it all: write returned
	if want := hex.EncodeToString(sum.Sum(nil)); got.Size != sent || got.MD5 != want {
		return errors.New("the service stored another artifact than was sent (size or MD5 differ)")
	}
	return nil
}

// streamHTTP is the client of the streamed upload: the calls' client without its overall time
// limit, which a large artifact would exceed.
func (c *Client) streamHTTP() *http.Client {
	h := *c.http()
	h.Timeout = 0
	return &h
}

type countWriter struct {
	w io.Writer
	n *int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}
