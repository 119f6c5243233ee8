// Builds Cairn's page into dist/: the search page (www/index.html + www/index.js), the browser
// benchmark (www/bench.html + www/bench.js), the engine's Web Worker (www/worker.js, found by
// webpack through `new Worker(new URL('./worker.js', import.meta.url))`), the wasm module (an
// asset, found through `new URL('cairn_bg.wasm', import.meta.url)` in pkg/cairn.js), the demo
// data (www/data/ → dist/data/), the text pipeline's files (assets/text/ → dist/assets/text/,
// fetched by the worker only when the knowledge graph or CAGE needs them) and the static embedder's files (assets/static-minilm.bin and
// assets/minilm-vocab.txt → dist/assets/, fetched by the worker only when a dense method is
// chosen; their names are fixed, not content-hashed), and, for method dense-minilm, the MiniLM
// package (pkg-minilm/: its JS as a lazy chunk, its wasm as an asset) and the model
// (models/minilm-int8.onnx → dist/models/), fetched by the worker only when that method is chosen.
// Documents added in the page load their readers as lazy chunks, only when a file of their kind
// is added: pdf.js (chunk "pdfjs", and its worker, the asset pdf.worker.min.*.mjs) for PDF,
// mammoth (chunk "mammoth") for .docx.
//
//   npm run build:wasm   # pkg/, needed first
//   npm run build:wasm-minilm && bash tools/fetch_models.sh   # pkg-minilm/ and models/, optional
//   npm run build:web    # webpack --mode production
const path = require('node:path');
const fs = require('node:fs');
const HtmlWebpackPlugin = require('html-webpack-plugin');
const CopyPlugin = require('copy-webpack-plugin');
const webpack = require('webpack');

const www = path.resolve(__dirname, 'www');
const assets = path.resolve(__dirname, 'assets');
const EMBEDDER_FILES = ['static-minilm.bin', 'minilm-vocab.txt'];
const MINILM_MODEL = path.resolve(__dirname, 'models', 'minilm-int8.onnx');
// CAGE's int8 R-GCN (run by the MiniLM package's CageModel), fetched when a CAGE method is chosen.
const CAGE_MODEL = path.join(assets, 'cage', 'rgcn-int8.onnx');
// The English text pipeline's resource files (POS tagger, lemmatiser, gazetteer), which the main
// wasm package is built without: fetched by the worker when the knowledge graph or CAGE needs them.
const TEXT_FILES = ['pos-perceptron.bin', 'lemma-en.txt', 'lemma-index.bin', 'gazetteer-en.txt'];

module.exports = (env, argv) => {
  const production = argv.mode !== 'development';
  if (!fs.existsSync(path.resolve(__dirname, 'pkg', 'cairn.js'))) {
    throw new Error('pkg/cairn.js is missing: run `npm run build:wasm` before `npm run build:web`');
  }
  // The transformer package (pkg-minilm/, MiniLM and CAGE) and the MiniLM model are optional: a
  // page built without them runs every other method and says, where MiniLM and CAGE are offered,
  // that the transformer package is still being built (`npm start` builds it after serving the page,
  // then builds the page again). CAIRN_REQUIRE_TRANSFORMER=1 makes their absence an error;
  // CAIRN_WEB_TRANSFORMER=0 builds the page without them even when they are there.
  const transformer =
    process.env.CAIRN_WEB_TRANSFORMER !== '0' &&
    fs.existsSync(path.resolve(__dirname, 'pkg-minilm', 'cairn_minilm.js')) &&
    fs.existsSync(path.resolve(__dirname, 'pkg-minilm', 'cairn_minilm_bg.wasm')) &&
    fs.existsSync(MINILM_MODEL);
  if (!transformer && process.env.CAIRN_REQUIRE_TRANSFORMER === '1') {
    throw new Error('pkg-minilm/ or models/minilm-int8.onnx is missing: run `bash tools/fetch_models.sh && npm run build:wasm-minilm`');
  }
  if (!transformer) console.warn('webpack: building the page without the transformer package (pkg-minilm/ or models/minilm-int8.onnx is missing): MiniLM and CAGE are offered once it is built');
  if (!fs.existsSync(CAGE_MODEL)) throw new Error('assets/cage/rgcn-int8.onnx is missing: the page\'s CAGE methods need it');
  for (const f of EMBEDDER_FILES) {
    if (!fs.existsSync(path.join(assets, f))) throw new Error(`assets/${f} is missing: the page's dense methods need it`);
  }
  return {
    mode: production ? 'production' : 'development',
    context: __dirname,
    entry: {
      main: './www/index.js',
      bench: './www/bench.js',
    },
    output: {
      path: path.resolve(__dirname, 'dist'),
      filename: production ? '[name].[contenthash:8].js' : '[name].js',
      chunkFilename: production ? '[name].[contenthash:8].js' : '[name].js',
      assetModuleFilename: production ? '[name].[contenthash:8][ext]' : '[name][ext]',
      cssFilename: production ? '[name].[contenthash:8].css' : '[name].css',
      publicPath: 'auto',
      // CAIRN_WEB_KEEP_OLD=1 (the rebuild `npm start` runs while serving) keeps the previous build's
      // files, so a page already open still finds its worker and chunks.
      clean: process.env.CAIRN_WEB_KEEP_OLD !== '1',
    },
    experiments: {
      // `import './style.css'` emits a stylesheet that HtmlWebpackPlugin links; no loader needed.
      css: true,
    },
    devtool: production ? 'source-map' : 'eval-cheap-module-source-map',
    plugins: [
      new webpack.DefinePlugin({ __CAIRN_TRANSFORMER_PACKAGE__: JSON.stringify(transformer) }),
      new HtmlWebpackPlugin({
        template: path.join(www, 'index.html'),
        filename: 'index.html',
        chunks: ['main'],
      }),
      new HtmlWebpackPlugin({
        template: path.join(www, 'bench.html'),
        filename: 'bench.html',
        chunks: ['bench'],
      }),
      new CopyPlugin({
        patterns: [
          { from: path.join(www, 'data'), to: 'data' },
          ...EMBEDDER_FILES.map((f) => ({ from: path.join(assets, f), to: `assets/${f}` })),
          ...(transformer ? [{ from: MINILM_MODEL, to: 'models/minilm-int8.onnx' }] : []),
          { from: CAGE_MODEL, to: 'assets/cage/rgcn-int8.onnx' },
          ...TEXT_FILES.map((f) => ({ from: path.join(assets, 'text', f), to: `assets/text/${f}` })),
        ],
      }),
    ],
    performance: {
      // The wasm module (~0.65 MB) is the page's engine; the copied data and embedder files are
      // not loaded up front.
      hints: production ? 'warning' : false,
      maxAssetSize: 1024 * 1024,
      maxEntrypointSize: 300 * 1024,
      // the MiniLM package (chunk "minilm" and its ~15 MB wasm), pdf.js (chunks "pdfjs", its
      // worker) and mammoth (chunk "mammoth") are loaded only on demand
      assetFilter: (file) => /\.(js|css|wasm)$/.test(file) && !/minilm|pdf|mammoth/.test(file),
    },
    stats: 'minimal',
  };
};
