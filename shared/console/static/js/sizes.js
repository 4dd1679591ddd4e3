// The size report of a complete build: what grew, shrank, appeared and vanished against a base
// build (GET /builds/:id/size-diff), and the files of its artifact (GET /builds/:id/manifest).
import {api} from './api.js';
import {h, put, bytes, time} from './dom.js';

export async function sizeReport(section, b, ctx) {
  put(section, h('h2', {id: 'sizes-h'}, 'Size report'));
  let bases;
  try {
    bases = (await api('GET', '/builds', null, {projectId: b.projectId, platform: b.platform, buildType: b.buildType, status: 'complete', limit: 50}))
      .items.filter(x => x.id !== b.id);
  } catch (e) { ctx.showError(e); return; }
  const diff = h('div', {id: 'size-diff'});
  const older = bases.filter(x => x.createdAt < b.createdAt);
  const picker = h('select', {id: 'base', name: 'base', onchange: () => compare(picker.value)},
    h('option', {value: ''}, bases.length ? 'Choose a base build' : 'No other complete build to compare with'),
    bases.map(x => h('option', {value: x.id}, `${x.id.slice(-8)} · ${x.branch || x.changelist || ''} · ${time(x.createdAt)}`)));
  section.append(h('div', {class: 'row'}, h('label', {for: 'base'}, 'Compare with base build'), picker), diff);

  async function compare(base) {
    if (!base) return put(diff);
    try {
      const d = await api('GET', '/builds/' + b.id + '/size-diff', null, {base, limit: 200});
      const sign = (n) => h('span', {class: n > 0 ? 'delta-up' : n < 0 ? 'delta-down' : ''}, (n > 0 ? '+' : '') + bytes(n));
      put(diff, h('p', {}, `${bytes(d.baseBytes)} → ${bytes(d.bytes)} (`, sign(d.deltaBytes), `); ${d.baseFiles} → ${d.files} files, ${d.changedFiles} changed.`),
        h('table', {}, h('thead', {}, h('tr', {}, ['File', 'Change', 'Base', 'This build', 'Δ'].map((t, i) => h('th', {scope: 'col', class: i > 1 ? 'num' : null}, t)))),
          h('tbody', {}, d.items.map(i => h('tr', {}, h('td', {}, h('code', {}, i.path)), h('td', {}, i.change),
            h('td', {class: 'num'}, bytes(i.baseBytes)), h('td', {class: 'num'}, bytes(i.bytes)), h('td', {class: 'num'}, sign(i.deltaBytes)))))));
    } catch (e) { ctx.showError(e); }
  }

  // The manifest, a page at a time.
  const files = h('tbody', {});
  const more = h('button', {type: 'button', class: 'secondary', hidden: true}, 'More files');
  let cursor = null;
  async function page() {
    try {
      const m = await api('GET', '/builds/' + b.id + '/manifest', null, {limit: 100, cursor});
      files.append(...m.items.map(f => h('tr', {}, h('td', {}, h('code', {}, f.path)), h('td', {class: 'num'}, bytes(f.sizeBytes)))));
      cursor = m.nextCursor;
      more.hidden = !cursor;
    } catch (e) {
      put(files, h('tr', {}, h('td', {colspan: 2, class: 'muted'}, e.message)));
    }
  }
  more.addEventListener('click', page);
  section.append(h('h3', {}, 'Files'), h('table', {id: 'manifest'}, h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Path'), h('th', {scope: 'col', class: 'num'}, 'Size'))), files), more);
  await page();
  if (older.length) { picker.value = older[0].id; compare(older[0].id); }
}
