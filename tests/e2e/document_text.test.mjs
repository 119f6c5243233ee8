// The page's reader and `cairn index` against the same files: the text the page makes of each
// document in tests/fixtures/documents/ (what its worker receives for Engine.addDocument) must be
// that folder's NAME.txt, which the CLI's reader is checked against too (src/site.rs's tests),
// so that the same file gives the same passages in both. The broken files get the page's
// errors. CAIRN_UPDATE_FIXTURES=1 writes the .txt files from the page instead (check them by
// hand). Needs a built page (`npm run build:wasm && npm run build:web`).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { servePage } from './chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'dist');
const fixtures = path.join(root, 'tests', 'fixtures', 'documents');
const WAIT = 60_000;
const READABLE = ['moor-report.pdf', 'field-notes.docx'];
const BROKEN = {
  'broken.pdf': /^not a PDF that can be read/,
  'not-a-zip.docx': /^not a Word \(\.docx\) file that can be read \(it is not a zip archive, as every \.docx is\)$/,
  'scanned.pdf': /^no text in it \(a scanned PDF holds images of text, which Cairn cannot read\)$/,
  'locked.pdf': /^the PDF is password-protected$/,
};

let browser;
let server;

before(async () => {
  ({ server, browser } = await servePage(dist));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('the page makes of each fixture document the text the CLI is checked against', { timeout: 240_000 }, async (t) => {
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // what the page sends its engine worker: {type: 'index-files', files: [{name, text}]}
  await page.addInitScript(() => {
    window.indexedFiles = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function postMessage(message, ...rest) {
      if (message && message.type === 'index-files') window.indexedFiles.push(...message.files);
      return post.call(this, message, ...rest);
    };
  });
  await page.goto(server.url);
  await page.waitForFunction(() => /^997 passages/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  const names = [...READABLE, ...Object.keys(BROKEN)];
  await page.setInputFiles('#file-input', names.map((name) => ({
    name,
    mimeType: name.endsWith('.pdf') ? 'application/pdf' : 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    buffer: fs.readFileSync(path.join(fixtures, name)),
  })));
  await page.waitForFunction((n) => window.indexedFiles.length === n, READABLE.length, { timeout: WAIT });
  await page.waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: WAIT });
  const files = await page.evaluate(() => window.indexedFiles);
  assert.deepEqual(files.map((f) => f.name), READABLE);
  for (const { name, text } of files) {
    const expected = path.join(fixtures, `${name}.txt`);
    if (process.env.CAIRN_UPDATE_FIXTURES === '1') {
      fs.writeFileSync(expected, text);
      continue;
    }
    assert.equal(text, fs.readFileSync(expected, 'utf8'), `${name}: the page's text differs from ${name}.txt`);
  }
  // "name: reason · name: reason. The other 2 files are indexed."
  const message = (await page.textContent('#error-message')).replace(/\. The other .*$/, '');
  const reasons = Object.fromEntries(message.split(' · ').map((m) => [m.slice(0, m.indexOf(': ')), m.slice(m.indexOf(': ') + 2)]));
  assert.deepEqual(Object.keys(reasons).sort(), Object.keys(BROKEN).sort());
  for (const [name, pattern] of Object.entries(BROKEN)) assert.match(reasons[name], pattern, name);
  assert.deepEqual(errors, []);
});
