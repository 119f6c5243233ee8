// Cairn's static-site fetch helpers, written next to the index by `cairn index`: shared by the
// loader (cairn-loader.js, the full engine) and the widget's worker (cairn-worker.js, which
// answers keyword searches with the small keyword reader before, or without, the engine).
// Nothing here touches the DOM, and nothing is sent anywhere.

export const here = new URL('.', import.meta.url);

/**
 * The response at `url` (of `started`, a `fetch(url)` begun already, when given), or an error that
 * names the file (HTTP status or network failure).
 */
export async function fetchOk(url, started) {
  let resp;
  try {
    resp = await (started || fetch(url));
  } catch (err) {
    throw new Error(`${url} could not be downloaded (${err.message})`);
  }
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}${resp.status === 404 ? ' (not found: was "cairn index --out" run into this folder?)' : ''}`);
  return resp;
}

/** The bytes at `url`, inflated when they are gzip (the index is shipped as `index.cairn.gz`). */
export async function fetchIndexBytes(url) {
  const bytes = new Uint8Array(await (await fetchOk(url)).arrayBuffer());
  if (!isGzip(bytes)) return bytes;
  try {
    return await gunzip(bytes);
  } catch (err) {
    throw new Error(`${url}: the gzip data is truncated or damaged`);
  }
}

/** Whether `bytes` start with gzip's magic number (a server may already have inflated them). */
export function isGzip(bytes) {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Inflate gzip bytes with the browser's DecompressionStream. */
export async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The wasm module named `name` (default: the manifest's `wasm`, else `cairn_bg.wasm`), for a
 * wasm-bindgen `init`: a file stored gzip-compressed (`.gz`) is inflated as it streams in and
 * handed over as an `application/wasm` response, so that the browser compiles it while it
 * arrives. A server that inflated it already (Content-Encoding) hands over the plain module,
 * which is used as it is.
 */
export async function wasmSource(manifest, base, name = typeof manifest.wasm === 'string' ? manifest.wasm : 'cairn_bg.wasm') {
  const url = new URL(name, base);
  if (!name.endsWith('.gz')) return url;
  const bytes = new Uint8Array(await (await fetchOk(url)).arrayBuffer());
  let body = bytes;
  if (isGzip(bytes)) {
    try {
      body = await gunzip(bytes);
    } catch {
      throw new Error(`${url}: the gzip data is truncated or damaged`);
    }
  }
  return new Response(body, { headers: { 'Content-Type': 'application/wasm' } });
}

/**
 * The parsed `base`/manifest.json, or an error that names it (HTTP status, network failure, not
 * JSON). `started`: its `fetch` begun already (the worker begins it while the loader loads).
 */
export async function fetchManifest(base = here, started) {
  const manifestUrl = new URL('manifest.json', base);
  try {
    return await (await fetchOk(manifestUrl, started)).json();
  } catch (err) {
    throw err instanceof SyntaxError ? new Error(`${manifestUrl} is not JSON (${err.message})`) : err;
  }
}

/**
 * The bytes still to download before `method` can run, from the manifest's `sizes` (file name →
 * bytes as stored): the embedder's table and vocabulary, the extras and, for a graph, the text
 * pipeline. 0 for `bm25`; `null` when the manifest does not list the sizes (an older `cairn
 * index`).
 */
export function methodCost(manifest, method) {
  if (!method || method === 'bm25') return 0;
  const files = [];
  if (manifest.embedder) files.push(manifest.embedder.table, manifest.embedder.vocab);
  if (typeof manifest.extras === 'string') files.push(manifest.extras);
  if (Array.isArray(manifest.text_pipeline)) files.push(...manifest.text_pipeline);
  const sizes = manifest.sizes;
  if (!sizes || files.some((f) => typeof sizes[f] !== 'number')) return null;
  return files.reduce((sum, f) => sum + sizes[f], 0);
}
