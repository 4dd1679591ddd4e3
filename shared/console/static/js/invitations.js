// Invitations: the page an invitation link opens (it works signed out: the secret comes in the
// URL's fragment, which never reaches a server, and is dropped from the address at once), and
// the organization page's section where owners and admins invite, see and revoke invitations.
import {api, token, forgetMe} from './api.js';
import {h, put, time, input, select, formValues, busy} from './dom.js';
import {methods, button} from './signin.js';

const ROLES = ['viewer', 'member', 'admin', 'owner'];

// renderAccept accepts an invitation: where GitHub sign-in is on, signed in (signing in first if
// need be); elsewhere it asks the invited person's name and shows their first token once.
export async function renderAccept(main, ctx) {
  const secret = decodeURIComponent(location.hash.slice(1));
  if (location.hash) history.replaceState(null, '', location.pathname);
  ctx.title('Accept invitation');
  if (!secret) {
    return put(main, h('section', {class: 'signin'}, h('h1', {}, 'Accept invitation'),
      h('p', {}, 'This page needs the whole link from the invitation. Open it again from the email, or ask for a new one.')));
  }
  if ((await methods()).github) return acceptSignedIn(main, ctx, secret);
  const form = h('form', {id: 'accept', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      ctx.clearErrors();
      try {
        // Without a token: the secret and the name make a new member (an API token is refused).
        const r = await api('POST', '/invitations/accept', {secret, name: formValues(form).name || ''}, null, {anonymous: true});
        put(main, accepted(r, ctx));
        main.querySelector('#use-token').focus();
      } catch (e) { ctx.showError(e); }
    });
  }}, input('Your name', 'name', '', {required: true, autocomplete: 'name', maxlength: 100}),
  h('div', {}, h('button', {type: 'submit', id: 'accept-submit'}, 'Join')));
  put(main, h('section', {class: 'signin'}, h('h1', {}, 'Accept invitation'),
    h('p', {}, 'You were invited to an organization on kiln. Say your name to join; you get an API token to sign in with.'), form));
  form.querySelector('input').focus();
}

// acceptSignedIn joins as the signed-in person, or first signs in with GitHub and comes back here.
function acceptSignedIn(main, ctx, secret) {
  if (!(token.get() || '').startsWith('ksess_')) { // signed out, or with an API token: sign in with GitHub
    put(main, h('section', {class: 'signin'}, h('h1', {}, 'Accept invitation'),
      h('p', {}, 'You were invited to an organization on kiln. Sign in with the GitHub account of the email the invitation was sent to, then join.'),
      h('p', {}, button('/console/invitations/accept#' + encodeURIComponent(secret), 'Sign in with GitHub to join'))));
    return main.querySelector('#signin-github').focus();
  }
  const join = h('button', {type: 'button', id: 'accept-submit', onclick: () => busy(join, async () => {
    ctx.clearErrors();
    try {
      await api('POST', '/invitations/accept', {secret});
      forgetMe();
      ctx.navigate('/console/', true);
    } catch (e) { ctx.showError(e); }
  })}, 'Join');
  put(main, h('section', {class: 'signin'}, h('h1', {}, 'Accept invitation'),
    h('p', {}, 'You were invited to an organization on kiln. Join it as the person you are signed in as?'), h('div', {}, join)));
  join.focus();
}

function accepted(r, ctx) {
  return h('section', {class: 'signin'}, h('h1', {}, 'Welcome to ' + r.organization.name),
    h('p', {}, 'You are ' + r.user.name + ' <' + r.user.email + '>, ' + r.membership.role + '.'),
    h('div', {class: 'notice'}, 'Your API token — copy it now and keep it safe, it is not shown again. You sign in to the console and the kiln CLI with it.',
      h('div', {class: 'secret', id: 'new-token'}, r.token)),
    h('div', {}, h('button', {type: 'button', id: 'use-token', onclick: () => {
      token.set(r.token);
      forgetMe();
      ctx.navigate('/console/', true);
    }}, 'Sign in')));
}

// section is the organization page's Invitations section, for owners and admins.
export async function section(orgPath, ctx, again) {
  const list = await api('GET', orgPath + '/invitations', null, {limit: 100});
  const shown = h('div', {});
  const roles = ctx.role === 'owner' ? ROLES : ROLES.filter(r => r !== 'owner');
  const form = h('form', {class: 'row', id: 'invite', 'aria-label': 'Invite a person', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      try {
        const inv = await api('POST', orgPath + '/invitations', formValues(form));
        put(shown, h('div', {class: 'notice'}, 'Invited ' + inv.email + ' as ' + inv.role + (inv.mailed ? '; the link was mailed to them.' : '.') +
          ' The link works once, until ' + time(inv.expiresAt) + '; copy it now, it is not shown again:',
        h('div', {class: 'secret', id: 'invite-link'}, inv.link),
        h('button', {type: 'button', class: 'secondary', onclick: again}, 'Done')));
      } catch (e) { ctx.showError(e); }
    });
  }}, input('Email', 'email', '', {type: 'email', required: true, autocomplete: 'off'}), select('Role', 'role', roles, 'member'),
  h('button', {type: 'submit'}, 'Invite'));
  const now = Date.now();
  return h('section', {'aria-labelledby': 'invitations-h'}, h('h2', {id: 'invitations-h'}, 'Invitations'), form, shown,
    list.items.length ? h('table', {id: 'invitations'}, h('thead', {}, h('tr', {}, ['Email', 'Role', 'Invited by', 'Expires', 'Actions'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, list.items.map(inv => h('tr', {}, h('td', {}, inv.email), h('td', {}, inv.role), h('td', {}, inv.invitedBy.name),
        h('td', {}, Date.parse(inv.expiresAt) <= now ? 'expired' : time(inv.expiresAt)),
        h('td', {}, h('button', {type: 'button', class: 'danger', 'aria-label': 'Revoke the invitation of ' + inv.email, onclick: (ev) => busy(ev.target, async () => {
          try { await api('DELETE', orgPath + '/invitations/' + inv.id); again(); } catch (e) { ctx.showError(e); }
        })}, 'Revoke'))))))
      : h('p', {class: 'muted'}, 'No pending invitations.'));
}
