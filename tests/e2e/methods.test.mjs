// The engine's methods() as the page, its worker and the browser benchmark read it: every
// method's name, labels, family and needs, from the built wasm package (pkg/, run in Node).
// Needs `npm run build:wasm`. The expected values are written out by hand from METHOD.md's
// methods (what each one walks, embeds and reranks), not read back from the engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = path.join(root, 'pkg');

const NONE = { graph: false, embedder: null, cage: false, llm: false };
const EXPECTED = [
  { name: 'bm25', label: 'BM25', short: 'BM25', family: 'lexical', needs: NONE, prefix: true },
  { name: 'dense', label: 'Dense (static MiniLM)', short: 'dense', family: 'dense', needs: { ...NONE, embedder: 'static' }, prefix: false },
  { name: 'dense-minilm', label: 'Dense (MiniLM transformer)', short: 'dense MiniLM', family: 'dense', needs: { ...NONE, embedder: 'minilm' }, prefix: false },
  { name: 'hybrid', label: 'Hybrid (BM25 + dense, RRF)', short: 'hybrid', family: 'hybrid', needs: { ...NONE, embedder: 'static' }, prefix: true },
  { name: 'hipporag', label: 'HippoRAG 2 (static PPR on the knowledge graph)', short: 'HippoRAG 2', family: 'graph', needs: { ...NONE, graph: true, embedder: 'static' }, prefix: false },
  { name: 'catrag', label: 'CatRAG (query-aware PPR on the knowledge graph)', short: 'CatRAG', family: 'graph', needs: { graph: true, embedder: 'static', cage: false, llm: true }, prefix: false },
  { name: 'cage', label: 'CAGE (dense top 20, reranked by passage-graph coherence)', short: 'CAGE', family: 'cage', needs: { ...NONE, embedder: 'static', cage: true }, prefix: false, first_stage: 'dense' },
  { name: 'bm25+cage', label: 'BM25 + CAGE (BM25 top 20, reranked by coherence)', short: 'BM25 + CAGE', family: 'cage', needs: { ...NONE, embedder: 'static', cage: true }, prefix: false, first_stage: 'bm25' },
  { name: 'catrag+cage', label: 'CatRAG + CAGE (CatRAG top 20, reranked by coherence)', short: 'CatRAG + CAGE', family: 'cage', needs: { graph: true, embedder: 'static', cage: true, llm: true }, prefix: false, first_stage: 'catrag' },
];

test('methods() describes every method: labels, family, needs, CAGE first stage and depth', async () => {
  if (!fs.existsSync(path.join(pkg, 'cairn.js'))) throw new Error('pkg/cairn.js is missing: run `npm run build:wasm` first');
  const { default: init, methods } = await import(path.join(pkg, 'cairn.js'));
  await init({ module_or_path: fs.readFileSync(path.join(pkg, 'cairn_bg.wasm')) });
  const infos = methods();
  assert.deepEqual(
    infos.map(({ name, label, short, family, needs, prefix }) => ({ name, label, short, family, needs, prefix })),
    EXPECTED.map(({ first_stage, ...rest }) => rest),
  );
  for (const [i, info] of infos.entries()) {
    const cage = EXPECTED[i].first_stage;
    assert.equal(info.first_stage, cage ?? null, `${info.name}: first stage`);
    assert.equal(info.candidates, cage ? 20 : null, `${info.name}: CAGE candidates`);
    assert.equal(typeof info.description, 'string');
    assert.ok(info.description.length > 20, `${info.name}: a description`);
  }
  assert.equal(infos[3].description, 'Reciprocal-rank fusion (k = 60) of BM25 and dense.');
  assert.equal(infos[0].score, 'BM25 score');
  assert.equal(infos[8].score, 'CAGE fused score: α · first-stage score (min–max) + (1 − α) · min–max(coherence) over the 20 candidates');
  // plain JSON (null, not undefined; objects, not Maps): the worker posts it to the page as is
  assert.deepEqual(JSON.parse(JSON.stringify(infos)), infos);
});
