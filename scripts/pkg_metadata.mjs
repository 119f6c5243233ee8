// After `wasm-pack build --out-dir pkg`: the npm package's README is docs/npm/README.md (how to use
// the package from JavaScript), not the repository's README that wasm-pack copies in, and its
// package.json gets keywords, and the text pipeline's files are copied into text/. Run by
// `npm run build:wasm`.
//
//   node scripts/pkg_metadata.mjs [pkg-folder]

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = path.resolve(process.argv[2] || path.join(repo, 'pkg'));
const manifestPath = path.join(pkg, 'package.json');
if (!fs.existsSync(manifestPath)) {
  console.error(`${manifestPath} is missing: run wasm-pack build first`);
  process.exit(1);
}
fs.copyFileSync(path.join(repo, 'docs', 'npm', 'README.md'), path.join(pkg, 'README.md'));
// The English text pipeline's resource files, which the package is built without (the knowledge
// graph and CAGE need them: `loadTextPipeline`, see the README): shipped beside it in text/.
const TEXT_FILES = ['pos-perceptron.bin', 'lemma-en.txt', 'lemma-index.bin', 'gazetteer-en.txt'];
fs.mkdirSync(path.join(pkg, 'text'), { recursive: true });
for (const f of TEXT_FILES) fs.copyFileSync(path.join(repo, 'assets', 'text', f), path.join(pkg, 'text', f));
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
manifest.keywords = ['rag', 'retrieval', 'search', 'bm25', 'knowledge-graph', 'multi-hop', 'wasm', 'browser'];
manifest.files = [...new Set([...(manifest.files || []), 'README.md', ...TEXT_FILES.map((f) => `text/${f}`)])];
fs.writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`${path.relative(process.cwd(), pkg) || '.'}: README.md from docs/npm/README.md, package.json keywords`);
