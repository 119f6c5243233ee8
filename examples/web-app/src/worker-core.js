// @ts-check
// The worker side of the example: one engine owned by the worker, so indexing a large corpus never
// freezes the page. Request {passages, queries}; answer {ranked} or {error}.
import { rank } from './demo.js';

/**
 * Answers the page's requests with `cairn` (the package's module, loaded by the caller).
 * @param {typeof import('cairn')} cairn
 */
export function serveSearch(cairn) {
  const ready = cairn.default();
  self.onmessage = async (event) => {
    try {
      await ready;
      const engine = new cairn.Engine();
      engine.addPassages(event.data.passages);
      engine.build();
      /** @type {string[]} */
      const queries = event.data.queries;
      self.postMessage({ ranked: queries.map((query) => rank(engine, query)) });
    } catch (err) {
      self.postMessage({ error: String(err instanceof Error ? err.message : err) });
    }
  };
}
