// @ts-check
// The plain page's worker (import maps do not reach workers, so the package's path is spelled out).
import * as cairn from '../node_modules/cairn/cairn.js';
import { serveSearch } from '../src/worker-core.js';

serveSearch(cairn);
