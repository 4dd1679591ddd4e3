// Small DOM helpers: elements are built node by node, so no text from the API is ever parsed as markup.

// h('a', {href: '/x', class: 'c', onclick: fn}, 'text', child, [more]) builds an element.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// put replaces el's content.
export function put(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// bytes is n in B, KiB, MiB, GiB or TiB (powers of 1024, named so, as the CLI says them).
export function bytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, v = Math.abs(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (n < 0 ? '−' : '') + (i ? v.toFixed(1) : v) + ' ' + units[i];
}

export function time(ts) {
  return ts ? new Date(ts).toLocaleString() : '—';
}

export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  const s = Math.round(ms / 1000);
  return s < 60 ? s + ' s' : Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
}

// buildLabel names a build: "#<number>" in its project, or the end of its id when it has none.
export function buildLabel(b) {
  return b.number ? '#' + b.number : b.id.slice(-8);
}

export function status(s) {
  return s ? h('span', {class: 'status status-' + s}, s) : '—';
}

// select builds a labelled <select>; options are values or [value, text] pairs.
export function select(label, name, options, value, extra) {
  return h('label', {}, label, h('select', {name, ...extra},
    options.map(o => { const [v, t] = Array.isArray(o) ? o : [o, o]; return h('option', {value: v, selected: v === value}, t); })));
}

export function input(label, name, value, extra) {
  return h('label', {}, label, h('input', {name, value: value ?? '', ...extra}));
}

export function check(label, name, checked) {
  return h('label', {class: 'check'}, h('input', {type: 'checkbox', name, checked}), label);
}

// formValues reads a form's named fields: checkboxes as booleans, empty text as null.
export function formValues(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === 'checkbox') out[el.name] = el.checked;
    else out[el.name] = el.value.trim() === '' ? null : el.value.trim();
  }
  return out;
}

// copyButton copies text to the clipboard and says so in a live region beside it; label names
// the button for screen readers ("Copy the token"), id names the button.
export function copyButton(text, label, id) {
  const said = h('span', {class: 'muted', role: 'status'});
  const button = h('button', {type: 'button', class: 'secondary', id, 'aria-label': label, onclick: async () => {
    try {
      await navigator.clipboard.writeText(text);
      said.textContent = 'Copied';
    } catch (e) {
      said.textContent = 'Copy it by hand: select it';
    }
  }}, 'Copy');
  return [button, ' ', said];
}

// secretBox shows a secret once, with its Copy button.
export function secretBox(text, id, what) {
  return h('div', {class: 'row'}, h('div', {class: 'secret', id}, text), copyButton(text, 'Copy ' + what, id + '-copy'));
}

// busy disables a button while fn runs.
export async function busy(button, fn) {
  button.disabled = true;
  try { return await fn(); } finally { button.disabled = false; }
}

// confirmed asks again in place before something that cannot be undone: the button id (label)
// shows the question with a "yes" button (id + '-yes') that runs action, and "No"; the focus
// moves to the answer and back. It answers both parts, to append side by side.
export function confirmed(id, label, question, yes, action) {
  const ask = h('button', {type: 'button', class: 'danger', id, onclick: () => {
    ask.hidden = true; sure.hidden = false; sure.querySelector('button').focus();
  }}, label);
  const sure = h('span', {class: 'row', hidden: true}, question + ' ',
    h('button', {type: 'button', class: 'danger', id: id + '-yes', onclick: (ev) => busy(ev.target, action)}, yes),
    h('button', {type: 'button', class: 'secondary', onclick: () => { sure.hidden = true; ask.hidden = false; ask.focus(); }}, 'No'));
  return [ask, sure];
}
