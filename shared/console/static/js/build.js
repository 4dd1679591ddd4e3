// A build: its facts, live log (the JSON log pages, long-polled), artifact, cancel, re-run,
// redeploy and size report.
import {api, can} from './api.js';
import {h, put, time, duration, status, bytes, busy, buildLabel, confirmed} from './dom.js';
import {sizeReport} from './sizes.js';
import {triggerView} from './trigger.js';
import {progressView} from './progress.js';
import {logView} from './logview.js';

const ENDED = ['complete', 'failed', 'superseded'];

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
  function show() {
    ctx.title((b.number ? 'Build ' + buildLabel(b) : 'Build ' + b.id) + (project ? ' · ' + project.name : '') + ' · ' + b.status);
    progressView(progress, b);
    put(heading, 'Build ', b.number ? [buildLabel(b), ' ', h('code', {class: 'muted'}, b.id)] : h('code', {}, b.id), ' ', status(b.status));
    const source = b.changelist ? ['Changelist', b.changelist] : ['Commit', b.commit ? h('code', {}, b.commit) : '—'];
    put(facts,
      ...pair('Project', project ? h('a', {href: '/console/projects/' + project.id}, project.name) : 'deleted project'),
      ...pair('Platform · type · engine', b.platform + ' · ' + b.buildType + ' · UE ' + b.ueVersion),
      ...pair('Branch', b.branch || '—'), ...pair(...source),
      ...pair('Message', b.commitMessage || '—'), ...pair('Triggered by', triggerView(b)),
      ...pair('Created', time(b.createdAt)), ...pair('Started', time(b.startedAt)), ...pair('Finished', time(b.finishedAt)),
      ...pair('Duration', duration(b.durationMs)),
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
      h('a', {class: 'button', id: 'download', href: d.url, download: id + '.tar.gz'}, 'Download ' + id + '.tar.gz'));
    } catch (e) {
      artifact.append(h('p', {class: 'muted'}, e.message));
    }
  }

  // The build's facts, every 3 s until it ends.
  async function poll() {
    clearTimeout(timer);
    try {
      b = await api('GET', '/builds/' + id);
      if (stopped) return;
      show();
    } catch (e) { if (!stopped) ctx.showError(e); }
    if (!stopped && !ENDED.includes(b.status)) timer = setTimeout(poll, 3000);
  }

  // The log: pages of lines after the cursor; a page waits up to 10 s for new lines.
  async function follow() {
    let cursor = null, lines = 0;
    for (;;) {
      let page;
      try {
        page = await api('GET', '/builds/' + id + '/logs', null, {format: 'json', limit: 1000, cursor, wait: ENDED.includes(b.status) ? 0 : 10});
      } catch (e) {
        if (!stopped) ctx.showError(e);
        return;
      }
      if (stopped) return;
      log.append(page.items, !ENDED.includes(page.buildStatus));
      lines += page.items.length;
      logState.textContent = lines + ' lines' + (page.nextCursor ? '; following the build…' : '; the build has ended.');
      if (page.buildStatus !== b.status) poll();
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  show();
  poll();
  follow();
  return () => { stopped = true; clearTimeout(timer); log.stop(); };
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
