// Loads an index written by `cairn index` in Node, the way the site's loader does in a browser
// (the written cairn.js and cairn_bg.wasm, the gzip index's keyword part, its texts and, for
// other methods than bm25, its extras, the static embedder's files), and
// prints one JSON line per query: the method and the links of its top hits.
//
//   node scripts/check_site_index.mjs <out-folder> <method> <query> [<query> …]

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pathToFileURL } from 'node:url';

const [out, method, ...queries] = process.argv.slice(2);
if (!out || !method || queries.length === 0) {
  console.error('usage: node scripts/check_site_index.mjs <out-folder> <method> <query> [<query> …]');
  process.exit(2);
}
const read = (f) => fs.readFileSync(path.join(out, f));
const manifest = JSON.parse(read('manifest.json'));
const { default: init, Engine } = await import(pathToFileURL(path.resolve(out, 'cairn.js')).href);
await init({ module_or_path: read('cairn_bg.wasm') });
const engine = new Engine();
if (manifest.embedder) {
  engine.loadStaticEmbedder(new Uint8Array(read(manifest.embedder.table)), read(manifest.embedder.vocab).toString('utf8'));
}
let stats = engine.loadIndex(zlib.gunzipSync(read(manifest.index)));
// the keyword part answers BM25 alone; the texts complete the passages
if (manifest.texts) stats = engine.loadIndexTexts(zlib.gunzipSync(read(manifest.texts)));
// the passage vectors and the graph are in the extras
if (manifest.extras && method !== 'bm25') stats = engine.loadIndexExtras(zlib.gunzipSync(read(manifest.extras)));
for (const query of queries) {
  const { hits } = engine.query({ query, k: 3, method });
  console.log(JSON.stringify({ query, method, passages: stats.passages, links: hits.map((h) => h.id.split(' ')[0]), titles: hits.map((h) => h.title) }));
}
