// A build: its facts, live log, artifact, cancel, re-run, redeploy and size report. The log and
// the status come over the live events (live.js: the socket at /socket.io/); where the socket
// cannot connect, or drops and cannot connect again, the page polls instead: the facts every 3 s
// and the JSON log pages long-polled (from the first page again, showing the lines after the
// last one shown).
import {api, can} from './api.js';
import {h, put, time, duration, status, bytes, busy, buildLabel, confirmed} from './dom.js';
import {sizeReport} from './sizes.js';
import {triggerView} from './trigger.js';
import {progressView} from './progress.js';
import {logView} from './logview.js';
import {liveSocket, logWhole, SETTLE_MS} from './live.js';

const ENDED = ['complete', 'failed', 'superseded'];
const RANK = {pending: 1, running: 2, complete: 3, failed: 3, superseded: 3};

export async function render(main, params, ctx) {
  const id = params.id;
  let b = await api('GET', '/builds/' + id);
  const project = await api('GET', '/projects/' + b.projectId).catch(() => null);
  const facts = h('dl', {class: 'facts', id: 'facts'});
  const actions = h('div', {class: 'row', id: 'actions'});
  const artifact = h('section', {id: 'artifact'});
  const sizes = h('section', {id: 'sizes'});
  const log = logView(id);
  const logState = h('p', {class: 'muted', id: 'log-state'});
  const heading = h('h1', {});
  const progress = h('section', {id: 'progress-section', 'aria-label': 'Progress'});
  put(main, heading, progress, facts, actions, artifact, h('h2', {}, 'Log'), logState, log.el, sizes);

  let stopped = false, timer = null, shownArtifact = false;
  // The server's clock as the page judges it: the API's elapsed time of a running build against
  // this browser's, so that the header, the Duration and the log's running stage tick together.
  let skew = 0;
  const serverNow = () => Date.now() - skew;
  log.setClock(serverNow);
  const elapsed = () => b.startedAt ? Math.max(0, serverNow() - Date.parse(b.startedAt)) : null;
  function judgeClock() {
    if (b.status === 'running' && b.startedAt && b.progress && b.progress.elapsedMs >= 0) skew = Date.now() - Date.parse(b.startedAt) - b.progress.elapsedMs;
  }
  judgeClock();
  // Every second while it runs: the elapsed time in the header and the facts, and the running stage's.
  const ticker = setInterval(() => {
    if (b.status !== 'running') return;
    progressView(progress, b, elapsed());
    const d = facts.querySelector('#duration');
    if (d) d.textContent = duration(elapsed()) + ' so far';
    log.tick();
  }, 1000);
  function show() {
    ctx.title((b.number ? 'Build ' + buildLabel(b) : 'Build ' + b.id) + (project ? ' · ' + project.name : '') + ' · ' + b.status);
    judgeClock();
    progressView(progress, b, b.status === 'running' ? elapsed() : null);
    put(heading, 'Build ', b.number ? [buildLabel(b), ' ', h('code', {class: 'muted'}, b.id)] : h('code', {}, b.id), ' ', status(b.status));
    const source = b.changelist ? ['Changelist', b.changelist] : ['Commit', b.commit ? h('code', {}, b.commit) : '—'];
    put(facts,
      ...pair('Project', project ? h('a', {href: '/console/projects/' + project.id}, project.name) : 'deleted project'),
      ...pair('Platform · type · engine', b.platform + ' · ' + b.buildType + ' · UE ' + b.ueVersion),
      ...pair('Branch', b.branch || '—'), ...pair(...source),
      ...pair('Message', b.commitMessage || '—'), ...pair('Triggered by', triggerView(b)),
      ...pair('Created', time(b.createdAt)), ...pair('Started', time(b.startedAt)), ...pair('Finished', time(b.finishedAt)),
      ...pair('Duration', h('span', {id: 'duration'}, b.status === 'running' && b.startedAt ? duration(elapsed()) + ' so far' : duration(b.durationMs))),
      cacheFact(b),
      b.waitingFor ? pair('Waiting for', b.waitingFor) : [],
      b.failureReason ? pair('Failure', h('strong', {id: 'failure'}, b.failureReason)) : [],
      b.autoDeployStatus ? pair('Auto deploy', [status(b.autoDeployStatus), ' ', b.autoDeployError || '', ` (${b.autoDeployAttempts} attempts)`]) : []);
    put(actions);
    if (can.write(ctx.role) && !ENDED.includes(b.status)) {
      actions.append(...confirmed('cancel', 'Cancel build', 'Stop this build?', 'Yes, cancel it', async () => {
        try { b = await api('POST', '/builds/' + id + '/cancel', {}); show(); } catch (e) { ctx.showError(e); }
      }));
    }
    if (can.write(ctx.role) && ENDED.includes(b.status)) actions.append(rerunButton(b, ctx));
    if (can.write(ctx.role) && b.status === 'complete' && b.autoDeployStatus) {
      actions.append(h('button', {type: 'button', class: 'secondary', id: 'redeploy', onclick: (ev) => busy(ev.target, async () => {
        try { b = await api('POST', '/builds/' + id + '/deploy', {}); show(); } catch (e) { ctx.showError(e); }
      })}, 'Deploy again'));
    }
    if (b.status === 'complete' && !shownArtifact) {
      shownArtifact = true;
      showArtifact();
      sizeReport(sizes, b, ctx);
    }
  }

  async function showArtifact() {
    put(artifact, h('h2', {id: 'artifact-h'}, 'Artifact'));
    try {
      const d = await api('GET', '/builds/' + id + '/download');
      artifact.append(h('dl', {class: 'facts'}, ...pair('Size', bytes(d.sizeBytes) + ' (' + d.sizeBytes + ' bytes)'),
        ...pair('MD5', h('code', {id: 'md5'}, d.checksumMd5)), ...pair('Link valid until', time(d.expiresAt))),
      // The file's name as the server saves it (its Content-Disposition), said on the button.
      h('a', {class: 'button', id: 'download', href: d.url, download: d.fileName}, 'Download ' + d.fileName));
    } catch (e) {
      artifact.append(h('p', {class: 'muted'}, e.message));
    }
  }

  // The build's facts: again now, and every 3 s until it ends while the page polls. A status
  // the socket brought is never taken back by an answer that left before it.
  async function poll() {
    clearTimeout(timer);
    try {
      b = await api('GET', '/builds/' + id);
      if (stopped) return;
      if (pushed && RANK[pushed.status] > RANK[b.status]) take(pushed);
      show();
    } catch (e) { if (!stopped) ctx.showError(e); }
    if (!stopped && !ENDED.includes(b.status) && polling) timer = setTimeout(poll, 3000);
  }

  let count = 0, shown = 0, lastMessage = '';
  function showLines(items, running, following) {
    log.append(items, running);
    count += items.length;
    if (items.length) { shown = items[items.length - 1].seq; lastMessage = items[items.length - 1].message; }
    logState.textContent = count + ' lines' + (following ? '; following the build…' : '; the build has ended.');
  }

  // The log by polling: pages of lines after the last one shown; a page waits up to 10 s for new lines.
  async function follow() {
    let cursor = null;
    for (;;) {
      let page;
      try {
        page = await api('GET', '/builds/' + id + '/logs', null, {format: 'json', limit: 1000, cursor, wait: ENDED.includes(b.status) ? 0 : 10});
      } catch (e) {
        if (!stopped) ctx.showError(e);
        return;
      }
      if (stopped) return;
      showLines(page.items.filter(l => l.seq > shown), !ENDED.includes(page.buildStatus), !!page.nextCursor);
      if (page.buildStatus !== b.status) poll();
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  // The log and the status over the socket. Lines are shown in batches (a replay brings many at
  // once); the log has ended once the build did and its log is whole (logWhole).
  let socket = null, polling = false, pushed = null, batch = [], flushing = null, settle = null, progressTimer = null, ended = false;
  function take(s) {
    Object.assign(b, {status: s.status, startedAt: s.startedAt, finishedAt: s.finishedAt, failureReason: s.failureReason});
  }
  function later() { if (!flushing) flushing = setTimeout(flush, 50); }
  function flush() {
    flushing = null;
    if (ended || polling) return;
    const items = batch;
    batch = [];
    const status = pushed ? pushed.status : b.status;
    const whole = ENDED.includes(status) && logWhole(status, items.length ? items[items.length - 1].message : lastMessage, pushed && pushed.finishedAt);
    showLines(items, !ENDED.includes(status), !whole);
    if (whole) stopLive();
  }
  function stopLive() {
    ended = true;
    clearTimeout(settle);
    clearInterval(progressTimer);
    socket.close();
  }
  // pollInstead falls back to polling, from the line after the last one shown.
  function pollInstead() {
    if (stopped || ended || polling) return;
    clearTimeout(flushing);
    flush();
    polling = true;
    clearTimeout(settle);
    clearInterval(progressTimer);
    socket.close();
    poll();
    follow();
  }
  function live() {
    socket = liveSocket({onDown: pollInstead});
    socket.join(id, shown, {
      log(l) { batch.push(l); later(); },
      status(s) {
        const changed = !pushed || pushed.status !== s.status;
        pushed = s;
        take(s);
        show();
        if (changed) poll(); // the facts that come with the change (duration, artifact)
        later();
        if (ENDED.includes(s.status)) {
          clearTimeout(settle);
          settle = setTimeout(later, SETTLE_MS + 1000);
        }
      },
      refused: pollInstead, // the log pages say why
    });
    // The progress estimate is no event: it is asked for now and then while the build runs.
    progressTimer = setInterval(() => { if (!ENDED.includes(b.status)) poll(); }, 15000);
  }

  show();
  // An ended build's log is read in pages; a build that runs or waits is followed live.
  if (ENDED.includes(b.status)) {
    polling = true;
    follow();
  } else live();
  return () => {
    stopped = true;
    clearTimeout(timer); clearTimeout(flushing); clearTimeout(settle); clearInterval(progressTimer); clearInterval(ticker);
    if (socket) socket.close();
    log.stop();
  };
}

function pair(k, v) { return [h('dt', {}, k), h('dd', {}, v)]; }

// rerunButton queues a new build of the same setting, branch and commit, then opens it.
function rerunButton(b, ctx) {
  return h('button', {type: 'button', class: 'secondary', id: 'rerun', onclick: (ev) => busy(ev.target, async () => {
    try {
      const again = await api('POST', '/builds/' + b.id + '/rerun', {});
      ctx.navigate('/console/builds/' + again.id);
    } catch (e) { ctx.showError(e); }
  })}, 'Re-run');
}

// cacheFact says how the build started: a clean build, warm from the build whose cache it
// restored, or cold and why; nothing until the host looked for a cache (and the build is not clean).
function cacheFact(b) {
  const parts = [];
  if (b.clean) parts.push(h('span', {id: 'clean'}, 'Clean build'));
  if (b.cache) {
    if (parts.length) parts.push(' · ');
    parts.push(b.cache.state === 'warm'
      ? h('span', {id: 'cache'}, 'Warm build — from build ',
        b.cache.fromBuildId ? h('a', {href: '/console/builds/' + b.cache.fromBuildId}, h('code', {}, b.cache.fromBuildId)) : 'unknown')
      : h('span', {id: 'cache'}, 'Cold build — ' + (b.cache.reason || 'no reason given')));
  }
  return parts.length ? pair('Build cache', parts) : [];
}
