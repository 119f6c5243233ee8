// Documents in the page: an HTML page, a Word (.docx) file and a PDF, each written by this test
// with known text, are added through the file chooser; their passages are titled "file ›
// heading" (PDF: "file › page N"), a query finds them, the corpus of before stays, and a broken
// file gets its own error while the others are indexed. Needs a built page (`npm run build:wasm
// && npm run build:web`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const screenshots = path.join(root, 'tests', 'e2e', 'screenshots');
const WAIT = 60_000;

/**
 * A one-font PDF (Helvetica, a standard Type1 font: no font file needed) with one page per
 * entry of `pages`, each a list of lines drawn top-down. Offsets in the xref table are counted
 * here, byte by byte (the text is ASCII).
 */
export function makePdf(pages) {
  const objects = [];
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  pages.forEach((lines, i) => {
    const esc = (s) => s.replace(/[\\()]/g, (c) => `\\${c}`);
    const ops = ['BT', '/F1 12 Tf', '16 TL', '72 720 Td', ...lines.map((l, j) => `${j ? 'T* ' : ''}(${esc(l)}) Tj`), 'ET'].join('\n');
    objects[4 + 2 * i] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`;
    objects[5 + 2 * i] = `<< /Length ${Buffer.byteLength(ops)} >>\nstream\n${ops}\nendstream`;
  });
  let out = '%PDF-1.4\n';
  const offsets = [];
  for (let id = 1; id < objects.length; id += 1) {
    offsets[id] = Buffer.byteLength(out);
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id += 1) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A zip archive (stored, no compression) of `files`: [{name, data: Buffer}]. */
function makeZip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data } of files) {
    const nameBuf = Buffer.from(name, 'utf8');
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0, 6); // flags
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(0, 10); // time, date
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** A minimal .docx: content types, the package and document relationships, styles, the body. */
function makeDocx(paragraphs) {
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const xml = (s) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`, 'utf8');
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const body = paragraphs
    .map(({ heading, text }) => `<w:p>${heading ? '<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>' : ''}<w:r><w:t xml:space="preserve">${esc(text)}</w:t></w:r></w:p>`)
    .join('');
  return makeZip([
    { name: '[Content_Types].xml', data: xml('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>') },
    { name: '_rels/.rels', data: xml('<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>') },
    { name: 'word/_rels/document.xml.rels', data: xml('<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>') },
    { name: 'word/styles.xml', data: xml(`<w:styles xmlns:w="${W}"><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`) },
    { name: 'word/document.xml', data: xml(`<w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`) },
  ]);
}

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
  if (!fs.existsSync(path.join(dist, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `npm run build:wasm && npm run build:web` before the e2e tests');
  }
  server = await serve({ dir: dist, port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
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
