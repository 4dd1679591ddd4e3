// The organization: this month's usage against the plan, GitHub (the install flow), Perforce
// credentials, members (members.js), invitations (invitations.js), the signed-in user's API tokens, and org webhooks (kiln's
// signed events, or Slack and Discord notifications) with their delivery log.
import {api, can} from './api.js';
import {h, put, time, status, input, check, select, formValues, busy, bytes, secretBox} from './dom.js';
import {membersSection} from './members.js';
import * as invitations from './invitations.js';
import {methods} from './signin.js';

const EVENTS = ['build.created', 'build.running', 'build.complete', 'build.failed', 'build.superseded', 'build.skipped', 'build.fixed'];
// Chat webhooks (Slack, Discord) are told of these; failed and fixed are checked at first.
const CHAT_EVENTS = [['build.failed', true], ['build.fixed', true], ['build.complete', false]];
const FORMATS = {slack: 'Slack', discord: 'Discord'};

export async function render(main, params, ctx) {
  const orgPath = '/organizations/' + ctx.organization.id;
  const admin = can.admin(ctx.role);
  const org = await api('GET', orgPath);
  const again = () => ctx.navigate(location.pathname, true);
  put(main, h('h1', {}, org.name), h('p', {class: 'muted'}, 'Plan ' + org.plan + ' · you are ' + ctx.role));
  const usage = await api('GET', orgPath + '/usage');
  main.append(usageSection(usage));

  // GitHub: linked, or the way this server links it (GitHub's install flow, an installation id),
  // or what is missing when it has no GitHub App.
  const gh = org.integrationSettings.github;
  const ghBox = h('section', {id: 'github', 'aria-labelledby': 'github-h'}, h('h2', {id: 'github-h'}, 'GitHub'),
    h('p', {id: 'github-state'}, gh ? linkedText(gh) : 'Not linked.'));
  main.append(ghBox);
  if (gh) { // the installation's account, asked of GitHub: said once known
    api('GET', '/github/installations/' + gh.installationId).then((i) => {
      ghBox.querySelector('#github-state').textContent = linkedText({...gh, account: i.account});
    }, () => {});
  }
  const how = (await methods()).githubLink;
  if (admin && gh) {
    ghBox.append(h('button', {type: 'button', class: 'danger', onclick: (ev) => busy(ev.target, async () => {
      try { await api('DELETE', orgPath + '/integrations/github'); again(); } catch (e) { ctx.showError(e); }
    })}, 'Unlink GitHub'));
  } else if (!gh && how === 'none') {
    ghBox.append(h('p', {id: 'github-missing'}, 'This server has no GitHub App configured, so GitHub cannot be linked here: its operator sets ',
      h('code', {}, 'KILN_GITHUB_APP_ID'), ' and ', h('code', {}, 'KILN_GITHUB_APP_KEY'), ' (the README says how). To try kiln without one, ',
      h('code', {}, 'make demo'), ' starts a kiln with a fake GitHub, a project and a stand-in engine.'));
  } else if (admin && how === 'install') {
    // One click to GitHub: the link is asked for (it sets this browser's install cookie) and the
    // tab goes to GitHub, whose redirect back lands on a page leading here.
    ghBox.append(h('p', {class: 'muted', id: 'link-github-help'}, 'Opens GitHub to install kiln\u2019s GitHub App on your account or organization; GitHub sends you back here.'),
      h('button', {type: 'button', id: 'link-github', 'aria-describedby': 'link-github-help', onclick: (ev) => busy(ev.target, async () => {
        try {
          const link = await api('GET', '/integrations/github/install', null, null, {cookies: true});
          location.assign(link.url);
        } catch (e) { ctx.showError(e); }
      })}, 'Link GitHub'));
  } else if (admin) {
    // No OAuth client: this server links an installation by its id.
    const form = h('form', {class: 'row', id: 'link-by-id', 'aria-label': 'Link GitHub', onsubmit: (e2) => {
      e2.preventDefault();
      busy(form.querySelector('button'), async () => {
        try { await api('PATCH', orgPath, {integrationSettings: {github: {installationId: formValues(form).installationId}}}); again(); } catch (err) { ctx.showError(err); }
      });
    }}, input('GitHub App installation id (the number at the end of the installation\u2019s settings page on GitHub)', 'installationId', '', {required: true, inputmode: 'numeric'}),
    h('button', {type: 'submit', id: 'link-github'}, 'Link GitHub'));
    ghBox.append(form);
  }

  // Perforce: offered where the plan allows it; elsewhere the plan says why not.
  const p4 = org.perforce;
  const p4Box = h('section', {id: 'perforce', 'aria-labelledby': 'p4-h'}, h('h2', {id: 'p4-h'}, 'Perforce'),
    h('p', {}, p4 ? `Server ${p4.serverUrl} as ${p4.userName}; ticket ${p4.ticketSet ? 'saved' : 'not saved'}.` : 'No credentials saved.'));
  main.append(p4Box);
  if (!usage.allows.perforce) {
    p4Box.append(h('p', {id: 'perforce-plan'}, 'The ' + org.plan + ' plan does not include Perforce: a pro or enterprise plan does. Projects on GitHub build on every plan.'));
  } else if (admin) {
    const form = h('form', {class: 'grid', 'aria-label': 'Perforce credentials', onsubmit: (ev) => {
      ev.preventDefault();
      busy(form.querySelector('button'), async () => {
        try { await api('PATCH', orgPath + '/perforce', formValues(form)); again(); } catch (e) { ctx.showError(e); }
      });
    }}, input('Server', 'serverUrl', p4 && p4.serverUrl, {required: true, placeholder: 'ssl:perforce.example.com:1666'}),
    input('User', 'userName', p4 && p4.userName, {required: true}), input('Ticket', 'ticket', '', {required: true, type: 'password', autocomplete: 'off'}),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Save and check credentials'),
      p4 ? h('button', {type: 'button', class: 'danger', onclick: (ev) => busy(ev.target, async () => {
        try { await api('DELETE', orgPath + '/perforce'); again(); } catch (e) { ctx.showError(e); }
      })}, 'Remove credentials') : null));
    p4Box.append(form);
  }

  main.append(await membersSection(orgPath, ctx, again));

  if (admin) main.append(await invitations.section(orgPath, ctx, again));
  main.append(await tokensSection(ctx, again));
  if (admin) main.append(await webhooksSection(orgPath, ctx, again));
}

// linkedText names the linked installation's account where the API says it.
function linkedText(gh) {
  return 'Linked to ' + (gh.account ? 'the GitHub account ' + gh.account + ' (installation ' + gh.installationId + ').' : 'installation ' + gh.installationId + '.');
}

// usageSection shows the month's use against the plan (a null allowance is unlimited), and the
// build caches held now.
function usageSection(u) {
  const allowed = (n) => n === null || n === undefined ? 'unlimited' : String(n);
  const row = (what, used, limit) => h('tr', {}, h('th', {scope: 'row'}, what), h('td', {class: 'num'}, used), h('td', {class: 'num'}, limit));
  const platforms = Object.keys(u.buildMinutes.byPlatform).sort();
  return h('section', {'aria-labelledby': 'usage-h'}, h('h2', {id: 'usage-h'}, 'Usage in ' + u.month + ' (UTC)'),
    h('table', {id: 'usage'}, h('thead', {}, h('tr', {}, ['Resource', 'Used', 'Allowed by the ' + u.plan + ' plan'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', {},
        row('Build minutes', u.buildMinutes.used, allowed(u.buildMinutes.allowed)),
        platforms.map(p => row('· on ' + p, u.buildMinutes.byPlatform[p], '')),
        row('Builds running now', u.concurrentBuilds.current, allowed(u.concurrentBuilds.allowed)),
        row('Projects', u.projects.current, allowed(u.projects.allowed)),
        row('Artifact storage', bytes(u.artifactStorageBytes), ''),
        row('Triggers skipped (allowance used up)', u.skippedTriggers.total, ''),
        cacheRow(u.buildCaches, row))));
}

// cacheRow shows what the build caches hold now, whatever the month, against the operator's cap
// (null: no cap); nothing when the server keeps no build caches.
function cacheRow(c, row) {
  if (!c) return [];
  return row('Build caches (held now)', bytes(c.bytes) + ' in ' + c.count + (c.count === 1 ? ' cache' : ' caches'),
    c.maxBytes === null ? 'no cap' : 'cap ' + bytes(c.maxBytes) + ', oldest removed');
}

// tokensSection lists the signed-in user's tokens; a new one is shown once, with Copy, and the
// list is read again at once.
async function tokensSection(ctx, again) {
  const body = h('tbody', {});
  const fill = async () => {
    const list = await api('GET', '/auth/tokens', null, {limit: 100});
    put(body, list.items.map(t => h('tr', {}, h('td', {}, t.name), h('td', {}, h('code', {}, t.hint + '…')), h('td', {}, time(t.createdAt)),
      h('td', {}, t.expiresAt ? time(t.expiresAt) : 'never'),
      h('td', {}, h('button', {type: 'button', class: 'danger', 'aria-label': 'Revoke token ' + t.name, onclick: (ev) => busy(ev.target, async () => {
        try { await api('DELETE', '/auth/tokens/' + t.id); again(); } catch (e) { ctx.showError(e); }
      })}, 'Revoke')))));
  };
  await fill();
  const shown = h('div', {});
  const form = h('form', {class: 'row', 'aria-label': 'New API token', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      const v = formValues(form), body = {};
      if (v.name) body.name = v.name;
      if (v.expiresInDays) body.expiresInDays = Number(v.expiresInDays);
      try {
        const t = await api('POST', '/auth/tokens', body);
        put(shown, h('div', {class: 'notice'}, 'New token ', h('strong', {}, t.name), ' — copy it now, it is not shown again:',
          secretBox(t.token, 'new-token', 'the new token')));
        form.reset();
        await fill();
      } catch (e) { ctx.showError(e); }
    });
  }}, input('Name', 'name', ''), input('Expires in days (optional)', 'expiresInDays', '', {type: 'number', min: 1, max: 3650}),
  h('button', {type: 'submit'}, 'Create token'));
  return h('section', {'aria-labelledby': 'tokens-h'}, h('h2', {id: 'tokens-h'}, 'Your API tokens'), form, shown,
    h('table', {id: 'tokens'}, h('thead', {}, h('tr', {}, ['Name', 'Starts with', 'Created', 'Expires', 'Actions'].map(t => h('th', {scope: 'col'}, t)))), body));
}

async function webhooksSection(orgPath, ctx, again) {
  const hooks = (await api('GET', orgPath + '/webhooks')).items;
  const shown = h('div', {});
  const form = h('form', {class: 'grid', 'aria-label': 'New webhook', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      const v = formValues(form);
      try {
        const w = await api('POST', orgPath + '/webhooks', {url: v.url, events: EVENTS.filter(e => v[e]), active: true});
        put(shown, h('div', {class: 'notice'}, 'Webhook added. Its signing secret, shown only now:', secretBox(w.secret, 'new-webhook-secret', 'the signing secret'),
          h('button', {type: 'button', class: 'secondary', id: 'webhook-done', onclick: again}, 'Done')));
      } catch (e) { ctx.showError(e); }
    });
  }}, input('URL', 'url', '', {type: 'url', required: true, placeholder: 'https://example.com/kiln'}),
  h('fieldset', {}, h('legend', {}, 'Events'), EVENTS.map(e => check(e, e, true))),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Add webhook')));
  return h('section', {'aria-labelledby': 'hooks-h'}, h('h2', {id: 'hooks-h'}, 'Webhooks'), form, shown, chatForm(orgPath, ctx, again),
    hooks.length ? hooks.map(w => hookCard(orgPath, w, ctx, again)) : h('p', {class: 'muted'}, 'No webhooks.'));
}

// chatForm adds a Slack or Discord notification target. The incoming-webhook URL is a secret:
// kiln never shows it again, only its host and last characters.
function chatForm(orgPath, ctx, again) {
  const form = h('form', {class: 'grid', 'aria-label': 'New Slack or Discord notification', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      const v = formValues(form);
      try {
        await api('POST', orgPath + '/webhooks', {format: v.format, url: v.url, events: CHAT_EVENTS.map(([e]) => e).filter(e => v[e]), active: true});
        again();
      } catch (e) { ctx.showError(e); }
    });
  }}, h('h3', {}, 'Slack or Discord notifications'),
  select('Service', 'format', [['slack', 'Slack'], ['discord', 'Discord']], 'slack'),
  input('Incoming webhook URL', 'url', '', {type: 'url', required: true, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'https://hooks.slack.com/services/… or https://discord.com/api/webhooks/…'}),
  h('p', {class: 'muted'}, 'The URL is kept sealed and never shown again. Fixed: a build completed after its setting\'s last build failed.'),
  h('fieldset', {}, h('legend', {}, 'Events'), CHAT_EVENTS.map(([e, on]) => check(e, e, on))),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Add notification')));
  return form;
}

function hookCard(orgPath, w, ctx, again) {
  const path = orgPath + '/webhooks/' + w.id;
  const log = h('tbody', {});
  const card = h('div', {class: 'card'}, h('h3', {}, (w.format && w.format !== 'kiln' ? (FORMATS[w.format] || w.format) + ' · ' : '') + w.url), h('p', {}, (w.active ? 'active' : 'paused') + ' · ' + w.events.join(', ')),
    h('div', {class: 'row'},
      h('button', {type: 'button', class: 'secondary', onclick: (ev) => busy(ev.target, async () => {
        try { await api('PATCH', path, {active: !w.active}); again(); } catch (e) { ctx.showError(e); }
      })}, w.active ? 'Pause' : 'Resume'),
      h('button', {type: 'button', class: 'danger', onclick: (ev) => busy(ev.target, async () => {
        try { await api('DELETE', path); again(); } catch (e) { ctx.showError(e); }
      })}, 'Delete')),
    h('details', {ontoggle: (ev) => { if (ev.target.open) deliveries(); }}, h('summary', {}, 'Delivery log'),
      h('table', {}, h('thead', {}, h('tr', {}, ['Event', 'Status', 'Attempts', 'Response', 'Error', 'Created', 'Actions'].map(t => h('th', {scope: 'col'}, t)))), log)));
  async function deliveries() {
    try {
      const list = await api('GET', path + '/deliveries', null, {limit: 50});
      put(log, list.items.length ? list.items.map(d => h('tr', {}, h('td', {}, d.event), h('td', {}, status(d.status)), h('td', {class: 'num'}, d.attempts),
        h('td', {}, d.responseStatus ?? '—'), h('td', {}, d.error || ''), h('td', {}, time(d.createdAt)),
        h('td', {}, h('button', {type: 'button', class: 'secondary', onclick: (ev) => busy(ev.target, async () => {
          try { await api('POST', path + '/deliveries/' + d.id + '/redeliver', {}); deliveries(); } catch (e) { ctx.showError(e); }
        })}, 'Redeliver')))) : h('tr', {}, h('td', {colspan: 7, class: 'muted'}, 'No deliveries yet.')));
    } catch (e) { ctx.showError(e); }
  }
  return card;
}
