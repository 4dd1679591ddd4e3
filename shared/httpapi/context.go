package httpapi

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/auth"
)

type ctxKey struct{}

// requestState is what the middleware learns about a request; handlers deeper in the chain fill
// in the principal, and the access log reads it at the end.
type requestState struct {
	id        string
	logger    *slog.Logger
	principal *auth.Principal
	audit     *auditNote // set on audited routes
}

func stateOf(ctx context.Context) *requestState {
	if s, ok := ctx.Value(ctxKey{}).(*requestState); ok {
		return s
	}
	return &requestState{logger: slog.Default()}
}

func requestIDOf(ctx context.Context) string { return stateOf(ctx).id }

func loggerOf(ctx context.Context) *slog.Logger { return stateOf(ctx).logger }
