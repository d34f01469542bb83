// Dead letters: filter (app, handler, kind, reason, time range, text in the event), inspect
// (event, every attempt, the last attempt's output), replay and delete one entry, and bulk
// replay/delete of exactly what the filter selects, after a confirmation stating the count.
import { ApiError, get, post, session } from './api.js';
import { badge, clear, confirmDialog, formatDuration, formatTime, h, table, toast } from './dom.js';

const FILTER_KEYS = ['app', 'handler', 'kind', 'reason', 'q', 'since', 'until'];
const KIND_CLASS = { handler: 'warn', malformed: 'bad', oversized: 'bad', schedule: 'bad', poison: 'bad', operator: 'warn' };

function toLocalInput(value) {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const offset = date.getTimezoneOffset() * 60000;
  return new Date(date.getTime() - offset).toISOString().slice(0, 16);
}

function fromLocalInput(value) {
  return value ? new Date(value).toISOString() : '';
}

function describe(filter) {
  const parts = FILTER_KEYS.filter((key) => filter[key]).map((key) => `${key === 'q' ? 'text' : key} = ${filter[key]}`);
  return parts.length ? parts.join(', ') : 'no filter (every entry)';
}

async function waitForJob(job) {
  for (;;) {
    const status = await get('/api/jobs', { id: job });
    if (status.state === 'done') return status;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

function reportJob(status) {
  const kind = status.failed || status.not_runnable || status.refused ? 'error' : 'ok';
  toast(`Replay finished: ${status.succeeded} succeeded, ${status.failed} failed, ` +
    `${status.refused} refused, ${status.not_runnable} could not run (of ${status.total}).`, kind);
  for (const result of status.results) {
    if (result.verdict !== 'succeeded') toast(`${result.id}: ${result.message}`, 'error');
  }
}

export async function renderDeadLetters(main, params) {
  const filter = {};
  for (const key of FILTER_KEYS) filter[key] = params.get(key) || '';
  const readOnly = session().read_only;
  const apps = await get('/api/apps').catch(() => ({ apps: [] }));

  const appSelect = h('select', { name: 'app', id: 'f-app' }, h('option', { value: '' }, 'any app'),
    apps.apps.map((app) => h('option', { value: app.name, selected: filter.app === app.name }, app.name)),
    h('option', { value: '-', selected: filter.app === '-' }, '- (no handler)'));
  const kindSelect = h('select', { name: 'kind', id: 'f-kind' }, ['', 'handler', 'malformed', 'oversized', 'schedule', 'poison', 'operator'].map(
    (kind) => h('option', { value: kind, selected: filter.kind === kind }, kind || 'any kind')));
  const fields = {
    handler: h('input', { name: 'handler', id: 'f-handler', placeholder: 'handler (exact)', value: filter.handler }),
    reason: h('input', { name: 'reason', id: 'f-reason', placeholder: 'reason contains', value: filter.reason }),
    q: h('input', { name: 'q', id: 'f-q', type: 'search', placeholder: 'search the event text', value: filter.q }),
    since: h('input', { name: 'since', id: 'f-since', type: 'datetime-local', value: toLocalInput(filter.since) }),
    until: h('input', { name: 'until', id: 'f-until', type: 'datetime-local', value: toLocalInput(filter.until) }),
  };
  const form = h('form', { class: 'card filters', id: 'dlq-filter' },
    h('label', null, 'App', appSelect), h('label', null, 'Handler', fields.handler),
    h('label', null, 'Kind', kindSelect), h('label', null, 'Reason', fields.reason),
    h('label', { class: 'wide' }, 'Text in the event', fields.q),
    h('label', null, 'From', fields.since), h('label', null, 'To', fields.until),
    h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'search' }, 'Search'),
      h('button', { type: 'button', class: 'secondary', id: 'reset', onclick: () => { location.hash = '#/dlq'; } }, 'Reset')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    const values = { app: appSelect.value, kind: kindSelect.value, handler: fields.handler.value.trim(),
      reason: fields.reason.value.trim(), q: fields.q.value, since: fromLocalInput(fields.since.value),
      until: fromLocalInput(fields.until.value) };
    for (const key of FILTER_KEYS) if (values[key]) next.set(key, values[key]);
    const hash = `#/dlq${next.toString() ? `?${next}` : ''}`;
    if (location.hash === hash) refresh(); else location.hash = hash;
  });

  const summary = h('div', { class: 'summary', id: 'dlq-summary' });
  const list = h('div', { id: 'dlq-list' });
  const detail = h('aside', { class: 'detail card', id: 'dlq-detail', hidden: true });
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Dead letters')), form, summary,
    h('div', { class: 'split' }, list, detail));

  const query = {};
  for (const key of FILTER_KEYS) if (filter[key]) query[key] = filter[key];
  let current = null;

  async function bulk(action) {
    const count = current.total;
    const verb = action === 'replay' ? 'Replay' : 'Delete';
    const consequence = action === 'replay'
      ? 'Each handler runs once now with the recorded event; entries that succeed are removed.'
      : 'They are removed from the dead-letter queue for good.';
    const ok = await confirmDialog(`${verb} ${count} entr${count === 1 ? 'y' : 'ies'}?`,
      `${verb} exactly the ${count} entr${count === 1 ? 'y' : 'ies'} selected by ${describe(filter)}, up to ${current.upto}. ${consequence}`,
      `${verb} ${count}`);
    if (!ok) return;
    try {
      const answer = await post(`/api/dlq/${action === 'replay' ? 'replay' : 'delete'}`,
        { filter: query, upto: current.upto, expected: count });
      if (action === 'replay') reportJob(await waitForJob(answer.job));
      else toast(`Deleted ${answer.removed} entr${answer.removed === 1 ? 'y' : 'ies'}.`, 'ok');
    } catch (failure) {
      toast(failure.message, 'error');
    }
    await refresh();
  }

  async function showEntry(id) {
    const entry = await get('/api/dlq/entry', { id });
    clear(detail);
    detail.hidden = false;
    const fields = entry.fields;
    const output = fields.output_tail ?? fields.output ?? null;
    const exitReason = fields.exit_reason ?? entry.reason;
    detail.append(h('div', { class: 'detail-head' }, h('h2', null, entry.id),
      h('button', { class: 'secondary', id: 'close-detail', onclick: () => { detail.hidden = true; } }, 'Close')));
    detail.append(h('dl', { class: 'fields' },
      ['app', 'handler', 'kind', 'reason', 'timestamp', 'original_id', 'consumer', 'deliveries', 'handler_attempts']
        .map((name) => [h('dt', null, name), h('dd', { class: 'mono' }, name === 'kind' ? entry.kind : fields[name] ?? '-')])));
    if (!readOnly) {
      const actions = h('div', { class: 'actions' });
      if (entry.replayable) {
        actions.append(h('button', { id: 'replay-one', onclick: async () => {
          try {
            const answer = await post('/api/dlq/replay', { ids: [entry.id] });
            const status = await waitForJob(answer.job);
            reportJob(status);
            const result = status.results[0];
            if (result && result.output) detail.append(h('h3', null, 'Replay output'), h('pre', { class: 'output', id: 'replay-output' }, result.output));
          } catch (failure) {
            toast(failure.message, 'error');
          }
          await refresh();
        } }, 'Replay'));
      } else {
        actions.append(h('span', { class: 'muted', id: 'not-replayable' }, entry.not_replayable_because));
      }
      actions.append(h('button', { class: 'danger', id: 'delete-one', onclick: async () => {
        if (!await confirmDialog('Delete 1 entry?', `Delete ${entry.id} from the dead-letter queue for good.`, 'Delete 1')) return;
        try {
          await post('/api/dlq/delete', { ids: [entry.id] });
          toast(`Deleted ${entry.id}.`, 'ok');
          detail.hidden = true;
        } catch (failure) {
          toast(failure.message, 'error');
        }
        await refresh();
      } }, 'Delete'));
      detail.append(actions);
    }
    detail.append(h('h3', null, 'Event'));
    if (entry.event_error) detail.append(h('p', { class: 'muted', id: 'event-error' }, `Not an event, shown as recorded: ${entry.event_error}`));
    detail.append(h('pre', { class: 'event', id: 'event-text' }, entry.event_pretty ?? entry.event));
    detail.append(h('h3', null, 'Attempts'));
    detail.append(entry.attempts_history.length
      ? table(['#', 'Worker', 'Started', 'Outcome', 'Duration'], entry.attempts_history.map((attempt) => h('tr', null,
        h('td', null, attempt.attempt), h('td', null, attempt.consumer), h('td', null, formatTime(attempt.started_ms)),
        h('td', null, attempt.finished_ms ? [badge(attempt.outcome, attempt.outcome === 'succeeded' ? 'ok' : 'bad'), ' ', attempt.reason] : 'running'),
        h('td', null, attempt.finished_ms ? formatDuration(attempt.duration_ms) : '-'))), { class: 'grid', id: 'attempts' })
      : h('p', { class: 'muted' }, `${fields.handler_attempts ?? 0} attempt(s) recorded; no journal kept for this message.`));
    detail.append(h('h3', { id: 'output-title' }, `Last attempt's output${exitReason ? ` (${exitReason})` : ''}`));
    detail.append(output !== null
      ? h('pre', { class: 'output', id: 'output-tail' }, output || '(no output)')
      : h('p', { class: 'muted', id: 'output-tail-missing' }, 'This entry records no output tail.'));
  }

  async function refresh(keepDetail = true) {
    let data;
    try {
      data = await get('/api/dlq', query);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) throw failure;
      clear(summary).append(h('p', { class: 'error' }, failure.message));
      return;
    }
    current = data;
    clear(summary);
    summary.append(h('span', { id: 'dlq-count' }, `${data.total} of ${data.length} entries match`), h('span', { class: 'muted' }, ` · ${describe(filter)}`));
    if (!readOnly && data.total > 0) {
      summary.append(h('span', { class: 'bulk' },
        h('button', { id: 'bulk-replay', onclick: () => bulk('replay') }, `Replay all ${data.total}`),
        h('button', { id: 'bulk-delete', class: 'danger', onclick: () => bulk('delete') }, `Delete all ${data.total}`)));
    }
    clear(list);
    const rows = [];
    const addRows = (entries) => entries.forEach((entry) => rows.push(h('tr', { class: 'entry', 'data-id': entry.id, onclick: () => showEntry(entry.id).catch((e) => toast(e.message, 'error')) },
      h('td', { class: 'mono' }, entry.id),
      h('td', null, entry.timestamp),
      h('td', null, entry.app),
      h('td', { class: 'mono' }, entry.handler),
      h('td', null, badge(entry.kind, KIND_CLASS[entry.kind])),
      h('td', null, entry.reason),
      h('td', null, entry.attempts),
      h('td', { class: 'mono preview' }, entry.event_preview))));
    addRows(data.entries);
    const tbody = h('tbody', null, rows);
    list.append(h('table', { class: 'grid', id: 'dlq-table' },
      h('thead', null, h('tr', null, ['Id', 'Time', 'App', 'Handler', 'Kind', 'Reason', 'Attempts', 'Event'].map((name) => h('th', null, name)))), tbody));
    if (!data.entries.length) list.append(h('p', { class: 'muted', id: 'dlq-empty' }, 'No entry matches.'));
    let next = data.next;
    const more = h('button', { class: 'secondary', id: 'more' }, 'Load more');
    more.addEventListener('click', async () => {
      const page = await get('/api/dlq', { ...query, upto: data.upto, before: next });
      const start = rows.length;
      addRows(page.entries);
      for (const row of rows.slice(start)) tbody.append(row);
      next = page.next;
      more.hidden = !next;
    });
    more.hidden = !next;
    list.append(more);
    if (!keepDetail) detail.hidden = true;
  }

  await refresh();
  const focus = params.get('id');
  if (focus) await showEntry(focus).catch((e) => toast(e.message, 'error'));
}
