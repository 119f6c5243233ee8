// The known-item scoring of `npm run bench:site` (tools/bench_sites/score.mjs), on values worked
// out by hand.
import test from 'node:test';
import assert from 'node:assert/strict';
import { pagePath, firstGoldRank, metrics, percentile } from '../../tools/bench_sites/score.mjs';

test('result links become page paths relative to the site root', () => {
  assert.equal(pagePath('/library/json.html#json.dumps'), 'library/json.html');
  assert.equal(pagePath('/library/json.html#json.dumps 2'), 'library/json.html');
  assert.equal(pagePath('/faq/'), 'faq/index.html');
  assert.equal(pagePath('/'), 'index.html');
  assert.equal(pagePath('/std/macro.assert%21.html'), 'std/macro.assert!.html');
  assert.equal(pagePath('http://127.0.0.1:8080/docs/a.html?x=1'), 'docs/a.html');
  assert.equal(pagePath('http://127.0.0.1:8080/docs/a.html?x=1', '/docs/'), 'a.html');
  assert.equal(pagePath('/other/a.html', '/docs/'), null);
});

test('rank of the first result on a gold page, and the metrics', () => {
  const links = ['/a.html#x', '/b.html', '/a.html#y', '/c.html'];
  assert.equal(firstGoldRank(links, ['c.html', 'a.html']), 1);
  assert.equal(firstGoldRank(links, ['c.html']), 4);
  assert.equal(firstGoldRank(links, ['d.html']), null);
  // ranks 1, 4, none, 7, 12: s@1 = 1/5, s@5 = 2/5, MRR@10 = (1 + 1/4 + 1/7) / 5
  const m = metrics([1, 4, null, 7, 12]);
  assert.equal(m.n, 5);
  assert.equal(m.s1, 0.2);
  assert.equal(m.s5, 0.4);
  assert.ok(Math.abs(m.mrr10 - (1 + 0.25 + 1 / 7) / 5) < 1e-12);
  assert.deepEqual(metrics([]), { n: 0, s1: 0, s5: 0, mrr10: 0 });
});

test('nearest-rank percentiles', () => {
  const v = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
  assert.equal(percentile(v, 50), 5);
  assert.equal(percentile(v, 95), 10);
  assert.equal(percentile(v, 0), 1);
  assert.equal(percentile([], 50), null);
});
