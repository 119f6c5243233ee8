// Adding text to the corpus: files (chooser and drag and drop: text, Markdown, JSONL, and HTML,
// Word and PDF documents) and pasted text.
import { documentKind, documentText } from './documents.js';
import { el } from './dom.js';
import { requestIndex } from './engine.js';
import { fmt } from './format.js';
import { hideError, showError, showNotice } from './notices.js';
import { setBusy, showProgress } from './progress.js';
import { state } from './state.js';

export function replaceMode() {
  return el.modeReplace.checked;
}

/**
 * Read `fileList` and send what could be read to the engine: text, Markdown and JSONL as they
 * are; HTML, .docx and PDF files converted to text first (documents.js), with progress per
 * file (and per PDF page). A file that cannot be read gets its own line in the error banner;
 * the others are indexed; when none can be, nothing is sent and the corpus stays as it is.
 */
export async function indexFiles(fileList) {
  const files = Array.from(fileList || []);
  if (files.length === 0 || state.busy) return;
  hideError();
  const read = [];
  const failed = [];
  const converting = files.some((f) => documentKind(f.name));
  const job = { cancelled: false };
  if (converting) {
    state.converting = job; // Cancel stops between files and pages
    setBusy(true, 'Reading…');
  }
  for (const [i, f] of files.entries()) {
    if (job.cancelled) break;
    const kind = documentKind(f.name);
    try {
      if (kind) {
        showProgress({ phase: 'adding', done: i, total: files.length, name: f.name });
        const text = await documentText(f, kind, (page, pages) => {
          if (job.cancelled) throw new Error('cancelled');
          el.progress.max = pages;
          el.progress.value = page;
          el.progressLabel.textContent = `Reading ${f.name}: page ${fmt(page)} of ${fmt(pages)} (file ${i + 1} of ${files.length})`;
        });
        if (!text.trim()) {
          throw new Error(kind === 'pdf' ? 'no text in it (a scanned PDF holds images of text, which Cairn cannot read)' : 'no text in it');
        }
        read.push({ name: f.name, text });
      } else {
        const text = await f.text();
        if (text.includes('\u0000')) {
          throw new Error('this looks like a binary file. Cairn indexes .txt, .md, .jsonl, .html, .docx and .pdf files');
        }
        read.push({ name: f.name, text });
      }
    } catch (err) {
      failed.push(`${f.name}: ${err.message || err}`);
    }
  }
  if (converting) {
    state.converting = null;
    setBusy(false);
  }
  if (job.cancelled) {
    showNotice('Reading the files was cancelled; nothing was added.');
    return;
  }
  if (failed.length) {
    const rest = read.length === 0
      ? ' Nothing was indexed; the corpus is as it was.'
      : ` The other ${read.length === 1 ? 'file is' : `${read.length} files are`} indexed.`;
    showError(`${failed.join(' · ')}.${rest}`);
  }
  if (read.length === 0) return;
  requestIndex({ type: 'index-files', files: read, replace: replaceMode() });
}

export function indexPastedText() {
  const text = el.paste.value;
  if (!text.trim()) {
    showError('There is no text to index: paste some text into the box first.');
    el.paste.focus();
    return;
  }
  hideError();
  const name = el.pasteName.value.trim() || 'pasted text';
  requestIndex({ type: 'index-text', name, text, replace: replaceMode() });
}

/** Wire the corpus panel: the demo buttons, the file chooser, pasted text and drag and drop. */
export function initCorpus() {
  el.loadDemo.addEventListener('click', () => {
    hideError();
    requestIndex({ type: 'load-demo', replace: true });
  });
  el.reloadDemo.addEventListener('click', () => {
    hideError();
    requestIndex({ type: 'load-demo', replace: true });
  });
  el.fileInput.addEventListener('change', () => {
    indexFiles(el.fileInput.files).finally(() => {
      el.fileInput.value = ''; // choosing the same file again fires 'change' again
    });
  });
  el.indexText.addEventListener('click', indexPastedText);
  // drag and drop: the zone takes the files; elsewhere a dropped file must not replace the page
  for (const type of ['dragenter', 'dragover']) {
    el.dropzone.addEventListener(type, (event) => {
      event.preventDefault();
      if (!state.busy) el.dropzone.classList.add('over');
    });
  }
  for (const type of ['dragleave', 'dragend']) {
    el.dropzone.addEventListener(type, () => el.dropzone.classList.remove('over'));
  }
  el.dropzone.addEventListener('drop', (event) => {
    event.preventDefault();
    el.dropzone.classList.remove('over');
    if (!state.busy) indexFiles(event.dataTransfer && event.dataTransfer.files);
  });
  window.addEventListener('dragover', (event) => event.preventDefault());
  window.addEventListener('drop', (event) => event.preventDefault());
}
