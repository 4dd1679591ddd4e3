// Projects: the list, and adding a GitHub repository or a Perforce stream.
import {api, can} from './api.js';
import {h, put, time, status, input, formValues, busy} from './dom.js';

export async function render(main, params, ctx) {
  const [list, org] = await Promise.all([api('GET', '/projects', null, {limit: 100}), api('GET', '/organizations/' + ctx.organization.id)]);
  put(main, h('h1', {}, 'Projects'),
    list.items.length ? h('table', {id: 'projects'}, h('thead', {}, h('tr', {}, ['Project', 'Source', 'Last build', 'Created'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, list.items.map(p => h('tr', {},
        h('td', {}, h('a', {href: '/console/projects/' + p.id}, p.name)),
        h('td', {}, p.sourceControl === 'github' ? 'GitHub ' + p.repoLink : 'Perforce'),
        h('td', {}, status(p.lastBuildStatus), ' ', time(p.lastBuildAt)), h('td', {}, time(p.createdAt))))))
      : h('p', {class: 'muted'}, 'No projects yet.'));
  if (!can.write(ctx.role)) return;

  const inst = org.integrationSettings.github && org.integrationSettings.github.installationId;
  main.append(h('h2', {}, 'Add a project'));
  // A plan whose projects are used up: no forms it would refuse, but why.
  const usage = await api('GET', '/organizations/' + ctx.organization.id + '/usage').catch(() => null);
  const allowed = usage && usage.projects.allowed;
  if (allowed !== null && allowed !== undefined && usage.projects.current >= allowed) {
    main.append(h('p', {id: 'projects-plan'}, 'The ' + usage.plan + ' plan allows ' + allowed + (allowed === 1 ? ' project' : ' projects') +
      ', and this organization has ' + usage.projects.current + ': delete one, or move to a plan with more, to add another.'));
    return;
  }
  if (inst) main.append(await githubForm(inst, ctx));
  else main.append(h('p', {class: 'muted'}, 'Link GitHub on the ', h('a', {href: '/console/organization'}, 'organization page'), ' to add a repository.'));
  if (org.perforce) main.append(perforceForm(ctx));
}

async function githubForm(inst, ctx) {
  let repos = [];
  try { repos = (await api('GET', '/github/repos/' + inst, null, {limit: 100})).items; } catch (e) { ctx.showError(e); }
  const form = h('form', {class: 'grid', id: 'add-repo', 'aria-label': 'Add a GitHub repository', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      const v = formValues(form);
      const body = {name: v.name, installationId: inst, repoFullName: v.repoFullName};
      for (const k of ['defaultBranch', 'uprojectPath', 'description']) if (v[k]) body[k] = v[k];
      try {
        const p = await api('POST', '/projects/add-repo', body);
        ctx.navigate('/console/projects/' + p.id);
      } catch (e) { ctx.showError(e); }
    });
  }},
  input('Name', 'name', '', {required: true}),
  h('label', {}, 'Repository', h('select', {name: 'repoFullName', required: true},
    repos.map(r => h('option', {value: r.fullName}, r.fullName + (r.uprojectDetected ? '' : ' (no .uproject found)'))))),
  input('Branch (default: the repository\u2019s)', 'defaultBranch', ''),
  input('.uproject path (default: detected)', 'uprojectPath', ''),
  input('Description', 'description', ''),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Add repository')));
  return form;
}

function perforceForm(ctx) {
  const form = h('form', {class: 'grid', id: 'add-perforce', 'aria-label': 'Add a Perforce stream', onsubmit: (ev) => {
    ev.preventDefault();
    busy(form.querySelector('button'), async () => {
      const v = formValues(form);
      const body = {name: v.name, depot: v.depot, streamPath: v.streamPath};
      for (const k of ['uprojectPath', 'description']) if (v[k]) body[k] = v[k];
      try {
        const p = await api('POST', '/projects/add-perforce', body);
        ctx.navigate('/console/projects/' + p.id);
      } catch (e) { ctx.showError(e); }
    });
  }},
  input('Name', 'name', '', {required: true}), input('Depot', 'depot', '', {required: true, placeholder: '//game'}),
  input('Stream', 'streamPath', '', {required: true, placeholder: '//game/main'}),
  input('.uproject path (default: detected)', 'uprojectPath', ''), input('Description', 'description', ''),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Add Perforce stream')));
  return form;
}
