#!/usr/bin/env node
// Serve Cairn's built page (dist/) on this machine only (127.0.0.1).
//
//   node scripts/serve.mjs [--port 8080] [--dir dist] [--mount /shared-data=../shared/data]...
//
// --port 0 takes any free port. Relative --dir and --mount folders are taken from the current
// directory; the default --dir is the repository's dist/. Prints
// "Cairn is running at http://127.0.0.1:PORT/" once listening; Ctrl-C stops it.
//
// As a module (for tests and benchmarks):
//   import { serve } from './scripts/serve.mjs';
//   const { url, close } = await serve({ dir, port: 0, mounts: { '/shared-data': '/abs/dir' } });
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HOST = '127.0.0.1';
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_DIR = path.join(repoRoot, 'dist');

/** `mounts` as [[prefix, absolute dir]], longest prefix first. Accepts an object or pairs. */
function normalizeMounts(mounts) {
  const pairs = Array.isArray(mounts) ? mounts : Object.entries(mounts || {});
  return pairs
    .map(([prefix, dir]) => {
      let p = `/${String(prefix).replace(/^\/+|\/+$/g, '')}`;
      if (p === '/') throw new Error(`mount prefix ${JSON.stringify(prefix)} must name a path such as /shared-data`);
      const abs = path.resolve(String(dir));
      if (!fs.existsSync(abs) || !fs.statSync(abs).isDirectory()) {
        throw new Error(`mount ${p}: ${abs} is not a folder`);
      }
      return [p, abs];
    })
    .sort((a, b) => b[0].length - a[0].length);
}

function handlerFor(sirv, dir, gzip = false) {
  return sirv(dir, {
    gzip, // serve FILE.gz for FILE when the browser accepts gzip (as a compressing host would)
    dev: true, // look files up on each request, so a rebuild is served without a restart
    etag: true,
    dotfiles: false,
    setHeaders(res, pathname) {
      if (pathname.endsWith('.wasm')) res.setHeader('Content-Type', 'application/wasm');
      else if (pathname.endsWith('.jsonl')) res.setHeader('Content-Type', 'application/jsonl; charset=utf-8');
      else if (pathname.endsWith('.md')) res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
      res.setHeader('X-Content-Type-Options', 'nosniff');
    },
  });
}

function notFound(res, pathname) {
  res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`404: ${pathname} is not here\n`);
}

/**
 * Start the server (`gzip`: a request for FILE that accepts gzip gets FILE.gz when it exists,
 * `Content-Encoding: gzip`). Resolves once it listens with `{url, port, server, close()}`; `close()`
 * resolves when every connection is closed.
 */
export async function serve({ dir = DEFAULT_DIR, port = 0, mounts = {}, gzip = false } = {}) {
  const root = path.resolve(dir);
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    throw new Error(`${root} has no index.html: build the page first (npm run build)`);
  }
  // sirv is an npm package: imported here, not at the top, so that `npm start` can read its
  // options (parseArgs) before its set-up step has installed the packages.
  const { default: sirv } = await import('sirv');
  const mounted = normalizeMounts(mounts).map(([prefix, abs]) => [prefix, handlerFor(sirv, abs, gzip)]);
  const main = handlerFor(sirv, root, gzip);

  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' });
      res.end();
      return;
    }
    const pathname = (req.url || '/').split('?')[0];
    for (const [prefix, handler] of mounted) {
      if (pathname === prefix || pathname.startsWith(`${prefix}/`)) {
        req.url = req.url.slice(prefix.length) || '/';
        handler(req, res, () => notFound(res, pathname));
        return;
      }
    }
    main(req, res, () => notFound(res, pathname));
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = server.address().port;
  const url = `http://${HOST}:${actualPort}/`;
  return {
    url,
    port: actualPort,
    server,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function usage(message) {
  if (message) console.error(`serve.mjs: ${message}`);
  const text = 'usage: node scripts/serve.mjs [--port 8080] [--dir dist] [--mount /prefix=folder]...';
  if (message) console.error(text);
  else console.log(text);
  process.exit(message ? 2 : 0);
}

/** The command line's options: `{port, dir, mounts}` (exits with the usage on a bad argument). */
export function parseArgs(argv) {
  const opts = { port: 8080, dir: DEFAULT_DIR, mounts: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => {
      if (inline !== undefined) return inline;
      i += 1;
      if (i >= argv.length) usage(`${flag} needs a value`);
      return argv[i];
    };
    switch (flag) {
      case '--port': {
        const p = Number(value());
        if (!Number.isInteger(p) || p < 0 || p > 65535) usage('--port must be a number from 0 to 65535');
        opts.port = p;
        break;
      }
      case '--dir':
        opts.dir = path.resolve(value());
        break;
      case '--mount': {
        const spec = value();
        const eq = spec.indexOf('=');
        if (eq <= 0) usage(`--mount takes /prefix=folder, got ${JSON.stringify(spec)}`);
        opts.mounts.push([spec.slice(0, eq), path.resolve(spec.slice(eq + 1))]);
        break;
      }
      case '-h':
      case '--help':
        usage();
        break;
      default:
        usage(`unknown argument ${JSON.stringify(argv[i])}`);
    }
  }
  return opts;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
  const opts = parseArgs(process.argv.slice(2));
  try {
    const { url, close } = await serve(opts);
    console.log(`Cairn is running at ${url}`);
    const stop = () => close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (err) {
    console.error(`serve.mjs: ${err.message}`);
    process.exit(1);
  }
}
