// scripts/bench_all.mjs: the side-by-side figures and the wasm/native ratios, worked by hand.
//   node --test tests/scripts/
import test from 'node:test';
import assert from 'node:assert/strict';
import { compare } from '../../scripts/bench_all.mjs';

test('ratios are browser over native, indexing with parsing and without the graph build', () => {
  const native = {
    passages: 6119,
    parse_ms: 20, // the JSONL parsed into passages, as the page's addMs
    index_ms: 3380, // 3,000 of it the graph build: BM25 and the vectors 380, with parsing 400
    query_ms_p50: 5,
    query_ms_p95: 8,
    peak_rss_mb: 117.26,
    graph: {
      graph_build: { ms: 3000 },
      query: { graph_search_ms: { p50: 4 } },
      ppr: { configured: { ms: { p50: 2 } } },
      memory_mb: { a: 60.1, b: 2.2 },
    },
  };
  const browser = {
    passages: 6119,
    indexMs: 500,
    graphBuildMs: 4200,
    p50Ms: 7.5,
    p95Ms: 10,
    graphBench: { query: { graph_search_ms: { p50: 6 } }, ppr: { configured: { ms: { p50: 3.9 } } } },
    wasmMemoryStagesMB: { indexed: 41.9, graphBuilt: 94.3, searched: 94.3 },
    wasmMemoryMB: 110.9,
    rendererPeakMB: 302,
    rendererPeakSearchedMB: 281,
  };
  const c = compare(native, browser);
  assert.deepEqual(c.nativeMs, { indexing: 400, graphBuild: 3000, queryP50: 5, queryP95: 8, graphSearchP50: 4, pprP50: 2 });
  assert.deepEqual(c.wasmOverNative, {
    indexing: 1.25, // 500 / 400
    graphBuild: 1.4, // 4200 / 3000
    queryP50: 1.5,
    queryP95: 1.25,
    graphSearchP50: 1.5,
    pprP50: 1.95,
  });
  assert.deepEqual(c.browserMemoryMB, {
    wasmStages: { indexed: 41.9, graphBuilt: 94.3, searched: 94.3 },
    wasmAtEnd: 110.9,
    rendererPeak: 302,
    rendererPeakSearched: 281,
  });
  assert.deepEqual(c.nativeMemoryMB, { peakRss: 117.3, structures: 62.3 });
});

test('a method without a graph: no graph figures, no ratio for them, indexing whole', () => {
  const c = compare({ index_ms: 300, query_ms_p50: 0.5, query_ms_p95: 1 }, { indexMs: 450, p50Ms: 0.7, p95Ms: 1.2 });
  assert.equal(c.nativeMs.indexing, 300);
  assert.equal(c.wasmOverNative.indexing, 1.5);
  assert.equal(c.wasmOverNative.queryP50, 1.4);
  assert.equal(c.wasmOverNative.graphBuild, null);
  assert.equal(c.wasmOverNative.pprP50, null);
  assert.equal(c.nativeMemoryMB.structures, null);
});
