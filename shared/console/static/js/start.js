// Getting started: what an organization without builds still lacks, in the order it is needed
// (an engine, GitHub or Perforce, a project, a build setting, a build), each with its next step;
// the builds list shows it instead of a bare "No builds yet".
import {api, can} from './api.js';
import {h} from './dom.js';
import {methods} from './signin.js';

// gettingStarted answers the checklist's section.
export async function gettingStarted(ctx) {
  const orgPath = '/organizations/' + ctx.organization.id;
  const [org, projects, how] = await Promise.all([api('GET', orgPath), api('GET', '/projects', null, {limit: 100}),
    methods().then(m => m.githubLink)]);
  const detail = await Promise.all(projects.items.slice(0, 10).map(p => api('GET', '/projects/' + p.id).catch(() => null)));
  const withSetting = detail.find(p => p && p.buildSettings.length);
  const write = can.write(ctx.role), admin = can.admin(ctx.role);
  const orgLink = h('a', {href: '/console/organization'}, 'organization page');
  const source = org.integrationSettings.github || org.perforce;
  const first = projects.items[0];

  const steps = [
    ['engine', null, 'An Unreal Engine on the build hosts: ', h('code', {}, 'kiln serve'), ' takes one directory per engine version in ',
      h('code', {}, 'KILN_ENGINES'), ' (default ', h('code', {}, './engines'), ', e.g. ', h('code', {}, '5.3/Engine/Build/BatchFiles/RunUAT.sh'), ').'],
    ['source', !!source, source ? (org.integrationSettings.github ? 'GitHub is linked.' : 'Perforce credentials are saved.')
      : how === 'none' ? ['Link GitHub or save Perforce credentials. This server has no GitHub App configured (',
        h('code', {}, 'KILN_GITHUB_APP_ID'), ', ', h('code', {}, 'KILN_GITHUB_APP_KEY'), '); Perforce is on the ', orgLink, '.']
        : ['Link GitHub (or save Perforce credentials) on the ', orgLink, admin ? '.' : ': an owner or admin can.']],
    ['project', projects.items.length > 0, projects.items.length ? ['A project: ', h('a', {href: '/console/projects/' + first.id}, first.name), '.']
      : ['Add a project (a repository or a Perforce stream) on the ', h('a', {href: '/console/projects'}, 'projects page'), write ? '.' : ': a member can.']],
    ['setting', !!withSetting, withSetting ? ['A build setting on ', h('a', {href: '/console/projects/' + withSetting.id}, withSetting.name), '.']
      : ['Add a build setting (platform, build type, engine version) on the project\u2019s page', first ? [': ', h('a', {href: '/console/projects/' + first.id}, first.name)] : null, '.']],
    ['build', false, ['Trigger a build: ', withSetting ? h('a', {href: '/console/projects/' + withSetting.id}, '\u201cTrigger build\u201d on ' + withSetting.name) : '\u201cTrigger build\u201d on a setting',
      ', a push to its branch, or ', h('code', {}, 'kiln builds trigger'), '.']],
  ];
  return h('section', {id: 'getting-started', 'aria-labelledby': 'getting-started-h'},
    h('h2', {id: 'getting-started-h'}, 'No builds yet: what is missing'),
    h('ol', {class: 'checklist'}, steps.map(([id, done, ...text]) => h('li', {'data-step': id, 'data-done': done === null ? 'unknown' : String(done)},
      h('strong', {class: done ? 'done' : 'todo'}, done === null ? 'Check: ' : done ? 'Done: ' : 'To do: '), text))),
    h('p', {id: 'try-demo'}, 'Just trying kiln? ', h('code', {}, 'make demo'),
      ' starts a kiln with a stand-in engine, a fake GitHub and a project, builds it and downloads the artifact; its console shows every step.'));
}
