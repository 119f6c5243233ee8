// End-to-end tests of Cairn's page in headless Chromium: `node --test tests/e2e/`.
// Needs a built page: `npm run build:wasm && npm run build:web` (writes dist/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const screenshots = path.join(root, 'tests', 'e2e', 'screenshots');


// Test (i)'s question: HotpotQA dev "How many records did Shane Lynch sell as a member of
// Boyzone?". BM25 ranks both of its gold passages in the top 5 (ranks 1 and 4). It is not one of
// the six example buttons, so it is typed.
const QUESTION_ID = '5ae15ae25542990adbacf767';
const questions = fs
  .readFileSync(path.join(root, 'www', 'data', 'hotpotqa', 'questions.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));
const QUESTION = questions.find((q) => q.id === QUESTION_ID);

const DEMO_STATUS = /^997 passages\b/;
const WAIT = 30_000;

let browser;
let server;
const requests = []; // every request of every page: {url, test}
const dialogs = []; // alert()/confirm() from any page: must stay empty

before(async () => {
  assert.ok(QUESTION, `question ${QUESTION_ID} is missing from www/data/hotpotqa/questions.jsonl`);
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build:wasm && npm run build:web` before the e2e tests');
  }
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/setup.sh)`);
  server = await serve({ dir: dist, port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh page on the served dist/, recording its requests, errors and dialogs. */
async function openPage(t) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const pageErrors = [];
  context.on('request', (r) => requests.push({ url: r.url(), test: t.name }));
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('dialog', (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  t.after(async () => {
    await context.close();
  });
  await page.goto(server.url);
  return {
    page,
    assertNoPageErrors: () => assert.deepEqual(pageErrors, [], `uncaught errors in the page: ${pageErrors.join('; ')}`),
  };
}

/** Limit the page's (and its worker's) download speed to `bytesPerSec`, or lift the limit (null). */
async function throttle(page, bytesPerSec) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: bytesPerSec ? 20 : 0,
    downloadThroughput: bytesPerSec || -1,
    uploadThroughput: -1,
  });
}

/** The requests of test `name` whose path is under /assets/ (the embedder's files). */
function assetRequests(name) {
  return requests.filter((r) => r.test === name && new URL(r.url).pathname.startsWith('/assets/'));
}

/** Wait until the shown results are a search of `query` with `method`; return them. */
async function waitForResults(page, query, method) {
  try {
    await page.waitForFunction(
      ([q, m]) => {
        const d = document.getElementById('results').dataset;
        return d.query === q && d.method === m;
      },
      [query.trim(), method],
      { timeout: WAIT },
    );
  } catch {
    assert.fail(`no ${method} results for "${query}" (${await describePage(page)})`);
  }
  return page.$$eval('#results .hit', (hits) =>
    hits.map((h) => ({
      id: h.querySelector('.hit-id').textContent,
      gold: !!h.querySelector('.badge.gold'),
      score: h.querySelector('.score-num').textContent,
      bar: h.querySelector('.bar-fill').style.width,
    })),
  );
}

async function describePage(page) {
  return page.evaluate(() => {
    const t = (id) => document.getElementById(id)?.textContent.trim() ?? '(missing)';
    const err = document.getElementById('error');
    return `status "${t('status')}", results meta "${t('results-meta')}", error box ${err && !err.hidden ? `"${t('error-message')}"` : 'hidden'}`;
  });
}

/** Wait until #status matches `re`; on timeout fail with what the page shows. */
async function waitForStatus(page, re, what) {
  try {
    await page.waitForFunction(
      ([src, flags]) => new RegExp(src, flags).test(document.getElementById('status').textContent.trim()),
      [re.source, re.flags],
      { timeout: WAIT },
    );
  } catch {
    assert.fail(`${what}: #status never matched ${re} (${await describePage(page)})`);
  }
}

/** Type `query` into the search box, search, and return the hits once they are shown. */
async function search(page, query) {
  const shown = await page.getAttribute('#results', 'data-search');
  await page.fill('#query', query);
  await page.click('#search');
  try {
    await page.waitForFunction(
      ([prev, q]) => {
        const { search: n, query: shownQuery } = document.getElementById('results').dataset;
        return n !== undefined && n !== prev && shownQuery === q;
      },
      [shown ?? undefined, query.trim()],
      { timeout: WAIT },
    );
  } catch {
    assert.fail(`searching "${query}" showed no results (${await describePage(page)})`);
  }
  return page.$$eval('#results .hit', (hits) =>
    hits.map((h) => ({
      id: h.querySelector('.hit-id').textContent,
      title: h.querySelector('.hit-title').textContent,
      text: h.querySelector('.hit-text').textContent,
      gold: !!h.querySelector('.badge.gold'),
      marks: Array.from(h.querySelectorAll('mark'), (m) => m.textContent),
    })),
  );
}

test('(i) the demo corpus loads and a HotpotQA question finds a gold passage in the top 5', { timeout: 90_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load on its own');

  const methods = await page.$$eval('#method option', (os) => os.map((o) => o.value));
  assert.deepEqual(methods, ['bm25', 'dense', 'dense-minilm', 'hybrid', 'hipporag', 'catrag', 'cage', 'bm25+cage', 'catrag+cage'], 'the method selector should list the engine\'s methods()');
  assert.equal(await page.inputValue('#method'), 'bm25', 'BM25 should be the default method');
  const examples = await page.$$eval('#examples button', (bs) => bs.map((b) => b.textContent));
  assert.deepEqual(examples, questions.slice(0, 6).map((q) => q.question), 'the six example buttons should be the first six questions');

  const hits = await search(page, QUESTION.question);
  assert.equal(hits.length, 5, `expected 5 results, got ${hits.length}`);
  const ids = hits.map((h) => h.id);
  const found = ids.filter((id) => QUESTION.gold_ids.includes(id));
  assert.ok(found.length > 0, `none of the top 5 ${JSON.stringify(ids)} is a gold passage ${JSON.stringify(QUESTION.gold_ids)}`);
  for (const h of hits) {
    assert.equal(h.gold, QUESTION.gold_ids.includes(h.id), `passage ${h.id}: the gold badge should be shown exactly on gold passages`);
  }
  assert.ok(hits[0].marks.length > 0, 'the top passage should have highlighted query terms');
  assert.ok(
    hits.some((h) => h.marks.some((m) => /^(Shane|Lynch|Boyzone|records?)$/i.test(m))),
    `the highlights should be query words, got ${JSON.stringify(hits.map((h) => h.marks))}`,
  );

  fs.mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, 'search.png'), fullPage: true });

  // an example button fills the box and searches
  await page.click('#examples button >> nth=0');
  await page.waitForFunction(
    (q) => document.getElementById('query').value === q && document.querySelectorAll('#results .hit').length === 5,
    questions[0].question,
    { timeout: WAIT },
  );
  assertNoPageErrors();
});

test('(ii) pasted text replaces the corpus, is found, and HTML in it stays text', { timeout: 90_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load first');

  const evil = '<img src=x onerror=alert(1)>';
  await page.fill(
    '#paste',
    `Quokkas are small wallabies that live on Rottnest Island near Perth. ${evil} is how a quokka signs its letters.\n\n` +
      'A second paragraph about basalt cairns on the Isle of Skye.',
  );
  await page.check('#mode-replace');
  await page.click('#index-text');
  await waitForStatus(page, /^2 passages\b/, 'the pasted text should replace the corpus with its 2 paragraphs');

  const hits = await search(page, 'quokka onerror');
  assert.equal(hits.length, 1, `expected the one pasted passage, got ${JSON.stringify(hits)}`);
  assert.equal(hits[0].id, 'pasted text#1');
  assert.ok(hits[0].text.includes(evil), `the passage should show ${evil} literally, shows ${JSON.stringify(hits[0].text)}`);
  assert.ok(hits[0].marks.includes('onerror'), `"onerror" should be highlighted as a word, marks ${JSON.stringify(hits[0].marks)}`);
  const imgs = await page.$$eval('img', (els) => els.length);
  assert.equal(imgs, 0, 'the passage text created an <img> element');
  const markChildren = await page.$$eval('#results mark *', (els) => els.length);
  assert.equal(markChildren, 0, '<mark> elements must hold text only');

  // the old corpus is gone
  const old = await search(page, QUESTION.question);
  assert.ok(old.every((h) => h.id.startsWith('pasted text#')), `the demo passages should be gone after "replace", got ${JSON.stringify(old.map((h) => h.id))}`);
  assert.deepEqual(dialogs, [], 'a dialog opened: passage text was run as HTML');
  assertNoPageErrors();
});

test('(iii) a broken .jsonl shows an error naming the line and the previous index keeps answering', { timeout: 90_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load first');
  assert.equal(await page.isChecked('#mode-add'), true, '"add to current corpus" should be the default');

  // a good file and a broken one in the same upload: all or nothing
  await page.setInputFiles('#file-input', [
    { name: 'zoo.md', mimeType: 'text/markdown', buffer: Buffer.from('# Zoo\n\nThe zyzzyva weevil lives in the zoo.\n') },
    {
      name: 'broken.jsonl',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from('{"id": "ok-1", "title": "Fine", "text": "A fine line."}\n{"id": "bad", "text": oops}\n'),
    },
  ]);
  await page.waitForSelector('#error:not([hidden])', { timeout: WAIT }).catch(async () => {
    assert.fail(`no error box after uploading a broken .jsonl (${await describePage(page)})`);
  });
  const message = await page.textContent('#error-message');
  assert.match(message, /broken\.jsonl, line 2\b/, `the error should name the file and line, says ${JSON.stringify(message)}`);
  assert.equal(await page.getAttribute('#error', 'role'), 'alert');
  await waitForStatus(page, DEMO_STATUS, 'the corpus should be unchanged after the failed upload');

  const hits = await search(page, QUESTION.question);
  assert.equal(hits.length, 5, 'the previous index should still answer');
  assert.ok(hits.some((h) => QUESTION.gold_ids.includes(h.id)), 'the previous index should still rank a gold passage in the top 5');
  const zoo = await search(page, 'zyzzyva');
  assert.equal(zoo.length, 0, `zoo.md came in the same failed upload and must not be indexed, found ${JSON.stringify(zoo)}`);

  await page.click('#error-dismiss');
  assert.equal(await page.isHidden('#error'), true, 'Dismiss should hide the error box');

  // a file whose passages clash with the built index (same ids twice): the engine is left
  // unbuilt by the failed add and must be rebuilt
  const notes = { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('The zyzzyva weevil again.\n') };
  await page.setInputFiles('#file-input', [notes]);
  await waitForStatus(page, /^998 passages\b/, 'notes.md should be added to the demo corpus');
  await page.setInputFiles('#file-input', [notes]);
  await page.waitForSelector('#error:not([hidden])', { timeout: WAIT });
  assert.match(await page.textContent('#error-message'), /notes\.md#1.*already in the corpus/);
  await waitForStatus(page, /^998 passages\b/, 'the corpus should be unchanged after the clash');
  const again = await search(page, 'zyzzyva');
  assert.deepEqual(again.map((h) => h.id), ['notes.md#1'], 'the index should still answer after the clash');
  assertNoPageErrors();
});

test('(iv) the page sends no request to any other origin', { timeout: 90_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');
  await page.click('#examples button >> nth=1');
  await page.waitForSelector('#results .hit', { timeout: WAIT });
  await page.fill('#paste', 'One more paragraph, about lighthouses.');
  await page.click('#index-text');
  await waitForStatus(page, /^998 passages\b/, 'the pasted paragraph should be added');
  await page.goto(new URL('bench.html', server.url).href); // the benchmark page, without a corpus
  await page.waitForFunction(() => document.getElementById('result').textContent.includes('error'), null, { timeout: WAIT });

  const origin = new URL(server.url).origin;
  const seen = requests.map((r) => r.url);
  // the recorder must see the worker's traffic too, or this test proves nothing
  assert.ok(seen.some((u) => u.endsWith('.wasm')), `the wasm download was not recorded: ${JSON.stringify(seen)}`);
  assert.ok(seen.some((u) => u.endsWith('/data/hotpotqa/corpus.jsonl')), 'the worker\'s corpus download was not recorded');
  const foreign = requests.filter((r) => !/^(data|blob):/.test(r.url) && new URL(r.url).origin !== origin);
  assert.deepEqual(foreign, [], `requests left ${origin}`);
  assertNoPageErrors();
});

test('(v) Cancel stops indexing and brings back the corpus of before', { timeout: 120_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');
  // big enough to take a few seconds to index
  const lines = [];
  for (let i = 0; i < 150_000; i += 1) {
    lines.push(JSON.stringify({ id: `big-${i}`, title: `Synthetic passage ${i}`, text: `Word${i % 977} and word${i % 331} meet token${i} in passage number ${i} of a long file.` }));
  }
  await page.setInputFiles('#file-input', [{ name: 'big.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(lines.join('\n')) }]);
  await page.waitForSelector('#progress-row:not([hidden])', { timeout: WAIT });
  await page.click('#cancel');
  await waitForStatus(page, DEMO_STATUS, 'after Cancel the demo corpus (what was there before the file) should be back');
  assert.match(await page.textContent('#notice-text'), /^Indexing was cancelled\. Your corpus is indexed again/);
  await page.waitForSelector('#progress-row', { state: 'hidden', timeout: WAIT });
  assert.equal(await page.textContent('#sources'), 'From: HotpotQA demo', 'the cancelled file must not be in the corpus');
  const hits = await search(page, QUESTION.question);
  assert.equal(hits.length, 5);
  assertNoPageErrors();
});

const METHOD_OPTIONS = [
  { value: 'bm25', label: 'BM25', disabled: false },
  { value: 'dense', label: 'Dense (static MiniLM)', disabled: false },
  { value: 'dense-minilm', label: 'Dense (MiniLM transformer)', disabled: false },
  { value: 'hybrid', label: 'Hybrid (BM25 + dense, RRF)', disabled: false },
  { value: 'hipporag', label: 'HippoRAG 2 (static PPR on the knowledge graph)', disabled: false },
  { value: 'catrag', label: 'CatRAG (query-aware PPR on the knowledge graph)', disabled: false },
  { value: 'cage', label: 'CAGE (dense top 20, reranked by passage-graph coherence)', disabled: false },
  { value: 'bm25+cage', label: 'BM25 + CAGE (BM25 top 20, reranked by coherence)', disabled: false },
  { value: 'catrag+cage', label: 'CatRAG + CAGE (CatRAG top 20, reranked by coherence)', disabled: false },
];

// Test (vi) uses test (i)'s question. With the static embedder, hybrid ranks both of its gold
// passages in the top 5 (ranks 1 and 3), dense too (ranks 1 and 3).
test('(vi) choosing Hybrid loads the embeddings (with progress) and finds a gold passage in the top 5', { timeout: 120_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');

  const options = await page.$$eval('#method option', (os) =>
    os.map((o) => ({ value: o.value, label: o.textContent, disabled: o.disabled })),
  );
  assert.deepEqual(options, METHOD_OPTIONS, 'every method of methods() should be listed and selectable');
  assert.match(await page.textContent('#method-hint'), /first download 7\.8 MB/, 'the page should say that dense methods download embeddings');
  fs.mkdirSync(screenshots, { recursive: true });
  // a closed <select> hides its options: show them as a list box for the screenshot only
  await page.$eval('#method', (s) => s.setAttribute('size', String(s.options.length)));
  await page.locator('#search-form').screenshot({ path: path.join(screenshots, 'methods.png') });
  await page.$eval('#method', (s) => s.removeAttribute('size'));

  // BM25 first: nothing of the embedder is downloaded until a dense method is chosen
  const bm25 = await search(page, QUESTION.question);
  assert.equal(bm25.length, 5);
  assert.deepEqual(assetRequests(t.name), [], 'the embeddings were downloaded before a dense method was chosen');

  // choosing Hybrid loads the embedder (slowed down so that its progress can be seen), then
  // searches the shown question again
  await throttle(page, 3 * 1024 * 1024);
  await page.selectOption('#method', 'hybrid');
  try {
    await page.waitForFunction(
      () => /^Downloading the embeddings: \d+\.\d of 7\.8 MB$/.test(document.getElementById('progress-label').textContent),
      null,
      { timeout: WAIT },
    );
  } catch {
    assert.fail(`no download progress after choosing Hybrid (${await describePage(page)})`);
  }
  assert.equal(await page.isVisible('#cancel'), true, 'Cancel should be offered while the embeddings load');
  assert.equal(await page.textContent('#method-hint'), 'Loading the embeddings…');
  assert.equal(await page.textContent('#results-meta'), 'Loading the embeddings first…');
  await page.screenshot({ path: path.join(screenshots, 'embedder-loading.png'), fullPage: true });
  await throttle(page, null);

  const hits = await waitForResults(page, QUESTION.question, 'hybrid');
  assert.equal(hits.length, 5, `expected 5 hybrid results, got ${hits.length}`);
  const ids = hits.map((h) => h.id);
  const found = ids.filter((id) => QUESTION.gold_ids.includes(id));
  assert.ok(found.length > 0, `none of the hybrid top 5 ${JSON.stringify(ids)} is a gold passage ${JSON.stringify(QUESTION.gold_ids)}`);
  for (const h of hits) {
    assert.equal(h.gold, QUESTION.gold_ids.includes(h.id), `passage ${h.id}: the gold badge should be shown exactly on gold passages`);
    // RRF sums of two 1/(60 + rank) terms: at most 2/61, shown with 3 significant digits
    assert.match(h.score, /^0\.0[1-3]\d\d$/, `a hybrid score should look like 0.0328, shows ${h.score}`);
  }
  assert.equal(hits[0].bar, '100%', 'the top hit\'s score bar should be full');
  await waitForStatus(page, /^997 passages\b.*· embeddings: static, 256-d$/, 'the status should say that embeddings are loaded');
  assert.equal(await page.isHidden('#progress-row'), true, 'the progress bar should go away once the embeddings are loaded');
  assert.equal(await page.inputValue('#method'), 'hybrid');
  assert.match(await page.textContent('#results-meta'), /^5 results in .* · hybrid$/);
  await page.screenshot({ path: path.join(screenshots, 'hybrid.png'), fullPage: true });

  // dense: cosines, no second download
  await page.selectOption('#method', 'dense');
  const dense = await waitForResults(page, QUESTION.question, 'dense');
  assert.equal(dense.length, 5);
  for (const h of dense) {
    const x = Number(h.score);
    assert.ok(x >= -1 && x <= 1 && /^-?0\.\d{3}$|^1\.00$/.test(h.score), `a dense score should be a cosine with 3 significant digits, shows ${h.score}`);
  }
  assert.ok(dense.some((h) => QUESTION.gold_ids.includes(h.id)), 'dense should rank a gold passage in the top 5 too');
  assert.equal(await page.getAttribute('#results', 'data-weak'), '', 'a question whose words occur in the corpus gets results that are not weak');

  // the embedder stays loaded when the corpus is replaced
  await page.fill('#paste', 'Basalt cairns mark the paths across the moor.\n\nA lighthouse keeper counts the ships at night.');
  await page.check('#mode-replace');
  await page.click('#index-text');
  await waitForStatus(page, /^2 passages\b.*· embeddings: static, 256-d$/, 'the new corpus should be embedded as it is built');
  const boats = await search(page, 'boats near the coast');
  assert.equal(await page.getAttribute('#results', 'data-method'), 'dense');
  assert.equal(boats[0].id, 'pasted text#2', `dense should find the lighthouse paragraph, got ${JSON.stringify(boats.map((h) => h.id))}`);
  // no word of that query occurs in either passage: the closest by meaning, marked weak
  assert.equal(await page.getAttribute('#results', 'data-weak'), 'true');
  assert.match(await page.textContent('#results-meta'), /· weak: no word of the query occurs in any passage/);

  const assets = assetRequests(t.name).map((r) => new URL(r.url).pathname).sort();
  assert.deepEqual(assets, ['/assets/minilm-vocab.txt', '/assets/static-minilm.bin'], 'each embedder file should be downloaded once');
  const origin = new URL(server.url).origin;
  const foreign = requests.filter((r) => r.test === t.name && !/^(data|blob):/.test(r.url) && new URL(r.url).origin !== origin);
  assert.deepEqual(foreign, [], `requests left ${origin}`);
  assertNoPageErrors();
});

test('(vii) a corrupt embedding table shows a clear error and BM25 keeps working', { timeout: 90_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  const table = fs.readFileSync(path.join(root, 'assets', 'static-minilm.bin'));
  await page.route('**/assets/static-minilm.bin', (route) =>
    route.fulfill({ status: 200, contentType: 'application/octet-stream', body: table.subarray(0, 1_000_000) }),
  );
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');

  // (no query typed first: search as you type would run BM25 before the method changes)
  await page.selectOption('#method', 'hybrid');
  await page.waitForSelector('#error:not([hidden])', { timeout: WAIT }).catch(async () => {
    assert.fail(`no error box after loading a truncated table (${await describePage(page)})`);
  });
  const message = await page.textContent('#error-message');
  assert.match(
    message,
    /^The embeddings could not be loaded: .*1000000 bytes.*truncated/,
    `the error should say the table is truncated, says ${JSON.stringify(message)}`,
  );
  assert.equal(await page.isHidden('#progress-row'), true, 'the progress bar should go away after the error');
  assert.equal(await page.inputValue('#method'), 'bm25', 'the method should go back to BM25');
  await waitForStatus(page, DEMO_STATUS, 'the corpus should be unchanged');
  assert.doesNotMatch(await page.textContent('#status'), /embeddings/);
  assert.equal(await page.$$eval('#results .hit', (hs) => hs.length), 0, 'nothing was searched yet');
  await page.screenshot({ path: path.join(screenshots, 'embedder-corrupt.png'), fullPage: true });

  const hits = await search(page, QUESTION.question);
  assert.equal(await page.getAttribute('#results', 'data-method'), 'bm25');
  assert.equal(hits.length, 5, 'BM25 should still answer');
  assert.ok(hits.some((h) => QUESTION.gold_ids.includes(h.id)), 'BM25 should still rank a gold passage in the top 5');
  assertNoPageErrors();
});

test('(viii) Cancel while the embeddings download keeps the corpus and BM25', { timeout: 90_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');
  await throttle(page, 512 * 1024);
  await page.selectOption('#method', 'dense');
  await page.waitForFunction(() => /^Downloading the embeddings: /.test(document.getElementById('progress-label').textContent), null, {
    timeout: WAIT,
  });
  await page.click('#cancel');
  await throttle(page, null);
  assert.equal(await page.isHidden('#progress-row'), true, 'the progress bar should go away after Cancel');
  assert.match(await page.textContent('#notice-text'), /cancelled\. BM25 search still works/);
  assert.equal(await page.isHidden('#reload-demo'), true, 'the corpus is kept, so there is nothing to reload');
  assert.equal(await page.inputValue('#method'), 'bm25');
  await waitForStatus(page, DEMO_STATUS, 'the corpus should be kept');
  const hits = await search(page, QUESTION.question);
  assert.equal(await page.getAttribute('#results', 'data-method'), 'bm25');
  assert.equal(hits.length, 5);
  assert.doesNotMatch(await page.textContent('#status'), /embeddings/, 'the cancelled embeddings should not be loaded');
  assertNoPageErrors();
});

test('(ix) Dense (MiniLM transformer) loads on demand, pauses on Cancel without losing anything, and ranks by meaning', { timeout: 240_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');
  const minilmRequests = () =>
    requests.filter((r) => r.test === t.name && /minilm/.test(new URL(r.url).pathname) && !/\/assets\//.test(new URL(r.url).pathname));

  await page.selectOption('#method', 'bm25');
  assert.deepEqual(minilmRequests(), [], 'nothing of MiniLM may be fetched before it is chosen');

  // choosing it starts the download, then embeds the 997 demo passages in small batches
  await page.selectOption('#method', 'dense-minilm');
  try {
    await page.waitForFunction(
      () => {
        // after the first batch the label also says the time left at the rate so far
        const m = /^Embedding passages with MiniLM: (\d+) of 997 \((under a minute|about \d+ minutes?|about \d+ h \d+ min) left\)$/
          .exec(document.getElementById('progress-label').textContent);
        return m && Number(m[1]) >= 16;
      },
      null,
      { timeout: 120_000 },
    );
  } catch {
    assert.fail(`no MiniLM embedding progress (${await describePage(page)}, label "${await page.textContent('#progress-label')}")`);
  }
  await page.screenshot({ path: path.join(screenshots, 'minilm-embedding.png'), fullPage: true });

  // Cancel pauses between batches: the corpus stays, BM25 answers, the vectors so far are kept
  await page.click('#cancel');
  try {
    await page.waitForFunction(() => !document.getElementById('notice').hidden, null, { timeout: WAIT });
  } catch {
    assert.fail(`no notice after cancelling MiniLM (${await describePage(page)})`);
  }
  const notice = await page.textContent('#notice-text');
  const paused = /^MiniLM paused after (\d+) of 997 passages; choose it again to go on\./.exec(notice);
  assert.ok(paused, `the notice should say where MiniLM paused, says "${notice}"`);
  assert.ok(Number(paused[1]) >= 16 && Number(paused[1]) < 997);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus must survive the cancel');
  assert.equal(await page.inputValue('#method'), 'bm25');
  const bm25 = await search(page, QUESTION.question);
  assert.equal(bm25.length, 5, 'BM25 should still answer after the cancel');

  // a small corpus: MiniLM (already loaded, no second download) embeds it and ranks by meaning
  await page.fill(
    '#paste',
    'Basalt cairns mark the paths across the moor.\n\n' +
      'A lighthouse keeper counts the ships at night.\n\n' +
      'The bakery sells rye bread and cinnamon buns every morning.',
  );
  await page.check('#mode-replace');
  await page.click('#index-text');
  await waitForStatus(page, /^3 passages\b/, 'the pasted text should replace the corpus');
  await page.selectOption('#method', 'dense-minilm');
  await page.fill('#query', 'boats near the coast');
  await page.click('#search');
  const hits = await waitForResults(page, 'boats near the coast', 'dense-minilm');
  assert.deepEqual(
    hits.map((h) => h.id),
    ['pasted text#2', 'pasted text#1', 'pasted text#3'],
    'MiniLM should rank the lighthouse paragraph first (no word in common with the query)',
  );
  for (const h of hits) assert.ok(Math.abs(Number(h.score)) <= 1, `a MiniLM score is a cosine, shows ${h.score}`);
  assert.match(await page.textContent('#method-hint'), /^MiniLM loaded: 384-d, 3 passages embedded\.$/);
  await page.screenshot({ path: path.join(screenshots, 'minilm.png'), fullPage: true });

  const fetched = minilmRequests().map((r) => new URL(r.url).pathname.replace(/\.[0-9a-f]{8}\.wasm$/, '.wasm'));
  assert.deepEqual(
    fetched.filter((p) => !p.endsWith('.js')).sort(),
    ['/cairn_minilm_bg.wasm', '/models/minilm-int8.onnx'],
    'the MiniLM engine and model should each be fetched once',
  );
  const origin = new URL(server.url).origin;
  const foreign = requests.filter((r) => r.test === t.name && !/^(data|blob):/.test(r.url) && new URL(r.url).origin !== origin);
  assert.deepEqual(foreign, [], `requests left ${origin}`);
  assertNoPageErrors();
});

test('(x) CatRAG builds the knowledge graph on demand, shows its counts, explains a hit with a drawing and lists its triples', { timeout: 180_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');
  assert.equal(await page.isHidden('#graph-info'), true, 'no graph before a graph method is chosen');

  await page.fill('#query', QUESTION.question);
  await page.selectOption('#method', 'catrag');
  await page.click('#search');
  const hits = await waitForResults(page, QUESTION.question, 'catrag');
  assert.equal(hits.length, 5);
  assert.ok(hits.some((h) => QUESTION.gold_ids.includes(h.id)), `none of the CatRAG top 5 ${JSON.stringify(hits.map((h) => h.id))} is gold`);

  // the graph's counts, by edge type
  const info = await page.textContent('#graph-info');
  const m = /^Knowledge graph · ([\d,]+) entities · ([\d,]+) facts \(([\d,]+) triples\)/.exec(info.trim());
  assert.ok(m, `the graph panel should give entities, facts and triples, says "${info}"`);
  assert.ok(Number(m[1].replace(/,/g, '')) > 1000, `a 997-passage graph should have thousands of entities: ${m[1]}`);
  const edgeRows = await page.$$eval('#graph-info .edge-row', (rows) => rows.map((r) => r.querySelector('.edge-label').textContent));
  assert.deepEqual(edgeRows, ['relation edges', 'synonym edges', 'context edges']);
  assert.match(await page.textContent('#results-meta'), /^5 results in .* · CatRAG$/);

  // "Why this passage?" draws the walk: at least one seed and the passage, joined by edges
  const first = page.locator('#results .hit').first();
  await first.locator('details.hit-explain summary').click();
  const svg = first.locator('svg.explain-graph');
  const none = first.locator('.explain-none');
  await page.waitForFunction(() => document.querySelector('#results .hit details.hit-explain[open]'), null, { timeout: WAIT });
  if ((await svg.count()) > 0) {
    assert.ok((await svg.locator('line').count()) >= 1, 'the drawing should have edges');
    assert.equal(await svg.locator('.node.passage').count(), 1, 'the drawing should end at this passage');
    assert.ok((await svg.locator('.node.seed, .node.anchor').count()) >= 1, 'the drawing should start at a seed');
  } else {
    assert.equal(await none.count(), 1, 'without a path the explanation should say why');
  }
  assert.match(await first.locator('.explain-seeds').textContent(), /^Seeds: /);

  // its triples, fetched when opened
  await first.locator('details.hit-triples summary').click();
  await page.waitForFunction(() => {
    const box = document.querySelector('#results .hit details.hit-triples .triples-box');
    return box && box.textContent !== 'Loading…';
  }, null, { timeout: WAIT });
  const rows = await first.locator('table.triples tr').count();
  assert.ok(rows >= 1, 'the first hit should list the triples extracted from it');
  await page.screenshot({ path: path.join(screenshots, 'catrag.png'), fullPage: true });

  const origin = new URL(server.url).origin;
  const foreign = requests.filter((r) => r.test === t.name && !/^(data|blob):/.test(r.url) && new URL(r.url).origin !== origin);
  assert.deepEqual(foreign, [], `requests left ${origin}`);
  assertNoPageErrors();
});

test('(xi) Cancel while the knowledge graph builds keeps the corpus, the added file included', { timeout: 180_000 }, async (t) => {
  const { page, assertNoPageErrors } = await openPage(t);
  await waitForStatus(page, DEMO_STATUS, 'the demo corpus should load');
  // a file of 3,000 paragraphs (made from the demo's own sentences) added to the demo, so that
  // the graph build lasts long enough to be cancelled
  const demo = fs
    .readFileSync(path.join(root, 'www', 'data', 'hotpotqa', 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const paragraphs = Array.from({ length: 3000 }, (_, i) => `${demo[i % demo.length].text} (copy ${i + 1})`);
  await page.check('#mode-add');
  await page.setInputFiles('#file-input', { name: 'copies.txt', mimeType: 'text/plain', buffer: Buffer.from(paragraphs.join('\n\n')) });
  await waitForStatus(page, /^[\d,]+ passages\b.*· built/, 'the file should be added to the demo');
  await page.waitForFunction(() => !/^997 passages/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  const count = /^([\d,]+) passages/.exec((await page.textContent('#status')).trim())[1];
  assert.ok(Number(count.replace(/,/g, '')) > 3000, `the file should add its paragraphs, status says ${count}`);

  await page.fill('#query', QUESTION.question);
  await page.selectOption('#method', 'catrag');
  try {
    await page.waitForFunction(
      () => /^(Extracting triples|Embedding entities|Linking synonym)/.test(document.getElementById('progress-label').textContent),
      null,
      { timeout: 60_000, polling: 20 },
    );
  } catch {
    assert.fail(`no graph-build progress after choosing CatRAG (${await describePage(page)})`);
  }
  await page.click('#cancel');
  try {
    await page.waitForFunction(() => !document.getElementById('notice').hidden, null, { timeout: WAIT });
  } catch {
    assert.fail(`no notice after cancelling the graph build (${await describePage(page)})`);
  }
  assert.match(await page.textContent('#notice-text'), /^Building the knowledge graph was cancelled\. Your corpus is indexed again/);
  await waitForStatus(page, new RegExp(`^${count} passages\\b`), 'the demo and the added file should both be back');
  assert.match(await page.textContent('#sources'), /HotpotQA demo, copies\.txt/);
  assert.equal(await page.inputValue('#method'), 'bm25');
  const hits = await search(page, QUESTION.question);
  assert.equal(hits.length, 5, 'BM25 should answer over the restored corpus');
  await page.screenshot({ path: path.join(screenshots, 'graph-cancelled.png'), fullPage: true });
  assertNoPageErrors();
});
