// The real parts the browser tests drive: a redis-server on a free loopback port, `relay start`
// (process runtime) and `relay console` (with a token), each in its own temp dir, killed by pid
// at the end; and Debian's Chromium through puppeteer-core (never a browser download).
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

export const TOKEN = 'browser-test-token-0123456789';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Polls `check` (async, returns a truthy value when done) every 100 ms, up to `ms`.
export async function waitFor(what, check, ms = 20000) {
  const until = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await sleep(100);
  }
}

class Child {
  constructor(name, command, args, env, cwd) {
    this.name = name;
    this.output = '';
    this.process = spawn(command, args, { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    this.process.stdout.on('data', (chunk) => { this.output += chunk; });
    this.process.stderr.on('data', (chunk) => { this.output += chunk; });
    this.exited = new Promise((resolve) => this.process.on('exit', (code, signal) => resolve({ code, signal })));
  }

  async stop() {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 10000);
    await this.exited;
    clearTimeout(timer);
  }
}

// Runs the relay binary once to completion.
export function relayRun(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.env.RELAY_BINARY, args, { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.stderr.on('data', (chunk) => { err += chunk; });
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

const APPS = {
  'shop/template.yaml': `runtime: exec
events:
  - handler: bin/pay.sh
    pattern: {kind: [order]}
    retries: 0
    timeout: 10s
  - handler: bin/refund.sh
    pattern: {kind: [refund]}
    retries: 3
  - handler: bin/moderate.sh
    pattern: {kind: [comment]}
    retries: 0
`,
  'shop/bin/pay.sh': `#!/bin/sh
# Fails until the test "fixes" it by creating ../fixed; says why on stderr.
event=$(cat)
echo "charging: $event"
if [ -f "$(dirname "$0")/../fixed" ]; then echo "charged"; exit 0; fi
echo "payment gateway refused the card (code 51)" >&2
exit 3
`,
  'shop/bin/refund.sh': '#!/bin/sh\necho "refund service unavailable" >&2\nexit 4\n',
  'shop/bin/moderate.sh': '#!/bin/sh\necho "comment rejected" >&2\nexit 5\n',
  'reports/template.yaml': `runtime: exec
events:
  - handler: bin/build.sh
    pattern: {kind: [report]}
    timeout: 2m
schedules:
  - name: nightly
    cron: "0 3 * * *"
    timezone: Europe/Berlin
    handler: bin/build.sh
    payload: {scope: all}
`,
  'reports/bin/build.sh': '#!/bin/sh\necho "building report"\nsleep 60\n',
  // Flow control (docs/apps.md "Flow control"): one sync an hour, audits deduplicated by id.
  'ledger/template.yaml': `runtime: exec
throttle: {limit: 100, period: 1s, burst: 10}
events:
  - handler: bin/sync.sh
    pattern: {kind: [sync]}
    throttle: {limit: 1, period: 1h}
  - handler: bin/audit.sh
    pattern: {kind: [audit]}
    dedupe: {key: id}
`,
  'ledger/bin/sync.sh': '#!/bin/sh\necho "synced"\n',
  'ledger/bin/audit.sh': '#!/bin/sh\necho "audited"\n',
};

export class Stack {
  async start() {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'relay-browser-'));
    this.apps = path.join(this.dir, 'apps');
    for (const [file, text] of Object.entries(APPS)) {
      const full = path.join(this.apps, file);
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, text);
      if (file.includes('/bin/')) chmodSync(full, 0o755);
    }
    this.redisPort = await freePort();
    this.redis = new Child('redis', 'redis-server',
      ['--port', String(this.redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {}, this.dir);
    await waitFor('redis-server', async () => (await this.redisCli(['PING'])).trim() === 'PONG', 10000);
    this.env = {
      REDIS_URI: `127.0.0.1:${this.redisPort}`,
      RELAY_APPS: this.apps,
      RELAY_RUNTIME: 'process',
      RELAY_LOG_LEVEL: 'info',
    };
    this.worker = new Child('relay start', process.env.RELAY_BINARY, ['start'],
      { ...this.env, RELAY_HTTP_ADDR: '127.0.0.1:0', RELAY_CONSUMER: 'worker-a' }, this.dir);
    this.consolePort = await freePort();
    this.console = new Child('relay console', process.env.RELAY_BINARY, ['console'],
      { ...this.env, RELAY_CONSOLE_ADDR: `127.0.0.1:${this.consolePort}`, RELAY_CONSOLE_TOKEN: TOKEN }, this.dir);
    this.url = `http://127.0.0.1:${this.consolePort}`;
    await waitFor('relay console', async () => (await fetch(`${this.url}/api/session`)).ok, 15000);
    await waitFor('the worker\'s consumer group', async () => (await this.redisCli(['XINFO', 'GROUPS', 'events'])).includes('relay'), 15000);
    this.browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: path.join(this.dir, 'chromium-profile'),
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--window-size=1400,1000'],
    });
  }

  redisCli(args) {
    return new Promise((resolve, reject) => {
      const child = spawn('redis-cli', ['-p', String(this.redisPort), ...args]);
      let out = '';
      child.stdout.on('data', (chunk) => { out += chunk; });
      child.on('error', reject);
      child.on('exit', () => resolve(out));
    });
  }

  async publish(event) {
    return (await this.redisCli(['XADD', 'events', '*', 'event', typeof event === 'string' ? event : JSON.stringify(event)])).trim();
  }

  // The console's own JSON API, authenticated with the bearer token (reads only).
  async api(pathAndQuery) {
    const response = await fetch(`${this.url}${pathAndQuery}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    if (!response.ok) throw new Error(`${pathAndQuery}: ${response.status}`);
    return response.json();
  }

  // A page in a fresh browser context: no cookie of another test's login.
  async newPage() {
    const context = await this.browser.createBrowserContext();
    const page = await context.newPage();
    await page.setViewport({ width: 1400, height: 1000 });
    page.on('pageerror', (error) => { this.pageErrors = (this.pageErrors || []).concat(String(error)); });
    return page;
  }

  // A page logged in through the login form.
  async loggedInPage(hash = '#/overview') {
    const page = await this.newPage();
    await page.goto(`${this.url}/${hash}`);
    await page.waitForSelector('#login #token');
    await page.type('#token', TOKEN);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#nav:not([hidden])');
    return page;
  }

  async stop() {
    if (this.browser) await this.browser.close().catch(() => {});
    for (const child of [this.console, this.worker, this.redis]) if (child) await child.stop();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  logs() {
    return [this.worker, this.console].filter(Boolean).map((child) => `--- ${child.name}\n${child.output}`).join('\n');
  }
}
