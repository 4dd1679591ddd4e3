// A running build's progress: its stage and a bar with the estimated time left, from the
// latest complete builds of its setting (the API's progress). Nothing for a build not running.
import {h, duration} from './dom.js';

// progressView renders b's progress into el (emptied for a build not running).
export function progressView(el, b) {
  el.replaceChildren();
  if (b.status !== 'running') return;
  const p = b.progress;
  const stage = b.stage ? 'Stage: ' + b.stage : 'Starting';
  if (!p) {
    el.append(h('p', {id: 'progress-text'}, stage + ' · no estimate yet (no complete build of this setting to judge by)'));
    return;
  }
  const left = p.overrun
    ? 'taking longer than the last ' + plural(p.basedOn) + ' (time left unknown)'
    : 'about ' + duration(p.remainingMs) + ' left';
  const text = stage + ' · ' + p.percent + '% · ' + duration(p.elapsedMs) + ' elapsed · ' + left;
  // A native <progress>: a progressbar to assistive technology, drawn without any style from
  // script (the console's CSP allows no inline styles).
  el.append(
    h('progress', {class: 'progress', id: 'progress', max: 100, value: p.percent, 'aria-label': 'Build progress',
      'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': p.percent, 'aria-valuetext': text}, p.percent + '%'),
    h('p', {id: 'progress-text'}, text, h('span', {class: 'muted'}, ' (estimated from the last ' + plural(p.basedOn) + ')')));
}

function plural(n) { return n === 1 ? 'complete build' : n + ' complete builds'; }
