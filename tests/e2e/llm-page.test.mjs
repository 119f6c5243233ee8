// The page with the user's LLM endpoint: `node --test tests/e2e/llm-page.test.mjs`
// (needs a built page: `npm run build`). Starts the loopback fault server
// (tools/llm_fault_server.py, stdlib Python) and, when .venv-llm exists (tools/llm_setup.sh), the
// real SmolLM2 server (tools/llm_server.py). In the page: configure the endpoint, Test connection,
// search with CatRAG, and check the request badge against the server's own call count, the
// "tiers: LLM (model)" line, the CORS explanation (route /nocors), the Weak fallback note (route
// /garbage) and Cancel (route /timeout).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const shots = path.join(root, 'tests', 'e2e', 'screenshots');
const WAIT = 180_000;
const QUESTION = 'Which hotel houses the Playboy Club?';

let browser;
let server;
const servers = [];
let faultUrl;
let realUrl = null;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/** Start `python tools/script --port P`; resolve with its URL once it prints "ready URL". */
async function startServer(python, script) {
  const port = await freePort();
  const proc = spawn(python, [path.join(root, 'tools', script), '--port', String(port), '--exit-with-parent'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  servers.push(proc);
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ready (\S+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
  });
}

before(async () => {
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build` before the e2e tests');
  }
  faultUrl = await startServer('python3', 'llm_fault_server.py');
  const venvPython = path.join(root, '.venv-llm', 'bin', 'python');
  if (fs.existsSync(venvPython)) realUrl = await startServer(venvPython, 'llm_server.py');
  server = await serve({ dir: dist, port: 0 });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  for (const s of servers) s.kill();
});

async function calls() {
  return (await fetch(`${faultUrl}/calls`)).json();
}

async function openPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, {
    timeout: WAIT,
  });
  await page.click('#llm-panel summary');
  return [context, page];
}

async function useEndpoint(page, url, model) {
  await page.fill('#llm-url', url);
  await page.fill('#llm-model', model);
  await page.click('#llm-use');
  await page.waitForFunction((m) => document.getElementById('llm-state').textContent.startsWith(`on: ${m}`), model);
}

async function testConnection(page) {
  await page.click('#llm-test');
  await page.waitForFunction(() => /^(Connected|Test failed)/.test(document.getElementById('llm-result').textContent), null, {
    timeout: WAIT,
  });
  return page.textContent('#llm-result');
}

/** Search QUESTION with CatRAG; resolve with the tiers line once the results are shown. */
async function searchCatrag(page) {
  const prev = await page.getAttribute('#results', 'data-search');
  await page.selectOption('#method', 'catrag');
  await page.fill('#query', QUESTION);
  await page.click('#search');
  await page.waitForFunction(
    ([p, q]) => {
      const d = document.getElementById('results').dataset;
      return d.search !== undefined && d.search !== p && d.query === q && d.method === 'catrag';
    },
    [prev ?? undefined, QUESTION],
    { timeout: WAIT },
  );
  return page.textContent('#llm-tiers');
}

const badgeCount = (page) => page.$eval('#llm-badge', (b) => Number(b.dataset.requests || 0));

test('fault server: test connection, LLM tiers counted by the badge, CORS fix, Weak fallback, cancel', { timeout: 600_000 }, async () => {
  const [context, page] = await openPage();
  assert.equal(await page.textContent('#llm-state'), 'off: nothing is sent');
  assert.equal(await page.isHidden('#llm-badge'), true);

  // a well-formed endpoint that rates every edge "high"
  await fetch(`${faultUrl}/reset`);
  await useEndpoint(page, `${faultUrl}/tiers`, 'fault');
  const ok = await testConnection(page);
  assert.match(ok, /^Connected: fault answered in \d+ ms/);
  assert.equal(await badgeCount(page), 1);
  assert.equal((await calls()).tiers, 1, 'the server saw the one test request');
  const tiers = await searchCatrag(page);
  const served = (await calls()).tiers;
  assert.match(tiers, /^tiers: LLM \(fault\), \d+ calls?/);
  assert.doesNotMatch(tiers, /fell back to Weak/, 'every edge was rated');
  assert.ok(served > 1, `the search asked the endpoint (${served} calls in all)`);
  assert.equal(await badgeCount(page), served, 'the badge counts every request the server received');
  assert.match(await page.textContent('#llm-badge-text'), new RegExp(`${served} requests this session`));
  await page.screenshot({ path: path.join(shots, 'llm-page-tiers.png'), fullPage: true });

  // no CORS headers: the browser refuses the answer, the page says how to allow its origin
  await useEndpoint(page, `${faultUrl}/nocors`, 'fault');
  const refused = await testConnection(page);
  assert.match(refused, /^Test failed\. .*CORS.*OLLAMA_ORIGINS=http:\/\/127\.0\.0\.1:\d+ ollama serve.*LM Studio.*reverse proxy/);
  const corsTiers = await searchCatrag(page);
  assert.match(corsTiers, /^tiers: none from fault: all \d+ edges fell back to Weak · .*OLLAMA_ORIGINS=/);
  await page.screenshot({ path: path.join(shots, 'llm-page-cors.png'), fullPage: true });

  // a body that is not JSON: the edges fall back to Weak, and the page says how many
  await useEndpoint(page, `${faultUrl}/garbage`, 'fault');
  const garbage = await searchCatrag(page);
  const m = /all (\d+) edges fell back to Weak · the endpoint failed: (.*)$/.exec(garbage);
  assert.ok(m && Number(m[1]) > 0, `the Weak fallback note: ${garbage}`);
  await page.screenshot({ path: path.join(shots, 'llm-page-garbage.png'), fullPage: true });

  // an endpoint that never answers: Cancel aborts the fetch, the search ends with Weak tiers
  await useEndpoint(page, `${faultUrl}/timeout`, 'fault');
  await page.fill('#query', QUESTION);
  await page.click('#search');
  await page.waitForSelector('#llm-cancel:not([hidden])', { timeout: WAIT });
  const before = await badgeCount(page);
  await page.click('#llm-cancel');
  const t0 = Date.now();
  await page.waitForFunction(() => /cancelled/.test(document.getElementById('llm-tiers').textContent), null, { timeout: 20_000 });
  assert.ok(Date.now() - t0 < 20_000, 'cancel ends the search before the 30 s answer');
  assert.equal(await badgeCount(page), before, 'no request after Cancel');
  assert.ok((await page.locator('#results .hit').count()) > 0, 'the Weak-tier results are shown');

  // off again: the state says so
  await page.click('#llm-off');
  await page.waitForFunction(() => document.getElementById('llm-state').textContent === 'off: nothing is sent');
  const offline = await searchCatrag(page);
  assert.equal(offline, 'tiers: embedding similarity (offline stand-in)');
  await context.close();
});

test('real SmolLM2 server (tools/llm_server.py): test connection and a written answer', { timeout: 600_000 }, async (t) => {
  if (!realUrl) {
    t.skip('.venv-llm is absent (run tools/llm_setup.sh)');
    return;
  }
  const [context, page] = await openPage();
  await useEndpoint(page, realUrl, 'smollm2-135m');
  assert.match(await testConnection(page), /^Connected: smollm2-135m answered in \d+ ms/);
  await page.selectOption('#method', 'bm25');
  await page.fill('#query', QUESTION);
  await page.click('#search');
  await page.waitForSelector('#llm-answer-row:not([hidden])', { timeout: WAIT });
  await page.click('#llm-answer');
  await page.waitForFunction(() => /^Written by smollm2-135m/.test(document.getElementById('llm-answer-text').textContent), null, {
    timeout: WAIT,
  });
  assert.equal(await badgeCount(page), 2);
  await page.screenshot({ path: path.join(shots, 'llm-page-real.png'), fullPage: true });
  await context.close();
});
