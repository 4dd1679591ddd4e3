// The signed-in person's page: the organizations they belong to (switch, create one) and their
// console sessions (sign one out).
import {api, forgetMe} from './api.js';
import {h, put, time, input, busy, formValues} from './dom.js';
import {methods} from './signin.js';

export async function render(main, params, ctx) {
  const open = (await methods()).github;
  const sessions = ctx.session ? (await api('GET', '/auth/sessions')).items : [];
  const current = ctx.organization && ctx.organization.id;
  const switchTo = (org) => async (ev) => busy(ev.target, async () => {
    try {
      await api('PUT', '/auth/session/organization', {organizationId: org.id});
      forgetMe();
      ctx.navigate('/console/', true);
    } catch (e) { ctx.showError(e); }
  });
  const orgs = ctx.organizations.length
    ? h('table', {id: 'organizations'}, h('thead', {}, h('tr', {}, ['Organization', 'Your role', 'Actions'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, ctx.organizations.map(o => h('tr', {'data-org': o.slug}, h('td', {}, o.name), h('td', {}, o.role),
        h('td', {}, o.id === current ? h('span', {class: 'muted'}, 'Current') : ctx.session
          ? h('button', {type: 'button', class: 'secondary', 'aria-label': 'Switch to ' + o.name, onclick: switchTo(o)}, 'Switch')
          : h('span', {class: 'muted'}, 'An API token acts for one organization'))))))
    : h('p', {id: 'no-organizations'}, 'You belong to no organization yet. Create one, or open an invitation link someone sent you.');
  const create = open && ctx.session ? h('form', {class: 'row', id: 'create-organization', 'aria-label': 'Create an organization', onsubmit: (ev) => {
    ev.preventDefault();
    busy(ev.target.querySelector('button'), async () => {
      try {
        await api('POST', '/organizations', formValues(ev.target));
        forgetMe();
        ctx.navigate('/console/organization', true);
      } catch (e) { ctx.showError(e); }
    });
  }}, input('Name', 'name', '', {required: true, maxlength: 100, autocomplete: 'organization'}),
  h('button', {type: 'submit'}, 'Create organization')) : null;
  put(main, h('h1', {}, 'Your account'),
    h('p', {}, ctx.user.name + ' <' + ctx.user.email + '>'),
    h('section', {'aria-labelledby': 'orgs-h'}, h('h2', {id: 'orgs-h'}, 'Organizations'), orgs,
      create ? [h('h3', {}, 'New organization'), h('p', {class: 'muted'}, 'A new organization starts on the free plan, with you as its owner.'), create] : null),
    ctx.session ? h('section', {'aria-labelledby': 'sessions-h'}, h('h2', {id: 'sessions-h'}, 'Sessions'),
      h('p', {class: 'muted'}, 'Where you are signed in to this console. A session lasts 12 hours.'),
      h('table', {id: 'sessions'}, h('thead', {}, h('tr', {}, ['Signed in', 'Expires', 'Browser', 'Address', 'Actions'].map(t => h('th', {scope: 'col'}, t)))),
        h('tbody', {}, sessions.map(s => h('tr', {'data-session': s.id}, h('td', {}, time(s.createdAt)), h('td', {}, time(s.expiresAt)),
          h('td', {}, s.userAgent || '—'), h('td', {}, s.address || '—'),
          h('td', {}, s.current ? h('span', {class: 'muted'}, 'This session') : h('button', {type: 'button', class: 'danger', 'aria-label': 'Sign out the session of ' + time(s.createdAt),
            onclick: (ev) => busy(ev.target, async () => {
              try {
                await api('DELETE', '/auth/sessions/' + s.id);
                ctx.navigate('/console/account', true);
              } catch (e) { ctx.showError(e); }
            })}, 'Sign out'))))))) : null);
}
