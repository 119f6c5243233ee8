// With no LLM endpoint configured (the settings panel present and untouched), no request leaves
// the page's origin, whatever the method:
// `node --test tests/e2e/llm-offline.test.mjs` (needs a built page: `npm run build`).
//
// Every request of the page and of its workers is recorded (Playwright's context-level request
// event sees worker fetches; the test checks that it saw the worker's wasm and corpus downloads,
// or it would prove nothing). The page then searches with BM25, dense, hybrid, HippoRAG 2 and
// CatRAG (whose edge tiers would go to an endpoint if one were configured), and starts the MiniLM
// transformer (cancelled after its first batches, which is when its files have been fetched).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const WAIT = 120_000;
const QUESTION = 'Which hotel houses the Playboy Club?';

let browser;
let server;

before(async () => {
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build` before the e2e tests');
  }
  server = await serve({ dir: dist, port: 0 });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function searchWith(page, method) {
  const prev = await page.getAttribute('#results', 'data-search');
  await page.selectOption('#method', method);
  await page.fill('#query', QUESTION);
  await page.click('#search');
  await page.waitForFunction(
    ([p, q, m]) => {
      const d = document.getElementById('results').dataset;
      return d.search !== undefined && d.search !== p && d.query === q && d.method === m;
    },
    [prev ?? undefined, QUESTION, method],
    { timeout: WAIT },
  );
  return page.locator('#results .hit').count();
}

test('no endpoint configured: no request leaves the page, through every method', { timeout: 400_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const requests = [];
  context.on('request', (r) => requests.push(r.url()));
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages\b/.test(document.getElementById('status').textContent.trim()), null, {
    timeout: WAIT,
  });
  const methods = await page.$$eval('#method option', (os) => os.map((o) => o.value));
  for (const m of ['bm25', 'dense', 'hybrid', 'hipporag', 'catrag']) {
    assert.ok(methods.includes(m), `the selector should offer ${m}: ${methods}`);
    assert.ok((await searchWith(page, m)) > 0, `${m} should return results`);
  }
  // the LLM endpoint panel is there, untouched: off, no badge, CatRAG says it used the stand-in
  assert.equal(await page.isVisible('#llm-panel'), true);
  assert.equal(await page.textContent('#llm-state'), 'off: nothing is sent');
  assert.equal(await page.isHidden('#llm-badge'), true);
  assert.equal(await page.textContent('#llm-tiers'), 'tiers: embedding similarity (offline stand-in)');
  assert.equal(await page.isHidden('#llm-answer-row'), true);
  if (methods.includes('dense-minilm')) {
    await page.selectOption('#method', 'dense-minilm');
    await page.waitForFunction(
      () => {
        const m = /^Embedding passages with MiniLM: (\d+) of 997(?: \(.+ left\))?$/.exec(document.getElementById('progress-label').textContent);
        return m && Number(m[1]) >= 8;
      },
      null,
      { timeout: WAIT },
    );
    await page.click('#cancel');
  }
  await page.screenshot({ path: path.join(root, 'tests', 'e2e', 'screenshots', 'llm-offline.png'), fullPage: true });

  const origin = new URL(server.url).origin;
  assert.ok(requests.some((u) => u.endsWith('.wasm')), 'the recorder must see the worker\'s wasm download');
  assert.ok(requests.some((u) => u.includes('/assets/')), 'the recorder must see the embedding download');
  const foreign = requests.filter((u) => !/^(data|blob):/.test(u) && new URL(u).origin !== origin);
  assert.deepEqual(foreign, [], `requests left ${origin}`);
  await context.close();
});
