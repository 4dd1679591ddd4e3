// The organization's audit log (owners and admins): every change, who made it, when, from where
// and what it set, newest first, filtered by person and kind, 50 at a time.
import {api} from './api.js';
import {h, put, time, select, busy} from './dom.js';

const CATEGORIES = [['', 'All changes'], ['organization', 'Organization'], ['plan', 'Plan'], ['github', 'GitHub'],
  ['perforce', 'Perforce'], ['project', 'Projects'], ['build_setting', 'Build settings'], ['token', 'API tokens'],
  ['agent', 'Agents'], ['webhook', 'Webhooks'], ['member', 'Members']];

export async function render(main, params, ctx) {
  ctx.title('Audit log');
  const orgPath = '/organizations/' + ctx.organization.id;
  const members = await api('GET', orgPath + '/members', null, {limit: 100});
  const filters = h('form', {class: 'row', id: 'audit-filters', onchange: () => {
    const q = new URLSearchParams();
    for (const el of filters.elements) if (el.name && el.value) q.set(el.name, el.value);
    ctx.navigate('/console/organization/audit-log' + (q.size ? '?' + q : ''), true);
  }},
  select('Kind ', 'kind', CATEGORIES, params.kind || ''),
  select('Person ', 'actor', [['', 'Everyone'], ...members.items.map(m => [m.user.id, m.user.name + ' <' + m.user.email + '>'])], params.actor || ''));
  const body = h('tbody', {});
  const more = h('button', {type: 'button', id: 'audit-more', hidden: true}, 'More');
  put(main, h('h1', {}, 'Audit log'), h('p', {class: 'muted'}, 'Changes to ' + ctx.organization.name + ', newest first, kept a year. Secrets show only as "set".'),
    filters, h('table', {id: 'audit'}, h('thead', {}, h('tr', {}, ['When', 'Who', 'What', 'Target', 'Details', 'Address'].map(t => h('th', {scope: 'col'}, t)))), body), more);

  let cursor = null;
  async function page() {
    const list = await api('GET', orgPath + '/audit-log', null, {limit: 50, cursor, kind: params.kind, actor: params.actor});
    for (const e of list.items) body.append(row(e));
    if (!body.children.length) body.append(h('tr', {}, h('td', {colspan: 6}, 'No changes recorded.')));
    cursor = list.nextCursor;
    more.hidden = !cursor;
  }
  more.addEventListener('click', () => busy(more, () => page().catch(ctx.showError)));
  await page();
}

function row(e) {
  const who = e.actor.kind === 'operator' ? 'the operator' : e.actor.kind === 'github' ? 'GitHub' : e.actor.name + ' <' + e.actor.email + '>';
  const details = Object.entries(e.details).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => k + ': ' + v).join(', ');
  return h('tr', {}, h('td', {}, time(e.at)), h('td', {}, who), h('td', {}, h('code', {}, e.kind)), h('td', {}, e.target ? h('code', {}, e.target) : '—'),
    h('td', {}, details || '—'), h('td', {}, e.address || '—'));
}
