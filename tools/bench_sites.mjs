#!/usr/bin/env node
// Static-site search on two real documentation sites, Cairn against Pagefind, in one run:
//
//   sudo bash scripts/install_bench_sites.sh        # python3-doc and rust-doc from Debian
//   npm run bench:site -- [--sites python,rust] [--engines pagefind,bm25,catrag] [--runs 3]
//                         [--cairn target/release/cairn] [--pkg pkg/] [--work /tmp/cairn-bench-sites]
//                         [--json FILE] [--reuse] [--limit N] [--index-arg=--selector=div.body]...
//
// For each site (SITES below) and engine it
// 1. indexes the site under `/usr/bin/time -v`: `cairn index SITE --out OUT` (bm25) and
//    `cairn index SITE --out OUT --graph --method catrag` (catrag), each with `--pkg` when given and
//    the `--index-arg`s; and Pagefind's own binary (the npm package `pagefind`, a development
//    dependency) `pagefind --site SITE --output-path OUT`. Reports wall time, peak resident memory,
//    the output's bytes raw and gzipped (-9, each file; a file that does not shrink counts raw)
//    and its number of files. `--reuse` keeps an output folder that is already there (no timing).
// 2. serves the site at `/` and the output at `/cairn/` or `/pagefind/` from a plain static server
//    (scripts/serve.mjs, no compression), and in headless Chromium, per run in a fresh context
//    (cold cache): opens a blank page of the site, types the first query and times the first result
//    from navigation start, with the bytes of every response that had finished by then (bodies as
//    sent; the page's own HTML not counted). Cairn: the drop-in widget (`data-k="10"`); a graph
//    method's first list is BM25's, then its own (`method_ms`, `method_bytes`). Pagefind: its
//    JavaScript API (`pagefind.search`, then `data()` of the first 10 results, what a results list
//    shows). The first run then asks every query in turn (Enter, no typing delay) and times each
//    from the key to its list on screen, with the bytes fetched meanwhile.
// 3. scores the lists against the gold pages (tools/bench_sites/<site>.queries.jsonl, written before
//    either engine ran; tools/bench_sites/score.mjs): success@1, success@5, MRR@10, overall and by
//    kind of query.
// Prints one Markdown table for every site and engine, and writes every figure and every query's
// list to `--json` (default WORK/result.json).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../tests/e2e/chromium.mjs';
import { serve } from '../scripts/serve.mjs';
import { firstGoldRank, metrics, percentile, pagePath } from './bench_sites/score.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The sites. `root`: the installed site; `include`: when set, only these top-level folders (and
 * the root's own files: styles, fonts, index.html) make the benchmark's copy of the site, hard
 * links in WORK/sites/NAME.
 */
export const SITES = {
  python: {
    package: 'python3-doc',
    root: '/usr/share/doc/python3.11/html',
  },
  rust: {
    package: 'rust-doc',
    root: '/usr/share/doc/rust-doc/html',
    // The standard library (std, alloc, core with core::arch's x86_64 intrinsics but not its
    // other twelve platforms' 12,000 pages, most of them the same intrinsics again), the books
    // and the reference; not the sources (src/) nor the compiler's unstable book. About 9,000
    // pages that are not redirects: over ten times python3-doc's 530.
    include: [
      'std', 'alloc', 'core', 'proc_macro', 'test', 'book', 'reference', 'nomicon', 'rust-by-example',
      'edition-guide', 'rustc', 'rustdoc', 'embedded-book',
    ],
    exclude: ['aarch64', 'arm', 'mips', 'mips64', 'nvptx', 'powerpc', 'powerpc64', 'riscv32', 'riscv64', 'wasm', 'wasm32', 'wasm64', 'x86']
      .map((a) => `core/arch/${a}`),
  },
};

const ENGINES = ['pagefind', 'bm25', 'catrag'];

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sites = opt('sites', 'python,rust').split(',').filter(Boolean);
const engines = opt('engines', ENGINES.join(',')).split(',').filter(Boolean);
const runs = Number(opt('runs', 3));
const limit = Number(opt('limit', 0));
const work = path.resolve(opt('work', path.join(os.tmpdir(), 'cairn-bench-sites')));
const cairnBin = path.resolve(opt('cairn', path.join(repo, 'target/release/cairn')));
const pkg = opt('pkg', '');
const jsonOut = path.resolve(opt('json', path.join(work, 'result.json')));
const reuse = args.includes('--reuse');
const indexArgs = args.filter((a) => a.startsWith('--index-arg=')).map((a) => a.slice('--index-arg='.length));
for (const s of sites) if (!SITES[s]) throw new Error(`unknown site ${s} (${Object.keys(SITES).join(', ')})`);
for (const e of engines) if (!ENGINES.includes(e)) throw new Error(`unknown engine ${e} (${ENGINES.join(', ')})`);

/** Pagefind's platform binary from node_modules (null when not installed). */
function pagefindBinary() {
  for (const p of [`@pagefind/${process.platform}-${process.arch}/bin/pagefind`, `@pagefind/${process.platform}-${process.arch}/bin/pagefind_extended`]) {
    const f = path.join(repo, 'node_modules', p);
    if (fs.existsSync(f)) return f;
  }
  return null;
}

/** The site's folder as the engines read it (a hard-linked subset for `include`). */
function siteDir(name) {
  const s = SITES[name];
  if (!fs.existsSync(s.root)) {
    throw new Error(`${s.root} is missing: install the sites with  sudo bash scripts/install_bench_sites.sh`);
  }
  if (!s.include) return s.root;
  const dir = path.join(work, 'sites', name);
  const stamp = path.join(dir, '.bench-site');
  const want = JSON.stringify({ include: s.include, exclude: s.exclude || [] });
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const e of fs.readdirSync(s.root, { withFileTypes: true })) {
    if (e.isFile()) linkTree(path.join(s.root, e.name), path.join(dir, e.name));
  }
  for (const sub of s.include) linkTree(path.join(s.root, sub), path.join(dir, sub), (s.exclude || []).map((x) => path.join(s.root, x)));
  fs.writeFileSync(stamp, want);
  return dir;
}

/** Hard links (copies across file systems) of `src` at `dst`, leaving out the paths in `skip`. */
function linkTree(src, dst, skip = []) {
  if (skip.includes(src)) return;
  const st = fs.statSync(src);
  if (st.isDirectory()) {
    fs.mkdirSync(dst, { recursive: true });
    for (const e of fs.readdirSync(src)) linkTree(path.join(src, e), path.join(dst, e), skip);
  } else if (st.isFile()) {
    try {
      fs.linkSync(src, dst);
    } catch {
      fs.copyFileSync(src, dst);
    }
  }
}

/** Run `cmd` under /usr/bin/time -v: wall seconds, peak resident MiB, its stdout. */
function timed(cmd, argv, log) {
  const r = spawnSync('/usr/bin/time', ['-v', cmd, ...argv], { encoding: 'utf8', maxBuffer: 1 << 28 });
  fs.writeFileSync(log, `$ ${cmd} ${argv.join(' ')}\n${r.stdout}\n${r.stderr}`);
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (exit ${r.status}); see ${log}`);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
  if (!wall || !rss) throw new Error(`no /usr/bin/time -v figures in ${log}`);
  return {
    index_s: Number(wall[1] || 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]),
    peak_mib: Number(rss[1]) / 1024,
    stdout: r.stdout,
  };
}

/** Bytes, gzipped bytes and files of a folder (every file). */
function folderSize(dir) {
  let bytes = 0;
  let gz = 0;
  let files = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.isFile()) {
        const data = fs.readFileSync(f);
        files += 1;
        bytes += data.length;
        gz += Math.min(data.length, zlib.gzipSync(data, { level: 9 }).length);
      }
    }
  };
  walk(dir);
  return { out_bytes: bytes, out_gz_bytes: gz, out_files: files };
}

/** Index `site` with `engine` into WORK/out/SITE/ENGINE: time, memory, output size. */
function index(siteName, site, engine) {
  const out = path.join(work, 'out', siteName, engine);
  const log = path.join(work, 'out', siteName, `${engine}.log`);
  const result = { out };
  if (reuse && fs.existsSync(out)) {
    result.reused = true;
  } else {
    fs.rmSync(out, { recursive: true, force: true });
    fs.mkdirSync(out, { recursive: true });
    let t;
    if (engine === 'pagefind') {
      const bin = pagefindBinary();
      if (!bin) return null;
      t = timed(bin, ['--site', site, '--output-path', out], log);
      result.version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
    } else {
      if (!fs.existsSync(cairnBin)) throw new Error(`${cairnBin} is missing: cargo build --release`);
      const argv = ['index', site, '--out', out, ...(pkg ? ['--pkg', path.resolve(pkg)] : []), ...indexArgs];
      if (engine === 'catrag') argv.push('--graph', '--method', 'catrag');
      t = timed(cairnBin, argv, log);
      const report = JSON.parse(t.stdout.trim().split('\n').pop());
      result.pages = report.pages;
      result.passages = report.passages;
      result.text_bytes = report.text_bytes;
    }
    result.index_s = t.index_s;
    result.peak_mib = t.peak_mib;
  }
  Object.assign(result, folderSize(out));
  return result;
}

/** The queries of a site (tools/bench_sites/NAME.queries.jsonl). */
function queries(name) {
  const file = path.join(repo, 'tools/bench_sites', `${name}.queries.jsonl`);
  const qs = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  return limit ? qs.slice(0, limit) : qs;
}

const PAGE = (body) => `<!doctype html><html><head><meta charset="utf-8"><title>bench</title>
<script>
performance.setResourceTimingBufferSize(1e6);
window.__longTasks = [];
try {
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push([e.startTime, e.duration]); })
    .observe({ type: 'longtask', buffered: true });
} catch {}
</script></head><body>${body}</body></html>\n`;

/** In the page: ask the Cairn widget `q` and resolve when `want`'s list for it is on screen. */
async function cairnAsk({ q, want, timeoutMs }) {
  const root = document.querySelector('#cairn-search');
  const input = root.querySelector('input');
  delete root.dataset.shown;
  const t0 = performance.now();
  const seen = {};
  const done = new Promise((resolve) => {
    const check = () => {
      const d = root.dataset;
      if (d.query !== undefined && d.query !== q.trim()) return false;
      if (d.shown && seen[d.shown] === undefined) {
        seen[d.shown] = { at: performance.now(), count: root.querySelectorAll('li .cairn-title').length };
      }
      if (d.shown === want || (d.error && d.shown)) {
        resolve();
        return true;
      }
      return false;
    };
    if (check()) return;
    const mo = new MutationObserver(() => {
      if (check()) mo.disconnect();
    });
    mo.observe(root, { attributes: true, childList: true, subtree: true });
    setTimeout(() => {
      mo.disconnect();
      resolve();
    }, timeoutMs);
  });
  input.focus();
  input.value = q;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
  await done;
  const links = [...root.querySelectorAll('li .cairn-title')].map((a) => a.dataset.id || a.getAttribute('href'));
  const firstShown = Object.entries(seen).sort((a, b) => a[1].at - b[1].at)[0];
  return {
    t0,
    t0Epoch: performance.timeOrigin + t0,
    firstAt: firstShown ? firstShown[1].at : null,
    firstMethod: firstShown ? firstShown[0] : null,
    firstCount: firstShown ? firstShown[1].count : 0,
    methodAt: seen[want] ? seen[want].at : null,
    endEpoch: performance.timeOrigin + performance.now(),
    shown: root.dataset.shown || null,
    error: root.dataset.error || null,
    links,
  };
}

/** In the page: Pagefind's search for `q`, the first 10 results' data loaded. */
async function pagefindAsk({ q }) {
  const t0 = performance.now();
  if (!window.__pagefind) window.__pagefind = await import('/pagefind/pagefind.js');
  const r = await window.__pagefind.search(q);
  const data = await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
  const at = performance.now();
  return {
    t0,
    t0Epoch: performance.timeOrigin + t0,
    firstAt: at,
    firstMethod: 'pagefind',
    firstCount: data.length,
    methodAt: at,
    endEpoch: performance.timeOrigin + at,
    total: r.results.length,
    links: data.map((d) => d.url),
  };
}

/** Time, bytes and lists for one engine on one site (header comment, step 2). */
async function browse(browser, server, engine, qs) {
  const ask = engine === 'pagefind' ? pagefindAsk : cairnAsk;
  const want = engine;
  const page0 = engine === 'pagefind' ? '/__bench__/pagefind.html' : `/__bench__/${engine}.html`;
  const cold = [];
  let sweep = null;
  for (let r = 0; r < runs; r++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    // every response: its body bytes and when it finished (epoch ms)
    const responses = [];
    page.on('requestfinished', async (req) => {
      try {
        const timing = req.timing();
        const sizes = await req.sizes();
        const p = new URL(req.url()).pathname;
        responses.push({ path: p, bytes: sizes.responseBodySize, end: timing.startTime + timing.responseEnd });
      } catch {
        // a request of a closed page
      }
    });
    await page.goto(new URL(page0, server.url).href, { waitUntil: 'load' });
    const first = await page.evaluate(ask, { q: qs[0].q, want, timeoutMs: 600_000 });
    if (first.error && engine !== 'pagefind' && !first.shown) throw new Error(`${engine}: ${first.error}`);
    const origin = await page.evaluate(() => performance.timeOrigin);
    const sumTo = (epoch) => responses.filter((x) => x.end <= epoch + 1 && !x.path.startsWith('/__bench__/')).reduce((a, x) => a + x.bytes, 0);
    await page.waitForTimeout(300); // the last responses' events
    const one = {
      first_ms: first.firstAt,
      first_method: first.firstMethod,
      first_bytes: sumTo(origin + first.firstAt),
      method_ms: first.methodAt,
      method_bytes: first.methodAt === null ? null : sumTo(origin + first.methodAt),
      first_count: first.firstCount,
      error: first.error || null,
    };
    if (r === 0) {
      const lists = [{ q: qs[0].q, links: first.links, ms: null, bytes: null, total: first.total }];
      for (const query of qs.slice(1)) {
        const a = await page.evaluate(ask, { q: query.q, want, timeoutMs: 120_000 });
        lists.push({ q: query.q, links: a.links, ms: (a.methodAt ?? a.firstAt) - a.t0, t0Epoch: a.t0Epoch, endEpoch: a.endEpoch, total: a.total });
      }
      await page.waitForTimeout(500);
      for (const l of lists.slice(1)) {
        l.bytes = responses.filter((x) => x.end >= l.t0Epoch - 1 && x.end <= l.endEpoch + 1).reduce((a, x) => a + x.bytes, 0);
        delete l.t0Epoch;
        delete l.endEpoch;
      }
      one.long_tasks = await page.evaluate(() => window.__longTasks);
      sweep = lists;
    }
    cold.push(one);
    await context.close();
  }
  return { cold, sweep };
}

/** The figures of one engine on one site from its runs and lists. */
function summarise(idx, b, qs) {
  const later = b.sweep.slice(1);
  const ranks = b.sweep.map((l, i) => firstGoldRank(l.links, qs[i].gold));
  const byKind = {};
  for (const [i, q] of qs.entries()) (byKind[q.kind] ||= []).push(ranks[i]);
  const range = (key) => {
    const v = b.cold.map((c) => c[key]).filter((x) => x !== null && x !== undefined);
    return v.length ? [Math.min(...v), Math.max(...v)] : null;
  };
  const longest = Math.max(0, ...(b.sweep && b.cold[0].long_tasks ? b.cold[0].long_tasks.map((t) => t[1]) : [0]));
  return {
    ...idx,
    first_ms: range('first_ms'),
    first_bytes: range('first_bytes'),
    method_ms: range('method_ms'),
    method_bytes: range('method_bytes'),
    first_method: b.cold[0].first_method,
    load_error: b.cold[0].error,
    longest_task_ms: longest,
    later_bytes_mean: later.reduce((a, l) => a + l.bytes, 0) / Math.max(1, later.length),
    later_bytes_p95: percentile(later.map((l) => l.bytes), 95),
    later_p50_ms: percentile(later.map((l) => l.ms), 50),
    later_p95_ms: percentile(later.map((l) => l.ms), 95),
    ...metrics(ranks),
    by_kind: Object.fromEntries(Object.entries(byKind).map(([k, r]) => [k, metrics(r)])),
    per_query: b.sweep.map((l, i) => ({ q: l.q, kind: qs[i].kind, rank: ranks[i], ms: l.ms, bytes: l.bytes, top: l.links.slice(0, 5).map((x) => pagePath(x) ?? x) })),
  };
}

const fmtB = (n) => (n === null || n === undefined ? '–' : n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : `${(n / 1e3).toFixed(0)} KB`);
const fmtR = (r, f) => (!r ? '–' : r[0] === r[1] ? f(r[0]) : `${f(r[0])}–${f(r[1])}`);
const ms = (x) => `${Math.round(x)} ms`;
const sec = (x) => `${(x / 1000).toFixed(2)} s`;

function table(result) {
  const cols = [];
  for (const [s, r] of Object.entries(result.sites)) {
    for (const e of engines) if (r.engines[e]) cols.push([`${s} ${e === 'pagefind' ? `Pagefind` : `Cairn ${e}`}`, r.engines[e], r]);
  }
  const rows = [
    ['pages / passages', (x, r) => `${r.pages ?? '–'} / ${x.passages ?? '–'}`],
    ['index wall time', (x) => (x.index_s === undefined ? '(reused)' : `${x.index_s.toFixed(1)} s`)],
    ['peak memory while indexing', (x) => (x.peak_mib === undefined ? '–' : `${x.peak_mib.toFixed(0)} MiB`)],
    ['output raw / gzipped, files', (x) => `${fmtB(x.out_bytes)} / ${fmtB(x.out_gz_bytes)}, ${x.out_files}`],
    ['bytes before the first result', (x) => fmtR(x.first_bytes, fmtB)],
    ['first result after', (x) => `${fmtR(x.first_ms, sec)}${x.first_method && x.first_method !== 'pagefind' ? ` (${x.first_method})` : ''}`],
    ['the method\'s own first result: bytes, time', (x, r, e) => (e === 'catrag' ? `${fmtR(x.method_bytes, fmtB)}, ${fmtR(x.method_ms, sec)}` : '=')],
    ['longest main-thread task (first run)', (x) => ms(x.longest_task_ms)],
    ['bytes per later query: mean (p95)', (x) => `${fmtB(x.later_bytes_mean)} (${fmtB(x.later_bytes_p95)})`],
    ['later query p50 / p95', (x) => `${Math.round(x.later_p50_ms)} / ${Math.round(x.later_p95_ms)} ms`],
    [`success@1 / @5 / MRR@10`, (x) => `${x.s1.toFixed(2)} / ${x.s5.toFixed(2)} / ${x.mrr10.toFixed(2)} (${x.n} q)`],
  ];
  const kinds = [...new Set(Object.values(result.sites).flatMap((r) => Object.values(r.engines).flatMap((x) => Object.keys(x.by_kind))))];
  for (const k of kinds) rows.push([`success@5, ${k}`, (x) => (x.by_kind[k] ? `${x.by_kind[k].s5.toFixed(2)} (${x.by_kind[k].n})` : '–')]);
  const lines = [`| | ${cols.map((c) => c[0]).join(' | ')} |`, `|---|${cols.map(() => '---').join('|')}|`];
  for (const [name, f] of rows) {
    lines.push(`| ${name} | ${cols.map(([label, x, r]) => f(x, r, label.split(' ').pop())).join(' | ')} |`);
  }
  return lines.join('\n');
}

async function main() {
  fs.mkdirSync(work, { recursive: true });
  const benchDir = path.join(work, '__bench__');
  fs.mkdirSync(benchDir, { recursive: true });
  fs.writeFileSync(path.join(benchDir, 'pagefind.html'), PAGE(''));
  for (const e of ['bm25', 'catrag']) {
    fs.writeFileSync(
      path.join(benchDir, `${e}.html`),
      PAGE(`<div id="cairn-search" data-method="${e}" data-k="10" data-load="auto"></div>\n<script type="module" src="/cairn/cairn-search.js"></script>`),
    );
  }
  const result = { date: new Date().toISOString(), cairn: cairnBin, pkg: pkg || 'embedded', index_args: indexArgs, runs, sites: {} };
  const browser = await launchChromium();
  try {
    for (const s of sites) {
      const site = siteDir(s);
      const qs = queries(s);
      const r = { root: site, package: SITES[s].package, queries: qs.length, engines: {} };
      result.sites[s] = r;
      for (const e of engines) {
        console.error(`[bench:site] ${s}: indexing with ${e}…`);
        const idx = index(s, site, e);
        if (!idx) {
          console.error(`[bench:site] ${s}: ${e} is not installed (npm install): left out`);
          continue;
        }
        if (idx.pages !== undefined) r.pages = idx.pages;
        const server = await serve({ dir: site, port: 0, mounts: { [e === 'pagefind' ? '/pagefind' : '/cairn']: idx.out, '/__bench__': benchDir } });
        try {
          console.error(`[bench:site] ${s}: ${e}: ${qs.length} queries in Chromium…`);
          r.engines[e] = summarise(idx, await browse(browser, server, e, qs), qs);
        } finally {
          await server.close();
        }
        fs.writeFileSync(jsonOut, `${JSON.stringify(result, null, 1)}\n`);
      }
    }
  } finally {
    await browser.close();
  }
  fs.writeFileSync(jsonOut, `${JSON.stringify(result, null, 1)}\n`);
  console.log(table(result));
  console.log(`\n(every figure and every query's top 5: ${jsonOut})`);
}

await main();
