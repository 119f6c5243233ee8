#!/usr/bin/env node
// The README's figures that files can tell: each is marked in README.md as
// `<!-- fig:NAME -->text<!-- /fig -->` and computed here from the file it describes.
//
//   node scripts/readme_figures.mjs           # check: lists each figure, exits 1 when one is off
//   node scripts/readme_figures.mjs --write   # rewrites the marked texts with the real values
//
// A stated figure passes when every number in its text is within 2 % of the real one (a size
// that moves by a few kilobytes with each build does not fail it; a stale one does); versions
// must be equal. A figure whose file is missing (a package not built yet) is reported as such and
// fails the check.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const README = path.join(repoRoot, 'README.md');
/** Relative difference allowed between a stated size and the real one. */
export const TOLERANCE = 0.02;

const MB = 1e6;
const mb = (bytes, digits = 1) => `${(bytes / MB).toFixed(digits)} MB`;
const kb = (bytes) => `${Math.round(bytes / 1e3)} KB`;
const gzipped = (file) => zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;
const size = (file) => fs.statSync(file).size;

/** A `pub const NAME: u32 = N;` of a Rust source file. */
function rustConst(file, name) {
  const m = fs.readFileSync(file, 'utf8').match(new RegExp(`pub const ${name}: u32 = (\\d+);`));
  if (!m) throw new Error(`${path.relative(repoRoot, file)} has no pub const ${name}: u32`);
  return m[1];
}

/**
 * Every figure: its file (relative to the repository) and how its text is made from it. Sizes are
 * decimal megabytes (and kilobytes), gzip at level 9 (what a static host's precompression gives).
 */
export const FIGURES = {
  'minilm-wasm': {
    file: 'pkg-minilm/cairn_minilm_bg.wasm',
    exact: false,
    text: (f) => `${mb(size(f))}, ${mb(gzipped(f))} gzipped`,
  },
  wasm: {
    file: 'pkg/cairn_bg.wasm',
    exact: false,
    text: (f) => `${mb(size(f), 2)} (${kb(gzipped(f))} gzipped)`,
  },
  'reader-wasm': {
    file: 'pkg-reader/cairn_reader_bg.wasm',
    exact: false,
    text: (f) => `${kb(size(f))}, ${kb(gzipped(f))} gzipped`,
  },
  model: { file: 'models/minilm-int8.onnx', exact: false, text: (f) => mb(size(f)) },
  'static-table': { file: 'assets/static-minilm.bin', exact: false, text: (f) => mb(size(f)) },
  'format-version': { file: 'src/format.rs', exact: true, text: (f) => rustConst(f, 'FORMAT_VERSION') },
  'base-format-version': { file: 'src/format.rs', exact: true, text: (f) => rustConst(f, 'BASE_FORMAT_VERSION') },
};

const MARK = /<!-- fig:([a-z0-9-]+) -->(.*?)<!-- \/fig -->/gs;

/** The numbers of a figure's text in bytes (sizes) or as they are (versions). */
function numbers(text) {
  const unit = { MB, KB: 1e3 };
  return [...text.matchAll(/(\d+(?:\.\d+)?)(?:\s*(MB|KB))?/g)].map(([, n, u]) => Number(n) * (u ? unit[u] : 1));
}

/**
 * The README's marked figures, each `{name, stated, real, ok, why}` (`real` null when its file is
 * missing). An unknown name, or a figure of FIGURES that the README does not mark, is not ok.
 */
export function checkFigures(readme = fs.readFileSync(README, 'utf8')) {
  const out = [];
  const seen = new Set();
  for (const [, name, stated] of readme.matchAll(MARK)) {
    seen.add(name);
    const fig = FIGURES[name];
    if (!fig) {
      out.push({ name, stated, real: null, ok: false, why: 'no such figure in scripts/readme_figures.mjs' });
      continue;
    }
    const file = path.join(repoRoot, fig.file);
    if (!fs.existsSync(file)) {
      out.push({ name, stated, real: null, ok: false, why: `${fig.file} is missing (build it first)` });
      continue;
    }
    const real = fig.text(file);
    const [a, b] = [numbers(stated), numbers(real)];
    const ok = fig.exact
      ? stated === real
      : a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= TOLERANCE * b[i]);
    out.push({ name, stated, real, ok, why: ok ? '' : `the README says ${stated}, ${fig.file} gives ${real}` });
  }
  for (const name of Object.keys(FIGURES)) {
    if (!seen.has(name)) out.push({ name, stated: null, real: null, ok: false, why: 'not marked in README.md' });
  }
  return out;
}

/** README.md with every marked figure replaced by its real text (figures whose file is missing stay). */
export function writeFigures(readme = fs.readFileSync(README, 'utf8')) {
  return readme.replace(MARK, (whole, name) => {
    const fig = FIGURES[name];
    const file = fig && path.join(repoRoot, fig.file);
    if (!fig || !fs.existsSync(file)) return whole;
    return `<!-- fig:${name} -->${fig.text(file)}<!-- /fig -->`;
  });
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
  if (process.argv.includes('--write')) {
    fs.writeFileSync(README, writeFigures());
  }
  const results = checkFigures();
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'OFF '} ${r.name}: ${r.ok ? r.stated : r.why}`);
  if (results.some((r) => !r.ok)) {
    console.error('readme_figures: figures are off; `node scripts/readme_figures.mjs --write` rewrites them from the files');
    process.exit(1);
  }
}
