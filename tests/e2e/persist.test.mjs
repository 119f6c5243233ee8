// End-to-end tests of the page's saved indexes and share links in headless Chromium:
// `node --test tests/e2e/`. Needs a built page: `npm run build:wasm && npm run build:web`.
//
// Save in the browser (IndexedDB), list, open and delete; export a .cairn file and import it;
// a corrupt file is refused with its own message; a share link with the corpus in its fragment
// opens ready to query; `?index=URL` opens a served index file (gzip).
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
const dist = path.join(root, 'dist');
const screenshots = path.join(root, 'tests', 'e2e', 'screenshots');
const DEMO_STATUS = /^997 passages\b/;
const WAIT = 60_000;
const PASTED =
  'Quokkas are small wallabies that live on Rottnest Island near Perth.\n\n' +
  'Basalt cairns mark the paths of the Isle of Skye.\n\n' +
  'The Quiraing is a landslip on the Trotternish ridge.';

let browser;
let server;
let files;

before(async () => {
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build:wasm && npm run build:web` before the e2e tests');
  }
  files = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-files-'));
  server = await serve({ dir: dist, port: 0, mounts: { '/test-files': files } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (files) fs.rmSync(files, { recursive: true, force: true });
});

async function openPage(url = server.url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { page, context, errors };
}

async function status(page, re, what) {
  try {
    await page.waitForFunction(
      ([src, flags]) => new RegExp(src, flags).test(document.getElementById('status').textContent.trim()),
      [re.source, re.flags],
      { timeout: WAIT },
    );
  } catch {
    const s = await page.evaluate(() => `${document.getElementById('status').textContent} / error: ${document.getElementById('error-message').textContent}`);
    assert.fail(`${what}: status never matched ${re} (${s})`);
  }
}

async function topIds(page, query) {
  await page.fill('#query', query);
  await page.click('#search');
  await page.waitForFunction((q) => document.getElementById('results').dataset.query === q, query, { timeout: WAIT });
  return page.$$eval('#results .hit .hit-id', (xs) => xs.map((x) => x.textContent));
}

async function pasteReplace(page, text, name) {
  await page.fill('#paste', text);
  await page.fill('#paste-name', name);
  await page.check('#mode-replace');
  await page.click('#index-text');
}

test('save in the browser, list, open, delete; export and import a file; a corrupt file is refused', { timeout: 240_000 }, async () => {
  const { page, context, errors } = await openPage();
  await status(page, DEMO_STATUS, 'the demo corpus should load');
  const before = await topIds(page, 'Which hotel houses the Playboy Club?');
  assert.ok(before.length > 0);

  await page.click('#save-index');
  await page.waitForFunction(() => document.querySelectorAll('#saved-list li').length === 1, null, { timeout: WAIT });
  const meta = await page.textContent('#saved-list li .saved-meta');
  assert.match(meta, /^997 passages · [\d.]+ (KB|MB) · /);

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-index')]);
  const exported = path.join(files, 'demo.cairn');
  await download.saveAs(exported);
  const bytes = fs.readFileSync(exported);
  assert.equal(bytes.subarray(0, 8).toString('latin1'), 'CAIRNIDX');

  // Replace the corpus, then open the saved index: the demo is back and ranks as before.
  await pasteReplace(page, PASTED, 'notes');
  await status(page, /^3 passages\b/, 'the pasted text should replace the corpus');
  await page.click('#saved-list li button:text("Open")');
  await status(page, DEMO_STATUS, 'opening the saved index should bring the demo back');
  assert.deepEqual(await topIds(page, 'Which hotel houses the Playboy Club?'), before);
  await page.screenshot({ path: path.join(screenshots, 'persist-saved.png'), fullPage: true });

  // Import the exported file.
  await pasteReplace(page, PASTED, 'notes');
  await status(page, /^3 passages\b/, 'the pasted text should replace the corpus again');
  await page.setInputFiles('#import-index', exported);
  await status(page, DEMO_STATUS, 'importing the exported file should bring the demo back');
  assert.deepEqual(await topIds(page, 'Which hotel houses the Playboy Club?'), before);

  // A damaged file: refused with its own message, and the corpus stays.
  const damaged = Buffer.from(bytes);
  damaged[damaged.length - 50] ^= 1;
  const damagedPath = path.join(files, 'damaged.cairn');
  fs.writeFileSync(damagedPath, damaged);
  await page.setInputFiles('#import-index', damagedPath);
  await page.waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: WAIT });
  assert.match(await page.textContent('#error-message'), /the index file is corrupt: .*checksum does not match/);
  await status(page, DEMO_STATUS, 'the corpus should stay after a refused file');

  await page.click('#saved-list li button:text("Delete")');
  await page.waitForFunction(() => document.querySelectorAll('#saved-list li').length === 0, null, { timeout: WAIT });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a share link holds the corpus in its fragment and opens ready to query', { timeout: 180_000 }, async () => {
  const { page, context, errors } = await openPage();
  await status(page, DEMO_STATUS, 'the demo corpus should load');
  await pasteReplace(page, PASTED, 'notes');
  await status(page, /^3 passages\b/, 'the pasted text should replace the corpus');
  const want = await topIds(page, 'quokka island');
  await page.click('#share-link');
  await page.waitForFunction(() => !document.getElementById('share-url').hidden, null, { timeout: WAIT });
  const link = await page.inputValue('#share-url');
  assert.ok(link.startsWith(`${server.url}#corpus=`), link);
  await context.close();

  const requests = [];
  const shared = await openPage(link);
  shared.context.on('request', (r) => requests.push(r.url()));
  await status(shared.page, /^3 passages\b/, 'the shared link should open with its corpus');
  assert.deepEqual(await topIds(shared.page, 'quokka island'), want);
  assert.ok(!requests.some((u) => u.includes('corpus=')), 'the corpus must not be sent anywhere');
  assert.deepEqual(shared.errors, []);
  assert.deepEqual(errors, []);
  await shared.context.close();
});

test('?index=URL opens a served index file (gzip)', { timeout: 180_000 }, async () => {
  // The demo's index, exported by one page and served gzipped, opened by another.
  const { page, context } = await openPage();
  await status(page, DEMO_STATUS, 'the demo corpus should load');
  const want = await topIds(page, 'Which hotel houses the Playboy Club?');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-index')]);
  const raw = path.join(files, 'raw.cairn');
  await download.saveAs(raw);
  fs.writeFileSync(path.join(files, 'demo.cairn.gz'), zlib.gzipSync(fs.readFileSync(raw)));
  await context.close();

  const opened = await openPage(`${server.url}?index=/test-files/demo.cairn.gz`);
  await status(opened.page, DEMO_STATUS, '?index= should open the served index');
  assert.deepEqual(await topIds(opened.page, 'Which hotel houses the Playboy Club?'), want);
  assert.match(await opened.page.textContent('#sources'), /demo\.cairn\.gz/);
  assert.deepEqual(opened.errors, []);
  await opened.context.close();
});

test('a saved index keeps the knowledge graph: a new page opens it ready for CatRAG, with the same ranking', { timeout: 240_000 }, async () => {
  const question = 'Which hotel houses the Playboy Club?';
  const { page, context, errors } = await openPage();
  await status(page, DEMO_STATUS, 'the demo corpus should load');
  await page.fill('#query', question);
  await page.selectOption('#method', 'catrag');
  await page.click('#search');
  await page.waitForFunction(
    (q) => document.getElementById('results').dataset.query === q && document.getElementById('results').dataset.method === 'catrag',
    question,
    { timeout: WAIT },
  );
  const want = await page.$$eval('#results .hit .hit-id', (xs) => xs.map((x) => x.textContent));
  const graphInfo = (await page.textContent('#graph-info')).trim();
  await page.click('#save-index');
  await page.waitForFunction(() => document.querySelectorAll('#saved-list li').length === 1, null, { timeout: WAIT });
  await page.close();

  // Same browser profile (IndexedDB), new page and worker: no embedder, no graph yet.
  const fresh = await context.newPage();
  fresh.on('pageerror', (e) => errors.push(e.message));
  const requests = [];
  fresh.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await fresh.goto(server.url);
  await status(fresh, DEMO_STATUS, 'the demo corpus should load in the new page');
  await fresh.waitForFunction(() => document.querySelectorAll('#saved-list li').length === 1, null, { timeout: WAIT });
  await fresh.click('#saved-list li button:text("Open")');
  await fresh.waitForFunction(() => !document.getElementById('graph-info').hidden, null, { timeout: WAIT });
  // The graph came from the file (same counts); the static embedder was fetched for it.
  assert.equal((await fresh.textContent('#graph-info')).trim(), graphInfo);
  assert.ok(requests.some((p) => p.endsWith('static-minilm.bin')), 'the graph needs the static embedder');
  await fresh.fill('#query', question);
  await fresh.selectOption('#method', 'catrag');
  await fresh.click('#search');
  await fresh.waitForFunction(
    (q) => document.getElementById('results').dataset.query === q && document.getElementById('results').dataset.method === 'catrag',
    question,
    { timeout: WAIT },
  );
  assert.deepEqual(await fresh.$$eval('#results .hit .hit-id', (xs) => xs.map((x) => x.textContent)), want);
  await fresh.click('#saved-list li button:text("Delete")');
  await fresh.waitForFunction(() => document.querySelectorAll('#saved-list li').length === 0, null, { timeout: WAIT });
  assert.deepEqual(errors, []);
  await context.close();
});

test('broken inputs say what is wrong: a cut-off share link, a truncated gzip file, an unreachable or odd ?index=', { timeout: 180_000 }, async () => {
  const errorText = (page) => page.waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: WAIT })
    .then(() => page.textContent('#error-message'));

  // A share link cut short (as chat apps do): said so, and the demo loads instead.
  const { page, context, errors } = await openPage();
  await status(page, DEMO_STATUS, 'the demo corpus should load');
  await pasteReplace(page, PASTED, 'notes');
  await status(page, /^3 passages\b/, 'the pasted text should replace the corpus');
  await page.click('#share-link');
  await page.waitForFunction(() => !document.getElementById('share-url').hidden, null, { timeout: WAIT });
  const link = await page.inputValue('#share-url');

  // A truncated .cairn.gz: named, with the gzip problem, and the corpus stays.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-index')]);
  const raw = path.join(files, 'notes.cairn');
  await download.saveAs(raw);
  const cut = path.join(files, 'cut.cairn.gz');
  fs.writeFileSync(cut, zlib.gzipSync(fs.readFileSync(raw)).subarray(0, 200));
  await page.setInputFiles('#import-index', cut);
  assert.equal(
    await errorText(page),
    'cut.cairn.gz could not be opened: the gzip data is truncated or damaged. The current corpus is unchanged.',
  );
  await status(page, /^3 passages\b/, 'the corpus should stay after a refused file');
  // A text file given to Import file: pointed to where text files go.
  const notes = path.join(files, 'notes.txt');
  fs.writeFileSync(notes, 'Quokkas live on Rottnest Island.\n');
  await page.click('#error-dismiss');
  await page.setInputFiles('#import-index', notes);
  assert.match(await errorText(page), /^notes\.txt could not be opened: not a Cairn index file .* add it under “New files and text”\. The current corpus is unchanged\.$/);
  // A static site's keyword part (its index.cairn.gz, without the passages' texts): named for
  // what it is, and the corpus stays.
  const siteDir = path.join(files, 'site');
  const made = spawnSync(
    'cargo',
    ['run', '--quiet', '--bin', 'cairn', '--', 'index', '--jsonl', path.join(root, 'tests', 'fixtures', 'tiny', 'corpus.jsonl'), '--no-dense', '--out', siteDir],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(made.status, 0, `cairn index failed: ${made.stderr}`);
  await page.click('#error-dismiss');
  await page.setInputFiles('#import-index', path.join(siteDir, 'index.cairn.gz'));
  assert.match(await errorText(page), /^index\.cairn\.gz could not be opened: this is the keyword part of a static site's index .*texts\.cairn\.gz.* The current corpus is unchanged\.$/);
  await status(page, /^3 passages\b/, 'the corpus should stay after a keyword part');
  assert.deepEqual(errors, []);
  await context.close();

  const short = await openPage(link.slice(0, link.length - 12));
  assert.match(await errorText(short.page), /^The shared corpus in this link could not be read: the link is incomplete or damaged; was it cut short/);
  await status(short.page, DEMO_STATUS, 'the demo corpus should load instead');
  assert.deepEqual(short.errors, []);
  await short.context.close();

  // ?index= on a server that cannot be reached, and a file name with a stray '%'.
  const far = await openPage(`${server.url}?index=${encodeURIComponent('http://127.0.0.1:9/x.cairn')}`);
  assert.match(await errorText(far.page), /^x\.cairn could not be opened: could not download http:\/\/127\.0\.0\.1:9\/x\.cairn: the server cannot be reached, or it does not allow other sites/);
  assert.deepEqual(far.errors, []);
  await far.context.close();
  const odd = await openPage(`${server.url}?index=${encodeURIComponent('/test-files/100%.cairn')}`);
  assert.match(await errorText(odd.page), /^100%\.cairn could not be opened: could not download /);
  assert.deepEqual(odd.errors, [], 'a stray % must not stop the page');
  await odd.context.close();
});
