// `relay console` in real headless Chromium against a real redis-server and a real `relay start`
// (ctest label `browser`; tests/browser/README.md). Screenshots of every page go to
// $RELAY_CONSOLE_SCREENSHOTS (scripts/console-screenshots points it at docs/console/).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Stack, TOKEN, waitFor } from './harness.mjs';

const shots = process.env.RELAY_CONSOLE_SCREENSHOTS;
const stack = new Stack();

async function screenshot(page, name) {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: path.join(shots, `${name}.png`) });
}

async function text(page, selector) {
  return page.$eval(selector, (el) => el.textContent);
}

async function dlqIds(query = '') {
  const data = await stack.api(`/api/dlq?limit=500${query}`);
  return data.entries.map((entry) => entry.id).sort();
}

describe('relay console', { timeout: 240000 }, () => {
  before(async () => {
    await stack.start();
  });

  after(async (context) => {
    if (process.exitCode && process.env.RELAY_BROWSER_LOGS !== '0') console.error(stack.logs());
    await stack.stop();
  });

  it('refuses every request without the token and mutations without the CSRF token', async () => {
    const read = await fetch(`${stack.url}/api/dlq`);
    assert.equal(read.status, 401);
    const anonymous = await fetch(`${stack.url}/api/dlq/delete`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"ids":["1-0"]}' });
    assert.equal(anonymous.status, 401);
    const noCsrf = await fetch(`${stack.url}/api/dlq/delete`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      body: '{"ids":["1-0"]}' });
    assert.equal(noCsrf.status, 403);
    assert.match((await noCsrf.json()).error, /X-Relay-CSRF/);
    const page = await stack.newPage();
    await page.goto(`${stack.url}/`);
    await page.waitForSelector('#login #token');
    // The page itself, same origin but without the session, cannot mutate either.
    assert.equal(await page.evaluate(async () => (await fetch('/api/dlq/delete', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"ids":["1-0"]}' })).status), 401);
    await page.type('#token', 'not-the-token-at-all');
    await page.click('#login button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#login-error').textContent.includes('wrong token'));
    await page.browserContext().close();
  });

  it('shows published events in the overview chart', async () => {
    for (let i = 1; i <= 6; i += 1) await stack.publish({ kind: 'order', id: `ORDER-${i}`, amount: 10 * i });
    for (let i = 1; i <= 4; i += 1) await stack.publish({ kind: 'noise', n: i });
    // Workers flush their per-minute counters every 5 s.
    await waitFor('the throughput counters', async () => {
      const data = await stack.api('/api/overview?minutes=60');
      const sum = (name) => data.throughput.series[name].reduce((a, b) => a + b, 0);
      return sum('events:matched') >= 6 && sum('events:unmatched') >= 4 && sum('invocations:exhausted') >= 6;
    }, 30000);
    const page = await stack.loggedInPage('#/overview?minutes=60');
    await page.waitForFunction(() => {
      const totals = document.querySelector('#window-totals');
      return totals && totals.textContent.includes('6 matched') && totals.textContent.includes('4 unmatched');
    }, { timeout: 15000 });
    await page.waitForSelector('.uplot canvas');
    // The matched series (#2563eb) is drawn: its colour is on the first chart's canvas.
    const blue = await page.evaluate(() => {
      const canvas = document.querySelector('.uplot canvas');
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let count = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        if (Math.abs(pixels[i] - 37) < 12 && Math.abs(pixels[i + 1] - 99) < 12 && Math.abs(pixels[i + 2] - 235) < 12) count += 1;
      }
      return count;
    });
    assert.ok(blue > 20, `the matched line is drawn (${blue} blue pixels)`);
    assert.match(await text(page, '#consumers'), /worker-a/);
    assert.match(await text(page, '#consumers'), /healthy/);
    assert.match(await text(page, '#stat-dlq'), /6/);
    await screenshot(page, 'overview');
    await page.browserContext().close();
  });

  it('lists apps with their rules, schedules, next fire times and availability', async () => {
    const page = await stack.loggedInPage('#/apps');
    await page.waitForSelector('#app-reports');
    const reports = await text(page, '#app-reports');
    assert.match(reports, /nightly/);
    assert.match(reports, /0 3 \* \* \* \(Europe\/Berlin\)/);
    assert.match(reports, /\d{4}-\d\d-\d\dT03:00:00\+0[12]:00/);  // next fire times, local
    assert.match(await text(page, '#app-shop'), /bin\/pay\.sh/);
    assert.match(await text(page, '#app-shop'), /available/);
    await screenshot(page, 'apps');
    await page.browserContext().close();
  });

  it('shows pending messages with their running and waiting invocations', async () => {
    await stack.publish({ kind: 'report', month: '2026-11' });
    await stack.publish({ kind: 'refund', order: 'ORDER-9' });
    const page = await stack.loggedInPage('#/pending');
    await page.waitForFunction(() => {
      const pel = document.querySelector('#pel');
      return pel && /running on worker-a since/.test(pel.textContent) && /next attempt at/.test(pel.textContent);
    }, { timeout: 20000 });
    const pel = await text(page, '#pel');
    assert.match(pel, /reports\/bin\/build\.sh/);
    assert.match(pel, /shop\/bin\/refund\.sh/);
    assert.match(pel, /failed \(exit 4\)/);
    // The failed invocation's budget and its last failure, kept in the invocation state.
    assert.match(pel, /at most 4 attempt\(s\)/);
    assert.match(pel, /last failed attempt: exit 4/);
    assert.match(pel, /refund service unavailable/);
    await screenshot(page, 'pending');
    await page.browserContext().close();
    // The overview names the oldest pending message and why it waits.
    const overview = await stack.loggedInPage('#/overview?minutes=60');
    await overview.waitForFunction(() => {
      const why = document.querySelector('#oldest-why');
      return why && /reports\/bin\/build\.sh attempt 1 is running on worker-a/.test(why.textContent);
    }, { timeout: 20000 });
    assert.match(await text(overview, '#stat-oldest'), /running/);
    await overview.browserContext().close();
  });

  it('finds a failing handler\'s entry by text search, inspects it, replays it after the fix, and it disappears', async () => {
    await waitFor('six dead letters', async () => (await dlqIds('&kind=handler')).length >= 6);
    const page = await stack.loggedInPage('#/dlq');
    await page.waitForSelector('#dlq-table');
    await page.type('#f-q', 'order-4');
    await page.click('#search');
    await page.waitForFunction(() => /^1 of \d+ entries match/.test(document.querySelector('#dlq-count')?.textContent || ''));
    const rows = await page.$$eval('#dlq-table tr.entry', (trs) => trs.map((tr) => tr.dataset.id));
    assert.equal(rows.length, 1);
    const id = rows[0];
    await page.click(`#dlq-table tr.entry[data-id="${id}"]`);
    await page.waitForSelector('#dlq-detail:not([hidden]) #event-text');
    assert.match(await text(page, '#event-text'), /"id": "ORDER-4"/);
    const attempts = await text(page, '#attempts');
    assert.match(attempts, /failed/);
    assert.match(attempts, /exit 3/);
    assert.match(attempts, /worker-a/);
    // The last attempt's output tail and exit reason, as the entry recorded them.
    assert.match(await text(page, '#output-tail'), /payment gateway refused the card \(code 51\)/);
    assert.match(await text(page, '#output-title'), /\(exit 3\)/);
    await screenshot(page, 'dead-letters');
    writeFileSync(path.join(stack.apps, 'shop', 'fixed'), '');
    await page.click('#replay-one');
    await page.waitForFunction(() => [...document.querySelectorAll('.toast')].some((t) => /1 succeeded/.test(t.textContent)), { timeout: 20000 });
    await page.waitForFunction((gone) => !document.querySelector(`#dlq-table tr.entry[data-id="${gone}"]`), {}, id);
    assert.match(await text(page, '#replay-output'), /charged/);
    const response = await fetch(`${stack.url}/api/dlq/entry?id=${id}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.status, 404);
    await page.browserContext().close();
  });

  it('bulk-deletes exactly the entries the filter selects, after a confirmation stating the count', async () => {
    await stack.publish('{not json');
    await stack.publish('[1, 2, 3]');
    await stack.publish('"just a string"');
    await waitFor('three malformed entries', async () => (await dlqIds('&kind=malformed')).length === 3);
    const before = await dlqIds();
    const malformed = await dlqIds('&kind=malformed');
    // Without the token a delete of real entries is refused and removes nothing.
    const anonymous = await stack.newPage();
    await anonymous.goto(`${stack.url}/`);
    const refused = await anonymous.evaluate(async (ids) => (await fetch('/api/dlq/delete', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ids }) })).status, malformed);
    assert.equal(refused, 401);
    assert.deepEqual(await dlqIds(), before);
    await anonymous.browserContext().close();
    const page = await stack.loggedInPage('#/dlq');
    await page.waitForSelector('#f-kind');
    await page.select('#f-kind', 'malformed');
    await page.click('#search');
    await page.waitForFunction(() => /^3 of \d+ entries match/.test(document.querySelector('#dlq-count')?.textContent || ''));
    await page.click('#bulk-delete');
    await page.waitForSelector('#confirm[open]');
    assert.match(await text(page, '#confirm-title'), /Delete 3 entries\?/);
    assert.match(await text(page, '#confirm-text'), /exactly the 3 entries selected by kind = malformed/);
    await page.click('#confirm-ok');
    await page.waitForFunction(() => [...document.querySelectorAll('.toast')].some((t) => /Deleted 3 entries/.test(t.textContent)));
    const after = await dlqIds();
    assert.deepEqual(after, before.filter((id) => !malformed.includes(id)));
    await page.browserContext().close();
  });

  it('shows an XSS payload in an event as text and runs no script', async () => {
    const payload = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">';
    await stack.publish({ kind: 'comment', id: 'ORDER-XSS', note: payload });
    await waitFor('the XSS entry', async () => (await dlqIds('&q=ORDER-XSS')).length === 1);
    const page = await stack.loggedInPage('#/dlq?q=ORDER-XSS');
    await page.waitForSelector('#dlq-table tr.entry');
    await page.click('#dlq-table tr.entry');
    await page.waitForSelector('#dlq-detail:not([hidden]) #event-text');
    assert.ok((await text(page, '#event-text')).includes(payload.replaceAll('"', '\\"')));
    assert.ok((await text(page, '#dlq-table')).includes('<script>window.__xss=1</script>'));
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await page.$$eval('main img, main script', (els) => els.length), 0);
    await page.browserContext().close();
  });

  it('matches a pasted event against every rule in the playground', async () => {
    const page = await stack.loggedInPage('#/playground');
    await page.waitForSelector('#event');
    await page.$eval('#event', (el) => { el.value = ''; });
    await page.type('#event', '{"kind": "order", "id": "ORDER-77", "amount": 120}');
    await page.click('#match');
    await page.waitForSelector('#playground-summary');
    assert.match(await text(page, '#playground-summary'), /1 rule\(s\) match, run in this order: shop\/bin\/pay\.sh/);
    await screenshot(page, 'playground');
    await page.$eval('#event', (el) => { el.value = '{"kind": '; });
    await page.click('#match');
    await page.waitForSelector('#playground-error');
    await page.browserContext().close();
  });

  it('shows each rule\'s flow control, a throttled invocation\'s turn and the flow counts', async () => {
    await stack.publish({ kind: 'sync', account: 'A-1' });
    await stack.publish({ kind: 'sync', account: 'A-1' });  // one sync an hour: this one waits
    await stack.publish({ kind: 'audit', id: 'AUDIT-1' });
    await stack.publish({ kind: 'audit', id: 'AUDIT-1' });  // the producer sent it twice
    const apps = await stack.loggedInPage('#/apps');
    await apps.waitForSelector('#app-ledger');
    const ledger = await text(apps, '#app-ledger');
    assert.match(ledger, /throttle 100 per 1s, burst 10 \(the whole app\)/);
    assert.match(ledger, /throttle 1 per 1h/);
    assert.match(ledger, /dedupe by id for 1d/);
    await apps.browserContext().close();
    const page = await stack.loggedInPage('#/pending');
    await page.waitForFunction(() => {
      const pel = document.querySelector('#pel');
      return pel && /ledger\/bin\/sync\.sh\s*waiting\s*throttled: earliest start/.test(pel.textContent);
    }, { timeout: 20000 });
    // Its turn is an hour after the first sync started.
    assert.match(await text(page, '#pel'), /throttled: earliest start [^(]+\(in (59m|1h)/);
    await page.browserContext().close();
    // Workers flush their per-minute counters every 5 s.
    await waitFor('the flow control counters', async () => {
      const data = await stack.api('/api/overview?minutes=60');
      const sum = (name) => data.throughput.series[name].reduce((a, b) => a + b, 0);
      return sum('invocations:deferred') >= 1 && sum('invocations:deduplicated') >= 1;
    }, 30000);
    const overview = await stack.loggedInPage('#/overview?minutes=60');
    await overview.waitForFunction(() => {
      const flow = document.querySelector('#stat-flow');
      return flow && /1 deduplicated/.test(flow.textContent);
    }, { timeout: 15000 });
    assert.match(await text(overview, '#stat-flow'), /^Flow control1deferred/);
    // The chart's totals are drawn apart from the stat tiles: wait for them too.
    await overview.waitForFunction(
      () => /1 deferred/.test(document.querySelector('#window-totals')?.textContent || ''),
      { timeout: 15000 });
    assert.match(await text(overview, '#window-totals'), /1 deferred, 1 deduplicated, 0 superseded/);
    await overview.browserContext().close();
  });

  it('cancels a running invocation after a confirmation stating the count: stopped, never retried', async () => {
    const id = await stack.publish({ kind: 'report', month: 'cancel-me' });
    const page = await stack.loggedInPage('#/pending');
    await page.waitForFunction((message) => {
      const detail = document.querySelector(`#pel tr.pel-detail[data-id="${message}"]`);
      return detail && /running on worker-a since/.test(detail.textContent) && detail.querySelector('.cancel-invocation');
    }, { timeout: 20000 }, id);
    await page.click(`#pel tr.pel-detail[data-id="${id}"] .cancel-invocation`);
    await page.waitForSelector('#confirm[open]');
    assert.match(await text(page, '#confirm-title'), /Cancel 1 invocation\?/);
    assert.match(await text(page, '#confirm-text'), new RegExp(`reports/bin/build\\.sh of message ${id}`));
    assert.match(await text(page, '#confirm-text'), /never retried/);
    await page.click('#confirm-ok');
    await page.waitForFunction(() => [...document.querySelectorAll('.toast')].some((t) => /1 stop sent to its worker/.test(t.textContent)));
    // The worker stopped the handler (it sleeps 60 s otherwise) and recorded it cancelled.
    await waitFor('the cancelled message acknowledged', async () =>
      !(await stack.api('/api/pending?limit=50')).entries.some((entry) => entry.id === id), 15000);
    assert.match(await stack.redisCli(['HGET', `relay:events:inv:relay:${id}`, 'reports/bin/build.sh']), /^cancelled:1:/);
    await page.browserContext().close();
    await waitFor('the cancelled run counted', async () => {
      const data = await stack.api('/api/overview?minutes=60');
      return data.throughput.series['invocations:cancelled'].reduce((a, b) => a + b, 0) >= 1;
    }, 30000);
    const overview = await stack.loggedInPage('#/overview?minutes=60');
    await overview.waitForFunction(() => /1 cancelled\./.test(document.querySelector('#window-totals')?.textContent || ''), { timeout: 15000 });
    await overview.browserContext().close();
  });

  it('shows a running replay with its progress on the overview', async () => {
    for (let i = 0; i < 4; i += 1) await stack.publish({ kind: 'audit', id: `REPLAYED-${i}` });
    // Two copies a second: the replay is still running while the page looks.
    const id = execFileSync(process.env.RELAY_BINARY,
      ['replay', '--app', 'ledger', '--rule', 'bin/audit.sh', '--since', '1h', '--rate', '2/s', '--detach'],
      { env: { ...process.env, ...stack.env }, encoding: 'utf8' }).trim().split('\n').pop();
    assert.match(id, /^r-\d+-[0-9a-f]{4}$/);
    const page = await stack.loggedInPage('#/overview?minutes=60');
    await page.waitForSelector('#replays', { timeout: 15000 });
    assert.match(await text(page, '#replays'), new RegExp(`${id}\\s*running\\s*ledger/bin/audit\\.sh`));
    await screenshot(page, 'overview-replays');
    await page.browserContext().close();
    await waitFor('the replay to finish', async () => {
      const data = await stack.api('/api/replays');
      return data.replays.some((replay) => replay.id === id && replay.state === 'done');
    }, 30000);
    const done = (await stack.api('/api/replays')).replays.find((replay) => replay.id === id);
    assert.ok(done.published >= 4);
    assert.equal(done.progress, 1);
  });

  it('saw no script error on any page', () => {
    assert.deepEqual(stack.pageErrors || [], []);
  });
});
