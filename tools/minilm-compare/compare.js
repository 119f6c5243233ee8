// The MiniLM runtime comparison page (driven by tools/minilm_compare.mjs): embeds the same
// passages, in the same length-sorted batches of the same token ids, with Cairn's MiniLM package
// (tract, wasm simd128) and with onnxruntime-web (its wasm backend), and reports passages/s for
// each and the cosine between their vectors.
//
// Query parameters: corpus (URL of a .jsonl with title/text), limit (passages, default 96),
// batch (texts per run, default 16), threads (onnxruntime-web's wasm threads, default 1; more
// than 1 needs a cross-origin isolated page), runtimes (comma-separated, default "tract,ort").
import initMinilm, { MiniLm } from '/pkg-minilm/cairn_minilm.js';
import * as ort from '/ort/ort.wasm.min.mjs';

const params = new URLSearchParams(location.search);
const CORPUS = params.get('corpus');
const LIMIT = Number(params.get('limit') || 96);
const BATCH = Number(params.get('batch') || 16);
const THREADS = Number(params.get('threads') || 1);
const RUNTIMES = (params.get('runtimes') || 'tract,ort').split(',');
const say = (s) => { document.getElementById('status').textContent = s; };
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function passages() {
  const text = await (await fetch(CORPUS)).text();
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const p = JSON.parse(line);
    const title = String(p.title ?? '');
    const body = String(p.text ?? '');
    // The text the page embeds for a passage (Index::passage_text): "title text".
    out.push(title && body ? `${title} ${body}` : title || body);
    if (out.length >= LIMIT) break;
  }
  return out;
}

function l2normalize(v) {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

async function main() {
  const texts = await passages();
  const modelBytes = new Uint8Array(await (await fetch('/models/minilm-int8.onnx')).arrayBuffer());
  await initMinilm();
  let t = performance.now();
  const tract = new MiniLm(modelBytes);
  const tractLoadMs = performance.now() - t;
  const dims = tract.dims;
  const ids = texts.map((s) => tract.tokenIds(s));
  // Length-sorted batches (as MiniLmEmbedder::embed_batch makes them), the same for both runtimes.
  const order = texts.map((_, i) => i).sort((a, b) => ids[a].length - ids[b].length || a - b);
  const batches = [];
  for (let i = 0; i < order.length; i += BATCH) batches.push(order.slice(i, i + BATCH));
  const tokens = ids.reduce((s, x) => s + x.length, 0);
  const padded = batches.reduce((s, b) => s + b.length * Math.max(...b.map((i) => ids[i].length)), 0);
  const result = {
    passages: texts.length, batch: BATCH, batches: batches.length, tokens, paddedTokens: padded,
    meanTokens: round(tokens / texts.length), userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency, crossOriginIsolated: self.crossOriginIsolated,
  };
  const vectors = {};

  if (RUNTIMES.includes('tract')) {
    say('tract: embedding…');
    tract.embed(batches[0].map((i) => texts[i])); // warm-up: first run of a shape
    const out = new Float32Array(texts.length * dims);
    const perBatch = [];
    t = performance.now();
    for (const b of batches) {
      const t0 = performance.now();
      const v = tract.embed(b.map((i) => texts[i]));
      perBatch.push(performance.now() - t0);
      b.forEach((i, j) => out.set(v.subarray(j * dims, (j + 1) * dims), i * dims));
    }
    const ms = performance.now() - t;
    vectors.tract = out;
    result.tract = { loadMs: round(tractLoadMs), embedMs: round(ms), passagesPerSec: round(texts.length / (ms / 1000), 2),
      tokensPerSec: round(tokens / (ms / 1000)), batchMs: perBatch.map((x) => round(x)) };
  }

  if (RUNTIMES.includes('ort')) {
    say('onnxruntime-web: loading…');
    ort.env.wasm.wasmPaths = '/ort/';
    ort.env.wasm.numThreads = THREADS;
    t = performance.now();
    const session = await ort.InferenceSession.create(modelBytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
    const loadMs = performance.now() - t;
    const run = async (b) => {
      const T = Math.max(...b.map((i) => ids[i].length));
      const n = b.length;
      const inputIds = new BigInt64Array(n * T);
      const mask = new BigInt64Array(n * T);
      b.forEach((i, r) => ids[i].forEach((id, c) => { inputIds[r * T + c] = BigInt(id); mask[r * T + c] = 1n; }));
      const feeds = {};
      for (const name of session.inputNames) {
        if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', inputIds, [n, T]);
        else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', mask, [n, T]);
        else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(n * T), [n, T]);
        else throw new Error(`unexpected model input ${name}`);
      }
      const outputs = await session.run(feeds);
      const h = outputs[session.outputNames[0]].data; // [n, T, dims]
      const vs = [];
      for (let r = 0; r < n; r++) {
        const v = new Float32Array(dims);
        const len = ids[b[r]].length;
        for (let c = 0; c < len; c++) for (let d = 0; d < dims; d++) v[d] += h[(r * T + c) * dims + d];
        for (let d = 0; d < dims; d++) v[d] /= len;
        vs.push(l2normalize(v));
      }
      return vs;
    };
    say('onnxruntime-web: embedding…');
    await run(batches[0]); // warm-up
    const out = new Float32Array(texts.length * dims);
    const perBatch = [];
    t = performance.now();
    for (const b of batches) {
      const t0 = performance.now();
      const vs = await run(b);
      perBatch.push(performance.now() - t0);
      b.forEach((i, j) => out.set(vs[j], i * dims));
    }
    const ms = performance.now() - t;
    vectors.ort = out;
    result.ort = { threads: THREADS, loadMs: round(loadMs), embedMs: round(ms), passagesPerSec: round(texts.length / (ms / 1000), 2),
      tokensPerSec: round(tokens / (ms / 1000)), batchMs: perBatch.map((x) => round(x)) };
  }

  if (vectors.tract && vectors.ort) {
    let min = 1, sum = 0;
    for (let i = 0; i < texts.length; i++) {
      let c = 0;
      for (let d = 0; d < dims; d++) c += vectors.tract[i * dims + d] * vectors.ort[i * dims + d];
      min = Math.min(min, c);
      sum += c;
    }
    result.cosine = { mean: round(sum / texts.length, 6), min: round(min, 6) };
    result.tractOverOrt = round(result.tract.passagesPerSec / result.ort.passagesPerSec, 3);
  }
  say('done');
  document.getElementById('result').textContent = JSON.stringify(result, null, 2);
}

main().catch((e) => {
  say('failed');
  document.getElementById('result').textContent = JSON.stringify({ error: String(e && e.stack || e) });
});
