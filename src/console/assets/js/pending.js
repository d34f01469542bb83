// Pending and running: the group's PEL with each message's invocations, decoded by the server
// from the invocation state and the attempt journal; a Cancel action on a message or one of
// its invocations (docs/pipeline.md "Cancellation"), confirmed like the bulk DLQ actions.
import { get, post, session } from './api.js';
import { badge, clear, confirmDialog, formatDuration, formatTime, h, table, toast } from './dom.js';

const STATE_KIND = {
  planned: 'muted', running: 'info', failed: 'warn', succeeded: 'ok', exhausted: 'bad', unknown: 'muted',
  retry_after: 'info', deduplicated: 'muted', superseded: 'muted', waiting: 'info',
  cancelled: 'muted', expired: 'bad',
};

// Invocations a cancel can still change: not terminal (docs/pipeline.md "Cancellation").
const CANCELLABLE = new Set(['planned', 'running', 'failed', 'retry_after', 'waiting']);

// What POST /api/cancel did, in words (the `relay cancel` results, docs/cli.md).
const RESULT_TEXT = {
  cancelled: 'cancelled before it started', stopping: 'stop sent to its worker',
  orphaned: 'cancelled when its claim is taken over', finished: 'already finished',
  requested: 'cancelled when a worker reads it', not_found: 'not found', error: 'failed',
};

// Asks, stating how many invocations and what happens to them, then cancels; true when sent.
async function cancelInvocations(invocations, what, count) {
  const ok = await confirmDialog(`Cancel ${count} invocation${count === 1 ? '' : 's'}?`,
    `${what}: a running handler is stopped (SIGTERM, then SIGKILL after the grace), one that has not started never starts. ` +
    'Cancelled is final: never retried, no dead-letter entry.', `Cancel ${count}`);
  if (!ok) return false;
  try {
    const reply = await post('/api/cancel', { invocations });
    const counts = {};
    for (const result of reply.results) counts[result.result] = (counts[result.result] || 0) + 1;
    const summary = Object.entries(counts).map(([result, n]) => `${n} ${RESULT_TEXT[result] || result}`).join(', ');
    const failed = (counts.not_found || 0) + (counts.error || 0);
    toast(`Cancel: ${summary}`, failed ? 'bad' : 'ok');
  } catch (error) {
    toast(`Cancel failed: ${error.message}`, 'bad');
  }
  return true;
}

// Why an invocation waits for its flow control (docs/apps.md "Flow control") and its earliest
// start; until_ms 0: until a running invocation of its key ends.
const WAIT_TEXT = { throttled: 'throttled', key_busy: 'key busy', debounced: 'debounced' };

function waitText(wait, now) {
  const reason = WAIT_TEXT[wait.reason] || wait.reason;
  if (!wait.until_ms) return `${reason}: starts when a running invocation of its key ends`;
  const left = wait.until_ms - now;
  return `${reason}: earliest start ${formatTime(wait.until_ms)}` + (left > 0 ? ` (in ${formatDuration(left)})` : ' (due)');
}

function invocationLine(invocation, now, onCancel) {
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
  } else if (invocation.state === 'cancelled') {
    detail = `cancelled after ${invocation.attempt} attempt(s)` +
      (invocation.dlq_written !== undefined ? `; DLQ entry ${invocation.dlq_written ? 'written' : 'owed'}` : '');
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
  const cancel = onCancel && CANCELLABLE.has(state)
    ? h('button', { class: 'danger small cancel-invocation', onclick: () => onCancel([`${invocation.app}/${invocation.handler}`]) }, 'Cancel')
    : null;
  return h('div', { class: 'invocation' },
    h('span', { class: 'mono' }, `${invocation.app}/${invocation.handler}`), ' ',
    badge(state, STATE_KIND[state]), ' ', h('span', { class: invocation.wait ? 'flow-wait' : null }, detail),
    cancel ? ' ' : null, cancel,
    attempts.length ? h('ul', { class: 'attempts' }, attempts) : null, ...failure);
}

export async function renderPending(main) {
  const head = h('div', { class: 'page-head' }, h('h1', null, 'Pending and running'));
  const body = h('div', { id: 'pending' });
  main.append(head, body);
  let before = '';
  let pages = [''];
  const readOnly = session().read_only;

  async function refresh() {
    const data = await get('/api/pending', { before, limit: 50 });
    clear(body);
    body.append(h('p', { class: 'muted' }, `${data.count} message(s) pending in group ${data.group} of ${data.stream}`));
    if (!data.entries.length) {
      body.append(h('p', { class: 'muted', id: 'pending-empty' }, 'Nothing is pending: every delivered message was acknowledged.'));
      return;
    }
    // One message's invocations, or the named ones (`*`: every one the message owes).
    const cancelOf = (entry) => (readOnly ? null : async (fields) => {
      const every = fields[0] === '*';
      const what = every ? `every invocation of message ${entry.id}` : `${fields.join(', ')} of message ${entry.id}`;
      // `*` counts what the message still owes (none known yet: the message itself).
      const open = entry.invocations.filter((i) => CANCELLABLE.has(i.state)).length;
      const count = every ? Math.max(open, 1) : fields.length;
      const invocations = fields.map((field) => ({ id: entry.id, invocation: field }));
      if (await cancelInvocations(invocations, what, count)) await refresh();
    });
    const rows = data.entries.map((entry) => [
      h('tr', { class: 'pel', 'data-id': entry.id },
        h('td', { class: 'mono' }, entry.id, readOnly ? null : ' ',
          readOnly ? null : h('button', { class: 'danger small cancel-message', onclick: () => cancelOf(entry)(['*']) }, 'Cancel')),
        h('td', null, entry.consumer),
        h('td', null, formatDuration(entry.idle_ms)),
        h('td', null, entry.deliveries),
        h('td', { class: 'mono preview' }, entry.payload_missing ? '(payload missing)' : entry.event_preview)),
      h('tr', { class: 'pel-detail', 'data-id': entry.id }, h('td', { colspan: 5 },
        entry.invocations.length ? entry.invocations.map((invocation) => invocationLine(invocation, data.now_ms, cancelOf(entry)))
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
