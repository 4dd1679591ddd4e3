// Package ec2hosts stands in for one of kiln's hosted host groups (Windows or Linux) on this
// machine (kiln aws-local): the scaling policy on the group's waiting-builds metric
// (kiln/WaitingWin64Builds, kiln/WaitingLinuxBuilds: it takes the schedule's PutMetricData in
// process and launches instances while builds wait), and each instance: its metadata service
// (an imds.Instance on 127.0.0.1, whose identity the Signer signs) and its agent, `kiln agent
// --ec2-host`, a child process in its own process group. Instances join the Auto Scaling group
// stand-in in service; terminating one there (the schedule does, once its build ended) kills
// its agent and closes its metadata service.
package ec2hosts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/kilnbuild/kiln/shared/awslocal/autoscaling"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/proctree"
)

// Config is the hosts' launch template and scaling policy.
type Config struct {
	// What names the hosts in logs ("Windows", "Linux"); Metric is the waiting-builds metric
	// (hostedhosts.WaitingMetric) the scaling policy reads.
	What, Metric string
	Group        *autoscaling.Group
	Signer       *imds.Signer
	// Account and Region are what the identity documents name.
	Account, Region string
	// Command is the agent the instances run (kiln agent --ec2-host); Env its environment, to
	// which each instance adds KILN_AGENT_IMDS and KILN_AGENT_WORKDIR.
	Command []string
	Env     []string
	// Dir holds each instance's work directory and log.
	Dir string
	// Max is the most instances at once (default 1).
	Max int
	// Claimed tells whether an instance claimed its build (the service's record): an instance
	// that did not is still available to a waiting build.
	Claimed func(ctx context.Context, instanceID string) (bool, error)
	// RunAs, when set and the stand-in runs as root, runs each instance's agent as a uid of its
	// own (as the Linux AMI's agent runs as a user that is not root), in a work directory that
	// uid owns; nil: as the stand-in's user.
	RunAs *RunAs
	// Lifeline ends the agents when the stand-in's process ends, however it ends (nil: none).
	Lifeline *lifeline.Lifeline
	Logger   *slog.Logger
}

// Pool is the running stand-in.
type Pool struct {
	cfg Config

	mu     sync.Mutex
	alive  map[string]*instance
	uids   map[string]int // the uid each instance's agent ran as, kept after its end
	closed bool
	wg     sync.WaitGroup
}

type instance struct {
	tree    *proctree.Tree // the agent and what it starts
	server  *http.Server
	release func() // gives back the instance's uid and work directory (RunAs)
}

// New makes the pool; it launches nothing until builds wait.
func New(cfg Config) *Pool {
	if cfg.Max <= 0 {
		cfg.Max = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Pool{cfg: cfg, alive: map[string]*instance{}, uids: map[string]int{}}
}

var _ hostedhosts.CloudWatch = (*Pool)(nil)

// PutMetricData is the scaling policy: for the group's metric of n, it launches instances
// until n wait for no more than the instances that have not claimed yet, up to Max.
func (p *Pool) PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	if aws.ToString(in.Namespace) != hostedhosts.MetricNamespace {
		return &cloudwatch.PutMetricDataOutput{}, nil
	}
	waiting := 0
	for _, d := range in.MetricData {
		if aws.ToString(d.MetricName) == p.cfg.Metric && d.Value != nil {
			waiting = int(*d.Value)
		}
	}
	p.mu.Lock()
	ids := make([]string, 0, len(p.alive))
	for id := range p.alive {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	free := 0
	for _, id := range ids {
		claimed, err := p.cfg.Claimed(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("ec2hosts: has %s claimed: %w", id, err)
		}
		if !claimed {
			free++
		}
	}
	for n := min(waiting-free, p.cfg.Max-len(ids)); n > 0; n-- {
		if err := p.launch(); err != nil {
			return nil, err
		}
	}
	return &cloudwatch.PutMetricDataOutput{}, nil
}

// launch starts an instance: its metadata service, its agent, its place in the group.
func (p *Pool) launch() error {
	raw := make([]byte, 9)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	id := "i-" + hex.EncodeToString(raw)[:17]
	work := filepath.Join(p.cfg.Dir, id)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return fmt.Errorf("ec2hosts: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("ec2hosts: %w", err)
	}
	server := &http.Server{Handler: imds.NewInstance(p.cfg.Signer, p.cfg.Account, p.cfg.Region, id), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()
	logFile, err := os.Create(filepath.Join(p.cfg.Dir, id+".log"))
	if err != nil {
		server.Close()
		return fmt.Errorf("ec2hosts: %w", err)
	}
	cmd := exec.Command(p.cfg.Command[0], p.cfg.Command[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = work, logFile, logFile
	cmd.Env = append(append([]string{}, p.cfg.Env...), "KILN_AGENT_IMDS=http://"+ln.Addr().String(), "KILN_AGENT_WORKDIR="+filepath.Join(work, "work"))
	release, uid, err := p.cfg.RunAs.apply(cmd)
	if err != nil {
		logFile.Close()
		server.Close()
		return err
	}
	tree := proctree.New(cmd, proctree.Options{})
	p.cfg.Lifeline.Mark(cmd)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		logFile.Close()
		server.Close()
		release()
		return errors.New("ec2hosts: closed")
	}
	if err := tree.Start(); err != nil {
		logFile.Close()
		server.Close()
		release()
		return fmt.Errorf("ec2hosts: start the agent: %w", err)
	}
	if err := p.cfg.Lifeline.Hold(cmd.Process.Pid); err != nil {
		p.cfg.Logger.Warn("ec2hosts: the agent outlives a crash", slog.String("instance_id", id), slog.String("error", err.Error()))
	}
	p.alive[id] = &instance{tree: tree, server: server, release: release}
	p.uids[id] = uid
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer logFile.Close()
		err := cmd.Wait()
		_ = tree.Kill() // what the agent left behind goes with it
		_ = tree.Close()
		_ = p.cfg.Lifeline.Release(cmd.Process.Pid)
		release()
		p.cfg.Logger.Info("aws-local: a "+p.cfg.What+" host's agent ended", slog.String("instance_id", id), slog.Any("error", err))
	}()
	p.cfg.Group.Launch(id, hostedhosts.StateInService, func() { p.terminated(id) })
	p.cfg.Logger.Info("aws-local: launched a "+p.cfg.What+" host", slog.String("instance_id", id), slog.String("log", logFile.Name()))
	return nil
}

// terminated ends an instance the group terminated.
func (p *Pool) terminated(id string) {
	p.mu.Lock()
	in := p.alive[id]
	delete(p.alive, id)
	p.mu.Unlock()
	if in == nil {
		return
	}
	_ = in.tree.Kill()
	in.server.Close()
	p.cfg.Logger.Info("aws-local: a "+p.cfg.What+" host was terminated", slog.String("instance_id", id))
}

// UID is the uid the instance's agent ran as (false: no such instance was launched).
func (p *Pool) UID(instanceID string) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	uid, ok := p.uids[instanceID]
	return uid, ok
}

// Instances counts the instances alive.
func (p *Pool) Instances() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.alive)
}

// Close terminates every instance and waits for their agents.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	var ids []string
	for id := range p.alive {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		p.terminated(id)
	}
	p.wg.Wait()
	return nil
}
