package client

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// MismatchError is a download whose bytes are not the artifact's (size or MD5 differ); the file
// was deleted.
type MismatchError struct {
	Path, What, Want, Got string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("the download does not match the artifact (%s %s, expected %s); %s was deleted", e.What, e.Got, e.Want, e.Path)
}

// fetchAttempts is how many times a download is resumed within one Fetch after its connection
// was cut (each attempt must make progress).
const fetchAttempts = 5

// Fetch downloads the artifact of link to dst. Bytes go to dst+".part" first: an existing .part
// (a download cut earlier) is resumed with a Range request, and so is a connection cut during
// this call. At the end the size and MD5 are checked: a file that does not match is deleted
// (a *MismatchError); one that does is renamed to dst. So dst never holds a partial or wrong
// file. progress, when not nil, is told the bytes held so far and the total. The token is never
// sent: the signed URL carries its own authorization (and may redirect to object storage).
func (c *Client) Fetch(ctx context.Context, link *DownloadLink, dst string, progress func(done, total int64)) error {
	part := dst + ".part"
	var lastErr error
	for attempt := 0; attempt < fetchAttempts; attempt++ {
		before := fileSize(part)
		err := c.fetchOnce(ctx, link, part, progress)
		if err == nil {
			return verify(part, dst, link)
		}
		if ctx.Err() != nil {
			return err
		}
		var ae *APIError
		if errors.As(err, &ae) || fileSize(part) <= before {
			return err // refused, or no progress: retrying would not help
		}
		lastErr = err
	}
	return lastErr
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// fetchOnce appends to part what it lacks of the artifact, with one request.
func (c *Client) fetchOnce(ctx context.Context, link *DownloadLink, part string, progress func(done, total int64)) error {
	f, err := os.OpenFile(part, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer f.Close()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if have > link.SizeBytes { // not a prefix of this artifact: start again
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("download: %w", err)
		}
		have, _ = f.Seek(0, io.SeekStart)
	}
	if progress != nil {
		progress(have, link.SizeBytes)
	}
	if have == link.SizeBytes {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, "GET", link.URL, nil)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		if cr := resp.Header.Get("Content-Range"); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-", have)) {
			return fmt.Errorf("download: asked for bytes from %d, got %q", have, cr)
		}
	case resp.StatusCode == http.StatusOK:
		if have > 0 { // the server sent the whole file: start again
			if err := f.Truncate(0); err != nil {
				return fmt.Errorf("download: %w", err)
			}
			if have, err = f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("download: %w", err)
			}
		}
	default:
		return decodeError(resp)
	}
	w := &progressWriter{w: f, done: have, total: link.SizeBytes, report: progress}
	// At most the bytes still missing: a longer answer is cut here and fails the size check.
	if _, err := io.Copy(w, io.LimitReader(resp.Body, link.SizeBytes-have+1)); err != nil {
		return fmt.Errorf("download cut after %d of %d bytes: %w", w.done, link.SizeBytes, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if w.done < link.SizeBytes {
		return fmt.Errorf("download cut after %d of %d bytes: %w", w.done, link.SizeBytes, io.ErrUnexpectedEOF)
	}
	return f.Close()
}

// verify checks part's size and MD5 against link, then renames it to dst or deletes it.
func verify(part, dst string, link *DownloadLink) error {
	mismatch := func(what, want, got string) error {
		if err := os.Remove(part); err != nil {
			return fmt.Errorf("download: delete the mismatching %s: %w", part, err)
		}
		return &MismatchError{Path: part, What: what, Want: want, Got: got}
	}
	if got := fileSize(part); got != link.SizeBytes {
		return mismatch("size", fmt.Sprint(link.SizeBytes), fmt.Sprint(got))
	}
	f, err := os.Open(part)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	h := md5.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return fmt.Errorf("download: checksum %s: %w", part, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, link.ChecksumMD5) {
		return mismatch("MD5", link.ChecksumMD5, got)
	}
	if err := os.Rename(part, dst); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return nil
}

// progressWriter counts what is written and reports it.
type progressWriter struct {
	w           io.Writer
	done, total int64
	report      func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.report != nil {
		p.report(p.done, p.total)
	}
	return n, err
}
