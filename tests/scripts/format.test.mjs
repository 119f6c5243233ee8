// The page's duration text (www/ui/format.js): the time left that MiniLM's progress shows.
import test from 'node:test';
import assert from 'node:assert/strict';
import { timeLeft } from '../../www/ui/format.js';

test('timeLeft rounds to what a person would say', () => {
  assert.equal(timeLeft(0), 'under a minute');
  assert.equal(timeLeft(44_999), 'under a minute');
  assert.equal(timeLeft(45_000), 'about 1 minute'); // 0.75 min rounds to 1
  assert.equal(timeLeft(89_999), 'about 1 minute');
  assert.equal(timeLeft(90_000), 'about 2 minutes');
  assert.equal(timeLeft(59 * 60_000), 'about 59 minutes');
  assert.equal(timeLeft(60 * 60_000), 'about 1 h 0 min');
  assert.equal(timeLeft(200 * 60_000), 'about 3 h 20 min');
});
