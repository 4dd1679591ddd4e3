package awsapp

import (
	"context"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/wake"
)

// claimPollEvery is how often a waiting claim looks at the pending queue again in AWS. On one
// machine the service wakes waiting claims the moment it queues a build; a Lambda cannot hear
// of builds another invocation (or another Lambda instance) queued, so a claim waiting here reads
// the queue every 2 seconds until it gets a build or its wait ends: a build waits at most that
// long for an agent that is already asking, and an idle agent's 25-second claim costs about a
// dozen queue reads. A Lambda instance serves one request at a time, so each waiting claim has
// its own ticker; in a process that serves many claims at once (kiln aws-local) their ticks are
// not merged and each may cost a read.
const claimPollEvery = 2 * time.Second

// claimMaxWait bounds a claim's wait below API Gateway's 30-second integration timeout (the API
// function's timeout is 29 s), so the claim answers 204 before the gateway gives up.
const claimMaxWait = 25 * time.Second

// pollingDispatcher is the agents' Dispatcher as the API function runs it: each waiting claim
// wakes the dispatcher every poll interval, as a queued build would.
type pollingDispatcher struct {
	*agentpool.Dispatcher
	every time.Duration
}

// Claim waits for a build as agentpool.Dispatcher.Claim does, looking at the queue every interval.
func (p pollingDispatcher) Claim(ctx context.Context, a *kiln.Agent, offer agentpool.Offer, wait time.Duration) (*agentpool.Claimed, error) {
	polling, stopPolling := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPolling()
	go wake.Every(polling, p.every, func(context.Context) bool { p.Dispatcher.Notify(); return true })
	return p.Dispatcher.Claim(ctx, a, offer, min(wait, claimMaxWait))
}

func newClaimDispatcher(d *agentpool.Dispatcher, logger *slog.Logger) pollingDispatcher {
	d.Logger = logger
	return pollingDispatcher{Dispatcher: d, every: claimPollEvery}
}
