// The page's search engine: one Cairn `Engine`, owned by this Web Worker so that indexing never
// freezes the page. The page talks to it with messages only.
//
// In:  {type:'load-demo'}
//      {type:'index-files', files:[{name, text}], replace}   .jsonl → addJsonl, others → addDocument
//      {type:'index-text', name, text, replace}
//      {type:'load-embedder', id, embedder}                    embedder 'static' (methods dense, hybrid;
//                                                              the default) or 'minilm' (dense-minilm)
//      {type:'cancel-embedder'}                                handled at once: stops a download, or
//                                                              pauses MiniLM's embedding between batches
//      {type:'load-embedder', id, embedder:'graph'}            the knowledge graph (hipporag, catrag):
//                                                              the static embedder first if needed
//      {type:'passage-graph', id, passage}                     a passage's triples and entities
//      {type:'load-embedder', id, embedder:'cage', method}     CAGE (cage, bm25+cage, catrag+cage):
//                                                              the static embedder (and, for
//                                                              catrag+cage, the graph), then the
//                                                              MiniLM package and the R-GCN model
//      {type:'cage-graph', id, passage}                        CAGE's passage graph of a passage
//      {type:'search', query, k, method, prefix, id}
//      {type:'stats'}
//      {type:'save-index', id}                                 the index file
//      {type:'load-index', bytes, name}                        replaces the corpus with an index file's
//                                                              (gzip or not); the static embedder is
//                                                              fetched first when the file needs it
//      {type:'load-index-url', url, name}                      the same, fetched from `url` (CORS)
//      {type:'corpus-jsonl', id}                               the corpus as JSONL (share links)
//      {type:'graph-bench', id, queries, method}               Engine.graphBench (bench page only)
// Out: {type:'hello', methods, available, version, stats}    once, when the wasm module is ready
//      {type:'progress', phase, done, total}                  phases: fetching, adding, indexing,
//                                                              restoring, download (bytes; `what`:
//                                                              'static' or 'minilm'), embedding,
//                                                              loading-model, embedding-minilm,
//                                                              extract, graph-embed, synonyms
//      {type:'ready', stats, available, embedder, timing, changed, labels}
//                                                              after every indexing request
//      {type:'ready', request:'load-embedder', id, stats, available, embedder, timing, cancelled?, failed?}
//      {type:'results', id, query, method, hits, ms, explanation?, weak?}  explanation for graph methods
//      {type:'passage-graph', id, graph}
//      {type:'graph-bench', id, figures}
//      {type:'cage-graph', id, passage, graph}                 Engine.cagePassageGraph's object
//      CAGE searches reply 'results' with hits that also carry relevance and coherence, `weak`
//      (as for the other methods) and `cage: {candidates, embedded, embedMs, rerankMs}`: the
//      candidates reranked, the passages whose graph embedding was computed first (added since),
//      and the time of each step
//      {type:'stats', stats, methods, available, embedder, version}
//      {type:'error', message, during, id?}
//      {type:'index-file', id, bytes, passages, sources}      reply to 'save-index' (bytes transferred)
//      {type:'corpus-jsonl', id, text, passages}               reply to 'corpus-jsonl'
//      'load-index' and 'load-index-url' reply like an indexing request ('ready', changed, replace)
//
// `available` is engine.availableMethods(); `embedder` is null or {name: 'static', dims};
// `minilm` is null or {dims, embedded, passages} once the MiniLM model is loaded.
//
// Every engine call is guarded: an error becomes an 'error' message and the worker keeps going.
// An indexing request is all or nothing: when one of its inputs fails, the engine goes back to
// the corpus and index it had before the request. Once loaded, the static embedder stays: its
// files are kept in memory and loaded into every new engine (a "replace" builds a fresh one).
//
// MiniLM (method dense-minilm) is a separate wasm package (pkg-minilm/, tract + SIMD, about
// 15 MB) plus the 22.9 MB model; both are fetched from this site only when that method is first
// chosen. Its embedding runs here in batches of a few passages, yielding between them, so it
// shows progress and a cancel pauses it without losing anything: the vectors of passages already
// embedded are kept, and choosing dense-minilm again resumes where it stopped. Adding passages
// keeps the vectors of the passages already there; only new ones are embedded (on the next
// dense-minilm search).
//
// The worker's concerns are modules of www/engine/: state.js (the engine and what is loaded, the
// reply helpers), load.js (fetching with progress, gzip), indexing.js, embedders.js (static,
// text pipeline, MiniLM), graph.js, cage.js, llm.js, files.js (index files) and query.js (the one
// door of a query: Engine.query, with the endpoint's tiers when one is set). This file takes
// the messages and routes each one; a method's route is read from its needs in the method table
// (`methods()`), never from its name.

import init, { Engine, methods, version } from '../pkg/cairn.js';
import { loadCage } from './engine/cage.js';
import { loadEmbedder, loadMinilm } from './engine/embedders.js';
import { handleIndexFile } from './engine/files.js';
import { loadGraph } from './engine/graph.js';
import { DEMO_NAME, baseName, kindOf, loadDemo, runIndex, uniqueName } from './engine/indexing.js';
import { handleLlm } from './engine/llm.js';
import { needsOf, resultsOf, searchWithLlm } from './engine/query.js';
import {
  CAGE_METHODS, ENGINE_CONFIG, METHOD_INFO, embedderDownload, engine, info, llm, message, methodsInfo, now, post, postError,
  setCAGE_METHODS, setEngine, setInfo, setLlmOpenieCancel, setMETHOD_INFO, setMinilmCancel, setWasmExports, stats,
  wasmExports,
} from './engine/state.js';

async function handle(msg, early) {
  switch (msg && msg.type) {
    case 'load-demo': {
      let demo;
      try {
        demo = await (early || loadDemo());
      } catch (err) {
        post({ type: 'error', during: 'load-demo', message: message(err) });
        post({ type: 'ready', stats: stats(), ...methodsInfo(), changed: false, timing: null });
        return;
      }
      const batch = [{ kind: 'jsonl', name: DEMO_NAME, text: demo.text }];
      runIndex(batch, msg.replace !== false, ['HotpotQA demo'], 'load-demo', { fetchMs: demo.fetchMs });
      return;
    }
    case 'index-files': {
      const files = Array.isArray(msg.files) ? msg.files : [];
      const batch = files.map((f) => ({ kind: kindOf(String(f.name)), name: String(f.name), text: String(f.text ?? '') }));
      runIndex(batch, !!msg.replace, batch.map((f) => f.name), 'index-files');
      return;
    }
    case 'index-text': {
      const replace = !!msg.replace;
      const name = replace ? baseName(msg.name) : uniqueName(baseName(msg.name));
      runIndex([{ kind: kindOf(name), name, text: String(msg.text ?? '') }], replace, [name], 'index-text');
      return;
    }
    case 'load-embedder':
      if (msg.embedder === 'minilm') await loadMinilm(msg.id);
      else if (msg.embedder === 'cage') await loadCage(msg.id, String(msg.method || CAGE_METHODS[0]));
      else if (msg.embedder === 'graph') await loadGraph(msg.id);
      else await loadEmbedder(msg.id);
      return;
    case 'search': {
      // the method's route, from its needs in the method table (the first row is the default)
      const method = String(msg.method || info.methods[0]?.name || '');
      // an LLM endpoint tiers the edges of every graph walk that takes tiers (the walk of a
      // graph method, or a CAGE method's first stage): the engine plans, the endpoint answers
      if (needsOf(method)?.llm && llm) {
        await searchWithLlm(msg, method);
        return;
      }
      try {
        post(resultsOf(msg, method, now())[0]);
      } catch (err) {
        postError('search', err, { id: msg.id });
      }
      return;
    }
    case 'graph-bench':
      try {
        post({ type: 'graph-bench', id: msg.id, figures: engine.graphBench(msg.queries.map(String), String(msg.method)) });
      } catch (err) {
        postError('graph-bench', err, { id: msg.id });
      }
      return;
    case 'passage-graph':
      try {
        post({ type: 'passage-graph', id: msg.id, passage: msg.passage, graph: engine.passageGraph(String(msg.passage)) });
      } catch (err) {
        postError('passage-graph', err, { id: msg.id });
      }
      return;
    case 'cage-graph':
      try {
        post({ type: 'cage-graph', id: msg.id, passage: msg.passage, graph: engine.cagePassageGraph(String(msg.passage)) });
      } catch (err) {
        postError('cage-graph', err, { id: msg.id });
      }
      return;
    case 'stats':
      try {
        post({ type: 'stats', stats: stats(), wasmMemoryBytes: wasmExports?.memory?.buffer?.byteLength ?? null, ...methodsInfo(), ...info });
      } catch (err) {
        postError('stats', err);
      }
      return;
    case 'save-index':
    case 'load-index':
    case 'load-index-url':
    case 'corpus-jsonl':
      await handleIndexFile(msg);
      return;
    case 'llm-config':
    case 'llm-test':
    case 'llm-answer':
    case 'llm-uses':
      await handleLlm(msg);
      return;
    default:
      post({ type: 'error', during: 'message', message: `unknown message type ${JSON.stringify(msg && msg.type)}` });
  }
}

// Messages are handled one at a time, in order, once the wasm module is ready.
let queue = init()
  .then((exports) => {
    setWasmExports(exports);
    setEngine(new Engine(ENGINE_CONFIG));
    setInfo({ methods: methods(), version: version() });
    setMETHOD_INFO(new Map(info.methods.map((m) => [m.name, m])));
    setCAGE_METHODS(info.methods.filter((m) => m.needs.cage).map((m) => m.name));
    post({ type: 'hello', stats: engine.stats(), ...methodsInfo(), ...info });
  })
  .catch((err) => {
    post({ type: 'error', during: 'init', message: `the search engine could not start: ${message(err)}` });
    throw err;
  });

self.onmessage = (event) => {
  if (event.data?.type === 'llm-cancel') {
    // not queued: it must reach the fetches of the search or graph build in progress
    setLlmOpenieCancel(true);
    llm?.cancel();
    return;
  }
  if (event.data?.type === 'cancel-embedder') {
    // not queued: it must reach a download that is waiting for the network
    embedderDownload?.abort();
    setMinilmCancel(true);
    if (llm) {
      // an LLM OpenIE graph build: stop asking (the rest keep their rule-based triples)
      setLlmOpenieCancel(true);
      llm.cancel();
    }
    return;
  }
  let early = null;
  if (event.data?.type === 'load-demo') {
    // download the demo while the wasm module compiles or earlier requests run
    early = loadDemo();
    early.catch(() => {}); // reported when its turn comes
  }
  queue = queue.then(
    () => handle(event.data, early).catch((err) => post({ type: 'error', during: event.data?.type, message: message(err) })),
    () => post({ type: 'error', during: event.data?.type, message: 'the search engine did not start' }),
  );
};
