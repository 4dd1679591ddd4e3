// Sign in with GitHub: the console makes a state, keeps it in this tab, and sends the browser to
// GitHub through the API; GitHub sends it back to /console/signin/github with a code and the state,
// and the console trades the code for a session only if the state is the one it made.
import {api, token, forgetMe} from './api.js';
import {h, put} from './dom.js';

const STATE = 'kiln.signin.state', NEXT = 'kiln.signin.next';
export const CALLBACK = '/console/signin/github';

let methodsCache = null;
// methods is GET /auth/methods: {github, token}; should it fail, the token form alone.
export function methods() {
  if (!methodsCache) {
    methodsCache = api('GET', '/auth/methods', null, null, {anonymous: true})
      .catch(() => { methodsCache = null; return {github: false, token: true}; });
  }
  return methodsCache;
}

// start goes to GitHub; after signing in the console opens next (a console path).
export function start(next) {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const state = btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  sessionStorage.setItem(STATE, state);
  sessionStorage.setItem(NEXT, next && next.startsWith('/console/') ? next : '/console/');
  location.assign('/auth/github/signin?state=' + encodeURIComponent(state));
}

// button is the "Sign in with GitHub" button, going on to next afterwards.
export function button(next, text) {
  return h('button', {type: 'button', id: 'signin-github', onclick: () => start(next)}, text || 'Sign in with GitHub');
}

// finish runs on the callback page: it checks the state, trades the code for a session, keeps
// the session's secret in this tab and answers the console path to open next.
export async function finish(main, ctx) {
  const q = new URLSearchParams(location.search);
  history.replaceState(null, '', CALLBACK); // the code is used once; keep it out of the history
  const want = sessionStorage.getItem(STATE), next = sessionStorage.getItem(NEXT) || '/console/';
  sessionStorage.removeItem(STATE);
  sessionStorage.removeItem(NEXT);
  ctx.title('Signing in');
  put(main, h('p', {class: 'muted'}, 'Signing in…'));
  if (q.get('error')) throw new Error('GitHub did not sign you in: ' + (q.get('error_description') || q.get('error')));
  if (!want || q.get('state') !== want || !q.get('code')) {
    throw new Error('This sign-in was not started in this browser tab, or was already used; sign in again.');
  }
  const body = await api('POST', '/auth/github/session', {code: q.get('code')}, null, {anonymous: true});
  token.set(body.token);
  forgetMe();
  return next;
}
