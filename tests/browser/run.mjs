// ctest's entry point for the `browser` label: runs console.test.mjs with node's test runner,
// or exits 77 (ctest: skipped) saying what is missing when puppeteer-core (npm ci in this
// directory, which scripts/test does) or Debian's chromium is not installed. With
// RELAY_REQUIRE_BROWSER=1 (scripts/test sets it) something missing fails instead: a green run
// must never hide an install step that did not happen.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const missing = [];
if (!existsSync(path.join(here, 'node_modules', 'puppeteer-core'))) {
  missing.push(`puppeteer-core (run: npm ci --ignore-scripts --prefix ${here})`);
}
if (!existsSync(chromium)) missing.push(`${chromium} (apt-get install chromium)`);
if (!process.env.RELAY_BINARY) missing.push('RELAY_BINARY (the relay binary to test)');
if (missing.length) {
  const required = process.env.RELAY_REQUIRE_BROWSER === '1';
  console.log(`${required ? 'FAIL' : 'SKIP'}: the browser tests need ${missing.join(', ')}`);
  process.exit(required ? 1 : 77);
}
const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', path.join(here, 'console.test.mjs')],
  { stdio: 'inherit' });
process.exit(result.status ?? 1);
