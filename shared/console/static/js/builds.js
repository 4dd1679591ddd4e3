// Builds: the organization's builds, newest first, filtered by project, platform and status,
// refreshed every few seconds.
import {api, PLATFORMS, STATUSES} from './api.js';
import {h, put, select, time, duration, status, buildLabel} from './dom.js';
import {triggerText} from './trigger.js';

const EVERY_MS = 3000;

export async function render(main, params, ctx) {
  const projects = (await api('GET', '/projects', null, {limit: 100})).items;
  const names = Object.fromEntries(projects.map(p => [p.id, p.name]));
  const filters = {projectId: params.projectId || '', platform: params.platform || '', status: params.status || ''};
  const body = h('tbody', {});
  const more = h('button', {type: 'button', class: 'secondary', hidden: true}, 'Older builds');
  const live = h('p', {class: 'muted', 'aria-live': 'polite'});
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
    h('table', {id: 'builds'}, h('caption', {class: 'muted'}, live),
      h('thead', {}, h('tr', {}, ['Build', 'Status', 'Project', 'Platform', 'Type', 'Engine', 'Branch', 'Commit', 'Created', 'Duration', 'Triggered by', 'Failure'].map(t => h('th', {scope: 'col'}, t)))),
      body), more);

  let cursor = null, timer = null, stopped = false, older = [];
  const row = (b) => h('tr', {'data-build': b.id},
    h('td', {}, h('a', {href: '/console/builds/' + b.id, title: b.id}, b.number ? buildLabel(b) : h('code', {}, buildLabel(b)))),
    h('td', {}, status(b.status)), h('td', {}, names[b.projectId] || h('span', {class: 'muted'}, 'deleted project')),
    h('td', {}, b.platform), h('td', {}, b.buildType), h('td', {}, b.ueVersion), h('td', {}, b.branch || '—'),
    h('td', {}, h('code', {}, (b.changelist || b.commit || '—').slice(0, 10))), h('td', {}, time(b.createdAt)), h('td', {}, duration(b.durationMs)),
    h('td', {class: 'trigger'}, triggerText(b)), h('td', {class: 'failure', title: b.failureReason || ''}, b.failureReason || ''));

  async function refresh(reset) {
    clearTimeout(timer);
    if (reset) older = [];
    try {
      const page = await api('GET', '/builds', null, {...filters, limit: 25});
      if (stopped) return;
      put(body, page.items.map(row), older.map(row));
      if (!page.items.length) put(body, h('tr', {}, h('td', {colspan: 12, class: 'muted'}, 'No builds yet' + (filters.projectId || filters.platform || filters.status ? ' match these filters.' : '.'))));
      if (!older.length) { cursor = page.nextCursor; more.hidden = !cursor; }
      live.textContent = 'Updated ' + new Date().toLocaleTimeString() + '; refreshes every ' + EVERY_MS / 1000 + ' s.';
    } catch (e) {
      if (stopped) return;
      ctx.showError(e);
    }
    if (!stopped) timer = setTimeout(() => refresh(false), EVERY_MS);
  }
  more.addEventListener('click', async () => {
    try {
      const page = await api('GET', '/builds', null, {...filters, limit: 25, cursor});
      older.push(...page.items);
      body.append(...page.items.map(row));
      cursor = page.nextCursor;
      more.hidden = !cursor;
    } catch (e) { ctx.showError(e); }
  });
  await refresh(true);
  return () => { stopped = true; clearTimeout(timer); };
}
