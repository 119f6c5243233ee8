// One run of the native and the browser benchmark on the same corpus and method, printed as one
// JSON object with the wasm/native time ratios (for indexing, the graph build, a whole query, the
// graph search and PPR) and the page's memory figures.
//
//   npm run bench:all [-- METHOD] [DATA_DIR]      defaults: catrag, ../shared/data/2wiki-corpus-6k
//
// Native: `cargo build --release --bin cairn`, then `cairn bench --data DIR --method METHOD`
// (thread CPU time for the query's parts, wall time for the whole query). Browser:
// `node tests/e2e/bench-browser.mjs METHOD DIR/corpus.jsonl` on the built page (`dist/`; build it
// with `npm run build` or `npm run build:wasm && npm run build:web`). Both take the corpus's
// passage titles as queries when the folder has no questions. The ratios are browser ÷ native:
// 1.0 is the native speed, and the goal is ≤ 1.5.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `b / a` rounded to two decimals, or null when either is missing or `a` is not positive. */
function ratio(b, a) {
  return Number.isFinite(a) && Number.isFinite(b) && a > 0 ? Math.round((b / a) * 100) / 100 : null;
}

const round1 = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);

/**
 * The figures both benchmarks report, side by side, and their ratios (browser ÷ native).
 * `native` is `cairn bench`'s JSON, `browser` the browser benchmark's. Indexing is parsing the
 * JSONL into passages, BM25 and the passage embedding: the native `parse_ms` plus `index_ms` less
 * its graph build (a `cairn bench` without `parse_ms` counts 0 for it), the page's `indexMs`
 * (its `addMs`, the worker's `addJsonl`, plus its build).
 */
export function compare(native, browser) {
  const ng = native.graph || {};
  const bg = browser.graphBench || {};
  const nativeBuild = ng.graph_build?.ms;
  const nativeMs = {
    indexing: round1(
      native.index_ms - (Number.isFinite(nativeBuild) ? nativeBuild : 0) + (Number.isFinite(native.parse_ms) ? native.parse_ms : 0),
    ),
    graphBuild: round1(nativeBuild),
    queryP50: round1(native.query_ms_p50),
    queryP95: round1(native.query_ms_p95),
    graphSearchP50: round1(ng.query?.graph_search_ms?.p50),
    pprP50: round1(ng.ppr?.configured?.ms?.p50),
  };
  const browserMs = {
    indexing: round1(browser.indexMs),
    graphBuild: round1(browser.graphBuildMs),
    queryP50: round1(browser.p50Ms),
    queryP95: round1(browser.p95Ms),
    graphSearchP50: round1(bg.query?.graph_search_ms?.p50),
    pprP50: round1(bg.ppr?.configured?.ms?.p50),
  };
  const wasmOverNative = Object.fromEntries(
    Object.keys(nativeMs).map((k) => [k, ratio(browserMs[k], nativeMs[k])]),
  );
  return {
    passages: { native: native.passages ?? null, browser: browser.passages ?? null },
    nativeMs,
    browserMs,
    wasmOverNative,
    browserMemoryMB: {
      wasmStages: browser.wasmMemoryStagesMB ?? null,
      wasmAtEnd: browser.wasmMemoryMB ?? null,
      rendererPeak: browser.rendererPeakMB ?? null,
      rendererPeakSearched: browser.rendererPeakSearchedMB ?? null,
    },
    nativeMemoryMB: {
      peakRss: round1(native.peak_rss_mb),
      structures: ng.memory_mb ? round1(Object.values(ng.memory_mb).reduce((a, b) => a + b, 0)) : null,
    },
  };
}

/** The last line of `text` that parses as a JSON object (cairn bench prints one). */
function lastJsonLine(text) {
  const lines = text.split('\n').filter((l) => l.startsWith('{'));
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    try {
      return JSON.parse(lines[i]);
    } catch {
      // a progress line that starts with a brace
    }
  }
  return null;
}

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
  return r.stdout;
}

async function main() {
  const args = process.argv.slice(2);
  const method = args.find((a) => /^[a-z0-9+-]+$/.test(a) && !a.includes('/')) || 'catrag';
  const data = path.resolve(args.find((a) => a.includes('/')) || path.join(root, '..', 'shared', 'data', '2wiki-corpus-6k'));
  const sharedData = path.resolve(root, '..', 'shared', 'data');
  const corpus = path.relative(sharedData, path.join(data, 'corpus.jsonl'));
  if (corpus.startsWith('..')) throw new Error(`${data} is not under ${sharedData}, which the browser benchmark serves`);

  console.error('bench-all: building the native CLI (cargo build --release --bin cairn)');
  run('cargo', ['build', '--release', '--bin', 'cairn'], { CAIRN_EMBED_WASM: process.env.CAIRN_EMBED_WASM ?? '0' });
  console.error(`bench-all: native cairn bench --data ${data} --method ${method}`);
  const native = lastJsonLine(run(path.join(root, 'target', 'release', 'cairn'), ['bench', '--data', data, '--method', method]));
  if (!native) throw new Error('cairn bench printed no JSON');
  console.error(`bench-all: browser ${method} on ${corpus}`);
  const out = run('node', [path.join(root, 'tests', 'e2e', 'bench-browser.mjs'), method, corpus]);
  const browser = JSON.parse(out.slice(out.indexOf('{')));
  console.log(JSON.stringify({ method, data, ...compare(native, browser), native, browser }, null, 2));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err) => {
    console.error(`bench-all: ${err.message}`);
    process.exit(1);
  });
}
