// The console's shell: sign-in, navigation, the error area, and one page module per route.
import {api, token, me, forgetMe, whenUnauthorized, borrowToken, forgetEverywhere} from './api.js';
import {h, put} from './dom.js';
import * as builds from './builds.js';
import * as github from './signin.js';

const main = document.getElementById('main');
const errors = document.getElementById('errors');
const nav = document.getElementById('nav');
const who = document.getElementById('who');

// Routes: path below /console/ → page module (loaded on first use), its parameter and the page's
// title (a page may name itself more precisely with ctx.title, e.g. the build's number).
const routes = [
  [/^$/, () => Promise.resolve(builds), '', 'Builds'],
  [/^builds\/([\w-]+)$/, () => import('./build.js'), 'id', 'Build'],
  [/^projects$/, () => import('./projects.js'), '', 'Projects'],
  [/^projects\/([\w-]+)$/, () => import('./project.js'), 'id', 'Project'],
  [/^organization$/, () => import('./org.js'), '', 'Organization'],
  [/^organization\/audit-log$/, () => import('./auditlog.js'), '', 'Audit log'],
  [/^account$/, () => import('./account.js'), '', 'Your account'],
];

// title names the page in the browser's tab and for screen readers: "<what> · kiln".
export function title(what) { document.title = what + ' · kiln'; }

// The last thing the person did (a click, a submit, a change) and when: an error that follows it
// within ACTED_MS is its answer.
const ACTED_MS = 15000;
let acted = 0;
for (const type of ['click', 'submit', 'change', 'keydown']) addEventListener(type, (ev) => { if (ev.isTrusted) acted = Date.now(); }, true);

// showError puts an API error (message and request id) or any other error in the alert area (a
// live region: screen readers say it). An error that answers what the person just did is also
// brought where the eye is: the page scrolls to it and the focus moves to it. One from a refresh
// in the background leaves the page and the focus where they are.
export function showError(err) {
  const rid = err && err.requestId;
  const box = h('div', {class: 'error'},
    h('div', {}, h('strong', {}, err.code ? err.code + ': ' : 'Error: '), err.message || String(err),
      err.fields ? h('ul', {}, Object.entries(err.fields).map(([k, v]) => h('li', {}, h('code', {}, k), ': ' + v))) : null,
      rid ? h('div', {class: 'rid'}, 'request id: ' + rid) : null),
    h('button', {type: 'button', onclick: () => box.remove(), 'aria-label': 'Dismiss error'}, 'Dismiss'));
  errors.append(box);
  if (Date.now() - acted < ACTED_MS) {
    box.tabIndex = -1;
    box.scrollIntoView({block: 'center'});
    box.focus({preventScroll: true});
  }
}

export function clearErrors() { errors.replaceChildren(); }

// navigate shows the page at a console path, e.g. '/console/builds/abc'.
export function navigate(path, replace) {
  if (replace) history.replaceState(null, '', path); else history.pushState(null, '', path);
  render();
}

let stop = null; // the current page's cleanup (polling)
let shown = 0;    // counts renders, so a page that finishes loading after the user moved on stops at once

async function render() {
  if (stop) { stop(); stop = null; }
  const mine = ++shown;
  clearErrors();
  if (location.pathname === github.CALLBACK) {
    nav.hidden = true;
    put(who);
    try {
      return navigate(await github.finish(main, {title}), true);
    } catch (e) {
      await signIn();
      return showError(e);
    }
  }
  // A tab opened on a console link signs in with the token of the console's other tabs.
  if (!token.get()) {
    await borrowToken();
    if (mine !== shown) return;
    if (token.get()) forgetMe();
  }
  // An invitation's link works signed in or out: it makes a new member.
  if (location.pathname === '/console/invitations/accept') {
    nav.hidden = true;
    put(who);
    const page = await import('./invitations.js');
    return page.renderAccept(main, {showError, clearErrors, navigate, title});
  }
  if (!token.get()) return signIn();
  let ctx;
  try {
    ctx = await me();
  } catch (e) {
    if (e.status === 401) return;
    return showError(e);
  }
  if (mine !== shown) return;
  let rest = location.pathname.replace(/^\/console\/?/, '');
  // A session that acts for no organization yet: the account page, to create or switch to one.
  if (!ctx.organization && rest !== 'account') {
    history.replaceState(null, '', '/console/account');
    rest = 'account';
  }
  nav.hidden = !ctx.organization;
  put(who, h('span', {}, ctx.user.name, ctx.organization ? [' · ' + ctx.organization.name + ' · ', h('strong', {}, ctx.membership.role)] : null),
    ctx.session ? h('a', {href: '/console/account', id: 'account'}, ctx.organizations.length > 1 ? 'Switch organization' : 'Account') : null,
    h('button', {type: 'button', id: 'signout', onclick: () => signOut(ctx)}, 'Sign out'));
  for (const a of nav.querySelectorAll('a')) {
    const target = a.getAttribute('href').replace(/^\/console\/?/, '');
    a.toggleAttribute('aria-current', target === '' ? rest === '' || rest.startsWith('builds') : rest.startsWith(target));
    if (a.hasAttribute('aria-current')) a.setAttribute('aria-current', 'page');
  }
  for (const [re, load, param, name] of routes) {
    const m = rest.match(re);
    if (!m) continue;
    title(name);
    const page = await load();
    const params = Object.fromEntries(new URLSearchParams(location.search));
    if (param) params[param] = m[1];
    put(main, h('p', {class: 'muted'}, 'Loading…'));
    try {
      const cleanup = await page.render(main, params, {...ctx, role: ctx.membership && ctx.membership.role, showError, navigate, title}) || null;
      if (mine === shown) stop = cleanup; else if (cleanup) cleanup();
    } catch (e) {
      if (mine !== shown) return;
      put(main);
      showError(e);
    }
    return;
  }
  title('Not found');
  put(main, h('h1', {}, 'Not found'), h('p', {}, h('a', {href: '/console/'}, 'Back to the builds')));
}

async function signIn() {
  title('Sign in');
  nav.hidden = true;
  put(who);
  const withGitHub = (await github.methods()).github;
  // No name: a form submitted without this script can never put the token in a URL.
  const field = h('input', {id: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false',
    placeholder: 'kiln_…', 'aria-describedby': 'token-help'});
  const form = h('form', {onsubmit: async (ev) => {
    ev.preventDefault();
    clearErrors();
    token.set(field.value.trim());
    forgetMe();
    try {
      await me();
      render();
    } catch (e) {
      token.clear();
      if (e.status !== 401) showError(e);
    }
  }}, h('label', {for: 'token'}, 'API token'), field,
  h('p', {id: 'token-help', class: 'muted'}, 'Paste an API token once: the owner token ', h('code', {}, 'kiln serve'),
    ' printed on its first start, or one made on the organization page. It stays in this browser\u2019s console tabs only (sessionStorage: a console link you open in a new tab is handed it) and is sent to this server alone.'),
  h('div', {}, h('button', {type: 'submit', id: 'signin', class: withGitHub ? 'secondary' : null}, withGitHub ? 'Sign in with the token' : 'Sign in')));
  const next = location.pathname + location.search + location.hash;
  put(main, h('section', {class: 'signin'}, h('h1', {}, 'Sign in to kiln'),
    withGitHub ? [h('p', {}, github.button(next)), h('p', {class: 'muted'}, 'New here? Signing in with GitHub makes your kiln account; then create an organization or accept an invitation.'),
      h('h2', {}, 'Or with an API token')] : null, form));
  if (withGitHub) main.querySelector('#signin-github').focus(); else field.focus();
}

async function signOut(ctx) {
  if (ctx && ctx.session) await api('DELETE', '/auth/sessions/' + ctx.session.id).catch(() => {});
  if (ctx && ctx.session) forgetEverywhere(token.get()); // the session ended: every tab holding it
  token.clear();
  forgetMe();
  navigate('/console/');
}

whenUnauthorized((err) => {
  token.clear();
  forgetMe();
  signIn();
  showError(err);
});

// Links inside the console change the page without a reload.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a');
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/console/') || url.pathname.startsWith('/console/v/')) return;
  ev.preventDefault();
  navigate(url.pathname + url.search);
  main.focus();
});
addEventListener('popstate', render);

render();
