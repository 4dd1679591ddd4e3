// The public API, with the API token the user pasted or the session GitHub sign-in made (kept in
// this tab's sessionStorage, and handed to a console tab opened from it: borrowToken).
const KEY = 'kiln.token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

// Tabs hand the token over: a console link opened in a new tab (a line link, a commit status's
// link) starts with an empty sessionStorage, and asks the console's other tabs, over a
// BroadcastChannel, for theirs. A BroadcastChannel reaches only this origin's pages of this
// browser profile, in memory: the token goes into no cookie, URL, local storage or request but
// the API's own Authorization header, and leaves no trace when the last tab closes.
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('kiln.session') : null;
channel?.addEventListener('message', (ev) => {
  const m = ev.data || {};
  if (m.ask && token.get()) channel.postMessage({token: token.get()});
  if (m.forget && m.forget === token.get()) token.clear(); // signed out in another tab
});

// borrowToken asks the other tabs for a token, when this one has none, and keeps the first one
// offered; it answers whether the tab has a token now. A tab alone waits ms for nobody.
export function borrowToken(ms = 400) {
  if (!channel || token.get()) return Promise.resolve(!!token.get());
  return new Promise((resolve) => {
    const done = () => { channel.removeEventListener('message', take); clearTimeout(timer); resolve(!!token.get()); };
    const take = (ev) => {
      if (!ev.data || typeof ev.data.token !== 'string') return;
      if (!token.get()) token.set(ev.data.token);
      done();
    };
    channel.addEventListener('message', take);
    const timer = setTimeout(done, ms);
    channel.postMessage({ask: true});
  });
}

// forgetEverywhere signs every tab out of the token t (ended on the server).
export function forgetEverywhere(t) {
  if (t) channel?.postMessage({forget: t});
}

// ApiError carries the API's error envelope: code, message and request id.
export class ApiError extends Error {
  constructor(status, body, requestId) {
    super(body.message || ('HTTP ' + status));
    this.status = status;
    this.code = body.error || 'http_' + status;
    this.requestId = body.requestId || requestId || '';
    this.fields = body.fields || null;
  }
}

let onUnauthorized = () => {};
export function whenUnauthorized(fn) { onUnauthorized = fn; }

// api('GET', '/builds', null, {limit: 25}) → the decoded JSON answer (null for 204). With
// {anonymous: true} the request carries no token. Requests send and store no cookies, except with
// {cookies: true}: the GitHub install link's answer sets this browser's install cookie, which
// GitHub's redirect back to the install callback must carry.
export async function api(method, path, body, query, opts) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) if (v !== null && v !== undefined && v !== '') url.searchParams.set(k, v);
  const headers = {Accept: 'application/json'};
  if (token.get() && !(opts && opts.anonymous)) headers.Authorization = 'Bearer ' + token.get();
  if (body !== null && body !== undefined) headers['Content-Type'] = 'application/json';
  const resp = await fetch(url, {method, headers, body: body == null ? undefined : JSON.stringify(body), cache: 'no-store',
    credentials: opts && opts.cookies ? 'same-origin' : 'omit'});
  const rid = resp.headers.get('X-Request-Id');
  if (resp.status === 204) return null;
  const text = await resp.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = {message: text.slice(0, 200)}; }
  if (!resp.ok) {
    const err = new ApiError(resp.status, data, rid);
    if (resp.status === 401) onUnauthorized(err);
    throw err;
  }
  return data;
}

let meCache = null;
// me is GET /auth/me: the user, the organization and the membership's role (both null for a
// session that acts for no organization yet), the user's organizations and the session.
export async function me() {
  if (!meCache) meCache = api('GET', '/auth/me').catch((e) => { meCache = null; throw e; });
  return meCache;
}
export function forgetMe() { meCache = null; }

// The role matrix of the API (docs/api.md, "Roles"): what the console offers.
const WRITE = ['owner', 'admin', 'member'], ADMIN = ['owner', 'admin'];
export const can = {
  write: (role) => WRITE.includes(role),
  admin: (role) => ADMIN.includes(role),
};

export const PLATFORMS = ['Win64', 'Linux', 'LinuxArm64', 'Mac', 'Android', 'IOS'];
export const BUILD_TYPES = ['Development', 'Shipping', 'DebugGame', 'Test', 'Server'];
export const STATUSES = ['pending', 'running', 'complete', 'failed', 'superseded'];
export const TRIGGERS = ['manual', 'push', 'scheduled'];
