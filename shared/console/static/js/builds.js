// Builds: the organization's builds, newest first, filtered by project, platform and status.
// While pending or running builds are shown, their statuses change live (live.js: their rooms
// joined on the socket at /socket.io/) and the list is read again every 15 s for new builds;
// otherwise, or where the socket cannot connect or drops and cannot connect again, every 3 s.
import {api, PLATFORMS, STATUSES} from './api.js';
import {h, put, select, time, duration, status, buildLabel} from './dom.js';
import {triggerText} from './trigger.js';
import {liveSocket} from './live.js';

const EVERY_MS = 3000, LIVE_EVERY_MS = 15000;
const ENDED = ['complete', 'failed', 'superseded'];

export async function render(main, params, ctx) {
  const projects = (await api('GET', '/projects', null, {limit: 100})).items;
  const names = Object.fromEntries(projects.map(p => [p.id, p.name]));
  const filters = {projectId: params.projectId || '', platform: params.platform || '', status: params.status || ''};
  const body = h('tbody', {});
  const more = h('button', {type: 'button', class: 'secondary', hidden: true}, 'Older builds');
  const caption = h('p', {class: 'muted', 'aria-live': 'polite'});
  const form = h('form', {class: 'row', 'aria-label': 'Filters', onchange: () => {
    for (const el of form.elements) if (el.name) filters[el.name] = el.value;
    const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
    history.replaceState(null, '', '/console/' + (q.size ? '?' + q : ''));
    refresh(true);
  }, onsubmit: (ev) => ev.preventDefault()},
  select('Project', 'projectId', [['', 'All projects'], ...projects.map(p => [p.id, p.name])], filters.projectId),
  select('Platform', 'platform', [['', 'All platforms'], ...PLATFORMS], filters.platform),
  select('Status', 'status', [['', 'All statuses'], ...STATUSES], filters.status));
  put(main, h('h1', {}, 'Builds'), form,
    h('table', {id: 'builds'}, h('caption', {class: 'muted'}, caption),
      h('thead', {}, h('tr', {}, ['Build', 'Status', 'Project', 'Platform', 'Type', 'Engine', 'Branch', 'Commit', 'Created', 'Duration', 'Triggered by', 'Failure'].map(t => h('th', {scope: 'col'}, t)))),
      body), more);

  // An organization without builds: what it still lacks (start.js), read once while the list
  // stays empty.
  const start = h('div', {});
  let startShown = false;
  main.append(start);
  async function showStart() {
    try {
      const section = await (await import('./start.js')).gettingStarted(ctx);
      if (!stopped) start.replaceChildren(section);
    } catch (e) { if (!stopped) ctx.showError(e); }
  }

  let cursor = null, timer = null, stopped = false, older = [];
  const shown = new Map(); // build id → the build as its row shows it
  const row = (b) => h('tr', {'data-build': b.id, 'data-status': b.status},
    h('td', {}, h('a', {href: '/console/builds/' + b.id, title: b.id}, b.number ? buildLabel(b) : h('code', {}, buildLabel(b)))),
    h('td', {}, status(b.status)), h('td', {}, names[b.projectId] || h('span', {class: 'muted'}, 'deleted project')),
    h('td', {}, b.platform), h('td', {}, b.buildType), h('td', {}, b.ueVersion), h('td', {}, b.branch || '—'),
    h('td', {}, h('code', {}, (b.changelist || b.commit || '—').slice(0, 10))), h('td', {}, time(b.createdAt)), h('td', {}, duration(b.durationMs)),
    h('td', {class: 'trigger'}, triggerText(b)), h('td', {class: 'failure', title: b.failureReason || ''}, b.failureReason || ''));
  const rows = (bs) => bs.map(b => { shown.set(b.id, b); return row(b); });

  // The socket, opened once a pending or running build is shown: those rows follow their
  // build:status. Given up, it is not opened again on this page.
  let socket = null;
  const live = () => socket && !socket.down;
  function watch() {
    for (const [id, b] of shown) {
      const wanted = !ENDED.includes(b.status);
      if (wanted && !socket) socket = liveSocket({onDown: () => { if (!stopped) refresh(false); }});
      if (wanted && !socket.has(id)) socket.join(id, null, {status: (s) => changed(id, s)});
      if (!wanted && socket && socket.has(id)) socket.leave(id);
    }
  }
  function changed(id, s) {
    const b = shown.get(id), tr = body.querySelector(`tr[data-build="${id}"]`);
    if (!b || !tr) return;
    Object.assign(b, {status: s.status, startedAt: s.startedAt, finishedAt: s.finishedAt, failureReason: s.failureReason});
    if (s.startedAt && s.finishedAt) b.durationMs = Date.parse(s.finishedAt) - Date.parse(s.startedAt);
    tr.replaceWith(row(b));
    if (ENDED.includes(s.status)) socket.leave(id);
  }

  async function refresh(reset) {
    clearTimeout(timer);
    if (reset) older = [];
    let every = live() ? LIVE_EVERY_MS : EVERY_MS;
    try {
      const page = await api('GET', '/builds', null, {...filters, limit: 25});
      if (stopped) return;
      shown.clear();
      put(body, rows(page.items), rows(older));
      const filtered = !!(filters.projectId || filters.platform || filters.status);
      if (!page.items.length) put(body, h('tr', {}, h('td', {colspan: 12, class: 'muted'}, 'No builds yet' + (filtered ? ' match these filters.' : '.'))));
      if (page.items.length || filtered) { startShown = false; start.replaceChildren(); } else if (!startShown) { startShown = true; await showStart(); }
      if (!older.length) { cursor = page.nextCursor; more.hidden = !cursor; }
      if (socket) for (const id of [...socket.joined()]) if (!shown.has(id)) socket.leave(id);
      watch();
      every = live() ? LIVE_EVERY_MS : EVERY_MS;
      caption.textContent = 'Updated ' + new Date().toLocaleTimeString() + (live() ? '; statuses change live, new builds show within ' + every / 1000 + ' s.' : '; refreshes every ' + every / 1000 + ' s.');
    } catch (e) {
      if (stopped) return;
      ctx.showError(e);
    }
    if (!stopped) timer = setTimeout(() => refresh(false), every);
  }
  more.addEventListener('click', async () => {
    try {
      const page = await api('GET', '/builds', null, {...filters, limit: 25, cursor});
      older.push(...page.items);
      body.append(...rows(page.items));
      watch();
      cursor = page.nextCursor;
      more.hidden = !cursor;
    } catch (e) { ctx.showError(e); }
  });
  await refresh(true);
  return () => { stopped = true; clearTimeout(timer); if (socket) socket.close(); };
}
