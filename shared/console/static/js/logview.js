// The build log viewer: numbered lines, each a link to itself (#L<seq>); timestamps on demand;
// kiln's stages and AutomationTool's commands folded, with their durations (the stage holding
// the first error opens, and while the build runs so does the newest one); search with a match
// count; a jump to the first error; the raw text log as a download.
//
// Lines live in arrays, not in the DOM: the log is a list of rows of one fixed height (a row is
// a stage's banner or a line of an open stage) and only the rows in sight, and a few around
// them, are elements. The rows above and below them are stood for by blocks of 2^k rows' height
// (app.css's .pad-k: no inline style). So a 200,000-line log draws and searches about as fast
// as a short one.
import {token} from './api.js';
import {h} from './dom.js';
import {Stages, Matches, stageSpan, formatDuration} from './logparse.js';

const ROW = 24;      // px: a row's height, as app.css's .log-row says
const AROUND = 15;   // rows drawn above and below the visible ones

// logView builds the viewer of build id's log. Its el goes in the page; append takes each page
// of the JSON log (live: the build is still running).
export function logView(id) {
  const seqs = [], msgs = [], times = [], levels = [];
  const lowered = []; // msgs in lower case, for search
  const stages = new Stages();
  let rows = [];      // ≥ 0: line index; < 0: -1 - stage index (its banner)
  const open = [];    // per stage: drawn unfolded
  const kept = [];    // per stage: opened by the reader, or holding the first error: never folded by the follower
  let firstError = -1, target = -1, wanted = targetSeq();
  let running = false, following = false; // the build runs; it ran while this page showed it
  let matches = null, current = -1, showTimes = false;
  let now = () => Date.now(); // the server's clock, as the page judges it (setClock)

  const rowsEl = h('div', {class: 'log-rows'});
  const el = h('div', {class: 'log', id: 'log', tabindex: 0, role: 'region', 'aria-label': 'Build log', 'data-lines': 0}, rowsEl);
  const search = h('input', {type: 'search', id: 'log-search', placeholder: 'Search the log', 'aria-label': 'Search the log', autocomplete: 'off', spellcheck: 'false'});
  const count = h('span', {id: 'log-count', class: 'muted', 'aria-live': 'polite'});
  const prev = h('button', {type: 'button', class: 'secondary', id: 'log-prev', 'aria-label': 'Previous match', disabled: true}, '↑');
  const next = h('button', {type: 'button', class: 'secondary', id: 'log-next', 'aria-label': 'Next match', disabled: true}, '↓');
  const errButton = h('button', {type: 'button', class: 'secondary', id: 'log-first-error', disabled: true}, 'First error');
  const timesBox = h('input', {type: 'checkbox', id: 'log-times'});
  const raw = h('button', {type: 'button', class: 'secondary', id: 'log-raw'}, 'Download raw log');
  const bar = h('div', {class: 'logbar', role: 'toolbar', 'aria-label': 'Log tools'},
    search, count, prev, next, errButton, h('label', {class: 'check'}, timesBox, 'Timestamps'), raw);

  search.addEventListener('input', () => find(search.value));
  search.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter') return;
    ev.preventDefault();
    step(ev.shiftKey ? -1 : 1);
  });
  prev.addEventListener('click', () => step(-1));
  next.addEventListener('click', () => step(1));
  errButton.addEventListener('click', () => { if (firstError >= 0) point(firstError); });
  timesBox.addEventListener('change', () => { showTimes = timesBox.checked; el.classList.toggle('with-times', showTimes); draw(); });
  raw.addEventListener('click', () => downloadRaw(raw, id));
  let pending = false;
  el.addEventListener('scroll', () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  });
  el.addEventListener('click', (ev) => {
    const a = ev.target.closest('a.ln');
    if (a) { // a line's link: the page stays, the address names the line
      ev.preventDefault();
      point(Number(a.dataset.line));
      return;
    }
    const fold = ev.target.closest('button.log-fold');
    if (fold) toggle(Number(fold.dataset.stage));
  });
  addEventListener('hashchange', onHash);

  // append adds a page of lines ({seq, timestamp, level, message}); live: the build still runs.
  function append(items, live) {
    running = live;
    following ||= live;
    const from = msgs.length, atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW;
    let restage = false;
    for (const l of items) {
      const i = msgs.length;
      seqs.push(l.seq); msgs.push(l.message); times.push(l.timestamp); levels.push(l.level);
      lowered.push(l.message.toLowerCase());
      if (stages.add(i, l.message, l.level)) {
        restage = true;
        const s = stages.startsAt.get(i);
        if (s !== undefined) {
          open[s] = false; kept[s] = false;
          if (following) follow(s);
        }
      }
      if (l.level === 'error' && firstError < 0) {
        firstError = i;
        for (const s of stages.chain(stages.innermost(i))) { open[s] = true; kept[s] = true; }
        restage = true;
        errButton.disabled = false;
      }
    }
    if (restage) layout();
    else if (visible(stages.current())) for (let i = from; i < msgs.length; i++) rows.push(i);
    el.dataset.lines = msgs.length;
    if (matches) { matches.scan(lowered, from); showCount(); }
    if (wanted > 0 && target < 0) {
      const i = lineOf(wanted);
      if (i >= 0) { point(i, true); return; }
    }
    draw(atEnd && target < 0 ? Infinity : undefined);
  }

  // follow opens the newest stage s of a running build and folds the ones it opened before.
  function follow(s) {
    const mine = stages.chain(s);
    for (let o = 0; o < stages.list.length; o++) if (open[o] && !kept[o] && !mine.includes(o)) open[o] = false;
    for (const o of mine) open[o] = true;
  }

  function visible(s) {
    for (; s >= 0; s = stages.list[s].parent) if (!open[s]) return false;
    return true;
  }

  // layout lists the rows again after stages opened or closed.
  function layout() {
    rows = [];
    const n = msgs.length;
    for (let i = 0; i < n;) {
      const s = stages.startsAt.get(i);
      if (s === undefined) { rows.push(i++); continue; }
      rows.push(-1 - s);
      const end = stages.list[s].end;
      i = open[s] ? i + 1 : (end < 0 ? n : end);
    }
  }

  function toggle(s) {
    open[s] = !open[s];
    kept[s] = open[s];
    layout();
    draw();
    el.querySelector(`button.log-fold[data-stage="${s}"]`)?.focus();
  }

  // rowOf is the row showing line i (its stage's banner row for a banner), by bisection.
  function rowOf(i) {
    let lo = 0, hi = rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lineAt(rows[mid]) < i) lo = mid + 1; else hi = mid;
    }
    return lineAt(rows[lo]) === i ? lo : -1;
  }
  function lineAt(r) { return r >= 0 ? r : stages.list[-1 - r].start; }

  function lineOf(seq) {
    const i = seq - seqs[0];
    return i >= 0 && i < seqs.length && seqs[i] === seq ? i : seqs.indexOf(seq);
  }

  // point opens the stages holding line i, scrolls it to the middle and highlights it; the
  // address names it (#L<seq>). A line the address named (a link followed) is put in the middle
  // of the window, the page scrolled to the log.
  function point(i, fromAddress) {
    target = i;
    wanted = seqs[i];
    if (!fromAddress && location.hash !== '#L' + seqs[i]) history.replaceState(history.state, '', '#L' + seqs[i]);
    reveal(i, fromAddress);
  }

  function reveal(i, onPage) {
    let changed = false;
    for (const s of stages.chain(stages.innermost(i))) {
      if (stages.list[s].start === i && s === stages.innermost(i)) continue; // a banner shows folded
      if (!open[s]) { open[s] = true; kept[s] = true; changed = true; }
    }
    if (changed) layout();
    const r = rowOf(i);
    if (r < 0) return draw();
    let at = (el.clientHeight - ROW) / 2; // px from the log's top to the row's
    if (!onPage) return draw(r * ROW - at);
    // The log in the middle of the window, the row in the middle of the window within it; near
    // the log's top or end, where the log cannot scroll so far, the window makes up what it can.
    const box = el.getBoundingClientRect();
    scrollBy(0, box.top + box.height / 2 - innerHeight / 2);
    at = Math.min(Math.max(innerHeight / 2 - ROW / 2 - el.getBoundingClientRect().top, 0), el.clientHeight - ROW);
    draw(r * ROW - at);
    const row = rowsEl.querySelector('.log-row.target');
    if (row) { const a = row.getBoundingClientRect(); scrollBy(0, a.top + a.height / 2 - innerHeight / 2); }
  }

  function onHash() {
    wanted = targetSeq();
    target = -1;
    const i = wanted > 0 ? lineOf(wanted) : -1;
    if (i >= 0) point(i, true); else draw();
  }

  // find searches the log for q (case blind) and goes to the first occurrence.
  function find(q) {
    if (!q) { matches = null; current = -1; showCount(); draw(); return; }
    matches = new Matches(q);
    matches.scan(lowered, 0);
    current = matches.total ? 0 : -1;
    showCount();
    if (current >= 0) reveal(matches.at(0)[0]); else draw();
  }

  function step(d) {
    if (!matches || !matches.total) return;
    current = (current + d + matches.total) % matches.total;
    showCount();
    reveal(matches.at(current)[0]);
  }

  function showCount() {
    const n = matches ? matches.total : 0;
    count.textContent = !matches ? '' : n ? `${current + 1} of ${n} ${n === 1 ? 'match' : 'matches'}` : 'no matches';
    prev.disabled = next.disabled = n === 0;
  }

  // draw makes the elements of the rows in sight, scrolled to top (px; Infinity: the bottom) or
  // where the log is scrolled.
  function draw(top) {
    const height = el.clientHeight || 480;
    top = Math.max(0, Math.min(top === undefined ? el.scrollTop : top, rows.length * ROW - height));
    const first = Math.max(0, Math.floor(top / ROW) - AROUND);
    const last = Math.min(rows.length, Math.ceil((top + height) / ROW) + AROUND);
    const out = [];
    const cur = matches && current >= 0 ? matches.at(current) : null;
    for (let k = first; k < last; k++) out.push(rows[k] >= 0 ? lineRow(rows[k], cur) : stageRow(-1 - rows[k], cur));
    rowsEl.replaceChildren(...out);
    el.replaceChildren(...pads(first), rowsEl, ...pads(rows.length - last));
    if (el.scrollTop !== top) el.scrollTop = top;
  }

  function lineRow(i, cur) {
    const s = stages.innermost(i);
    return h('div', {class: 'log-row depth-' + (s < 0 ? 0 : stages.list[s].depth + 1) + (i === target ? ' target' : ''), 'data-seq': seqs[i]},
      number(i), stamp(i),
      h('span', {class: 'log-line level-' + levels[i]}, marked(i, cur)));
  }

  function stageRow(s, cur) {
    const st = stages.list[s], i = st.start;
    const [a, b] = stageSpan(st, msgs.length);
    const going = st.end < 0 && running;
    // A stage still running has lasted until now, not until its last line.
    const took = formatDuration((going ? Math.max(now(), Date.parse(times[b])) : Date.parse(times[b])) - Date.parse(times[a]));
    return h('div', {class: 'log-row log-stage depth-' + st.depth + (i === target ? ' target' : ''), 'data-seq': seqs[i], 'data-stage-name': st.name},
      number(i), stamp(i),
      h('button', {type: 'button', class: 'log-fold', 'data-stage': s, 'aria-expanded': String(!!open[s])},
        h('span', {class: 'log-caret', 'aria-hidden': 'true'}, open[s] ? '▾ ' : '▸ '), marked(i, cur)),
      h('span', {class: 'dur'}, going ? ' ' + took + ' so far' : ' ' + took),
      st.errors ? h('span', {class: 'n-error'}, ` · ${st.errors} ${st.errors === 1 ? 'error' : 'errors'}`) : null,
      st.warnings ? h('span', {class: 'n-warn'}, ` · ${st.warnings} ${st.warnings === 1 ? 'warning' : 'warnings'}`) : null);
  }

  function number(i) {
    return h('a', {class: 'ln', href: '#L' + seqs[i], 'data-line': i, 'aria-label': 'Line ' + seqs[i]}, String(seqs[i]));
  }

  function stamp(i) {
    if (!showTimes) return null;
    const d = new Date(times[i]);
    if (isNaN(d)) return h('span', {class: 'ts'}, '');
    return h('span', {class: 'ts', title: times[i]}, d.toTimeString().slice(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0'));
  }

  // marked is line i's message with the search's occurrences in <mark>, the current one marked so.
  function marked(i, cur) {
    const m = msgs[i];
    if (!matches || !matches.q || lowered[i].indexOf(matches.q) < 0) return m;
    const q = matches.q, low = lowered[i], out = [];
    let at = 0, k = 0;
    for (let f = low.indexOf(q); f >= 0; f = low.indexOf(q, f + q.length), k++) {
      out.push(m.slice(at, f), h('mark', {class: cur && cur[0] === i && cur[1] === k ? 'current' : null}, m.slice(f, f + q.length)));
      at = f + q.length;
    }
    out.push(m.slice(at));
    return out;
  }

  // tick redraws the rows in sight: the running stage's time so far goes on. setClock gives the
  // server's time (the log's timestamps are the server's).
  const tick = () => { if (running) draw(); };
  const setClock = (fn) => { now = fn; };
  return {el: h('div', {class: 'logview'}, bar, el), append, tick, setClock, stop: () => removeEventListener('hashchange', onHash)};
}

// pads stands for n rows: one block of 2^k rows for each bit k of n (app.css: .pad-0 to .pad-19).
function pads(n) {
  const out = [];
  for (let big = Math.floor(n / 2 ** 20); big > 0; big--) out.push(h('div', {class: 'pad-19'}), h('div', {class: 'pad-19'}));
  for (let k = 0; k < 20; k++) if (n & (1 << k)) out.push(h('div', {class: 'pad-' + k}));
  return out;
}

// targetSeq is the line the address names (#L<seq>), 0 for none.
function targetSeq() {
  const m = /^#L(\d+)$/.exec(location.hash);
  return m ? Number(m[1]) : 0;
}

// downloadRaw saves the text log (GET /builds/:id/logs) as <id>.log: fetched with the token,
// then handed to the browser as a file.
async function downloadRaw(button, id) {
  button.disabled = true;
  try {
    const resp = await fetch('/builds/' + encodeURIComponent(id) + '/logs', {headers: {Authorization: 'Bearer ' + token.get()}, cache: 'no-store', credentials: 'omit'});
    if (!resp.ok) throw new Error('HTTP ' + resp.status);
    const url = URL.createObjectURL(await resp.blob());
    const a = h('a', {href: url, download: id + '.log', hidden: true});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (e) {
    button.after(h('span', {class: 'muted', role: 'status'}, ' The raw log could not be downloaded: ' + e.message));
  } finally {
    button.disabled = false;
  }
}
