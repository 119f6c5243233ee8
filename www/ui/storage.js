// Saved indexes: save the index in this browser (IndexedDB: database "cairn", store "indexes",
// one record {key, name, date, size, passages, bytes} per index), export it as a .cairn file,
// import one, list, open and delete saved ones.
import { el } from './dom.js';
import { workerRequest } from './channel.js';
import { requestIndex } from './engine.js';
import { bytes, fmt } from './format.js';
import { hideError, showError, showNotice } from './notices.js';
import { state } from './state.js';
import { onRender } from './status.js';

export const DB_NAME = 'cairn';
export const DB_STORE = 'indexes';

export function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(DB_STORE, { keyPath: 'key', autoIncrement: true });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** Run `fn(store)` in a transaction; resolves with the value of the request it returns. */
export async function dbDo(mode, fn) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, mode);
      const req = fn(tx.objectStore(DB_STORE));
      tx.oncomplete = () => resolve(req?.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error('the browser refused to store the index (storage full?)'));
    });
  } finally {
    db.close();
  }
}

export function corpusLabel() {
  return state.sources.join(', ') || 'index';
}

export function renderSavedControls() {
  const built = !!(state.stats && state.stats.built && state.stats.passages > 0);
  const idle = state.started && !state.busy;
  el.saveIndex.disabled = !(idle && built);
  el.exportIndex.disabled = !(idle && built);
  el.shareLink.disabled = !(idle && built);
  el.importIndex.disabled = !idle;
  el.importLabel.classList.toggle('disabled', !idle);
  for (const b of el.savedList.querySelectorAll('button.saved-open')) b.disabled = !idle;
}

export async function renderSavedList() {
  let records = [];
  try {
    records = await dbDo('readonly', (store) => store.getAll());
  } catch (err) {
    el.savedList.textContent = `Saved indexes are not available in this browser: ${err.message}`;
    return;
  }
  el.savedList.replaceChildren();
  for (const r of records.sort((a, b) => b.date - a.date)) {
    const li = document.createElement('li');
    li.dataset.key = r.key;
    const name = document.createElement('span');
    name.className = 'saved-name';
    name.textContent = r.name;
    name.title = r.name;
    const meta = document.createElement('span');
    meta.className = 'saved-meta';
    meta.textContent = `${fmt(r.passages)} passages · ${bytes(r.size)} · ${new Date(r.date).toLocaleString()}`;
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'small saved-open';
    open.textContent = 'Open';
    open.disabled = !state.started || state.busy;
    open.addEventListener('click', async () => {
      const rec = await dbDo('readonly', (store) => store.get(r.key));
      if (rec) requestIndex({ type: 'load-index', bytes: rec.bytes, name: rec.name });
    });
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'small quiet';
    del.textContent = 'Delete';
    del.addEventListener('click', async () => {
      await dbDo('readwrite', (store) => store.delete(r.key));
      renderSavedList();
    });
    li.append(name, meta, open, del);
    el.savedList.append(li);
  }
}

export async function saveInBrowser() {
  hideError();
  try {
    const { bytes: data, passages } = await workerRequest({ type: 'save-index' });
    await dbDo('readwrite', (store) => store.add({ name: corpusLabel(), date: Date.now(), size: data.length, passages, bytes: data }));
    showNotice(`Saved in this browser (${bytes(data.length)}).`);
  } catch (err) {
    showError(`The index could not be saved: ${err.message}`);
  }
  renderSavedList();
}

export async function exportFile() {
  hideError();
  try {
    const { bytes: data } = await workerRequest({ type: 'save-index' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([data], { type: 'application/octet-stream' }));
    a.download = `${corpusLabel().replace(/[^\w.-]+/g, '-').slice(0, 60) || 'index'}.cairn`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  } catch (err) {
    showError(`The index could not be exported: ${err.message}`);
  }
}

export async function importFile(file) {
  if (!file) return;
  const data = new Uint8Array(await file.arrayBuffer());
  requestIndex({ type: 'load-index', bytes: data, name: file.name });
}

/** Wire the save, export and import controls and list the saved indexes. */
export function initStorage() {
  onRender(renderSavedControls);
  el.saveIndex.addEventListener('click', saveInBrowser);
  el.exportIndex.addEventListener('click', exportFile);
  el.importIndex.addEventListener('change', () => {
    importFile(el.importIndex.files[0]);
    el.importIndex.value = '';
  });
  renderSavedList();
}
