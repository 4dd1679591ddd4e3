// The organization's members: owners and admins change roles and remove members (after a
// confirmation); everyone may leave but the only owner, who is told why instead. The API keeps the
// last owner and says why when it refuses.
import {api, can, token, forgetMe} from './api.js';
import {h, time, confirmed} from './dom.js';

const ROLES = ['owner', 'admin', 'member', 'viewer'];

export async function membersSection(orgPath, ctx, again) {
  const admin = can.admin(ctx.role);
  const members = await api('GET', orgPath + '/members', null, {limit: 100});
  const owners = members.items.filter(m => m.role === 'owner').length;
  const rows = members.items.map(m => {
    const me = m.user.id === ctx.user.id;
    const actions = h('td', {class: 'actions'});
    let role = m.role;
    if (admin && !me) {
      const pick = h('select', {'aria-label': 'Role of ' + m.user.name, 'data-member': m.user.id, onchange: async () => {
        if (pick.value === m.role) return;
        pick.disabled = true;
        try {
          await api('PATCH', orgPath + '/members/' + m.user.id, {role: pick.value});
          again();
        } catch (e) {
          pick.value = m.role;
          ctx.showError(e);
        } finally { pick.disabled = false; }
      }}, ROLES.map(r => h('option', {value: r, selected: r === m.role}, r)));
      role = pick;
      actions.append(confirmButton('Remove', 'Remove ' + m.user.name + '? Their tokens stop working at once.', 'remove-' + m.user.id,
        () => api('DELETE', orgPath + '/members/' + m.user.id).then(again), ctx));
    }
    if (me && m.role === 'owner' && owners === 1) {
      // The API keeps the last owner: say so instead of offering a Leave it refuses.
      actions.append(h('span', {id: 'leave-refused', class: 'muted'}, 'You are the only owner: make another member an owner before you can leave.'));
    } else if (me) {
      actions.append(confirmButton('Leave', 'Leave ' + ctx.organization.name + '? Your tokens for it stop working at once.', 'leave',
        // The token is revoked with the membership: the console signs out.
        () => api('DELETE', orgPath + '/membership').then(() => { token.clear(); forgetMe(); ctx.navigate('/console/', true); }), ctx));
    }
    return h('tr', {}, h('td', {}, m.user.name, me ? ' (you)' : ''), h('td', {}, m.user.email), h('td', {}, role),
      h('td', {}, time(m.createdAt)), actions);
  });
  return h('section', {'aria-labelledby': 'members-h'}, h('h2', {id: 'members-h'}, 'Members'),
    admin ? h('p', {}, h('a', {href: '/console/organization/audit-log', id: 'audit-link'}, 'Audit log'), ': who changed what, and when.') : null,
    h('table', {id: 'members'}, h('thead', {}, h('tr', {}, ['Name', 'Email', 'Role', 'Since', 'Actions'].map(t => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, rows)));
}

// confirmButton is a confirmed action whose refusal is shown as the API's error.
function confirmButton(label, question, id, action, ctx) {
  return h('span', {class: 'row'}, confirmed(id, label, question, 'Yes, ' + label.toLowerCase(), async () => {
    try { await action(); } catch (e) { ctx.showError(e); }
  }));
}
