// A project: its details (name and description editable), its build settings (add, edit,
// trigger) and its recent builds.
import {api, can, PLATFORMS, BUILD_TYPES, TRIGGERS} from './api.js';
import {h, put, time, status, select, input, check, formValues, busy, buildLabel, copyButton} from './dom.js';

export async function render(main, params, ctx) {
  const p = await api('GET', '/projects/' + params.id);
  const write = can.write(ctx.role);
  const github = p.sourceControl === 'github';
  const recent = (await api('GET', '/builds', null, {projectId: p.id, limit: 10})).items;
  // What the plan allows: a plan without auto deploy is not offered its fields.
  const usage = write ? await api('GET', '/organizations/' + ctx.organization.id + '/usage').catch(() => null) : null;
  const plan = usage ? {name: usage.plan, autoDeploy: usage.allows.autoDeploy} : {autoDeploy: true};

  const details = h('dl', {class: 'facts'},
    h('dt', {}, 'Source'), h('dd', {}, github ? 'GitHub ' + p.repoLink + ' (default branch ' + p.defaultBranch + ')' : 'Perforce ' + p.streamPath),
    h('dt', {}, '.uproject'), h('dd', {}, h('code', {}, p.uprojectPath || '—'), p.uproject && p.uproject.engineVersion ? " (UE " + p.uproject.engineVersion + ")" : ""),
    h('dt', {}, 'Description'), h('dd', {}, p.description || '—'), h('dt', {}, 'Created'), h('dd', {}, time(p.createdAt)));
  ctx.title(p.name);
  put(main, h('h1', {}, p.name), details);

  if (write) {
    const edit = h('form', {class: 'grid', id: 'edit-project', 'aria-label': 'Edit the project', hidden: true, onsubmit: (ev) => {
      ev.preventDefault();
      busy(edit.querySelector('button'), async () => {
        const v = formValues(edit);
        try { await api('PATCH', '/projects/' + p.id, {name: v.name, description: v.description}); ctx.navigate(location.pathname, true); } catch (e) { ctx.showError(e); }
      });
    }}, input('Name', 'name', p.name, {required: true}), input('Description', 'description', p.description),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Save project')));
    main.append(h('div', {class: 'row'}, h('button', {type: 'button', class: 'secondary', onclick: () => { edit.hidden = !edit.hidden; }}, 'Edit project')), edit);
  }

  main.append(h('h2', {}, 'Build settings'));
  const settings = h('div', {id: 'settings'});
  main.append(settings);
  const names = settingNames(p.buildSettings);
  const lastBuilds = await Promise.all(p.buildSettings.map(s =>
    api('GET', '/builds', null, {buildSettingId: s.id, limit: 1}).then(r => r.items[0] || null, () => null)));
  p.buildSettings.forEach((s, i) => settings.append(settingCard(p, s, write, ctx, names[s.id], lastBuilds[i], plan)));
  if (!p.buildSettings.length) settings.append(h('p', {class: 'muted'}, 'No build settings yet.'));
  if (write) {
    main.append(h('h3', {}, 'Add a build setting'),
      settingForm(p, null, ctx, plan, async (body) => {
        await api('POST', '/projects/' + p.id + '/build-settings', body);
        ctx.navigate(location.pathname, true);
      }));
  }

  main.append(h('h2', {}, 'Recent builds'), h('p', {}, h('a', {href: '/console/?projectId=' + p.id}, 'All builds of ' + p.name)),
    h('ul', {}, recent.map(b => h('li', {}, h('a', {href: '/console/builds/' + b.id}, (b.number ? buildLabel(b) + ' ' : '') + b.platform + ' ' + b.buildType + ' ' + (b.branch || b.changelist || '')), ' ', status(b.status), ' ', time(b.createdAt)))));
}

// settingNames are the settings' readable names, as the CLI and the trigger API take them:
// Platform/BuildType, with @branch (or @stream) where two settings share it.
function settingNames(settings) {
  const short = s => s.platform + '/' + s.buildType;
  const count = {};
  for (const s of settings) count[short(s)] = (count[short(s)] || 0) + 1;
  const names = {};
  for (const s of settings) names[s.id] = short(s) + (count[short(s)] > 1 ? '@' + (s.branch || s.streamPath) : '');
  return names;
}

// lastBuildView is the setting's latest build: its number, status and when, linked.
function lastBuildView(b) {
  if (!b) return h('p', {class: 'last-build muted'}, 'No builds yet');
  return h('p', {class: 'last-build'}, 'Last build ',
    h('a', {href: '/console/builds/' + b.id}, buildLabel(b)), ' ', status(b.status), ' ', time(b.finishedAt || b.startedAt || b.createdAt));
}

function settingCard(p, s, write, ctx, name, last, plan) {
  const what = s.platform + ' · ' + s.buildType + ' · UE ' + s.ueVersion;
  const card = h('div', {class: 'card', 'data-setting': s.id},
    h('h3', {}, what),
    h('p', {class: 'setting-id'}, h('span', {class: 'setting-name'}, name), ' · id ', h('code', {}, s.id), ' ', copyButton(s.id, 'Copy the id of ' + name)),
    lastBuildView(last),
    h('p', {}, (s.branch ? 'branch ' + s.branch : 'stream ' + s.streamPath) + ' · trigger ' + s.trigger + (s.schedule ? ' (' + s.schedule + ' UTC)' : '') +
      (s.autoDeploy ? ' · auto deploy to ' + s.uploadBuildUrl : '') + (s.agentPool ? ' · agents of pool ' + s.agentPool : '')));
  if (!write) return card;
  const trig = h('form', {class: 'row', 'aria-label': 'Trigger ' + name, onsubmit: (ev) => {
    ev.preventDefault();
    busy(trig.querySelector('button'), async () => {
      const v = formValues(trig), body = {};
      for (const k of ['branch', 'commit', 'changelist']) if (v[k]) body[k] = v[k];
      if (v.clean) body.clean = true;
      try {
        const r = await api('POST', '/projects/' + p.id + '/build-settings/' + s.id + '/trigger', body);
        ctx.navigate('/console/builds/' + r.buildId);
      } catch (e) { ctx.showError(e); }
    });
  }}, p.sourceControl === 'github'
    ? [input('Branch', 'branch', '', {placeholder: s.branch}), input('Commit (optional)', 'commit', '')]
    : input('Changelist (default: latest)', 'changelist', ''),
  check('Clean build (ignore the build cache)', 'clean', false),
  h('button', {type: 'submit'}, 'Trigger build'));
  const form = settingForm(p, s, ctx, plan, async (body) => {
    await api('PATCH', '/projects/' + p.id + '/build-settings/' + s.id, body);
    ctx.navigate(location.pathname, true);
  });
  form.hidden = true;
  card.append(trig, h('button', {type: 'button', class: 'secondary', onclick: () => { form.hidden = !form.hidden; }}, 'Edit setting'), form);
  return card;
}

// settingForm edits a setting (s) or makes a new one (s null); save gets the request body. A
// plan without auto deploy gets no auto deploy fields, but a sentence saying so.
function settingForm(p, s, ctx, plan, save) {
  const github = p.sourceControl === 'github';
  const v = s || {platform: 'Linux', buildType: 'Development', trigger: 'manual', branch: p.defaultBranch, streamPath: p.streamPath, ueVersion: p.uproject && p.uproject.engineVersion};
  const form = h('form', {class: 'grid', 'aria-label': s ? 'Edit build setting' : 'New build setting', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button[type=submit]'), async () => {
      const f = formValues(form);
      const body = {platform: f.platform, buildType: f.buildType, ueVersion: f.ueVersion, trigger: f.trigger,
        schedule: f.trigger === 'scheduled' ? f.schedule : null, notifyOnComplete: f.notifyOnComplete};
      if (plan.autoDeploy) Object.assign(body, {autoDeploy: f.autoDeploy, uploadBuildUrl: f.uploadBuildUrl});
      if (github) body.branch = f.branch; else body.streamPath = f.streamPath;
      if (f.uploadBuildAuthHeader) body.uploadBuildAuthHeader = f.uploadBuildAuthHeader;
      if (!s) for (const k of Object.keys(body)) if (body[k] === null) delete body[k];
      try { await save(body); } catch (e) { ctx.showError(e); }
    });
  }},
  select('Platform', 'platform', PLATFORMS, v.platform), select('Build type', 'buildType', BUILD_TYPES, v.buildType),
  input('Engine version', 'ueVersion', v.ueVersion, {required: true, placeholder: '5.3'}),
  github ? input('Branch', 'branch', v.branch, {required: true}) : input('Stream', 'streamPath', v.streamPath, {required: true}),
  select('Trigger', 'trigger', TRIGGERS, v.trigger), input('Schedule (cron, UTC; scheduled only)', 'schedule', v.schedule, {placeholder: '0 3 * * *'}),
  plan.autoDeploy ? [input('Upload URL (auto deploy)', 'uploadBuildUrl', v.uploadBuildUrl, {type: 'url'}),
    input(v.uploadBuildAuthHeaderSet ? 'Upload Authorization (set; type to replace)' : 'Upload Authorization header', 'uploadBuildAuthHeader', '', {type: 'password', autocomplete: 'off'}),
    check('Auto deploy', 'autoDeploy', v.autoDeploy)]
    : h('p', {class: 'muted plan-note'}, 'Auto deploy is not in the ' + plan.name + ' plan: a pro or enterprise plan has it.'),
  check('Email me when it ends', 'notifyOnComplete', v.notifyOnComplete),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, s ? 'Save setting' : 'Add setting')));
  return form;
}
