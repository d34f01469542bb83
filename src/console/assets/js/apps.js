// Apps: every app of the apps root with its rules (patterns), schedules (next fire times),
// availability and why not: what `relay app ls` and `relay app inspect` show.
import { get } from './api.js';
import { badge, h, table } from './dom.js';

function status(app) {
  if (app.available) return badge('available', 'ok');
  if (app.loaded) return badge('loaded, unavailable', 'warn');
  return badge('not loaded', 'bad');
}

// A rule's flow control in words, as `relay app inspect` prints it (docs/apps.md "Flow control").
function flowText(flow) {
  const parts = [];
  if (flow.throttle) parts.push(`throttle ${flow.throttle.limit} per ${flow.throttle.period}` + (flow.throttle.burst ? `, burst ${flow.throttle.burst}` : ''));
  if (flow.concurrency) parts.push(`${flow.concurrency.limit} at a time per ${flow.concurrency.key}`);
  if (flow.singleton) parts.push(`singleton per ${flow.singleton.key}`);
  if (flow.dedupe) parts.push(`dedupe by ${flow.dedupe.key} for ${flow.dedupe.ttl}`);
  if (flow.debounce) parts.push(`debounce by ${flow.debounce.key}, ${flow.debounce.period} quiet, at most ${flow.debounce.max_wait}`);
  return parts.length ? parts.join(' · ') : '-';
}

function appCard(app) {
  const detail = app.detail;
  const card = h('section', { class: 'card app', id: `app-${app.name}` },
    h('div', { class: 'app-head' }, h('h2', null, app.name), h('span', { class: 'muted' }, app.runtime || '-'), status(app)));
  if (app.reason) card.append(h('p', { class: 'reason' }, app.reason));
  for (const error of app.errors) card.append(h('pre', { class: 'error' }, error));
  if (!detail) return card;
  card.append(h('p', { class: 'muted' },
    `concurrency ${detail.concurrency} · ` +
    (detail.throttle ? `throttle ${detail.throttle.limit} per ${detail.throttle.period}${detail.throttle.burst ? `, burst ${detail.throttle.burst}` : ''} (the whole app) · ` : '') +
    `network ${detail.network ? 'on' : 'off'} · ` +
    `memory ${detail.resources.memory} · cpus ${detail.resources.cpus} · pids ${detail.resources.pids}` +
    (detail.image ? ` · image ${detail.image}` : '')));
  card.append(h('h3', null, `Rules (${detail.rules.length})`));
  card.append(detail.rules.length ? table(['Handler', 'Pattern', 'Timeout', 'Retries', 'Flow control'], detail.rules.map((rule) =>
    h('tr', null, h('td', { class: 'mono' }, rule.handler),
      h('td', null, h('code', { class: 'pattern' }, JSON.stringify(rule.pattern))),
      h('td', null, rule.timeout), h('td', null, rule.retries),
      h('td', { class: 'flow' }, flowText(rule.flow || {}))))) : h('p', { class: 'muted' }, 'No event rules.'));
  card.append(h('h3', null, `Schedules (${detail.schedules.length})`));
  if (detail.schedules.length) {
    card.append(table(['Name', 'Cron', 'Handler', 'Next fire times'], detail.schedules.map((schedule) =>
      h('tr', null, h('td', null, schedule.name),
        h('td', { class: 'mono' }, `${schedule.cron} (${schedule.timezone})`),
        h('td', { class: 'mono' }, schedule.handler),
        h('td', null, schedule.next.length ? schedule.next.map((fire) => h('div', { class: 'mono' }, fire.local)) : 'never')))));
  } else {
    card.append(h('p', { class: 'muted' }, 'No schedules.'));
  }
  return card;
}

export async function renderApps(main) {
  const data = await get('/api/apps');
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Apps'), h('span', { class: 'muted' }, data.root)));
  if (!data.apps.length) main.append(h('p', { class: 'muted' }, `No directory in ${data.root} holds a template.yaml.`));
  for (const app of data.apps) main.append(appCard(app));
  for (const ignored of data.ignored) {
    main.append(h('p', { class: 'muted' }, `${ignored.dir} is not an app: ${ignored.reason}`));
  }
}
