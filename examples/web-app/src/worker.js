// @ts-check
// The bundled page's worker.
import * as cairn from 'cairn';
import { serveSearch } from './worker-core.js';

serveSearch(cairn);
