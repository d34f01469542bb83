// The console's JSON API. Mutations are POSTs carrying the CSRF token the session handed to
// this page (another site can neither read it nor send this header).

let current = null;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function parse(response) {
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = { error: `${response.status} ${response.statusText}` };
  }
  if (!response.ok) throw new ApiError(response.status, body.error || response.statusText);
  return body;
}

export async function loadSession() {
  current = await parse(await fetch('/api/session', { credentials: 'same-origin' }));
  return current;
}

export function session() {
  return current;
}

export async function get(path, params) {
  const query = params ? `?${new URLSearchParams(params)}` : '';
  return parse(await fetch(`${path}${query}`, { credentials: 'same-origin' }));
}

export async function post(path, body) {
  const headers = { 'Content-Type': 'application/json' };
  if (current && current.csrf) headers['X-Relay-CSRF'] = current.csrf;
  return parse(await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers,
    body: JSON.stringify(body),
  }));
}
