// Share links (`#corpus=`: the corpus itself, compressed, in the URL fragment) and the start
// from the page's URL (`?index=URL`, `#corpus=…` or the demo corpus).
import { el } from './dom.js';
import { workerRequest } from './channel.js';
import { requestIndex, startWorker } from './engine.js';
import { fmt } from './format.js';
import { hideError, showError, showNotice } from './notices.js';

// Share links: `#corpus=` + the corpus as JSONL, deflate-raw compressed (CompressionStream) and
// base64url-encoded, in the URL fragment, which the browser never sends to a server;
// `?index=URL` opens a static index file (same origin, or CORS).

// Longer links break in some chat apps and mail clients; bigger corpora: export a file.
export const SHARE_MAX_CHARS = 60_000;

export function toBase64Url(bytesIn) {
  let bin = '';
  for (let i = 0; i < bytesIn.length; i += 0x8000) bin += String.fromCharCode(...bytesIn.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export async function pipeBytes(data, transform) {
  const stream = new Blob([data]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function makeShareLink() {
  hideError();
  try {
    const { text } = await workerRequest({ type: 'corpus-jsonl' });
    const packed = toBase64Url(await pipeBytes(new TextEncoder().encode(text), new CompressionStream('deflate-raw')));
    const url = `${location.origin}${location.pathname}#corpus=${packed}`;
    if (url.length > SHARE_MAX_CHARS) {
      showError(`This corpus is too large for a link (${fmt(url.length)} characters; at most ${fmt(SHARE_MAX_CHARS)}). Export the index file instead, put it on a web server and share ${location.origin}${location.pathname}?index=<its URL>.`);
      return;
    }
    el.shareUrl.value = url;
    el.shareUrl.hidden = false;
    el.shareUrl.select();
    navigator.clipboard?.writeText(url).then(
      () => showNotice('Share link copied. It holds the corpus itself: nothing is uploaded.'),
      () => showNotice('Share link ready below. It holds the corpus itself: nothing is uploaded.'),
    );
  } catch (err) {
    showError(`The share link could not be made: ${err.message}`);
  }
}

/** Start the worker with what the URL asks for: `?index=URL`, `#corpus=…`, or the demo corpus. */
export function startFromLocation() {
  const indexUrl = new URLSearchParams(location.search).get('index');
  const shared = location.hash.startsWith('#corpus=') ? location.hash.slice('#corpus='.length) : null;
  if (!indexUrl && !shared) {
    startWorker({ loadDemo: true });
    return;
  }
  startWorker({ loadDemo: false });
  if (indexUrl) {
    const last = indexUrl.split(/[?#]/)[0].split('/').pop();
    let name = last || 'shared index';
    try {
      name = decodeURIComponent(name);
    } catch {
      // a name with a stray '%' is shown as it is
    }
    requestIndex({ type: 'load-index-url', url: indexUrl, name });
    return;
  }
  (async () => {
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(await pipeBytes(fromBase64Url(shared), new DecompressionStream('deflate-raw')));
    } catch {
      // atob's and DecompressionStream's own messages ("Failed to fetch") say nothing useful here.
      throw new Error('the link is incomplete or damaged; was it cut short when it was copied?');
    }
    requestIndex({ type: 'index-files', files: [{ name: 'shared corpus.jsonl', text }], replace: true });
  })().catch((err) => {
    showError(`The shared corpus in this link could not be read: ${err.message} The demo corpus is loaded instead.`);
    requestIndex({ type: 'load-demo', replace: true });
  });
}

/** Wire the "Share link" button. */
export function initShare() {
  el.shareLink.addEventListener('click', makeShareLink);
}
