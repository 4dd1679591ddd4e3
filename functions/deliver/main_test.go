package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/delivery/deliverytest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/webhooks"
)

// sent is one message the handler queued.
type sent struct {
	m     awsapp.DeliveryMessage
	delay time.Duration
}

type queue struct {
	mu   sync.Mutex
	sent []sent
}

func (q *queue) Send(ctx context.Context, m awsapp.DeliveryMessage, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, sent{m, delay})
	return nil
}

func (q *queue) take() []sent {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sent
	q.sent = nil
	return s
}

// genStore is an artifact store whose every object is size bytes of pseudo-random data made as it
// is read (a 64 KiB block repeated), never held; it counts the bytes read.
type genStore struct {
	size int64
	read atomic.Int64
}

func (g *genStore) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	return nil
}
func (g *genStore) Delete(ctx context.Context, key string) error { return nil }
func (g *genStore) Open(ctx context.Context, key string) (artifacts.Object, error) {
	block := make([]byte, 64<<10)
	_, _ = rand.NewChaCha8([32]byte{'k'}).Read(block)
	return &genObject{store: g, block: block, left: g.size}, nil
}

type genObject struct {
	store *genStore
	block []byte
	off   int
	left  int64
}

func (o *genObject) Read(p []byte) (int, error) {
	if o.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), o.left)]
	n := 0
	for n < len(p) {
		c := copy(p[n:], o.block[o.off:])
		n += c
		o.off = (o.off + c) % len(o.block)
	}
	o.left -= int64(n)
	o.store.read.Add(int64(n))
	return n, nil
}

func (o *genObject) Seek(offset int64, whence int) (int64, error) { return 0, io.ErrUnexpectedEOF }
func (o *genObject) Close() error                                 { return nil }
func (o *genObject) Size() int64                                  { return o.store.size }
func (o *genObject) ModTime() time.Time                           { return time.Time{} }

// fixture is a complete build waiting for auto deploy to a receiver, a webhook with a pending
// delivery to the same receiver, and the deliver handler on them.
type fixture struct {
	st      *sqlitestore.Store
	org     string
	build   *kiln.Build
	hook    *kiln.Webhook
	del     *kiln.WebhookDelivery
	queue   *queue
	clock   atomic.Pointer[time.Time]
	handler lambda.Handler
}

func newFixture(t *testing.T, arts artifacts.Store, size int64, receiver http.HandlerFunc) *fixture {
	t.Helper()
	ctx := context.Background()
	srv := httptest.NewServer(receiver)
	t.Cleanup(srv.Close)
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().UTC().Truncate(time.Millisecond)
	created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "Studio", OwnerEmail: "a@studio.example", OwnerName: "A"}, now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.New(bytes.Repeat([]byte{7}, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, org: created.Organization.ID, queue: &queue{}}
	f.clock.Store(&now)
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: f.org, Name: "P", SourceControl: kiln.SourceGitHub,
		RepoLink: "studio/game", InstallationID: "1", CreatedAt: now, UpdatedAt: now}
	setting := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: f.org, ProjectID: p.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3", Trigger: kiln.TriggerManual,
		AutoDeploy: true, UploadBuildURL: srv.URL + "/upload", CreatedAt: now, UpdatedAt: now}
	f.build = &kiln.Build{ID: kiln.NewID(), OrganizationID: f.org, ProjectID: p.ID, BuildSettingID: setting.ID, Status: kiln.StatusComplete,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", Commit: "abc", UEVersion: "5.3", TriggeredBy: "test",
		CreatedAt: now, AutoDeployStatus: kiln.AutoDeployPending}
	a := &kiln.Artifact{BuildID: f.build.ID, OrganizationID: f.org, ProjectID: p.ID, BuildSettingID: setting.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, UEVersion: "5.3", Branch: "main", Commit: "abc", Key: f.org + "/" + f.build.ID + ".tar.gz",
		SizeBytes: size, ChecksumMD5: "x", CreatedAt: now}
	f.hook = &kiln.Webhook{ID: kiln.NewID(), OrganizationID: f.org, URL: srv.URL + "/hook", Active: true,
		Events: []kiln.WebhookEvent{kiln.EventBuildComplete}, CreatedAt: now, UpdatedAt: now}
	f.hook.Secret = keys.Sealer().Seal([]byte("hook secret"), webhooks.SecretAD(f.hook.ID))
	f.del = &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: f.org, WebhookID: f.hook.ID, Event: kiln.EventBuildComplete,
		Payload: []byte(`{"event":"build.complete"}`), Status: kiln.DeliveryPending, CreatedAt: now, UpdatedAt: now}
	for _, err := range []error{st.CreateProject(ctx, p, 0), st.CreateBuildSetting(ctx, setting), st.CreateBuild(ctx, f.build),
		st.CreateArtifact(ctx, a), st.CreateWebhook(ctx, f.hook), st.CreateWebhookDelivery(ctx, f.del)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	logs, err := buildlog.NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := awsapp.NewDeliver(awsapp.BackgroundConfig{DeliveryAttempts: 5, DeliveryBackoff: 2 * time.Second,
		AWSConfig: awsapp.AWSConfig{OutboundAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}, awsapp.Parts{
		Store: st, Logs: logs, Artifacts: arts, Keys: keys, Queue: f.queue,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return *f.clock.Load() },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.handler = lambda.NewHandler(d.Handle)
	return f
}

func (f *fixture) advance(d time.Duration) {
	next := f.clock.Load().Add(d)
	f.clock.Store(&next)
}

// sample reads events/<name> with the fixture's ids in place, checked to decode strictly into the
// handler's input type.
func (f *fixture) sample(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../events", name))
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{"ORGANIZATIONIDREPLACEDBYTEST": f.org, "BUILDIDREPLACEDBYTEST": f.build.ID,
		"WEBHOOKIDREPLACEDBYTEST": f.hook.ID, "DELIVERYIDREPLACEDBYTEST": f.del.ID} {
		raw = bytes.ReplaceAll(raw, []byte(from), []byte(to))
	}
	var ev events.SQSEvent
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil || len(ev.Records) != 1 {
		t.Fatalf("%s is not an SQSEvent of one message: %v", name, err)
	}
	return raw
}

// invoke feeds an event to the handler and returns the ids of the messages it reported failed.
func (f *fixture) invoke(t *testing.T, raw []byte) []string {
	t.Helper()
	out, err := f.handler.Invoke(context.Background(), raw)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("the handler answered %s", out)
	}
	var ids []string
	for _, x := range resp.BatchItemFailures {
		ids = append(ids, x.ItemIdentifier)
	}
	return ids
}

// TestDeployMessageMakesOneAttemptAndQueuesItsRetry: a deploy message makes one attempt; the
// receiver's 503 with Retry-After: 120 queues the retry delayed 120 s; the message handed again
// before then attempts nothing; once due, the retry delivers.
func TestDeployMessageMakesOneAttemptAndQueuesItsRetry(t *testing.T) {
	var uploads atomic.Int32
	f := newFixture(t, &genStore{size: 1 << 20}, 1<<20, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if uploads.Add(1) == 1 {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx := context.Background()
	msg := f.sample(t, "deliver-deploy.json")
	if failed := f.invoke(t, msg); len(failed) != 0 {
		t.Fatalf("failed %v", failed)
	}
	b, _ := f.st.GetBuild(ctx, f.org, f.build.ID)
	if uploads.Load() != 1 || b.AutoDeployAttempts != 1 || b.AutoDeployStatus != kiln.AutoDeployDelivering {
		t.Fatalf("after one message: %d uploads, build %s after %d attempts", uploads.Load(), b.AutoDeployStatus, b.AutoDeployAttempts)
	}
	want := sent{awsapp.DeliveryMessage{Kind: awsapp.KindDeploy, OrganizationID: f.org, BuildID: f.build.ID}, 120 * time.Second}
	if got := f.queue.take(); len(got) != 1 || got[0] != want {
		t.Fatalf("queued %+v, want %+v", got, want)
	}
	f.advance(time.Minute)
	f.invoke(t, msg) // not due yet
	if uploads.Load() != 1 || len(f.queue.take()) != 0 {
		t.Fatalf("a message before the retry is due: %d uploads, want 1 and nothing queued", uploads.Load())
	}
	f.advance(time.Minute)
	f.invoke(t, msg)
	b, _ = f.st.GetBuild(ctx, f.org, f.build.ID)
	if uploads.Load() != 2 || b.AutoDeployStatus != kiln.AutoDeploySucceeded || len(f.queue.take()) != 0 {
		t.Fatalf("the due retry: %d uploads, build %s", uploads.Load(), b.AutoDeployStatus)
	}
}

// TestWebhookMessageMakesOneAttemptAndQueuesItsRetry: the same for an org webhook delivery,
// signed with the webhook's secret.
func TestWebhookMessageMakesOneAttemptAndQueuesItsRetry(t *testing.T) {
	var posts atomic.Int32
	var signed atomic.Bool
	f := newFixture(t, &genStore{size: 1}, 1, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		signed.Store(r.Header.Get("X-Kiln-Signature") == webhooks.Sign([]byte("hook secret"), body))
		posts.Add(1)
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	f.invoke(t, f.sample(t, "deliver-webhook.json"))
	d, _ := f.st.GetWebhookDelivery(context.Background(), f.org, f.hook.ID, f.del.ID)
	if posts.Load() != 1 || !signed.Load() || d.Attempts != 1 || d.Status != kiln.DeliveryPending {
		t.Fatalf("%d posts (signed %v), delivery %s after %d attempts", posts.Load(), signed.Load(), d.Status, d.Attempts)
	}
	want := sent{awsapp.DeliveryMessage{Kind: awsapp.KindWebhook, OrganizationID: f.org, WebhookID: f.hook.ID, DeliveryID: f.del.ID}, 30 * time.Second}
	if got := f.queue.take(); len(got) != 1 || got[0] != want {
		t.Fatalf("queued %+v, want %+v", got, want)
	}
}

// TestBadMessagesFailAndSweepQueues: an unreadable or incomplete message is reported failed (SQS
// hands it again, then to the dead-letter queue) and changes nothing; a sweep queues the due jobs.
func TestBadMessagesFailAndSweepQueues(t *testing.T) {
	var requests atomic.Int32
	f := newFixture(t, &genStore{size: 1}, 1, func(w http.ResponseWriter, r *http.Request) { requests.Add(1) })
	msg := f.sample(t, "deliver-deploy.json")
	var ev events.SQSEvent
	if err := json.Unmarshal(msg, &ev); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"nope", `{"kind":"deploy","organizationId":"` + f.org + `"}`, `{"kind":"ship"}`, `{"kind":"sweep","extra":1}`} {
		ev.Records[0].Body = body
		raw, _ := json.Marshal(ev)
		if failed := f.invoke(t, raw); len(failed) != 1 || failed[0] != ev.Records[0].MessageId {
			t.Errorf("%s: failed %v, want the message", body, failed)
		}
	}
	if b, _ := f.st.GetBuild(context.Background(), f.org, f.build.ID); requests.Load() != 0 || len(f.queue.take()) != 0 || b.AutoDeployAttempts != 0 {
		t.Fatalf("bad messages did something: %d requests, %d attempts", requests.Load(), b.AutoDeployAttempts)
	}
	ev.Records[0].Body = `{"kind":"sweep"}`
	raw, _ := json.Marshal(ev)
	f.invoke(t, raw)
	got := f.queue.take()
	if len(got) != 2 || got[0].m.Kind != awsapp.KindDeploy || got[0].m.BuildID != f.build.ID || got[1].m.DeliveryID != f.del.ID {
		t.Fatalf("a sweep queued %+v, want the due deploy and webhook delivery", got)
	}
}

// TestLargeArtifactStreams delivers a 384 MiB artifact, made as it is read, through the handler
// and checks that the heap stays small throughout: it is streamed from the artifact store to the
// receiver, never held whole (a 2 GB one in a Lambda works the same way).
func TestLargeArtifactStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 384 MiB over loopback")
	}
	const size = 384 << 20
	var got atomic.Int64
	var sum atomic.Value
	arts := &genStore{size: size}
	f := newFixture(t, arts, size, func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if p.FormName() == "artifact" {
				h := md5.New()
				n, _ := io.Copy(h, p)
				got.Store(n)
				sum.Store(hex.EncodeToString(h.Sum(nil)))
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	want := md5.New()
	obj, _ := (&genStore{size: size}).Open(context.Background(), "")
	_, _ = io.Copy(want, obj)

	peak := deliverytest.PeakHeap(func() { f.invoke(t, f.sample(t, "deliver-deploy.json")) })
	b, _ := f.st.GetBuild(context.Background(), f.org, f.build.ID)
	if b.AutoDeployStatus != kiln.AutoDeploySucceeded {
		t.Fatalf("auto deploy %s: %s", b.AutoDeployStatus, b.AutoDeployError)
	}
	if got.Load() != size || arts.read.Load() != size || sum.Load() != hex.EncodeToString(want.Sum(nil)) {
		t.Fatalf("the receiver got %d bytes (md5 %v) of %d read from the store, want %d", got.Load(), sum.Load(), arts.read.Load(), size)
	}
	t.Logf("peak HeapInuse %.1f MiB while delivering %d MiB", float64(peak)/(1<<20), size>>20)
	if peak >= 48<<20 {
		t.Errorf("peak HeapInuse %d bytes, want < 48 MiB", peak)
	}
}
