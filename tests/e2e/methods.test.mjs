// The engine's methods() as the page, its worker and the browser benchmark read it, from the
// built wasm package (pkg/, run in Node). Needs `npm run build:wasm`.
//
// The rows are the method table's (src/index/method.rs): the expectation is the native CLI's
// `cairn methods --json`, built from the same sources, so a method added as a row is expected
// here with no edit. What every row must satisfy is checked by hand below: the needs follow
// from what a method walks, embeds and reranks (docs/method/spec.md), and the JSON is plain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = path.join(root, 'pkg');

/** The method table as the native CLI prints it (`cargo run` builds it when it is stale). */
function nativeTable() {
  const out = execFileSync('cargo', ['run', '--quiet', '--bin', 'cairn', '--', 'methods', '--json'], {
    cwd: root,
    env: { ...process.env, CAIRN_EMBED_WASM: '0' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out);
}

test('methods() is the method table: the rows the native CLI lists, each consistent with what it runs', async () => {
  if (!fs.existsSync(path.join(pkg, 'cairn.js'))) throw new Error('pkg/cairn.js is missing: run `npm run build:wasm` first');
  const { default: init, methods } = await import(path.join(pkg, 'cairn.js'));
  await init({ module_or_path: fs.readFileSync(path.join(pkg, 'cairn_bg.wasm')) });
  const infos = methods();
  assert.deepEqual(infos, nativeTable(), 'the wasm package and the CLI describe the same methods');
  // plain JSON (null, not undefined; objects, not Maps): the worker posts it to the page as is
  assert.deepEqual(JSON.parse(JSON.stringify(infos)), infos);

  const byName = new Map(infos.map((m) => [m.name, m]));
  assert.equal(byName.size, infos.length, 'names are unique');
  assert.equal(infos[0].name, 'bm25', 'the first row is the default method');
  for (const m of infos) {
    for (const key of ['label', 'short', 'description', 'score']) {
      assert.equal(typeof m[key], 'string', `${m.name}: ${key}`);
      assert.ok(m[key].length > 0 && !m[key].includes('{'), `${m.name}: ${key} is filled in`);
    }
    assert.ok(['lexical', 'dense', 'hybrid', 'graph', 'cage'].includes(m.family), `${m.name}: family`);
    // a CAGE method reranks another method's top candidates and needs all that method needs,
    // plus its graph embeddings and the static embedder's vectors (its relevance term)
    assert.equal(m.needs.cage, m.family === 'cage', `${m.name}: needs.cage`);
    assert.equal(m.first_stage !== null, m.needs.cage, `${m.name}: a first stage iff CAGE`);
    assert.equal(m.candidates, m.needs.cage ? 20 : null, `${m.name}: CAGE's default depth`);
    if (m.needs.cage) {
      const first = byName.get(m.first_stage);
      assert.ok(first && !first.needs.cage, `${m.name}: its first stage is a method of its own`);
      assert.equal(m.needs.graph, first.needs.graph, `${m.name}: walks the graph iff its first stage does`);
      assert.equal(m.needs.llm, first.needs.llm, `${m.name}: takes LLM tiers iff its first stage does`);
      assert.equal(m.needs.embedder, 'static', `${m.name}: CAGE's relevance needs the static vectors`);
      assert.equal(m.prefix, false, `${m.name}: its first stage runs without prefix completion`);
    }
    // the graph methods walk the knowledge graph with the static embedder's vectors; BM25 needs none
    if (m.family === 'graph') assert.deepEqual([m.needs.graph, m.needs.embedder], [true, 'static'], m.name);
    if (m.family === 'lexical') assert.deepEqual(m.needs, { graph: false, embedder: null, cage: false, llm: false }, m.name);
    if (m.family === 'dense') assert.deepEqual([m.needs.graph, m.prefix], [false, false], m.name);
    // only a walk can take LLM edge tiers
    if (m.needs.llm) assert.ok(m.needs.graph, `${m.name}: LLM tiers need a graph walk`);
  }
  // what the page relies on by name: the demo's default, CatRAG's LLM tiers, the hybrid's fusion
  assert.deepEqual(byName.get('catrag').needs, { graph: true, embedder: 'static', cage: false, llm: true });
  assert.equal(byName.get('hipporag').needs.llm, false);
  assert.equal(byName.get('hybrid').description, 'Reciprocal-rank fusion (k = 60) of BM25 and dense.');
  assert.equal(byName.get('catrag+cage').score, 'CAGE fused score: α · first-stage score (min–max) + (1 − α) · min–max(coherence) over the 20 candidates');
});
