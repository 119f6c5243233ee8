// The LLM panel's LLM OpenIE (graph build) and LLM NER (CatRAG's anchoring):
// `node --test tests/e2e/llm-uses.test.mjs` (needs a built page: `npm run build`). Starts the
// loopback fault server (tools/llm_fault_server.py). Both are off by default; LLM OpenIE over the
// demo corpus with route /openieam (triples for titles starting A–M, none for the rest) must
// report exactly the passages whose title starts with another character as fallen back, counted
// from the corpus file here; the badge counts every request the server saw; Cancel stops the
// calls and the graph is still built; LLM NER's names show in the tiers line, and a failing
// endpoint says the rule-based NER was used. Screenshots go to $CAIRN_SHOTS (default
// tests/e2e/screenshots).
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
const shots = process.env.CAIRN_SHOTS || path.join(root, 'tests', 'e2e', 'screenshots');
const WAIT = 300_000;
const QUESTION = 'Which hotel houses the Playboy Club?';

let browser;
let server;
let fault;
let faultUrl;

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

async function startFault() {
  const port = await freePort();
  fault = spawn('python3', [path.join(root, 'tools', 'llm_fault_server.py'), '--port', String(port), '--exit-with-parent'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    fault.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ready (\S+)/);
      if (m) resolve(m[1]);
    });
    fault.on('exit', (code) => reject(new Error(`llm_fault_server.py exited (${code}) before it was ready`)));
  });
}

before(async () => {
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build` before the e2e tests');
  }
  fs.mkdirSync(shots, { recursive: true });
  faultUrl = await startFault();
  server = await serve({ dir: dist, port: 0 });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
  fault?.kill();
});

const calls = async () => (await fetch(`${faultUrl}/calls`)).json();
const badgeCount = (page) => page.$eval('#llm-badge', (b) => Number(b.dataset.requests || 0));

/** The demo corpus's passages whose title does not start with A–M (any case): /openieam gives them no triple. */
function expectedFallbacks() {
  const lines = fs.readFileSync(path.join(dist, 'data', 'hotpotqa', 'corpus.jsonl'), 'utf8').split('\n').filter((l) => l.trim());
  let n = 0;
  for (const l of lines) {
    const first = String(JSON.parse(l).title ?? '').slice(0, 1).toUpperCase();
    if (!(first >= 'A' && first <= 'M')) n += 1;
  }
  return [lines.length, n];
}

async function useEndpoint(page, url) {
  await page.fill('#llm-url', url);
  await page.fill('#llm-model', 'fault');
  await page.click('#llm-use');
  await page.waitForFunction(() => document.getElementById('llm-state').textContent.startsWith('on: fault'));
}

async function buildWithOpenie(page) {
  const prev = await page.$eval('#llm-openie-status', (s) => s.textContent);
  await page.click('#llm-openie-build');
  await page.waitForFunction(
    (p) => {
      const s = document.getElementById('llm-openie-status');
      return ['done', 'cancelled'].includes(s.dataset.state) && s.textContent !== p && !document.getElementById('llm-openie-build').disabled;
    },
    prev,
    { timeout: WAIT },
  );
  return page.$eval('#llm-openie-status', (s) => ({ text: s.textContent, state: s.dataset.state, fallbacks: Number(s.dataset.fallbacks) }));
}

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

test('LLM OpenIE builds the graph with its fallback count and Cancel; LLM NER anchors; both counted', { timeout: 900_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1100 } });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  await page.click('#llm-panel summary');
  // off by default
  assert.equal(await page.isChecked('#llm-ner'), false);
  assert.equal(await page.isChecked('#llm-openie'), false);
  assert.equal(await page.isDisabled('#llm-openie-build'), true);

  // LLM OpenIE: one call per passage; the titles outside A–M fall back to rule OpenIE
  await fetch(`${faultUrl}/reset`);
  await useEndpoint(page, `${faultUrl}/openieam`);
  await page.check('#llm-openie');
  await page.waitForFunction(() => !document.getElementById('llm-openie-build').disabled);
  const [total, fallbacks] = expectedFallbacks();
  assert.equal(total, 997);
  assert.ok(fallbacks > 0 && fallbacks < total, `${fallbacks} of ${total}`);
  const built = await buildWithOpenie(page);
  assert.equal(built.state, 'done', built.text);
  assert.equal(built.fallbacks, fallbacks, built.text);
  assert.match(
    built.text,
    new RegExp(`^LLM OpenIE \\(fault\\): graph built; ${total - fallbacks} of ${total} passages from the endpoint \\(${total - fallbacks} triples\\), ${fallbacks} fell back to rule-based OpenIE · first failure: no triple in the answer "No facts\\."$`),
  );
  assert.equal((await calls()).openieam, total, 'one call per passage');
  assert.equal(await badgeCount(page), total, 'the badge counts every OpenIE request');
  // the graph methods work on the graph built from those triples
  assert.ok((await page.$eval('#method', (m) => [...m.options].filter((o) => !o.disabled).map((o) => o.value))).includes('catrag'));

  // LLM NER: the endpoint's names anchor CatRAG, and the page says so
  await useEndpoint(page, `${faultUrl}/ner`);
  await page.check('#llm-ner');
  const tiers = await searchCatrag(page);
  assert.match(tiers, / · entities: LLM NER \(fault\): Cairn Fault Entity$/);
  assert.equal(await page.getAttribute('#llm-tiers', 'data-ner'), 'llm');
  const served = await calls();
  assert.ok(served.ner >= 1, JSON.stringify(served));
  assert.equal(await badgeCount(page), total + served.ner, 'NER (and tier) requests counted');
  await page.screenshot({ path: path.join(shots, 'llm-panel-ner-openie.png'), fullPage: true });

  // a failing endpoint: the rule-based NER, said in the page
  await useEndpoint(page, `${faultUrl}/400`);
  const failed = await searchCatrag(page);
  // (HTTP 400, or the breaker it opened when the page searched more than once meanwhile)
  assert.match(failed, /entities: rule-based NER \(LLM NER failed: .*(HTTP 400|circuit breaker).*\)$/);
  assert.equal(await page.getAttribute('#llm-tiers', 'data-ner'), 'rule');

  // Cancel during LLM OpenIE against an endpoint that never answers: the build ends, every
  // passage keeps its rule-based triples
  await useEndpoint(page, `${faultUrl}/timeout`);
  const run = page.click('#llm-openie-build');
  await run;
  await page.waitForFunction(() => document.getElementById('llm-openie-status').dataset.state === 'running', null, { timeout: WAIT });
  await page.waitForSelector('#llm-cancel:not([hidden])', { timeout: WAIT });
  const before = await badgeCount(page);
  await page.click('#llm-cancel');
  await page.waitForFunction(() => document.getElementById('llm-openie-status').dataset.state === 'cancelled', null, { timeout: 60_000 });
  const cancelled = await page.$eval('#llm-openie-status', (s) => ({ text: s.textContent, fallbacks: Number(s.dataset.fallbacks) }));
  assert.equal(cancelled.fallbacks, total, cancelled.text);
  assert.match(cancelled.text, /cancelled after \d+ passages: the rest kept their rule-based triples/);
  assert.equal(await badgeCount(page), before, 'no request after Cancel');
  await context.close();
});
