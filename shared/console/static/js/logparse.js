// Pure functions of the log viewer (logview.js): the stages of a build log and text search.
// Nothing here touches the DOM.

// kiln's runner starts each of its stages with this line (shared/runner/reporter.go).
const KILN_STAGE = /^==> kiln: stage (.+)$/;
// AutomationTool's command banners, e.g. "********** COOK COMMAND STARTED **********".
const UAT_STARTED = /\*{10} ([A-Z]+) COMMAND STARTED \*{10}/;
const UAT_COMPLETED = /\*{10} ([A-Z]+) COMMAND COMPLETED \*{10}/;

// Stages reads a log line by line and keeps its stages: kiln's (`==> kiln: stage X` up to the next
// one) and, inside them, AutomationTool's commands (STARTED up to COMPLETED, or up to the next
// command or kiln stage when a command never completes).
// A stage: {name, kind ('kiln' | 'uat'), depth (0, 1), parent (index or -1), start (its first
// line, the banner), end (the line after its last; -1 while it goes on), errors, warnings,
// firstError (line or -1)}.
export class Stages {
  constructor() {
    this.list = [];
    this.startsAt = new Map(); // line → the stage it starts
    this.kiln = -1;            // the kiln stage going on
    this.uat = -1;             // the AutomationTool command going on
  }

  // add reads line i (its message and level) and reports whether a stage started or ended there.
  add(i, message, level) {
    let changed = false;
    const k = KILN_STAGE.exec(message);
    if (k) {
      this.close('uat', i);
      this.close('kiln', i);
      this.kiln = this.open(i, k[1], 'kiln', -1);
      return true;
    }
    const u = UAT_STARTED.exec(message);
    if (u) {
      this.close('uat', i);
      this.uat = this.open(i, u[1] + ' command', 'uat', this.kiln);
      return true;
    }
    const inner = this.current();
    if (level === 'error' || level === 'warn') {
      for (let s = inner; s >= 0; s = this.list[s].parent) {
        const st = this.list[s];
        if (level === 'warn') st.warnings++;
        else { st.errors++; if (st.firstError < 0) st.firstError = i; }
      }
    }
    if (this.uat >= 0 && UAT_COMPLETED.test(message)) {
      this.close('uat', i + 1);
      changed = true;
    }
    return changed;
  }

  // current is the innermost stage going on, -1 before the first.
  current() { return this.uat >= 0 ? this.uat : this.kiln; }

  open(i, name, kind, parent) {
    const s = this.list.length;
    this.list.push({name, kind, depth: parent < 0 ? 0 : 1, parent, start: i, end: -1, errors: 0, warnings: 0, firstError: -1});
    this.startsAt.set(i, s);
    return s;
  }

  close(which, end) {
    const s = this[which];
    if (s < 0) return;
    this.list[s].end = end;
    this[which] = -1;
  }

  // innermost is the innermost stage holding line i (its banner included), -1 for none.
  innermost(i) {
    let found = -1;
    for (let s = 0; s < this.list.length; s++) {
      const st = this.list[s];
      if (st.start <= i && (st.end < 0 || i < st.end)) found = s; // later stages are nested deeper
    }
    return found;
  }

  // chain lists stage s and the stages holding it, innermost first.
  chain(s) {
    const out = [];
    for (; s >= 0; s = this.list[s].parent) out.push(s);
    return out;
  }
}

// stageSpan is the first and the last line whose times bound stage st of a log of n lines: a
// stage that ended lasted until the line after it began (the next stage's banner), a command
// until its COMPLETED banner, one going on until its newest line.
export function stageSpan(st, n) {
  if (st.end < 0) return [st.start, n - 1];
  if (st.kind === 'uat') return [st.start, st.end - 1];
  return [st.start, Math.min(st.end, n - 1)];
}

// formatDuration writes milliseconds as "850 ms", "4.2 s", "12 s" or "3 min 05 s".
export function formatDuration(ms) {
  if (!(ms >= 0)) return '';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 10_000) return (ms / 1000).toFixed(1) + ' s';
  const s = Math.round(ms / 1000);
  if (s < 60) return s + ' s';
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = String(s % 60).padStart(2, '0');
  return h ? h + ' h ' + String(m).padStart(2, '0') + ' min' : m + ' min ' + r + ' s';
}

// countIn counts the occurrences of q (lower case, not empty) in text (lower case), not
// overlapping.
export function countIn(text, q) {
  let n = 0;
  for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + q.length)) n++;
  return n;
}

// Matches are the occurrences of a search in a log: lines[k] is the k-th line that has any and
// before[k] how many occurrences come before it, so the m-th occurrence is found by bisection.
export class Matches {
  constructor(q) {
    this.q = q.toLowerCase();
    this.lines = [];
    this.before = [];
    this.total = 0;
  }

  // scan counts the occurrences in lowered[from..] (messages in lower case).
  scan(lowered, from) {
    const q = this.q;
    if (!q) return;
    for (let i = from; i < lowered.length; i++) {
      if (lowered[i].indexOf(q) < 0) continue;
      this.lines.push(i);
      this.before.push(this.total);
      this.total += countIn(lowered[i], q);
    }
  }

  // at is the line of occurrence m (0-based) and its rank within that line.
  at(m) {
    let lo = 0, hi = this.lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.before[mid] <= m) lo = mid; else hi = mid - 1;
    }
    return [this.lines[lo], m - this.before[lo]];
  }

  // firstFrom is the first occurrence on line i or after it, -1 for none.
  firstFrom(i) {
    let lo = 0, hi = this.lines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.lines[mid] < i) lo = mid + 1; else hi = mid;
    }
    return lo < this.lines.length ? this.before[lo] : -1;
  }
}
