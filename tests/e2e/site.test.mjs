// End-to-end test of static-site search in headless Chromium: `node --test tests/e2e/`.
//
// A small static site is generated from the 100 real HotpotQA dev passages of
// tests/fixtures/hotpot-sample (one HTML page per passage, with a nav, header, footer and script
// holding a canary word that must not be indexed), `cairn index <site> --out <site>/cairn/`
// indexes it, the site is served on 127.0.0.1 and searched through the drop-in widget.
// Each page's one section has the passage's title and text, so the widget's BM25 ranking must
// be the one the fixture's expected.json records (computed natively by tests/parity.rs).
// Needs the wasm package (`npm run build:wasm`) and cargo.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = path.join(root, 'tests', 'fixtures', 'hotpot-sample');
const screenshots = path.join(root, 'tests', 'e2e', 'screenshots');
const CANARY = 'zqxcanary';
const WAIT = 60_000;

const readJsonl = (f) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const passages = readJsonl(path.join(fixture, 'corpus.jsonl'));
const questions = readJsonl(path.join(fixture, 'questions.jsonl'));
const expected = JSON.parse(fs.readFileSync(path.join(fixture, 'expected.json'), 'utf8'));

const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
// GitHub-style slug, as the page's heading id.
const slug = (s) => s.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
const linkOf = (p) => `/wiki/${p.id}.html#${encodeURIComponent(slug(p.title))}`;

/** Wait until the widget shows its list (or "No results.") for `q`, as typed. */
const shownFor = (tab, q) => tab.waitForFunction(
  (text) => document.querySelector('#cairn-search').dataset.query === text.trim(),
  q,
  { timeout: WAIT },
);

let site;
let server;
let browser;
let cli;

function page(p) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(p.title)}</title>
<style>.${CANARY} { color: red }</style><script>window.${CANARY} = 1;</script></head>
<body><header>${CANARY} header</header><nav><a href="/">Home</a> ${CANARY} menu</nav>
<main><h2 id="${escapeHtml(slug(p.title))}">${escapeHtml(p.title)}</h2><p>${escapeHtml(p.text)}</p></main>
<footer>${CANARY} footer</footer></body></html>
`;
}

before(async () => {
  for (const f of ['cairn.js', 'cairn_bg.wasm']) {
    if (!fs.existsSync(path.join(root, 'pkg', f))) throw new Error(`pkg/${f} is missing: run \`npm run build:wasm\``);
  }
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/setup.sh)`);
  site = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-site-'));
  fs.mkdirSync(path.join(site, 'wiki'));
  for (const p of passages) fs.writeFileSync(path.join(site, 'wiki', `${p.id}.html`), page(p));
  // The search page: the widget's element and script tag, nothing else of Cairn's.
  fs.writeFileSync(
    path.join(site, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Search</title></head><body>
<h1>Search the wiki</h1><div id="cairn-search"></div><script type="module" src="/cairn/cairn-search.js"></script>
</body></html>\n`,
  );
  fs.mkdirSync(path.join(site, 'cairn'));
  const run = spawnSync(
    'cargo',
    ['run', '--quiet', '--bin', 'cairn', '--', 'index', site, '--out', path.join(site, 'cairn'), '--dense'],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, `cairn index failed: ${run.stderr}`);
  cli = JSON.parse(run.stdout);
  server = await serve({ dir: site, port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (site) fs.rmSync(site, { recursive: true, force: true });
});

test('cairn index writes the index, the wasm package, the loader, the widget and a manifest', () => {
  // 100 passages; the search page has no text outside its heading and the widget's element.
  assert.equal(cli.passages, 100);
  for (const f of ['index.cairn.gz', 'cairn.js', 'cairn_bg.wasm', 'cairn_bg.wasm.gz', 'cairn-fetch.js', 'cairn-loader.js', 'cairn-worker.js', 'cairn-search.js', 'manifest.json', 'cairn_reader.js', 'cairn_reader_bg.wasm.gz']) {
    assert.ok(fs.existsSync(path.join(site, 'cairn', f)), f);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(site, 'cairn', 'manifest.json'), 'utf8'));
  assert.equal(manifest.index, 'index.cairn.gz');
  // the wasm is stored compressed, so that a host that does not compress serves it small
  assert.equal(manifest.wasm, 'cairn_bg.wasm.gz');
  assert.deepEqual(zlib.gunzipSync(fs.readFileSync(path.join(site, 'cairn', 'cairn_bg.wasm.gz'))), fs.readFileSync(path.join(site, 'cairn', 'cairn_bg.wasm')));
  // every file written, with its size: what a method costs before it is fetched
  for (const f of ['index.cairn.gz', 'texts.cairn.gz', 'extras.cairn.gz', 'cairn_bg.wasm.gz', 'cairn-worker.js', 'static-minilm.bin', 'minilm-vocab.txt']) {
    assert.equal(manifest.sizes[f], fs.statSync(path.join(site, 'cairn', f)).size, f);
  }
  assert.equal(manifest.index_gz_bytes, fs.statSync(path.join(site, 'cairn', 'index.cairn.gz')).size);
  assert.deepEqual(manifest.methods, ['bm25', 'dense', 'hybrid']);
  assert.equal(manifest.text_pipeline, null, 'without a knowledge graph the text pipeline is not written');
  assert.ok(!fs.existsSync(path.join(site, 'cairn', 'text')));
  assert.ok(manifest.index_gz_bytes < manifest.index_bytes);
  // the passages' texts are in their own file, which the first keyword result does not wait for
  assert.equal(manifest.texts, 'texts.cairn.gz');
  assert.equal(manifest.texts_gz_bytes, fs.statSync(path.join(site, 'cairn', 'texts.cairn.gz')).size);
  // the passages' vectors are in a third file, which BM25 never needs
  assert.equal(manifest.extras, 'extras.cairn.gz');
  assert.equal(manifest.extras_gz_bytes, fs.statSync(path.join(site, 'cairn', 'extras.cairn.gz')).size);
  // a site's passage ids are its pages' URLs: the widget links its results
  assert.equal(manifest.links, true);
  // the keyword reader's sharded index: the meta file and the shards the manifest counts
  const kw = manifest.keyword;
  const shardFiles = fs.readdirSync(path.join(site, 'cairn', kw.dir));
  const { dictionary, postings, fragments } = kw.shards;
  assert.equal(shardFiles.length, 1 + dictionary + postings + fragments);
  assert.ok(shardFiles.includes('meta.cairn.gz') && shardFiles.includes(`f${fragments - 1}.cairn.gz`));
});

/** A context whose widget gets a manifest without the keyword reader (a site written without it). */
async function withoutReader(context) {
  await context.route('**/cairn/manifest.json', async (route) => {
    const response = await route.fetch();
    const manifest = await response.json();
    delete manifest.keyword;
    await route.fulfill({ response, json: manifest });
  });
}

test('the first keyword result needs the keyword reader and its query\'s shards only, not the engine', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const tab = await context.newPage();
  const errors = [];
  const requests = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  context.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await tab.goto(server.url);
  const input = tab.locator('#cairn-search input');
  const byId = new Map(passages.map((p) => [p.id, p]));
  const hrefs = () => tab.$$eval('#cairn-search li a', (as) => as.map((a) => a.getAttribute('href')));
  const kwDir = `/cairn/${JSON.parse(fs.readFileSync(path.join(site, 'cairn', 'manifest.json'), 'utf8')).keyword.dir}`;
  const shardsFetched = () => requests.filter((r) => r.startsWith(kwDir)).map((r) => r.slice(kwDir.length));
  for (const [i, q] of questions.slice(0, 3).entries()) {
    const before = shardsFetched().length;
    await input.fill(q.question);
    await input.press('Enter');
    await shownFor(tab, q.question);
    // native BM25's ranking, with snippets (the fragments hold the texts), query words marked
    const want = expected.bm25.find((e) => e.question === q.question).ids.slice(0, 8).map((id) => linkOf(byId.get(id)));
    assert.deepEqual(await hrefs(), want, q.question);
    assert.equal(await tab.locator('#cairn-search li p').count(), want.length);
    assert.ok((await tab.locator('#cairn-search li p mark').count()) > 0);
    assert.equal(await tab.textContent('#cairn-search .cairn-status'), '');
    const fetched = shardsFetched().slice(before);
    if (i === 0) {
      assert.ok(fetched.includes('meta.cairn.gz'), JSON.stringify(fetched));
      for (const kind of ['d', 'p', 'f']) assert.ok(fetched.some((f) => f.startsWith(kind)), JSON.stringify(fetched));
      // the passages of one screen of results (8, and one more to know there are more)
      assert.ok(fetched.filter((f) => f.startsWith('f')).length <= 9, JSON.stringify(fetched));
    }
    // each shard once
    assert.equal(new Set(shardsFetched()).size, shardsFetched().length);
  }
  // the engine, its index and the texts were never fetched
  for (const f of ['cairn.js', 'cairn_bg.wasm.gz', 'cairn_bg.wasm', 'index.cairn.gz', 'texts.cairn.gz', 'cairn-loader.js']) {
    assert.ok(!requests.includes(`/cairn/${f}`), `${f} was fetched`);
  }
  assert.ok(requests.includes('/cairn/cairn_reader_bg.wasm.gz'));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a shard that cannot be fetched: the search says why, and the next search fetches it again', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  await context.route(/\/cairn\/keyword\/.*\/f\d+\.cairn\.gz$/, (route) => route.fulfill({ status: 404, body: 'not here' }));
  await tab.goto(server.url);
  const input = tab.locator('#cairn-search input');
  await input.fill(questions[0].question);
  await input.press('Enter');
  await tab.waitForFunction(() => /^Search failed: .*f\d+\.cairn\.gz: HTTP 404/.test(document.querySelector('#cairn-search .cairn-status').textContent), null, { timeout: WAIT });
  await context.unroute(/\/cairn\/keyword\/.*\/f\d+\.cairn\.gz$/);
  await input.fill(`${questions[0].question} `);
  await input.press('Enter');
  await tab.waitForFunction(() => document.querySelectorAll('#cairn-search li a').length > 0, null, { timeout: WAIT });
  assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.error), undefined);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the widget loads lazily, ranks as native BM25 and links to page#heading', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const tab = await context.newPage();
  const requests = [];
  const errors = [];
  context.on('request', (r) => requests.push(new URL(r.url()).pathname));
  tab.on('pageerror', (e) => errors.push(e.message));
  // wasm compiled on the page's own thread is counted (the engine belongs in the worker)
  await tab.addInitScript(() => {
    window.wasmOnPage = 0;
    for (const f of ['instantiate', 'instantiateStreaming', 'compile', 'compileStreaming']) {
      const orig = WebAssembly[f];
      WebAssembly[f] = function counted(...a) {
        window.wasmOnPage += 1;
        return orig.apply(this, a);
      };
    }
  });
  await tab.goto(server.url);
  const input = tab.locator('#cairn-search input');
  await input.waitFor();
  await tab.waitForTimeout(300);
  assert.ok(!requests.some((r) => r.startsWith('/cairn/keyword/')), 'the index must not load before the box is used');
  assert.ok(!requests.some((r) => r.startsWith('/cairn/cairn_reader_bg.wasm')), 'the reader must not load before the box is used');
  assert.ok(!requests.includes('/cairn/cairn.js'), 'the page loads no engine code of its own');

  const byId = new Map(passages.map((p) => [p.id, p]));
  for (const [i, q] of questions.slice(0, 3).entries()) {
    await input.fill(q.question);
    await input.press('Enter');
    await shownFor(tab, q.question);
    const hrefs = await tab.$$eval('#cairn-search li a', (as) => as.map((a) => a.getAttribute('href')));
    const want = expected.bm25.find((e) => e.question === q.question).ids.slice(0, 8).map((id) => linkOf(byId.get(id)));
    assert.deepEqual(hrefs, want, `question ${i}: ${q.question}`);
    if (i === 0) await tab.screenshot({ path: path.join(screenshots, 'site-widget.png') });
  }
  assert.ok(requests.some((r) => r.startsWith('/cairn/keyword/')));
  // the keyword reader's compressed wasm, not the engine; fetched, compiled and run by the
  // widget's worker: the page's own thread fetched none of their files
  assert.ok(requests.includes('/cairn/cairn_reader_bg.wasm.gz') && !requests.includes('/cairn/cairn_bg.wasm.gz'));
  assert.equal(tab.workers().length, 1);
  assert.equal(await tab.evaluate(() => window.wasmOnPage), 0, 'no wasm module compiled on the page\'s thread');

  // a count, and more results on demand: the next ones in BM25's order
  const q0 = questions[0].question;
  await input.fill(q0);
  await input.press('Enter');
  await shownFor(tab, q0);
  assert.equal(await tab.locator('#cairn-search li a').count(), 8);
  assert.match(await tab.textContent('#cairn-search .cairn-count'), /^(About )?\d+\+? results$/);
  await tab.locator('#cairn-search .cairn-more').click();
  await tab.waitForFunction(() => document.querySelectorAll('#cairn-search li a').length > 8);
  const ten = (await tab.$$eval('#cairn-search li a', (as) => as.map((a) => a.getAttribute('href')))).slice(0, 10);
  assert.deepEqual(ten, expected.bm25.find((e) => e.question === q0).ids.slice(0, 10).map((id) => linkOf(byId.get(id))));
  // the first new result has the focus
  assert.equal(await tab.evaluate(() => document.activeElement.getAttribute('href')), ten[8]);
  assert.ok(!requests.includes('/cairn/static-minilm.bin'), 'bm25 needs no embedding table');
  assert.ok(!requests.includes('/cairn/extras.cairn.gz'), 'bm25 needs no passage vectors');
  assert.deepEqual(requests.filter((r) => r.startsWith('/cairn/text/')), [], 'bm25 needs no text pipeline');

  // Chrome (nav, header, footer, script, style) is not indexed.
  await input.fill(CANARY);
  await input.press('Enter');
  await shownFor(tab, CANARY);
  assert.match(await tab.textContent('#cairn-search .cairn-status'), /No results/);

  // A result opens its page at its heading.
  await input.fill(questions[0].question);
  await input.press('Enter');
  await shownFor(tab, questions[0].question);
  const first = await tab.locator('#cairn-search li a').first().getAttribute('href');
  await tab.locator('#cairn-search li a').first().click();
  await tab.waitForURL((u) => u.pathname + u.hash === first);
  const heading = await tab.evaluate(() => document.getElementById(decodeURIComponent(location.hash.slice(1)))?.textContent);
  assert.equal(linkOf({ id: first.split('/')[2].replace('.html', '').split('#')[0], title: heading }), first);
  assert.deepEqual(errors, []);
  await context.close();
});

test('without the keyword reader, the first keyword result waits for the engine\'s keyword part only: titles at once, snippets when the texts arrive', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  await withoutReader(context);
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  // the texts arrive late, as over a slow link
  let releaseTexts;
  const textsHeld = new Promise((resolve) => { releaseTexts = resolve; });
  await context.route('**/texts.cairn.gz', async (route) => {
    await textsHeld;
    await route.continue();
  });
  await tab.goto(server.url);
  const input = tab.locator('#cairn-search input');
  const q = questions[0];
  await input.fill(q.question);
  await input.press('Enter');
  await tab.waitForFunction(() => document.querySelectorAll('#cairn-search li a').length > 0, null, { timeout: WAIT });
  const byId = new Map(passages.map((p) => [p.id, p]));
  const want = expected.bm25.find((e) => e.question === q.question).ids.slice(0, 8).map((id) => linkOf(byId.get(id)));
  const hrefs = () => tab.$$eval('#cairn-search li a', (as) => as.map((a) => a.getAttribute('href')));
  // the same ranking as native BM25, titles and links only
  assert.deepEqual(await hrefs(), want);
  assert.equal(await tab.locator('#cairn-search li p').count(), 0, 'no snippet before the texts');
  assert.equal(await tab.textContent('#cairn-search .cairn-status'), 'Snippets are still loading…');
  assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.textsMs), undefined);
  await tab.screenshot({ path: path.join(screenshots, 'site-widget-titles-first.png') });
  releaseTexts();
  // the list gets its snippets, query words marked, in the same order
  await tab.waitForFunction(() => document.querySelectorAll('#cairn-search li p').length > 0, null, { timeout: WAIT });
  assert.deepEqual(await hrefs(), want);
  assert.equal(await tab.locator('#cairn-search li p').count(), want.length);
  assert.ok((await tab.locator('#cairn-search li p mark').count()) > 0, 'query words are marked in the snippets');
  assert.equal(await tab.textContent('#cairn-search .cairn-status'), '');
  const snippet = await tab.locator('#cairn-search li p').first().textContent();
  const top = byId.get(expected.bm25.find((e) => e.question === q.question).ids[0]);
  assert.ok(top.text.includes(snippet.replace(/^… /, '').replace(/ …$/, '').slice(0, 40)), `${snippet} is not from ${top.id}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('without the keyword reader, texts that cannot be loaded: titles and links still come, and the status line says why, search after search', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  await withoutReader(context);
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  await context.route('**/texts.cairn.gz', (route) => route.fulfill({ status: 404, body: 'not here' }));
  await tab.goto(server.url);
  const input = tab.locator('#cairn-search input');
  for (const q of questions.slice(0, 2)) {
    await input.fill(q.question);
    await input.press('Enter');
    await tab.waitForFunction(
      () => /texts could not be loaded/.test(document.querySelector('#cairn-search .cairn-status').textContent)
        && document.querySelectorAll('#cairn-search li a').length > 0,
      null,
      { timeout: WAIT },
    );
    assert.equal(await tab.locator('#cairn-search li p').count(), 0);
  }
  const status = await tab.textContent('#cairn-search .cairn-status');
  assert.match(status, /^The passages' texts could not be loaded \(.*texts\.cairn\.gz: HTTP 404.*\): results show titles only\.$/);
  const d = await tab.evaluate(() => ({ ...document.querySelector('#cairn-search').dataset }));
  assert.equal(d.error, undefined, 'BM25 itself works');
  assert.match(d.textsError, /HTTP 404/);
  await tab.screenshot({ path: path.join(screenshots, 'site-widget-texts-missing.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a hand-made site: a Latin-1 page, unicode file names and anchors, one result per link, keys, a missing index', async () => {
  // Its own small site (the one above must keep its BM25 statistics).
  const own = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-site2-'));
  const widget = '<div id="cairn-search"></div><script type="module" src="/cairn/cairn-search.js"></script>';
  const chrome = (body) => `<!doctype html><html><head><meta charset="utf-8"><title>T</title></head><body><nav>${CANARY}</nav>${body}${widget}</body></html>`;
  fs.mkdirSync(path.join(own, 'docs'));
  fs.writeFileSync(path.join(own, 'index.html'), chrome('<main><h1>Home</h1><p>Welcome.</p></main>'));
  fs.writeFileSync(
    path.join(own, 'docs', 'café notes.html'),
    chrome('<main><h1>Notes</h1><h2 id="été">Offres d\'été</h2><p>Les patins à réaction sont en promotion.</p></main>'),
  );
  // Windows-1252 bytes, no charset declared: read as a browser reads it, with a warning.
  fs.writeFileSync(path.join(own, 'latin1.html'), Buffer.from('<title>Ancien</title><p>Qualit\xe9 sup\xe9rieure des enclumes.</p>', 'latin1'));
  // One section longer than a passage: two passages share its link, the widget shows it once.
  const para = (w) => `<p>${`${w} `.repeat(180)}</p>`;
  fs.writeFileSync(path.join(own, 'long.html'), chrome(`<main><h2 id="part">Part</h2>${para('quirkword filler')}${para('quirkword padding')}</main>`));
  // Two sections under headings without an id: one link (the page), two results.
  fs.writeFileSync(
    path.join(own, 'brakes.html'),
    chrome('<main><h1>Brakes</h1><h2>Rim brakes</h2><p>Rim brakes squeeze pads against the wheel rim.</p><h2>Disc brakes</h2><p>Disc brakes squeeze pads against a rotor at the hub.</p></main>'),
  );
  // One page's identical sections under two anchors (a contents box repeated): shown once.
  fs.writeFileSync(
    path.join(own, 'twice.html'),
    chrome('<main><h1>Gear</h1><h2 id="top">Contents</h2><p>Sprockets and derailleurs.</p><h2 id="bottom">Contents</h2><p>Sprockets and derailleurs.</p></main>'),
  );
  fs.writeFileSync(path.join(own, 'empty.html'), '');
  const run = spawnSync(
    'cargo',
    ['run', '--quiet', '--bin', 'cairn', '--', 'index', own, '--out', path.join(own, 'cairn'), '--no-dense'],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, `cairn index failed: ${run.stderr}`);
  assert.match(run.stderr, /latin1\.html: not UTF-8: read as Windows-1252/);
  assert.match(run.stderr, /empty\.html: no text to index/);
  const report = JSON.parse(run.stdout);
  assert.equal(report.pages, 7);
  assert.equal(report.warnings, 2);

  const ownServer = await serve({ dir: own, port: 0 });
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  try {
    const tab = await context.newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(ownServer.url);
    const input = tab.locator('#cairn-search input');
    const hrefs = () => tab.$$eval('#cairn-search li a', (as) => as.map((a) => a.getAttribute('href')));
    const search = async (q) => {
      await input.fill(q);
      await input.press('Enter');
      await shownFor(tab, q);
      return hrefs();
    };
    assert.deepEqual(await search('qualité enclumes'), ['/latin1.html']);
    // with the texts in, one page's identical sections are one result
    await tab.waitForFunction(() => document.querySelector('#cairn-search').dataset.textsMs !== undefined, null, { timeout: WAIT });
    const twice = await search('sprockets derailleurs');
    assert.equal(twice.length, 1, JSON.stringify(twice));
    assert.match(twice[0], /^\/twice\.html#(top|bottom)$/);
    assert.equal(await tab.textContent('#cairn-search .cairn-count'), '1 result');
    assert.deepEqual(await search('quirkword'), ['/long.html#part'], 'one result per link');
    assert.deepEqual(await search('squeeze '), ['/brakes.html', '/brakes.html'], 'two sections of one page, both shown');
    assert.deepEqual(
      (await tab.$$eval('#cairn-search li a', (as) => as.map((a) => a.textContent))).sort(),
      ['T › Brakes › Disc brakes', 'T › Brakes › Rim brakes'],
    );

    // Keys: ArrowDown to the first result, ArrowUp back to the box, Escape clears.
    assert.deepEqual(await search('patins réaction'), ['/docs/caf%C3%A9%20notes.html#%C3%A9t%C3%A9']);
    await input.press('ArrowDown');
    assert.equal(await tab.evaluate(() => document.activeElement.getAttribute('href')), '/docs/caf%C3%A9%20notes.html#%C3%A9t%C3%A9');
    await tab.keyboard.press('ArrowUp');
    assert.equal(await tab.evaluate(() => document.activeElement.tagName), 'INPUT');
    await tab.keyboard.press('ArrowDown');
    await tab.keyboard.press('Escape');
    assert.equal(await input.inputValue(), '');
    assert.deepEqual(await hrefs(), []);
    assert.equal(await tab.evaluate(() => document.activeElement.tagName), 'INPUT');

    // The link opens the page with the space and accents in its name, at its heading.
    await search('patins réaction');
    await tab.locator('#cairn-search li a').first().click();
    await tab.waitForURL((u) => u.pathname.endsWith('/docs/caf%C3%A9%20notes.html'));
    assert.equal(await tab.evaluate(() => document.querySelector(':target')?.textContent), "Offres d'été");
    assert.deepEqual(errors, []);

    // A missing index file: the widget says which file and why, once the box is used.
    const kwDir = JSON.parse(fs.readFileSync(path.join(own, 'cairn', 'manifest.json'), 'utf8')).keyword.dir;
    fs.renameSync(path.join(own, 'cairn', kwDir, 'meta.cairn.gz'), path.join(own, 'cairn', 'moved.gz'));
    await tab.goto(ownServer.url);
    await tab.locator('#cairn-search input').focus();
    await tab.waitForFunction(() => document.querySelector('#cairn-search').dataset.error, null, { timeout: WAIT });
    assert.match(
      await tab.textContent('#cairn-search .cairn-status'),
      /^Search is unavailable: http:\/\/127\.0\.0\.1:\d+\/cairn\/keyword\/[0-9a-f]{8}\/meta\.cairn\.gz: HTTP 404 \(not found/,
    );
    await tab.screenshot({ path: path.join(screenshots, 'site-widget-missing-index.png') });
  } finally {
    await context.close();
    await ownServer.close();
    fs.rmSync(own, { recursive: true, force: true });
  }
});

test('a site with a knowledge graph: the widget answers with BM25 at once, says what the graph costs, then runs catrag in its worker after fetching the extras and the text pipeline', { timeout: 180_000 }, async () => {
  const own = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-site3-'));
  fs.writeFileSync(
    path.join(own, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>Graph</title></head><body><div id="cairn-search" data-method="catrag"></div><script type="module" src="/cairn/cairn-search.js"></script></body></html>\n',
  );
  const run = spawnSync(
    'cargo',
    ['run', '--quiet', '--bin', 'cairn', '--', 'index', '--jsonl', fixture, '--graph', '--method', 'catrag', '--out', path.join(own, 'cairn')],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(run.status, 0, `cairn index failed: ${run.stderr}`);
  const manifest = JSON.parse(fs.readFileSync(path.join(own, 'cairn', 'manifest.json'), 'utf8'));
  const textFiles = ['pos-perceptron.bin', 'lemma-en.txt', 'lemma-index.bin', 'gazetteer-en.txt'];
  assert.deepEqual(manifest.text_pipeline, textFiles.map((f) => `text/${f}`));
  for (const f of textFiles) {
    assert.deepEqual(fs.readFileSync(path.join(own, 'cairn', 'text', f)), fs.readFileSync(path.join(root, 'assets', 'text', f)), f);
  }
  assert.ok(manifest.methods.includes('catrag'));
  // the dataset's ids are not URLs: the widget shows titles without links
  assert.equal(manifest.links, false);
  assert.match(run.stderr, /note: 100 of 100 passage ids are not URLs/);

  const ownServer = await serve({ dir: own, port: 0 });
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  try {
    const tab = await context.newPage();
    const requests = [];
    const errors = [];
    context.on('request', (r) => requests.push(new URL(r.url()).pathname));
    tab.on('pageerror', (e) => errors.push(e.message));
    // a list replaced by "No results." for an unchanged query is counted
    await tab.addInitScript(() => {
      window.flips = 0;
      document.addEventListener('DOMContentLoaded', () => {
        const root = document.querySelector('#cairn-search');
        let shownFor = null;
        new MutationObserver(() => {
          const q = root.querySelector('input').value.trim();
          if (root.querySelectorAll('li').length) shownFor = q;
          else if (/No results/.test(root.querySelector('.cairn-status').textContent) && shownFor === q) window.flips += 1;
        }).observe(root, { subtree: true, childList: true, characterData: true });
      });
    });
    // the extras arrive late, as a big graph over a slow link would: BM25 answers meanwhile
    let releaseExtras;
    const extrasHeld = new Promise((resolve) => { releaseExtras = resolve; });
    await context.route('**/extras.cairn.gz', async (route) => {
      await extrasHeld;
      await route.continue();
    });
    await tab.goto(ownServer.url);
    const input = tab.locator('#cairn-search input');
    const q = questions[0];
    await input.fill(q.question);
    await input.press('Enter');
    await tab.waitForFunction(
      () => document.querySelectorAll('#cairn-search li .cairn-title').length > 0 || document.querySelector('#cairn-search').dataset.error,
      null,
      { timeout: WAIT },
    );
    assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.error || ''), '');
    // The first list is BM25's, shown while the graph loads, and says so; catrag's replaces it.
    const first = await tab.evaluate(() => ({
      shown: document.querySelector('#cairn-search').dataset.shown,
      status: document.querySelector('#cairn-search .cairn-status').textContent,
    }));
    assert.equal(first.shown, 'bm25', JSON.stringify(first));
    assert.match(first.status, /^Keyword results\./);
    // the graph's files and the engine are not fetched until asked for (BM25 came from the
    // keyword reader), and the widget says what they cost
    const cost = ['static-minilm.bin', 'minilm-vocab.txt', 'extras.cairn.gz', ...textFiles.map((f) => `text/${f}`),
      'cairn_bg.wasm.gz', 'index.cairn.gz', 'texts.cairn.gz', 'cairn.js', 'cairn-loader.js']
      .reduce((sum, f) => sum + fs.statSync(path.join(own, 'cairn', f)).size, 0);
    assert.ok(!requests.includes('/cairn/cairn_bg.wasm.gz') && !requests.includes('/cairn/index.cairn.gz'));
    const button = tab.locator('#cairn-search .cairn-load');
    assert.equal(await button.textContent(), `Load the full search: catrag (${(cost / 1e6).toFixed(1)} MB to download)`);
    assert.ok(!requests.includes('/cairn/extras.cairn.gz') && !requests.includes('/cairn/static-minilm.bin'));
    await button.click();
    await tab.waitForFunction(() => /the full search is still loading/.test(document.querySelector('#cairn-search .cairn-status').textContent));
    assert.equal(await button.isVisible(), false);
    assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.complete), undefined);
    await tab.screenshot({ path: path.join(screenshots, 'site-graph-keyword-first.png') });
    releaseExtras();
    await tab.waitForFunction(
      () => document.querySelector('#cairn-search').dataset.shown === 'catrag' || document.querySelector('#cairn-search').dataset.error,
      null,
      { timeout: WAIT },
    );
    assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.error || ''), '');
    assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search .cairn-status').textContent), '');
    const ids = await tab.$$eval('#cairn-search li .cairn-title', (ts) => ts.map((t) => t.dataset.id));
    assert.ok(ids.some((id) => q.gold_ids.includes(id)), `catrag's results ${JSON.stringify(ids)} hold no gold passage of ${JSON.stringify(q.gold_ids)}`);
    // titles without links, reachable with the arrow keys
    assert.equal(await tab.$$eval('#cairn-search li a', (as) => as.length), 0);
    const titles = await tab.$$eval('#cairn-search li .cairn-title', (ts) => ts.map((t) => t.textContent));
    assert.equal(titles[0], passages.find((p) => p.id === ids[0]).title);
    await input.focus();
    await input.press('ArrowDown');
    assert.equal(await tab.evaluate(() => document.activeElement.dataset.id), ids[0]);
    for (const f of textFiles) assert.ok(requests.includes(`/cairn/text/${f}`), `text/${f} fetched`);
    assert.ok(requests.includes('/cairn/extras.cairn.gz'), 'the graph comes in the extras');
    await tab.screenshot({ path: path.join(screenshots, 'site-graph-catrag.png') });

    // the last word being typed completes with catrag too: the word BM25's completions find is
    // the one the graph walk gets, and the status line shows it
    await input.fill('Playboy Club hotel casi');
    await tab.waitForFunction(
      () => /Results for “Playboy Club hotel casino”/.test(document.querySelector('#cairn-search .cairn-status').textContent),
      null,
      { timeout: WAIT },
    );
    assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.shown), 'catrag');
    assert.ok((await tab.locator('#cairn-search li').count()) > 0);
    // a last word that is a whole word already is searched as it is ("casino", not "casinos")
    await input.fill('Playboy Club hotel casino');
    await shownFor(tab, 'Playboy Club hotel casino');
    assert.doesNotMatch(await tab.textContent('#cairn-search .cairn-status'), /Results for/);
    assert.equal(await tab.evaluate(() => document.querySelector('#cairn-search').dataset.shown), 'catrag');
    // the graph walk ran in the worker; the page's thread holds no engine
    assert.equal(tab.workers().length, 1);
    assert.equal(await tab.evaluate(() => window.flips), 0, 'no list was replaced by "No results."');
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await ownServer.close();
    fs.rmSync(own, { recursive: true, force: true });
  }
});
