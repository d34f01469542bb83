// Pattern playground: paste an event, see which rules of the loaded apps match it, with the
// worker's own classifier.
import { post } from './api.js';
import { badge, clear, h, table } from './dom.js';

const SAMPLE = '{\n  "event_name": "INSERT",\n  "table_name": "users",\n  "new_image": {"id": "user_17", "status": "COMPLETED"}\n}';

export async function renderPlayground(main) {
  const input = h('textarea', { id: 'event', rows: 12, spellcheck: 'false', class: 'mono' });
  input.value = sessionStorage.getItem('relay-playground') || SAMPLE;
  const result = h('div', { id: 'playground-result' });
  const button = h('button', { id: 'match', type: 'submit' }, 'Match');
  const form = h('form', { class: 'card' }, h('label', { for: 'event' }, 'Event (JSON object)'), input, h('div', { class: 'actions' }, button));
  main.append(h('div', { class: 'page-head' }, h('h1', null, 'Pattern playground')), form, result);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    sessionStorage.setItem('relay-playground', input.value);
    const data = await post('/api/playground', { event: input.value });
    clear(result);
    if (!data.valid) {
      result.append(h('p', { class: 'error', id: 'playground-error' }, `Not a valid event: ${data.error}`));
      return;
    }
    result.append(h('p', { id: 'playground-summary' }, data.matched.length
      ? `${data.matched.length} rule(s) match, run in this order: ${data.matched.map((m) => `${m.app}/${m.handler}`).join(', ')}`
      : 'No rule matches: the event would be acknowledged as unmatched.'));
    result.append(table(['', 'App', 'Handler', 'Pattern'], data.rules.map((rule) =>
      h('tr', { class: rule.matched ? 'match' : 'nomatch' },
        h('td', null, rule.matched ? badge('match', 'ok') : badge('no match', 'muted')),
        h('td', null, rule.app, rule.available ? null : [' ', badge('unavailable', 'warn')]),
        h('td', { class: 'mono' }, rule.handler),
        h('td', null, h('pre', { class: 'pattern' }, JSON.stringify(rule.pattern)))))));
  });
}
