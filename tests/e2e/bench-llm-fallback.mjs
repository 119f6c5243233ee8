// Benchmark of the page's fallback when the LLM endpoint fails (not part of `node --test`; it
// measures, it asserts nothing): `npm run bench:llm-fallback [-- --dist DIR] [--deadline S]
// [--queries N] [--shot PNG]`.
//
// Starts the loopback fault server (tools/llm_fault_server.py) and, for each failing route
// (/timeout: hangs 30 s, /500, /nocors: no CORS headers), opens the built page in a fresh
// context (so a fresh worker and circuit breaker), sets the endpoint http://127.0.0.1:PORT/ROUTE
// with the deadline (default 2 s), chooses CatRAG and searches N (default 3) different demo
// questions one after another. Per query: the seconds from pressing Search until the ranked
// results are shown (measured in the page: the click and the results' data-search change),
// whether that is within deadline + 1 s, the fault server's calls for the route during the query
// (GET /calls; a CORS preflight that fails is never counted there), the page's request badge, and
// what the page says (tiers line, results line, error banner). Prints one JSON object on stdout.
// --shot saves a screenshot of the page after the first /timeout search.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { serve } from '../../scripts/serve.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROUTES = ['timeout', '500', 'nocors'];
const WAIT = 300_000;

function die(message) {
  console.error(`bench-llm-fallback: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const o = { dist: path.join(root, 'dist'), deadline: 2, queries: 3, shot: null };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--dist' && v) o.dist = path.resolve(v);
    else if (a === '--deadline' && v) o.deadline = Number(v);
    else if (a === '--queries' && v) o.queries = Number.parseInt(v, 10);
    else if (a === '--shot' && v) o.shot = path.resolve(v);
    else die(`usage: node tests/e2e/bench-llm-fallback.mjs [--dist DIR] [--deadline S] [--queries N] [--shot PNG], got ${JSON.stringify(a)}`);
    i += 1;
  }
  if (!(o.deadline > 0)) die('--deadline takes a positive number of seconds');
  if (!(o.queries > 0)) die('--queries takes a positive number');
  return o;
}

const opts = parseArgs(process.argv.slice(2));
if (!fs.existsSync(path.join(opts.dist, 'index.html'))) die(`${path.join(opts.dist, 'index.html')} is missing: build the page first (npm run build)`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/** Start the fault server; resolve with {url, proc} once it prints "ready URL". */
async function startFaultServer() {
  const port = await freePort();
  const proc = spawn('python3', [path.join(root, 'tools', 'llm_fault_server.py'), '--port', String(port), '--exit-with-parent'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ready (\S+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`llm_fault_server.py exited (${code}) before it was ready`)));
  });
  return { url, proc };
}

const round = (x, d = 3) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d);

/** Open the page in a new context and wait for the demo corpus. */
async function openPage(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => /^\d+ passages\b/.test(document.getElementById('status').textContent.trim()), null, { timeout: WAIT });
  await page.waitForFunction(() => [...document.getElementById('method').options].some((o) => o.value === 'catrag'), null, { timeout: WAIT });
  // page-side clock: the Search click (capture phase, before the page's own handler) and every
  // change of the shown results
  await page.evaluate(() => {
    window.__bench = { clicks: [], shown: [] };
    document.getElementById('search').addEventListener('click', () => window.__bench.clicks.push(performance.now()), true);
    new MutationObserver(() => {
      window.__bench.shown.push({ t: performance.now(), search: document.getElementById('results').dataset.search });
    }).observe(document.getElementById('results'), { attributes: true, attributeFilter: ['data-search'] });
  });
  await page.click('#llm-panel summary');
  return { context, page, pageErrors };
}

/** The demo questions (the page's own file), N of them. */
async function demoQuestions(baseUrl, n) {
  const text = await (await fetch(new URL('data/hotpotqa/questions.jsonl', baseUrl))).text();
  const qs = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).question)
    .filter((q) => typeof q === 'string');
  if (qs.length < n) die(`only ${qs.length} demo questions`);
  return qs.slice(0, n);
}

async function routeCalls(faultUrl, route) {
  const c = await (await fetch(`${faultUrl}/calls`)).json();
  return c[route] || 0;
}

async function pageSays(page) {
  return page.evaluate(() => {
    const text = (id) => {
      const e = document.getElementById(id);
      return e && !e.hidden ? e.textContent.trim() : null;
    };
    return {
      tiers: text('llm-tiers'),
      tiersKind: document.getElementById('llm-tiers').dataset.kind ?? null,
      resultsMeta: text('results-meta'),
      badge: text('llm-badge-text'),
      error: text('error') ? document.getElementById('error-message').textContent.trim() : null,
      llmResult: text('llm-result') || null,
      hits: document.querySelectorAll('#results .hit').length,
    };
  });
}

async function runRoute(browser, baseUrl, faultUrl, route, questions, shot) {
  const { context, page, pageErrors } = await openPage(browser, baseUrl);
  await page.fill('#llm-url', `${faultUrl}/${route}`);
  await page.fill('#llm-model', 'bench-fault');
  await page.fill('#llm-deadline', String(opts.deadline));
  await page.click('#llm-use');
  await page.waitForFunction(() => document.getElementById('llm-state').textContent.startsWith('on: bench-fault'), null, { timeout: WAIT });
  await page.selectOption('#method', 'catrag');
  const queries = [];
  for (const [i, question] of questions.entries()) {
    const prev = await page.getAttribute('#results', 'data-search');
    const callsBefore = await routeCalls(faultUrl, route);
    const badgeBefore = await page.$eval('#llm-badge', (b) => Number(b.dataset.requests || 0));
    await page.fill('#query', question);
    const wall0 = Date.now();
    await page.click('#search');
    await page.waitForFunction(
      ([p, q]) => {
        const d = document.getElementById('results').dataset;
        return d.search !== undefined && d.search !== p && d.query === q && d.method === 'catrag';
      },
      [prev ?? undefined, question],
      { timeout: WAIT },
    );
    const wallS = (Date.now() - wall0) / 1000;
    const times = await page.evaluate(() => {
      const b = window.__bench;
      const click = b.clicks[b.clicks.length - 1];
      const shown = b.shown[b.shown.length - 1];
      return { click, shown: shown.t };
    });
    const seconds = (times.shown - times.click) / 1000;
    const says = await pageSays(page);
    const callsAfter = await routeCalls(faultUrl, route);
    const badgeAfter = await page.$eval('#llm-badge', (b) => Number(b.dataset.requests || 0));
    queries.push({
      query: question,
      seconds: round(seconds),
      wallSeconds: round(wallS),
      withinDeadlinePlus1: seconds <= opts.deadline + 1,
      serverCalls: callsAfter - callsBefore,
      pageRequests: badgeAfter - badgeBefore,
      breakerMentioned: /circuit breaker/.test(says.tiers || ''),
      ...says,
    });
    if (shot && i === 0) {
      fs.mkdirSync(path.dirname(shot), { recursive: true });
      await page.screenshot({ path: shot, fullPage: true });
    }
  }
  await context.close();
  return {
    route: `/${route}`,
    serverCallsTotal: await routeCalls(faultUrl, route),
    queries,
    pageErrors,
  };
}

const { url: faultUrl, proc: faultProc } = await startFaultServer();
const server = await serve({ dir: opts.dist, port: 0 });
let browser;
let exitCode = 0;
try {
  browser = await launchChromium();
  const questions = await demoQuestions(server.url, opts.queries);
  await fetch(`${faultUrl}/reset`);
  const routes = [];
  for (const route of ROUTES) {
    console.error(`bench-llm-fallback: /${route} (deadline ${opts.deadline} s, ${questions.length} queries)`);
    routes.push(await runRoute(browser, server.url, faultUrl, route, questions, route === 'timeout' ? opts.shot : null));
  }
  const out = {
    dist: opts.dist,
    deadlineS: opts.deadline,
    queriesPerRoute: questions.length,
    chromium: browser.version(),
    routes,
    summary: Object.fromEntries(
      routes.map((r) => [
        r.route,
        {
          seconds: r.queries.map((q) => q.seconds),
          allWithinDeadlinePlus1: r.queries.every((q) => q.withinDeadlinePlus1),
          serverCalls: r.queries.map((q) => q.serverCalls),
          pageRequests: r.queries.map((q) => q.pageRequests),
          breakerMentioned: r.queries.map((q) => q.breakerMentioned),
        },
      ]),
    ),
  };
  console.log(JSON.stringify(out, null, 2));
} catch (err) {
  console.error(`bench-llm-fallback: ${err.stack || err}`);
  exitCode = 1;
} finally {
  await browser?.close();
  await server.close();
  faultProc.kill();
}
process.exit(exitCode);
