// The console's router: one page per hash (#/overview, #/apps, #/pending, #/dlq, #/playground),
// a login form first when the console needs its token.
import { ApiError, loadSession, post } from './api.js';
import { clear, h, toast } from './dom.js';
import { renderApps } from './apps.js';
import { renderDeadLetters } from './deadletters.js';
import { renderOverview } from './overview.js';
import { renderPending } from './pending.js';
import { renderPlayground } from './playground.js';

const pages = {
  overview: renderOverview,
  apps: renderApps,
  pending: renderPending,
  dlq: renderDeadLetters,
  playground: renderPlayground,
};

let teardown = null;

function route() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [name, query] = hash.split('?');
  return { name: pages[name] ? name : 'overview', params: new URLSearchParams(query || '') };
}

function renderLogin(main) {
  const input = h('input', { type: 'password', id: 'token', autocomplete: 'current-password',
    placeholder: 'RELAY_CONSOLE_TOKEN', required: true });
  const error = h('p', { class: 'error', id: 'login-error' });
  const form = h('form', { class: 'login card', id: 'login' },
    h('h1', null, 'Relay console'),
    h('p', { class: 'muted' }, 'This console is protected by a token (RELAY_CONSOLE_TOKEN).'),
    input, h('button', { type: 'submit' }, 'Log in'), error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await post('/api/login', { token: input.value });
      await start();
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
  main.append(form);
  input.focus();
}

async function show() {
  if (teardown) teardown();
  teardown = null;
  const main = clear(document.getElementById('main'));
  const { name, params } = route();
  for (const link of document.querySelectorAll('#nav a')) {
    link.classList.toggle('active', link.dataset.page === name);
  }
  try {
    teardown = await pages[name](main, params) || null;
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 401) return start();
    main.append(h('p', { class: 'error' }, failure.message));
  }
}

async function start() {
  const session = await loadSession();
  const where = clear(document.getElementById('where'));
  if (session.token_required && !session.authenticated) {
    document.getElementById('nav').hidden = true;
    renderLogin(clear(document.getElementById('main')));
    return;
  }
  document.getElementById('nav').hidden = false;
  where.append(`${session.stream} · ${session.group} · ${session.redis}`);
  if (session.read_only) where.append(' ', h('span', { class: 'badge muted' }, 'read-only'));
  await show();
}

window.addEventListener('hashchange', show);
start().catch((failure) => toast(failure.message, 'error'));
