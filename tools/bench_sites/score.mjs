// Known-item scoring for `npm run bench:site` (tools/bench_sites.mjs).
//
// A query has gold pages (paths relative to the site's root, as written in
// tools/bench_sites/<site>.queries.jsonl before either engine ran). A result is a link as an
// engine shows it (`/library/json.html#json.dumps`, `https://host/base/std/index.html`, `/faq/`);
// it matches a gold page when its page path, fragment and query dropped, percent-decoding undone,
// `dir/` read as `dir/index.html`, equals the gold path. Metrics are page-level: a query's rank
// is the 1-based position of its first result on any gold page (several results on one page count
// once, at the first).

/**
 * The page path of a result link, relative to the site's root at `base` (default `/`):
 * `"/docs/library/json.html#x"` with base `/docs/` → `"library/json.html"`. Null when the link
 * is not under `base`.
 */
export function pagePath(link, base = '/') {
  let p = String(link);
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(p);
  if (m) p = m[1] || '/';
  p = p.split('#')[0].split('?')[0].split(' ')[0];
  if (!p.startsWith(base)) return null;
  p = p.slice(base.length);
  try {
    p = decodeURIComponent(p);
  } catch {
    // a stray % stays as it is
  }
  if (p === '' || p.endsWith('/')) p += 'index.html';
  return p;
}

/** The 1-based rank of the first of `links` on a page in `gold` (paths), or null. */
export function firstGoldRank(links, gold, base = '/') {
  const want = new Set(gold);
  for (let i = 0; i < links.length; i++) {
    if (want.has(pagePath(links[i], base))) return i + 1;
  }
  return null;
}

/**
 * success@1, success@5 and MRR@10 over the ranks of several queries (null: no gold page in
 * the list), each in 0..1; `n` is the number of queries.
 */
export function metrics(ranks) {
  const n = ranks.length;
  if (!n) return { n: 0, s1: 0, s5: 0, mrr10: 0 };
  const hit = (k) => ranks.filter((r) => r !== null && r <= k).length / n;
  const mrr = ranks.reduce((a, r) => a + (r !== null && r <= 10 ? 1 / r : 0), 0) / n;
  return { n, s1: hit(1), s5: hit(5), mrr10: mrr };
}

/** The `p`-th percentile (0..100) of `values` by the nearest-rank method; null when empty. */
export function percentile(values, p) {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}
