// Invitations: the page an invitation link opens (it works signed out: the secret comes in the
// URL's fragment, which never reaches a server, and is dropped from the address at once), and
// the organization page's section where owners and admins invite, see and revoke invitations.
import {api, token, me, forgetMe} from './api.js';
import {h, put, time, input, select, formValues, busy, secretBox} from './dom.js';
import {methods, button, start} from './signin.js';

const ROLES = ['viewer', 'member', 'admin', 'owner'];

// renderAccept accepts an invitation: it first says what the invitation is (organization,
// inviter, invited email and role: POST /invitations/preview with the secret) and who the tab is
// signed in as; where GitHub sign-in is on, it joins signed in (signing in first if need be, or
// as someone else); elsewhere it asks the invited person's name and shows their first token once.
export async function renderAccept(main, ctx) {
  const secret = decodeURIComponent(location.hash.slice(1));
  if (location.hash) history.replaceState(null, '', location.pathname);
  ctx.title('Accept invitation');
  if (!secret) {
    return put(main, h('section', {class: 'signin'}, h('h1', {}, 'Accept invitation'),
      h('p', {}, 'This page needs the whole link from the invitation. Open it again from the email, or ask for a new one.')));
  }
  let inv;
  try {
    inv = await api('POST', '/invitations/preview', {secret}, null, {anonymous: true});
  } catch (e) {
    put(main, h('section', {class: 'signin'}, h('h1', {}, 'Accept invitation'),
      h('p', {id: 'invitation-invalid'}, e.status === 404
        ? 'This invitation cannot be used: it was accepted, revoked or replaced, or it expired. Ask whoever invited you for a new one.'
        : 'This invitation could not be read.')));
    if (e.status !== 404) ctx.showError(e);
    return;
  }
  ctx.title('Join ' + inv.organization.name);
  const about = h('dl', {class: 'facts', id: 'invitation'},
    h('dt', {}, 'Organization'), h('dd', {}, inv.organization.name), h('dt', {}, 'Invited by'), h('dd', {}, inv.invitedBy.name),
    h('dt', {}, 'Invited email'), h('dd', {}, inv.email), h('dt', {}, 'Role'), h('dd', {}, inv.role),
    h('dt', {}, 'Valid until'), h('dd', {}, time(inv.expiresAt)));
  const heading = h('h1', {}, 'Join ' + inv.organization.name + ' on kiln');
  if ((await methods()).github) return acceptSignedIn(main, ctx, secret, inv, heading, about);
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
  h('div', {}, h('button', {type: 'submit', id: 'accept-submit'}, 'Join ' + inv.organization.name)));
  const signedIn = token.get() ? await me().catch(() => null) : null;
  put(main, h('section', {class: 'signin'}, heading, about,
    signedIn ? h('p', {id: 'signed-in-as'}, 'This tab is signed in as ' + signedIn.user.name + ' <' + signedIn.user.email + '>; joining makes a new member for ' + inv.email + ', with its own API token.') : null,
    h('p', {}, 'Say your name to join as ' + inv.email + '; you get an API token to sign in with.'), form));
  form.querySelector('input').focus();
}

// acceptSignedIn joins as the signed-in person, or first signs in with GitHub and comes back here;
// it says who is signed in, warns before the click when that is not the invited email, and
// offers to sign in as someone else.
async function acceptSignedIn(main, ctx, secret, inv, heading, about) {
  const back = '/console/invitations/accept#' + encodeURIComponent(secret);
  if (!(token.get() || '').startsWith('ksess_')) { // signed out, or with an API token: sign in with GitHub
    put(main, h('section', {class: 'signin'}, heading, about,
      h('p', {}, 'Sign in with the GitHub account whose verified email is ' + inv.email + ', then join.'),
      h('p', {}, button(back, 'Sign in with GitHub to join'))));
    return main.querySelector('#signin-github').focus();
  }
  const who = await me();
  const other = h('button', {type: 'button', class: 'secondary', id: 'signin-other', onclick: () => {
    token.clear(); // this tab only: the session stays for the tabs that hold it
    forgetMe();
    start(back);
  }}, 'Sign in as someone else');
  const mismatch = who.user.email.toLowerCase() !== inv.email.toLowerCase();
  const join = h('button', {type: 'button', id: 'accept-submit', onclick: () => busy(join, async () => {
    ctx.clearErrors();
    try {
      await api('POST', '/invitations/accept', {secret});
      forgetMe();
      ctx.navigate('/console/', true);
    } catch (e) { ctx.showError(e); }
  })}, 'Join ' + inv.organization.name + ' as ' + who.user.name);
  put(main, h('section', {class: 'signin'}, heading, about,
    h('p', {id: 'signed-in-as'}, 'You are signed in as ', h('strong', {}, who.user.name + ' <' + who.user.email + '>'), '.'),
    mismatch ? h('p', {id: 'invitation-mismatch', class: 'error'}, 'This invitation is for ' + inv.email + ', not ' + who.user.email +
      ': kiln lets only ' + inv.email + ' join with it. Sign in as someone else (sign out of GitHub first if it signs you in as the same account), or ask for an invitation to ' + who.user.email + '.') : null,
    h('div', {class: 'row'}, mismatch ? null : join, other)));
  (mismatch ? other : join).focus();
}

function accepted(r, ctx) {
  return h('section', {class: 'signin'}, h('h1', {}, 'Welcome to ' + r.organization.name),
    h('p', {}, 'You are ' + r.user.name + ' <' + r.user.email + '>, ' + r.membership.role + '.'),
    h('div', {class: 'notice'}, 'Your API token — copy it now and keep it safe, it is not shown again. You sign in to the console and the kiln CLI with it.',
      secretBox(r.token, 'new-token', 'your API token')),
    h('div', {}, h('button', {type: 'button', id: 'use-token', onclick: () => {
      token.set(r.token);
      forgetMe();
      ctx.navigate('/console/', true);
    }}, 'Sign in')));
}

// section is the organization page's Invitations section, for owners and admins: a new
// invitation's link is shown once, with Copy, and the pending list is read again at once.
export async function section(orgPath, ctx, again) {
  const pending = h('div', {});
  const now = Date.now();
  const fill = async () => {
    const list = await api('GET', orgPath + '/invitations', null, {limit: 100});
    put(pending, list.items.length ? h('table', {id: 'invitations'}, h('thead', {}, h('tr', {}, ['Email', 'Role', 'Invited by', 'Expires', 'Actions'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, list.items.map(inv => h('tr', {}, h('td', {}, inv.email), h('td', {}, inv.role), h('td', {}, inv.invitedBy.name),
        h('td', {}, Date.parse(inv.expiresAt) <= now ? 'expired' : time(inv.expiresAt)),
        h('td', {}, h('button', {type: 'button', class: 'danger', 'aria-label': 'Revoke the invitation of ' + inv.email, onclick: (ev) => busy(ev.target, async () => {
          try { await api('DELETE', orgPath + '/invitations/' + inv.id); again(); } catch (e) { ctx.showError(e); }
        })}, 'Revoke'))))))
      : h('p', {class: 'muted'}, 'No pending invitations.'));
  };
  await fill();
  const shown = h('div', {});
  const roles = ctx.role === 'owner' ? ROLES : ROLES.filter(r => r !== 'owner');
  const form = h('form', {class: 'row', id: 'invite', 'aria-label': 'Invite a person', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      try {
        const inv = await api('POST', orgPath + '/invitations', formValues(form));
        put(shown, h('div', {class: 'notice'}, 'Invited ' + inv.email + ' as ' + inv.role + (inv.mailed ? '; the link was mailed to them.' : '.') +
          ' The link works once, until ' + time(inv.expiresAt) + '; copy it now, it is not shown again:',
        secretBox(inv.link, 'invite-link', 'the invitation link'),
        h('button', {type: 'button', class: 'secondary', id: 'invite-done', onclick: () => put(shown)}, 'Done')));
        form.reset();
        await fill();
      } catch (e) { ctx.showError(e); }
    });
  }}, input('Email', 'email', '', {type: 'email', required: true, autocomplete: 'off'}), select('Role', 'role', roles, 'member'),
  h('button', {type: 'submit'}, 'Invite'));
  return h('section', {'aria-labelledby': 'invitations-h'}, h('h2', {id: 'invitations-h'}, 'Invitations'), form, shown, pending);
}
