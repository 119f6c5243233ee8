// Adding text to the corpus: files (chooser and drag and drop) and pasted text.
import { el } from './dom.js';
import { requestIndex } from './engine.js';
import { hideError, showError } from './notices.js';
import { state } from './state.js';

export function replaceMode() {
  return el.modeReplace.checked;
}

export async function indexFiles(fileList) {
  const files = Array.from(fileList || []);
  if (files.length === 0 || state.busy) return;
  hideError();
  let read;
  try {
    read = await Promise.all(files.map(async (f) => ({ name: f.name, text: await f.text() })));
  } catch (err) {
    showError(`Could not read the files: ${err.message || err}`);
    return;
  }
  const binary = read.find((f) => f.text.includes('\u0000'));
  if (binary) {
    showError(`${binary.name}: this looks like a binary file. Cairn indexes .txt, .md and .jsonl files.`);
    return;
  }
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
