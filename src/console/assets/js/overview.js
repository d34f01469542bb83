// Overview: the system as one (every worker's per-minute counters summed in Redis), the
// stream, the group, the DLQ and the consumers.
import { get } from './api.js';
import { badge, clear, formatDuration, h, table } from './dom.js';

const WINDOWS = [[60, '1 hour'], [180, '3 hours'], [360, '6 hours'], [1440, '24 hours']];

function sum(series, names, index) {
  return names.reduce((total, name) => total + ((series[name] || [])[index] || 0), 0);
}

function card(label, value, note, id) {
  return h('div', { class: 'card stat', id },
    h('div', { class: 'label' }, label),
    h('div', { class: 'value' }, value),
    note ? h('div', { class: 'note' }, note) : null);
}

function chartCard(target, title) {
  const holder = h('div', { class: 'chart' });
  target.append(h('div', { class: 'card' }, h('h3', null, title), holder));
  return holder;
}

function chart(holder, xs, lines) {
  // Measured once every card is laid out: each chart fills its own card.
  const width = Math.max(300, Math.floor(holder.getBoundingClientRect().width));
  if (typeof uPlot === 'undefined') {
    holder.append(h('p', { class: 'error' }, 'the chart library did not load'));
    return null;
  }
  const options = {
    width,
    height: 220,
    scales: { x: { time: true } },
    axes: [{}, { label: 'per minute', size: 60 }],
    series: [{}].concat(lines.map((line) => ({
      label: line.label,
      stroke: line.color,
      fill: `${line.color}22`,
      width: 2,
      points: { show: xs.length < 90 },
    }))),
  };
  return new uPlot(options, [xs].concat(lines.map((line) => line.values)), holder);
}

export async function renderOverview(main, params) {
  let minutes = Number(params.get('minutes')) || 180;
  const header = h('div', { class: 'page-head' }, h('h1', null, 'Overview'));
  const picker = h('select', { id: 'window', 'aria-label': 'time window' },
    WINDOWS.map(([value, label]) => h('option', { value, selected: value === minutes }, label)));
  header.append(h('label', { class: 'inline' }, 'History ', picker));
  const body = h('div', { id: 'overview' });
  main.append(header, body);
  const charts = [];

  async function refresh() {
    const data = await get('/api/overview', { minutes });
    const xs = data.throughput.minutes;
    const series = data.throughput.series;
    const last = xs.length - 2 >= 0 ? xs.length - 2 : 0;  // the last whole minute
    const rate = (names) => (sum(series, names, last) / 60).toFixed(2);
    const total = (names) => xs.reduce((acc, _, i) => acc + sum(series, names, i), 0);
    const failedEvents = ['events:malformed', 'events:oversized'];
    charts.splice(0).forEach((plot) => plot && plot.destroy());
    clear(body);
    const group = data.group;
    const stats = h('div', { class: 'stats' },
      card('Stream length', data.stream.length, data.stream.exists ? data.stream.name : 'stream missing', 'stat-stream'),
      card('Group lag', group.exists ? (group.lag ?? '?') : '-', group.exists ? `group ${group.name}` : 'group missing', 'stat-lag'),
      card('Pending', group.exists ? group.pending : '-', 'delivered, not acknowledged', 'stat-pending'),
      card('Oldest pending', group.oldest_pending ? formatDuration(group.oldest_pending.age_ms) : '-',
        group.oldest_pending ? `${group.oldest_pending.id} · ${group.oldest_pending.reason.kind}` : 'nothing pending',
        'stat-oldest'),
      card('Dead letters', data.dlq.length, data.dlq.key, 'stat-dlq'),
      card('Events / s', rate(['events:matched', 'events:unmatched', 'events:schedule']),
        `matched ${rate(['events:matched'])} · unmatched ${rate(['events:unmatched'])} · failed ${rate(failedEvents)}`,
        'stat-rate'));
    // Flow control (docs/apps.md "Flow control") over the window: waits begun, never run.
    stats.append(card('Flow control', total(['invocations:deferred']),
      `deferred · ${total(['invocations:deduplicated'])} deduplicated · ${total(['invocations:superseded'])} superseded · ` +
      `${total(['invocations:retry_after'])} retry-after in ${minutes}m`, 'stat-flow'));
    body.append(stats);
    // Replays (docs/replay.md): the running ones with their progress, then the latest ended.
    const listed = (await get('/api/replays')).replays.slice(0, 8);
    if (listed.length) {
      const replayRows = listed.map((replay) => h('tr', null,
        h('td', null, replay.id),
        h('td', null, badge(replay.state, replay.state === 'running' || replay.state === 'done' ? 'ok'
          : replay.state === 'cancelled' ? 'warn' : 'bad')),
        h('td', null, replay.source === 'dlq' ? 'dead letters' : replay.rule ? `${replay.app}/${replay.rule}` : replay.app),
        h('td', null, `${Math.floor(replay.progress * 100)}%`),
        h('td', null, replay.published),
        h('td', null, replay.skipped),
        h('td', { class: 'muted' }, replay.missing ? `missing ${replay.missing.from}..${replay.missing.to}: ${replay.missing.reason}`
          : replay.error || (replay.driver ? `driven by ${replay.driver}` : ''))));
      const running = listed.filter((replay) => replay.state === 'running').length;
      body.append(h('div', { class: 'card', id: 'replays-card' },
        h('h3', null, `Replays (${running} running)`),
        table(['Replay', 'State', 'Through', 'Progress', 'Published', 'Skipped', ''], replayRows,
          { class: 'grid', id: 'replays' })));
    }
    // Why the oldest message waits, and what keeps retention from trimming the stream.
    if (group.oldest_pending) {
      body.append(h('p', { class: 'muted', id: 'oldest-why' },
        `Oldest pending ${group.oldest_pending.id} (held by ${group.oldest_pending.consumer}, `
        + `${group.oldest_pending.deliveries} deliveries): ${group.oldest_pending.description}`));
    }
    if (data.trim_held_back) {
      const held = data.trim_held_back.message;
      body.append(h('p', { class: 'error', id: 'trim-held-back' },
        `Stream trimming is held back by ${held.id} (group ${data.trim_held_back.group}, `
        + `${formatDuration(held.age_ms)} old, older than the retention): ${held.reason.kind}: ${held.description}. `
        + 'Resolve it with relay pending.'));
    }
    body.append(h('p', { class: 'muted', id: 'window-totals' },
      `In the last ${minutes} minutes: ${total(['events:matched'])} matched, ` +
      `${total(['events:unmatched'])} unmatched, ${total(failedEvents)} failed (malformed or oversized) events; ` +
      `${total(['invocations:succeeded'])} invocations succeeded, ${total(['invocations:failed'])} failed, ` +
      `${total(['invocations:exhausted'])} exhausted; ${total(['invocations:deferred'])} deferred, ` +
      `${total(['invocations:deduplicated'])} deduplicated, ${total(['invocations:superseded'])} superseded, ` +
      `${total(['invocations:cancelled'])} cancelled.`));
    const charts_row = h('div', { class: 'charts' });
    body.append(charts_row);
    const eventsHolder = chartCard(charts_row, 'Events per minute');
    const outcomesHolder = chartCard(charts_row, 'Invocation outcomes per minute');
    charts.push(chart(eventsHolder, xs, [
      { label: 'matched', color: '#2563eb', values: series['events:matched'] },
      { label: 'unmatched', color: '#94a3b8', values: series['events:unmatched'] },
      { label: 'schedule', color: '#7c3aed', values: series['events:schedule'] },
      { label: 'failed', color: '#dc2626', values: xs.map((_, i) => sum(series, failedEvents, i)) },
    ]));
    charts.push(chart(outcomesHolder, xs, [
      { label: 'succeeded', color: '#16a34a', values: series['invocations:succeeded'] },
      { label: 'failed (retried)', color: '#f59e0b', values: series['invocations:failed'] },
      { label: 'exhausted (to DLQ)', color: '#dc2626', values: series['invocations:exhausted'] },
      { label: 'unavailable/blocked', color: '#64748b',
        values: xs.map((_, i) => sum(series, ['invocations:unavailable', 'invocations:blocked'], i)) },
      { label: 'deferred (flow control)', color: '#0891b2', values: series['invocations:deferred'] },
      { label: 'deduplicated/superseded', color: '#a855f7',
        values: xs.map((_, i) => sum(series, ['invocations:deduplicated', 'invocations:superseded'], i)) },
      { label: 'cancelled', color: '#78716c', values: series['invocations:cancelled'] },
    ]));
    const rows = data.consumers.map((consumer) => h('tr', null,
      h('td', null, consumer.name),
      h('td', null, consumer.pending),
      h('td', null, formatDuration(consumer.idle_ms)),
      h('td', null, badge(consumer.health, consumer.health === 'healthy' ? 'ok' : consumer.health === 'silent' ? 'warn' : 'bad')),
      h('td', { class: 'muted' }, consumer.worker
        ? `${consumer.worker.runtime} runtime · up since ${consumer.worker.started} · http ${consumer.worker.http}` : 'no heartbeat')));
    body.append(h('div', { class: 'card' }, h('h3', null, `Consumers of ${group.name}`),
      rows.length ? table(['Consumer', 'Pending', 'Idle', 'Health', 'Worker'], rows, { class: 'grid', id: 'consumers' })
        : h('p', { class: 'muted' }, 'No consumer has read from this group yet.')));
  }

  picker.addEventListener('change', () => {
    minutes = Number(picker.value);
    history.replaceState(null, '', `#/overview?minutes=${minutes}`);
    refresh();
  });
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 5000);
  return () => {
    clearInterval(timer);
    charts.forEach((plot) => plot && plot.destroy());
  };
}
