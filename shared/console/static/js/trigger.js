// Who or what triggered a build, from the API's trigger object: a member's name, a push and its
// commit, the schedule, or a re-run of another build (linked).
import {h} from './dom.js';

// triggerText says it in a few words, for tables.
export function triggerText(b) {
  const t = b.trigger;
  if (!t) return b.triggeredBy;
  const who = t.name || 'a former member';
  switch (t.kind) {
  case 'user': return who;
  case 'push': return 'push ' + (t.commit || '').slice(0, 10);
  case 'schedule': return 'schedule';
  case 'rerun': return 're-run by ' + who;
  }
  return b.triggeredBy;
}

// triggerView says it with a link to the build a re-run re-ran.
export function triggerView(b) {
  const t = b.trigger;
  if (!t || t.kind !== 'rerun' || !t.rerunOf) return h('span', {id: 'trigger'}, triggerText(b));
  return h('span', {id: 'trigger'}, triggerText(b) + ', of build ',
    h('a', {href: '/console/builds/' + t.rerunOf, id: 'rerun-of'}, h('code', {}, t.rerunOf)));
}
