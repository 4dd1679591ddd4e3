// A running build's progress: its stage and a bar with the estimated time left, from the
// latest complete builds of its setting (the API's progress). Nothing for a build not running.
import {h, duration} from './dom.js';

// progressView renders b's progress into el (emptied for a build not running); elapsed is the
// build's time so far now (the page's clock ticks it), the estimate's as of when it was read.
export function progressView(el, b, elapsed) {
  el.replaceChildren();
  if (b.status !== 'running') return;
  const p = b.progress;
  const stage = b.stage ? 'Stage: ' + b.stage : 'Starting';
  const since = elapsed ?? (p && p.elapsedMs);
  const took = since === null || since === undefined ? '' : ' · ' + duration(since) + ' elapsed';
  if (!p) {
    el.append(h('p', {id: 'progress-text'}, stage + took + ' · no estimate yet (no complete build of this setting to judge by)'));
    return;
  }
  const left = p.overrun
    ? 'taking longer than the last ' + plural(p.basedOn) + ' (time left unknown)'
    : 'about ' + duration(Math.max(0, p.remainingMs - Math.max(0, (since ?? p.elapsedMs) - p.elapsedMs))) + ' left';
  const text = stage + ' · ' + p.percent + '% · ' + duration(since) + ' elapsed · ' + left;
  // A native <progress>: a progressbar to assistive technology, drawn without any style from
  // script (the console's CSP allows no inline styles).
  el.append(
    h('progress', {class: 'progress', id: 'progress', max: 100, value: p.percent, 'aria-label': 'Build progress',
      'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': p.percent, 'aria-valuetext': text}, p.percent + '%'),
    h('p', {id: 'progress-text'}, text, h('span', {class: 'muted'}, ' (estimated from the last ' + plural(p.basedOn) + ')')));
}

function plural(n) { return n === 1 ? 'complete build' : n + ' complete builds'; }
