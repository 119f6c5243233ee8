// Documents in the page: an HTML page, a Word (.docx) file and a PDF, each written by this test
// with known text, are added through the file chooser; their passages are titled "file ›
// heading" (PDF: "file › page N"), a query finds them, the corpus of before stays, and a broken
// file gets its own error while the others are indexed. Needs a built page (`npm run build:wasm
// && npm run build:web`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { servePage } from './chromium.mjs';
import { makeDocx, makePdf } from './document_files.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const screenshots = path.join(root, 'tests', 'e2e', 'screenshots');
const WAIT = 60_000;

const HTML = `<!doctype html><html><head><title>Harbour guide</title><style>p { color: red }</style>
<script>var quokkaSecret = 1;</script></head><body>
<nav><a href="/">Home</a> Menu with the word lighthouse</nav>
<main><h1>Harbour guide</h1><p>The harbour of Zembla has a blue lighthouse built in 1887.</p>
<p>Harbourmaster's office<br>Quay Street 4</p>
<h2>Ferries</h2><ul><li>The morning ferry to Vondel leaves at seven.</li><li>The evening ferry returns at nine.</li></ul>
<p hidden>A hidden paragraph about quokkas.</p></main>
<footer>Footer about lighthouses</footer></body></html>`;

const DOCX = makeDocx([
  { heading: true, text: 'Orchard report' },
  { text: 'The Brambleton orchard grew forty varieties of quince in 1921.' },
  { heading: true, text: 'Harvest' },
  { text: 'Pickers at Brambleton used ladders of ash wood.' },
]);

const PDF = makePdf([
  ['The observatory at Keldmoor', 'tracks the comet Ysolde every winter.'],
  ['Page two describes the telescope mirror,', 'ground from Pyrex glass by the Keldmoor guild.'],
]);

let browser;
let server;

before(async () => {
  ({ server, browser } = await servePage(dist));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(t) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(e.message));
  context.on('request', (r) => requests.push(new URL(r.url()).pathname));
  t.after(() => context.close());
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  return { page, errors, requests };
}

/** Search `query` with BM25; the shown hits as {id, title, text}. */
async function search(page, query) {
  await page.fill('#query', query);
  await page.click('#search');
  await page.waitForFunction((q) => document.getElementById('results').dataset.query === q && document.getElementById('results').dataset.method === 'bm25', query, { timeout: WAIT });
  return page.$$eval('#results .hit', (hits) => hits.map((h) => ({
    id: h.querySelector('.hit-id').textContent,
    title: h.querySelector('.hit-title').textContent,
    text: h.querySelector('.hit-text').textContent,
  })));
}

test('an HTML page, a .docx and a PDF are added to the demo corpus, titled by heading and page', { timeout: 240_000 }, async (t) => {
  const { page, errors, requests } = await openPage(t);
  assert.ok(!requests.some((p) => /pdf|mammoth/.test(p)), `pdf.js or mammoth was fetched before a document was added: ${requests.join(', ')}`);
  await page.setInputFiles('#file-input', [
    { name: 'harbour.html', mimeType: 'text/html', buffer: Buffer.from(HTML) },
    { name: 'orchard.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', buffer: DOCX },
    { name: 'observatory.pdf', mimeType: 'application/pdf', buffer: PDF },
  ]);
  // demo (997) + html 4 (two paragraphs, two list items) + docx 2 + pdf 2 pages = 1005
  await page.waitForFunction(() => /^1,005 passages/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT })
    .catch(async () => assert.fail(`status: ${await page.textContent('#status')}; error: ${await page.textContent('#error-message')}`));
  assert.match(await page.textContent('#sources'), /HotpotQA demo, harbour\.html, orchard\.docx, observatory\.pdf/);

  const harbour = await search(page, 'Zembla lighthouse');
  assert.deepEqual(harbour[0], { id: 'harbour.html#1', title: 'harbour.html › Harbour guide', text: 'The harbour of Zembla has a blue lighthouse built in 1887.' });
  const office = await search(page, 'Harbourmaster Quay');
  assert.deepEqual(office[0], { id: 'harbour.html#2', title: 'harbour.html › Harbour guide', text: 'Harbourmaster\'s office Quay Street 4' });
  const ferry = await search(page, 'ferry Vondel');
  assert.deepEqual(ferry[0], { id: 'harbour.html#3', title: 'harbour.html › Ferries', text: 'The morning ferry to Vondel leaves at seven.' });
  assert.deepEqual(await search(page, 'quokkaSecret'), [], 'script text was indexed');
  assert.deepEqual(await search(page, 'quokkas'), [], 'a hidden paragraph was indexed');
  const chrome = await search(page, 'Menu Footer');
  assert.ok(!chrome.some((h) => h.id.startsWith('harbour.html')), `nav or footer text was indexed: ${JSON.stringify(chrome)}`);

  const quince = await search(page, 'Brambleton quince');
  assert.deepEqual(quince[0], { id: 'orchard.docx#1', title: 'orchard.docx › Orchard report', text: 'The Brambleton orchard grew forty varieties of quince in 1921.' });
  const ladders = await search(page, 'ladders ash');
  assert.deepEqual(ladders[0], { id: 'orchard.docx#2', title: 'orchard.docx › Harvest', text: 'Pickers at Brambleton used ladders of ash wood.' });

  const comet = await search(page, 'comet Ysolde');
  assert.deepEqual(comet[0], { id: 'observatory.pdf#1', title: 'observatory.pdf › page 1', text: 'The observatory at Keldmoor tracks the comet Ysolde every winter.' });
  const mirror = await search(page, 'telescope mirror Pyrex');
  assert.deepEqual(mirror[0], { id: 'observatory.pdf#2', title: 'observatory.pdf › page 2', text: 'Page two describes the telescope mirror, ground from Pyrex glass by the Keldmoor guild.' });
  // the demo corpus is still there
  const demo = await search(page, 'Shane Lynch Boyzone');
  assert.ok(demo.length > 0 && !demo[0].id.includes('.'), `the demo corpus was lost: ${JSON.stringify(demo[0])}`);
  assert.deepEqual(errors, []);

  await search(page, 'comet Ysolde');
  fs.mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, 'documents-pdf.png'), fullPage: false });
});

test('a broken PDF and a broken .docx get their own errors; the good file and the corpus stay', { timeout: 240_000 }, async (t) => {
  const { page, errors } = await openPage(t);
  const pdf = makePdf([['Lanternfish glow in the Corvina trench.']]);
  await page.setInputFiles('#file-input', [
    { name: 'broken.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\nthis is not really a PDF\n') },
    { name: 'broken.docx', mimeType: 'application/octet-stream', buffer: Buffer.from('PK not a zip at all') },
    { name: 'fish.pdf', mimeType: 'application/pdf', buffer: pdf },
  ]);
  await page.waitForFunction(() => /^998 passages/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT })
    .catch(async () => assert.fail(`status: ${await page.textContent('#status')}; error: ${await page.textContent('#error-message')}`));
  await page.waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: WAIT });
  const message = await page.textContent('#error-message');
  assert.match(message, /broken\.pdf: not a PDF that can be read/);
  assert.match(message, /broken\.docx: not a Word \(\.docx\) file that can be read \(it is not a zip archive, as every \.docx is\)/);
  assert.doesNotMatch(message, /fish\.pdf/);
  fs.mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, 'documents-errors.png'), fullPage: false });
  const fish = await search(page, 'Lanternfish Corvina');
  assert.equal(fish[0].title, 'fish.pdf › page 1');
  assert.deepEqual(errors, []);

  // only broken files, replacing the corpus: nothing is indexed and nothing is lost
  await page.check('#mode-replace');
  await page.setInputFiles('#file-input', [{ name: 'again.pdf', mimeType: 'application/pdf', buffer: Buffer.from('not a pdf') }]);
  await page.waitForFunction(() => /again\.pdf/.test(document.getElementById('error-message').textContent), null, { timeout: WAIT });
  assert.match(await page.textContent('#status'), /^998 passages/);
});
