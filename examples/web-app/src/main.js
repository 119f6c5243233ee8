// @ts-check
// The bundled page: `cairn` imported by its package name; webpack emits cairn_bg.wasm (found
// through `new URL('cairn_bg.wasm', import.meta.url)` in cairn.js) and the worker's own bundle.
import * as cairn from 'cairn';
import { demo, show } from './demo.js';

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
show(demo(cairn, worker));
