package hostedhosts

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultIMDS is the instance metadata service's address on EC2.
const DefaultIMDS = "http://169.254.169.254"

// imdsTokenTTL is how long the IMDSv2 session token the agent asks for lives.
const imdsTokenTTL = "60"

// FetchIdentity reads the instance's identity document and its signature from the metadata
// service at endpoint (DefaultIMDS on EC2), IMDSv2: a session token first, then GETs with it.
func FetchIdentity(ctx context.Context, client *http.Client, endpoint string) (Identity, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	base := strings.TrimRight(endpoint, "/")
	token, err := imdsCall(ctx, client, http.MethodPut, base+"/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": imdsTokenTTL})
	if err != nil {
		return Identity{}, fmt.Errorf("IMDSv2 session token: %w", err)
	}
	auth := map[string]string{"X-aws-ec2-metadata-token": token}
	doc, err := imdsCall(ctx, client, http.MethodGet, base+"/latest/dynamic/instance-identity/document", auth)
	if err != nil {
		return Identity{}, fmt.Errorf("instance identity document: %w", err)
	}
	sig, err := imdsCall(ctx, client, http.MethodGet, base+"/latest/dynamic/instance-identity/signature", auth)
	if err != nil {
		return Identity{}, fmt.Errorf("instance identity signature: %w", err)
	}
	return Identity{Document: doc, Signature: strings.TrimSpace(sig)}, nil
}

// LifecycleState reads autoscaling/target-lifecycle-state: InService once the instance may
// build (a warm pool instance answers Warmed:Stopped while it warms up).
func LifecycleState(ctx context.Context, client *http.Client, endpoint string) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	base := strings.TrimRight(endpoint, "/")
	token, err := imdsCall(ctx, client, http.MethodPut, base+"/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": imdsTokenTTL})
	if err != nil {
		return "", fmt.Errorf("IMDSv2 session token: %w", err)
	}
	state, err := imdsCall(ctx, client, http.MethodGet, base+"/latest/meta-data/autoscaling/target-lifecycle-state", map[string]string{"X-aws-ec2-metadata-token": token})
	return strings.TrimSpace(state), err
}

func imdsCall(ctx context.Context, client *http.Client, method, url string, headers map[string]string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	if len(body) > maxDocument {
		return "", fmt.Errorf("%s %s: answer over %d bytes", method, url, maxDocument)
	}
	return string(body), nil
}
