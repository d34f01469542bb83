// DOM helpers. Every piece of data reaches the page as text nodes or attribute values set
// through the DOM API: nothing is ever parsed as HTML (no innerHTML anywhere), so an event
// holding <script> is shown, never run.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value') el.value = value;
    else if (key === 'checked') el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function badge(text, kind) {
  return h('span', { class: `badge ${kind || ''}` }, text);
}

export function pad(n) {
  return String(n).padStart(2, '0');
}

// Local time, to the second: 2026-12-01 06:31:07
export function formatTime(ms) {
  if (!ms) return '-';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// 3h 12m, 4m 05s, 12s, 850ms
export function formatDuration(ms) {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 0)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${pad(s % 60)}s`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours}h ${pad(m % 60)}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

export function idTime(id) {
  const ms = Number(String(id).split('-')[0]);
  return Number.isFinite(ms) ? ms : 0;
}

export function toast(text, kind) {
  const box = document.getElementById('toasts');
  const item = h('div', { class: `toast ${kind || ''}`, role: 'status' }, text);
  box.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 9000 : 5000);
}

// A <dialog> asking to confirm; resolves true when confirmed.
export function confirmDialog(title, text, okLabel) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel || 'Confirm';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
  });
}

export function table(headers, rows, attrs) {
  return h('table', attrs || { class: 'grid' },
    h('thead', null, h('tr', null, headers.map((name) => h('th', null, name)))),
    h('tbody', null, rows));
}
