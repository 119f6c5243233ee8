// @ts-check
// The same example with no bundler: plain ES modules straight from the installed package.
import * as cairn from '../node_modules/cairn/cairn.js';
import { demo, show } from '../src/demo.js';

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
show(demo(cairn, worker));
