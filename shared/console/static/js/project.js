// A project: its details (name and description editable), its build settings (add, edit,
// trigger) and its recent builds.
import {api, can, PLATFORMS, BUILD_TYPES, TRIGGERS} from './api.js';
import {h, put, time, status, select, input, check, formValues, busy, buildLabel} from './dom.js';

export async function render(main, params, ctx) {
  const p = await api('GET', '/projects/' + params.id);
  const write = can.write(ctx.role);
  const github = p.sourceControl === 'github';
  const recent = (await api('GET', '/builds', null, {projectId: p.id, limit: 10})).items;

  const details = h('dl', {class: 'facts'},
    h('dt', {}, 'Source'), h('dd', {}, github ? 'GitHub ' + p.repoLink + ' (default branch ' + p.defaultBranch + ')' : 'Perforce ' + p.streamPath),
    h('dt', {}, '.uproject'), h('dd', {}, h('code', {}, p.uprojectPath || '—'), p.uproject && p.uproject.engineVersion ? " (UE " + p.uproject.engineVersion + ")" : ""),
    h('dt', {}, 'Description'), h('dd', {}, p.description || '—'), h('dt', {}, 'Created'), h('dd', {}, time(p.createdAt)));
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
  for (const s of p.buildSettings) settings.append(settingCard(p, s, write, ctx));
  if (!p.buildSettings.length) settings.append(h('p', {class: 'muted'}, 'No build settings yet.'));
  if (write) {
    main.append(h('h3', {}, 'Add a build setting'),
      settingForm(p, null, ctx, async (body) => {
        await api('POST', '/projects/' + p.id + '/build-settings', body);
        ctx.navigate(location.pathname, true);
      }));
  }

  main.append(h('h2', {}, 'Recent builds'), h('p', {}, h('a', {href: '/console/?projectId=' + p.id}, 'All builds of ' + p.name)),
    h('ul', {}, recent.map(b => h('li', {}, h('a', {href: '/console/builds/' + b.id}, (b.number ? buildLabel(b) + ' ' : '') + b.platform + ' ' + b.buildType + ' ' + (b.branch || b.changelist || '')), ' ', status(b.status), ' ', time(b.createdAt)))));
}

function settingCard(p, s, write, ctx) {
  const what = s.platform + ' · ' + s.buildType + ' · UE ' + s.ueVersion;
  const card = h('div', {class: 'card', 'data-setting': s.id},
    h('h3', {}, what),
    h('p', {}, (s.branch ? 'branch ' + s.branch : 'stream ' + s.streamPath) + ' · trigger ' + s.trigger + (s.schedule ? ' (' + s.schedule + ' UTC)' : '') +
      (s.autoDeploy ? ' · auto deploy to ' + s.uploadBuildUrl : '') + (s.agentPool ? ' · agents of pool ' + s.agentPool : '')));
  if (!write) return card;
  const trig = h('form', {class: 'row', 'aria-label': 'Trigger ' + what, onsubmit: (ev) => {
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
  const form = settingForm(p, s, ctx, async (body) => {
    await api('PATCH', '/projects/' + p.id + '/build-settings/' + s.id, body);
    ctx.navigate(location.pathname, true);
  });
  form.hidden = true;
  card.append(trig, h('button', {type: 'button', class: 'secondary', onclick: () => { form.hidden = !form.hidden; }}, 'Edit setting'), form);
  return card;
}

// settingForm edits a setting (s) or makes a new one (s null); save gets the request body.
function settingForm(p, s, ctx, save) {
  const github = p.sourceControl === 'github';
  const v = s || {platform: 'Linux', buildType: 'Development', trigger: 'manual', branch: p.defaultBranch, streamPath: p.streamPath, ueVersion: p.uproject && p.uproject.engineVersion};
  const form = h('form', {class: 'grid', 'aria-label': s ? 'Edit build setting' : 'New build setting', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button[type=submit]'), async () => {
      const f = formValues(form);
      const body = {platform: f.platform, buildType: f.buildType, ueVersion: f.ueVersion, trigger: f.trigger,
        schedule: f.trigger === 'scheduled' ? f.schedule : null, notifyOnComplete: f.notifyOnComplete, autoDeploy: f.autoDeploy,
        uploadBuildUrl: f.uploadBuildUrl};
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
  input('Upload URL (auto deploy)', 'uploadBuildUrl', v.uploadBuildUrl, {type: 'url'}),
  input(v.uploadBuildAuthHeaderSet ? 'Upload Authorization (set; type to replace)' : 'Upload Authorization header', 'uploadBuildAuthHeader', '', {type: 'password', autocomplete: 'off'}),
  check('Auto deploy', 'autoDeploy', v.autoDeploy), check('Email me when it ends', 'notifyOnComplete', v.notifyOnComplete),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, s ? 'Save setting' : 'Add setting')));
  return form;
}
