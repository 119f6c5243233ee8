// The bundled page: src/main.js → dist/ (main.js, the worker's chunk and cairn_bg.wasm).
const path = require('node:path');

module.exports = {
  mode: 'production',
  entry: './src/main.js',
  output: { path: path.resolve(__dirname, 'dist'), filename: 'main.js', clean: true },
  performance: { hints: false },
};
