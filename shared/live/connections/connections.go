// Package connections sends live events through API Gateway's @connections API: each frame is
// one PostToConnection (one WebSocket message), a socket is closed with DeleteConnection, and a
// socket API Gateway no longer has (GoneException, 410) is live.ErrGone. It is live's Sender in
// AWS, where API Gateway holds the sockets and any Lambda may send to any of them.
package connections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"

	"github.com/kilnbuild/kiln/shared/live"
)

// API is the part of the @connections API kiln uses.
type API interface {
	PostToConnection(ctx context.Context, in *apigatewaymanagementapi.PostToConnectionInput, opts ...func(*apigatewaymanagementapi.Options)) (*apigatewaymanagementapi.PostToConnectionOutput, error)
	DeleteConnection(ctx context.Context, in *apigatewaymanagementapi.DeleteConnectionInput, opts ...func(*apigatewaymanagementapi.Options)) (*apigatewaymanagementapi.DeleteConnectionOutput, error)
}

// Sender posts frames to sockets.
type Sender struct {
	API API
}

var _ live.Sender = (*Sender)(nil)

// New sends through the @connections endpoint of a WebSocket API stage,
// https://{api-id}.execute-api.{region}.amazonaws.com/{stage}.
func New(cfg aws.Config, endpoint string) *Sender {
	return &Sender{API: apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})}
}

// throttleRetries is how many times a throttled post (LimitExceededException) is tried again,
// after throttleWait, doubled each time.
const (
	throttleRetries = 3
	throttleWait    = 50 * time.Millisecond
)

// Send posts each frame as one message, in order.
func (s *Sender) Send(ctx context.Context, connID string, frames ...string) error {
	for _, f := range frames {
		in := &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(connID), Data: []byte(f)}
		err := retryThrottled(ctx, func() error { _, err := s.API.PostToConnection(ctx, in); return err })
		if err != nil {
			return wrap("post to", connID, err)
		}
	}
	return nil
}

// Close closes the socket.
func (s *Sender) Close(ctx context.Context, connID string) error {
	_, err := s.API.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(connID)})
	if err != nil {
		return wrap("close", connID, err)
	}
	return nil
}

func retryThrottled(ctx context.Context, call func() error) error {
	wait := throttleWait
	for i := 0; ; i++ {
		err := call()
		var limited *types.LimitExceededException
		if !errors.As(err, &limited) || i == throttleRetries {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func wrap(op, connID string, err error) error {
	var gone *types.GoneException
	if errors.As(err, &gone) {
		return live.ErrGone
	}
	return fmt.Errorf("@connections: %s %s: %w", op, connID, err)
}
