// Pending and running: the group's PEL with each message's invocations, decoded by the server
// from the invocation state and the attempt journal.
import { get } from './api.js';
import { badge, clear, formatDuration, formatTime, h, table } from './dom.js';

const STATE_KIND = {
  planned: 'muted', running: 'info', failed: 'warn', succeeded: 'ok', exhausted: 'bad', unknown: 'muted',
  retry_after: 'info', deduplicated: 'muted', superseded: 'muted', waiting: 'info',
};

// Why an invocation waits for its flow control (docs/apps.md "Flow control") and its earliest
// start; until_ms 0: until a running invocation of its key ends.
const WAIT_TEXT = { throttled: 'throttled', key_busy: 'key busy', debounced: 'debounced' };

function waitText(wait, now) {
  const reason = WAIT_TEXT[wait.reason] || wait.reason;
  if (!wait.until_ms) return `${reason}: starts when a running invocation of its key ends`;
  const left = wait.until_ms - now;
  return `${reason}: earliest start ${formatTime(wait.until_ms)}` + (left > 0 ? ` (in ${formatDuration(left)})` : ' (due)');
}

function invocationLine(invocation, now) {
  let detail = '';
  if (invocation.state === 'running') {
    detail = invocation.running_on
      ? `attempt ${invocation.attempt} running on ${invocation.running_on} since ${formatTime(invocation.running_since_ms)} (${formatDuration(now - invocation.running_since_ms)})`
      : `attempt ${invocation.attempt} running, claim until ${formatTime(invocation.claim_deadline_ms)}`;
  } else if (invocation.state === 'failed') {
    const wait = invocation.next_attempt_ms - now;
    detail = `attempt ${invocation.attempt} failed; next attempt at ${formatTime(invocation.next_attempt_ms)}` +
      (wait > 0 ? ` (in ${formatDuration(wait)})` : ' (due)');
  } else if (invocation.state === 'retry_after') {
    const wait = invocation.next_attempt_ms - now;
    detail = `the handler asked to run again later (exit 75, not charged); runs again at ${formatTime(invocation.next_attempt_ms)}` +
      (wait > 0 ? ` (in ${formatDuration(wait)})` : ' (due)');
  } else if (invocation.state === 'deduplicated') {
    detail = `not run: message ${invocation.by} had its dedupe key first`;
  } else if (invocation.state === 'superseded') {
    detail = `not run: replaced by the newer message ${invocation.by}`;
  } else if (invocation.state === 'exhausted') {
    detail = `after ${invocation.attempt} attempts; DLQ entry ${invocation.dlq_written ? 'written' : 'owed'}`;
  } else if (invocation.state === 'succeeded') {
    detail = `on attempt ${invocation.attempt}`;
  } else if (invocation.state === 'planned') {
    detail = 'not started yet (waits for the invocations before it, a slot or its app)';
  } else {
    detail = `marker ${invocation.marker}`;
  }
  const attempts = invocation.attempts.map((attempt) => h('li', null,
    `#${attempt.attempt} on ${attempt.consumer} at ${formatTime(attempt.started_ms)}: `,
    attempt.finished_ms ? `${attempt.outcome}${attempt.reason ? ` (${attempt.reason})` : ''} in ${formatDuration(attempt.duration_ms)}` : 'running'));
  let state = invocation.state;
  if (invocation.wait) {
    if (state === 'planned') {
      state = 'waiting';
      detail = waitText(invocation.wait, now);
    } else {
      detail += ` · ${waitText(invocation.wait, now)}`;
    }
  }
  if (invocation.max_attempts) detail += ` · at most ${invocation.max_attempts} attempt(s)`;
  // The last failed attempt's exit reason and output tail, kept in the invocation state.
  const failure = invocation.output_tail !== undefined || invocation.exit_reason
    ? [h('div', { class: 'muted' }, `last failed attempt: ${invocation.exit_reason || 'no exit reason recorded'}`),
      invocation.output_tail !== undefined ? h('pre', { class: 'output tail' }, invocation.output_tail || '(no output)') : null]
    : [];
  return h('div', { class: 'invocation' },
    h('span', { class: 'mono' }, `${invocation.app}/${invocation.handler}`), ' ',
    badge(state, STATE_KIND[state]), ' ', h('span', { class: invocation.wait ? 'flow-wait' : null }, detail),
    attempts.length ? h('ul', { class: 'attempts' }, attempts) : null, ...failure);
}

export async function renderPending(main) {
  const head = h('div', { class: 'page-head' }, h('h1', null, 'Pending and running'));
  const body = h('div', { id: 'pending' });
  main.append(head, body);
  let before = '';
  let pages = [''];

  async function refresh() {
    const data = await get('/api/pending', { before, limit: 50 });
    clear(body);
    body.append(h('p', { class: 'muted' }, `${data.count} message(s) pending in group ${data.group} of ${data.stream}`));
    if (!data.entries.length) {
      body.append(h('p', { class: 'muted', id: 'pending-empty' }, 'Nothing is pending: every delivered message was acknowledged.'));
      return;
    }
    const rows = data.entries.map((entry) => [
      h('tr', { class: 'pel' },
        h('td', { class: 'mono' }, entry.id),
        h('td', null, entry.consumer),
        h('td', null, formatDuration(entry.idle_ms)),
        h('td', null, entry.deliveries),
        h('td', { class: 'mono preview' }, entry.payload_missing ? '(payload missing)' : entry.event_preview)),
      h('tr', { class: 'pel-detail' }, h('td', { colspan: 5 },
        entry.invocations.length ? entry.invocations.map((invocation) => invocationLine(invocation, data.now_ms))
          : h('span', { class: 'muted' }, 'no invocation started yet (not classified, or waiting for a slot or an available app)')))]);
    body.append(table(['Message', 'Consumer', 'Idle', 'Deliveries', 'Event'], rows, { class: 'grid', id: 'pel' }));
    const nav = h('div', { class: 'pager' });
    if (pages.length > 1) nav.append(h('button', { class: 'secondary', onclick: () => { pages.pop(); before = pages[pages.length - 1]; refresh(); } }, 'Previous'));
    if (data.next) nav.append(h('button', { class: 'secondary', onclick: () => { before = data.next; pages.push(before); refresh(); } }, 'Next'));
    body.append(nav);
  }

  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 5000);
  return () => clearInterval(timer);
}
