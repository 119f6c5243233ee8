// The engine worker's index files: saving the index, loading one (bytes or a URL; gzip or not),
// the corpus as JSONL.
import { Engine, textPipelineLoaded } from '../../pkg/cairn.js';
import { EMBEDDER_TABLE_URL, EMBEDDER_VOCAB_URL, ensureTextPipeline, forgetMinilmVectors } from './embedders.js';
import { gunzip, isGzip } from './load.js';
import {
  ENGINE_CONFIG, downloadWithProgress, embedderFiles, engine, message, methodsInfo, newEngine, now, post, postError, progressPoster,
  setEmbedderFiles, setEngine, setSourceNames, sourceNames, staticDims, stats,
} from './state.js';

// ---------------------------------------------------------------- index files

/**
 * Replace the engine with the index in `bytes` (gzip or not). A file with a knowledge graph
 * needs the static embedder: when the engine says so and it is not loaded yet, its files are
 * downloaded and the load is tried again. All or nothing: on an error the engine is untouched.
 */
export async function loadIndexBytes(bytes, name, extraTiming = {}) {
  const t0 = now();
  let raw = bytes;
  if (isGzip(bytes)) {
    try {
      raw = await gunzip(bytes);
    } catch {
      // Chromium's DecompressionStream says only "Failed to fetch" here.
      throw new Error('the gzip data is truncated or damaged');
    }
  }
  const inflateMs = now() - t0;
  const report = progressPoster(() => 'loading-index');
  let target = newEngine();
  try {
    // A file with a knowledge graph needs the static embedder and the text pipeline (its query
    // anchoring): when the engine says one is missing, it is fetched and the load tried again.
    for (let attempt = 0; ; attempt += 1) {
      try {
        target.loadIndex(raw, report);
        break;
      } catch (err) {
        if (attempt >= 2) throw err;
        if (!textPipelineLoaded() && /text pipeline/.test(message(err))) {
          if ((await ensureTextPipeline()) !== 'ok') throw new Error('the text pipeline\'s download was cancelled');
          continue;
        }
        if (embedderFiles || !/needs the static embedder/.test(message(err))) throw err;
        const [table, vocabBytes] = await downloadWithProgress([EMBEDDER_TABLE_URL, EMBEDDER_VOCAB_URL]);
        const vocab = new TextDecoder('utf-8', { fatal: true }).decode(vocabBytes);
        target.free();
        target = new Engine(ENGINE_CONFIG);
        target.loadStaticEmbedder(table, vocab, undefined);
        setEmbedderFiles({ dims: staticDims(target) });
      }
    }
    // A static site's keyword part (ids, titles and BM25's postings, without the passages'
    // texts) is not a whole index: the page keeps, saves and shares whole corpora.
    if (!target.textsLoaded()) {
      throw new Error('this is the keyword part of a static site\'s index (its index.cairn.gz, without the passages\' texts, which are in texts.cairn.gz): the page opens whole index files, such as one saved with "Export file"');
    }
  } catch (err) {
    target.free();
    throw err;
  }
  engine.free();
  setEngine(target);
  setSourceNames([name]);
  forgetMinilmVectors(0);
  post({
    type: 'ready',
    stats: engine.stats(),
    ...methodsInfo(),
    changed: true,
    replace: true,
    labels: [name],
    timing: { ...extraTiming, inflateMs, loadIndexMs: now() - t0, bytes: bytes.length, rawBytes: raw.length, totalMs: now() - t0 },
  });
}

export async function handleIndexFile(msg) {
  switch (msg.type) {
    case 'save-index':
      try {
        const bytes = engine.saveIndex();
        post({ type: 'index-file', id: msg.id, bytes, passages: engine.stats().passages, sources: sourceNames }, [bytes.buffer]);
      } catch (err) {
        postError('save-index', err, { id: msg.id });
      }
      return;
    case 'corpus-jsonl':
      try {
        post({ type: 'corpus-jsonl', id: msg.id, text: engine.corpusJsonl(), passages: engine.stats().passages });
      } catch (err) {
        postError('corpus-jsonl', err, { id: msg.id });
      }
      return;
    case 'load-index':
    case 'load-index-url': {
      const name = String(msg.name || 'saved index');
      try {
        let bytes = msg.bytes;
        const extra = {};
        if (msg.type === 'load-index-url') {
          const t0 = now();
          const url = new URL(String(msg.url), self.location.href);
          let resp;
          try {
            resp = await fetch(url, { mode: 'cors', credentials: 'omit' });
          } catch {
            throw new Error(`could not download ${url}: the server cannot be reached, or it does not allow other sites to read the file (CORS)`);
          }
          if (!resp.ok) throw new Error(`could not download ${url} (${resp.status} ${resp.statusText})`);
          bytes = new Uint8Array(await resp.arrayBuffer());
          extra.fetchMs = now() - t0;
        }
        if (!(bytes instanceof Uint8Array)) bytes = new Uint8Array(bytes);
        await loadIndexBytes(bytes, name, extra);
      } catch (err) {
        // Name the file, and say that what was loaded before is still there.
        const wrapped = err instanceof WebAssembly.RuntimeError
          ? err
          : new Error(`${name} could not be opened: ${message(err)}.${/^not a Cairn index file/.test(message(err)) && /\.(txt|md|markdown|jsonl)$/i.test(name) ? ' To index a text, Markdown or JSONL file, add it under “New files and text”.' : ''} The current corpus is unchanged.`);
        postError(msg.type, wrapped);
        post({ type: 'ready', stats: stats(), ...methodsInfo(), changed: false, timing: null });
      }
      return;
    }
    default:
  }
}
