// The engine worker's loading code, one module with no engine state: fetching the site's own
// files with byte progress, and gzip. Kept apart so that other loaders of Cairn's files (a site's
// search widget) can share it.

const now = () => performance.now();

/**
 * Fetch `paths` (relative to this script, and on this origin only) as bytes, reporting progress
 * over all of them as `onProgress(received, total)`: bytes received of the sum of their
 * Content-Lengths (total 0 if one is unknown), at most every 50 ms and once at each end.
 * Rejects with what went wrong; `signal` aborts every fetch.
 */
export async function download(paths, signal, onProgress = () => {}) {
  const responses = await Promise.all(
    paths.map(async (p) => {
      const url = new URL(p, self.location.href);
      if (url.origin !== self.location.origin) throw new Error(`${p} is not on this site, so it is not fetched`);
      const resp = await fetch(url, { signal, mode: 'same-origin', credentials: 'same-origin' });
      if (!resp.ok) throw new Error(`could not download ${p} (${resp.status} ${resp.statusText})`);
      return resp;
    }),
  );
  const lengths = responses.map((r) => Number(r.headers.get('Content-Length')) || 0);
  const total = lengths.every((n) => n > 0) ? lengths.reduce((a, b) => a + b, 0) : 0;
  let received = 0;
  let lastPost = -Infinity;
  const report = (force) => {
    const t = now();
    if (force || t - lastPost >= 50) {
      lastPost = t;
      onProgress(received, total);
    }
  };
  report(true);
  const bodies = await Promise.all(
    responses.map(async (resp, i) => {
      if (!resp.body) {
        const all = new Uint8Array(await resp.arrayBuffer());
        received += all.length;
        report(false);
        return all;
      }
      const reader = resp.body.getReader();
      const chunks = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        size += value.length;
        received += value.length;
        report(false);
      }
      if (chunks.length === 1) return chunks[0];
      const all = new Uint8Array(lengths[i] === size ? lengths[i] : size);
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      return all;
    }),
  );
  report(true);
  return bodies;
}

/**

/** Whether `bytes` start with gzip's magic number. */
export function isGzip(bytes) {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** Inflate gzip bytes with the browser's DecompressionStream. */
export async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
