// The result list: hits with highlights and score bars, the gold-passage count, and the lazily
// fetched "Triples and entities" of a passage.
import { cageGraphElement, cageScoresElement } from './cage.js';
import { lazyDetails, onWorkerMessage } from './channel.js';
import { el } from './dom.js';
import { ms } from './format.js';
import { explainElement } from './graph.js';
import { defaultMethod, isCageMethod, methodInfo } from './methods.js';
import { state } from './state.js';

/** Draw the results and passage graphs the worker sends. */
export function initResults() {
  onWorkerMessage('results', (msg) => {
    if (msg.id === state.searchId) renderResults(msg);
  });
  onWorkerMessage('passage-graph', showPassageGraph);
}

export function renderResults({ id: searchId, hits, ms: took, method = defaultMethod(), explanation, cage, weak }) {
  const question = state.lastSearch && state.lastSearch.question;
  const gold = new Set(question ? question.gold_ids : []);
  const top = hits.length ? hits[0].score : 0;

  el.results.replaceChildren(
    ...hits.map((h, i) => {
      const li = hitElement(h, top, gold.has(h.id), method);
      const body = li.querySelector('.hit-body');
      if (explanation && explanation.passages && explanation.passages[i]) {
        body.append(explainElement(explanation, explanation.passages[i], h));
      }
      if (isCageMethod(method)) {
        body.querySelector('.hit-head').after(cageScoresElement(h, method));
        body.append(cageGraphElement(h.id));
      }
      if (state.graph) body.append(triplesElement(h.id));
      return li;
    }),
  );
  if (explanation) el.results.dataset.fallback = explanation.retrieval && explanation.retrieval.fallback ? JSON.stringify(explanation.retrieval.fallback) : '';
  // which search is shown (tests wait on these)
  el.results.dataset.search = String(searchId);
  el.results.dataset.query = state.lastSearch ? state.lastSearch.query : '';
  el.results.dataset.method = method;
  // a dense method's answer to a query that shares no word with any passage
  el.results.dataset.weak = weak ? 'true' : '';
  el.results.classList.toggle('is-weak', !!weak);

  const found = hits.filter((h) => gold.has(h.id)).length;
  if (hits.length === 0) {
    // Every method returns nothing when no word of the query occurs in any passage.
    el.resultsMeta.textContent = 'Nothing matches: no passage shares a word with this query (common words such as “the” are ignored).';
  } else {
    el.resultsMeta.textContent = `${hits.length} ${hits.length === 1 ? 'result' : 'results'} in ${ms(took)} · ${methodInfo(method).short}`;
    if (weak) el.resultsMeta.textContent += ' · weak: no word of the query occurs in any passage; these are the closest passages by meaning alone and may not answer it';
    if (cage) el.resultsMeta.textContent += ` (${cageText(cage)})`;
  }

  el.questionInfo.hidden = !question;
  if (question) {
    el.questionInfo.replaceChildren();
    const a = document.createElement('span');
    a.textContent = 'HotpotQA answer: ';
    const b = document.createElement('strong');
    b.textContent = question.answer;
    const g = document.createElement('span');
    g.className = 'gold-count';
    g.textContent = `${found} of ${gold.size} gold passages in the top ${hits.length || Number(el.k.value)}`;
    el.questionInfo.append(a, b, g);
  }
}

/**
 * What a CAGE search did, in the order it ran: the first stage and its time, then the rerank's
 * own time (from the engine), and the graph embeddings computed first for passages added since.
 */
export function cageText({ candidates, firstStage, firstStageMs, rerankMs, embedded, embedMs }) {
  const parts = [];
  if (embedded) parts.push(`${embedded} new passages embedded first, ${ms(embedMs)}`);
  parts.push(`${methodInfo(firstStage).short}'s top ${candidates} found in ${ms(firstStageMs)}`);
  parts.push(`${candidates} candidates reranked from stored graph embeddings in ${ms(rerankMs)}`);
  return parts.join('; ');
}

/** A score as shown: BM25 with 2 decimals; cosines and RRF sums with 3 significant digits. */
export function scoreText(score, method) {
  return lexical(method) ? score.toFixed(2) : score.toPrecision(3);
}

/** Whether `method` scores by term statistics (BM25: unbounded scores, shown with 2 decimals). */
function lexical(method) {
  return methodInfo(method).family === 'lexical';
}

export function hitElement(hit, top, isGold, method) {
  const li = document.createElement('li');
  li.className = 'hit';
  li.dataset.testid = 'hit';
  li.dataset.id = hit.id;
  if (isGold) li.classList.add('is-gold');

  const rank = document.createElement('span');
  rank.className = 'hit-rank';
  rank.textContent = String(hit.rank);

  const head = document.createElement('div');
  head.className = 'hit-head';
  const title = document.createElement('h3');
  title.className = 'hit-title';
  if (hit.title) appendHighlighted(title, hit.title, hit.titleHighlights);
  else {
    title.textContent = '(untitled)';
    title.classList.add('untitled');
  }
  head.append(title);
  if (isGold) {
    const badge = document.createElement('span');
    badge.className = 'badge gold';
    badge.textContent = 'gold';
    badge.title = 'A supporting passage of this HotpotQA question';
    head.append(badge);
  }

  const score = document.createElement('div');
  score.className = 'hit-score';
  const pct = top > 0 ? Math.max(2, Math.round((100 * hit.score) / top)) : 0;
  score.title = `${methodInfo(method).score} ${lexical(method) ? hit.score.toFixed(3) : hit.score.toPrecision(4)} (${pct}% of the top score)`;
  const bar = document.createElement('span');
  bar.className = 'bar';
  bar.setAttribute('aria-hidden', 'true');
  const fill = document.createElement('span');
  fill.className = 'bar-fill';
  fill.style.width = `${pct}%`;
  bar.append(fill);
  const num = document.createElement('span');
  num.className = 'score-num';
  num.textContent = scoreText(hit.score, method);
  score.append(bar, num);
  head.append(score);

  const text = document.createElement('p');
  text.className = 'hit-text';
  appendHighlighted(text, hit.text, hit.highlights);

  const meta = document.createElement('div');
  meta.className = 'hit-meta';
  const id = document.createElement('code');
  id.className = 'hit-id';
  id.textContent = hit.id;
  meta.append('id ', id);

  const body = document.createElement('div');
  body.className = 'hit-body';
  body.append(head, text, meta);
  li.append(rank, body);
  return li;
}

/**
 * Append `text` to `parent` as text nodes, with the [start, end) UTF-16 ranges in <mark>s.
 * Ranges may come unsorted or overlapping; out-of-range parts are ignored.
 */
export function appendHighlighted(parent, text, ranges) {
  const rs = (ranges || [])
    .map(([s, e]) => [Math.max(0, s | 0), Math.min(text.length, e | 0)])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let pos = 0;
  for (const [s, e] of rs) {
    const start = Math.max(s, pos);
    if (e <= start) continue;
    if (start > pos) parent.append(document.createTextNode(text.slice(pos, start)));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(start, e);
    parent.append(mark);
    pos = e;
  }
  if (pos < text.length) parent.append(document.createTextNode(text.slice(pos)));
}

/** A "Triples" disclosure for passage `id`: its facts and entities, fetched when opened. */
export function triplesElement(id) {
  return lazyDetails('hit-triples', 'Triples and entities', 'triples-box', 'passage-graph', id);
}

export function showPassageGraph({ id, graph }) {
  const box = state.passageGraphs.get(id);
  state.passageGraphs.delete(id);
  if (!box) return;
  box.replaceChildren();
  if (!graph.english) {
    const p = document.createElement('p');
    p.textContent = 'This passage did not look English, so no triples were extracted from it (triples are extracted for English only).';
    box.append(p);
  }
  if (graph.triples.length === 0 && graph.english) {
    const p = document.createElement('p');
    p.textContent = 'No triple was extracted from this passage.';
    box.append(p);
  }
  if (graph.triples.length > 0) {
    const table = document.createElement('table');
    table.className = 'triples';
    for (const t of graph.triples) {
      const tr = document.createElement('tr');
      for (const [cls, v] of [['subj', t.subject], ['rel', t.relation], ['obj', t.object]]) {
        const td = document.createElement('td');
        td.className = cls;
        td.textContent = v;
        tr.append(td);
      }
      table.append(tr);
    }
    box.append(table);
  }
  if (graph.entities.length > 0) {
    const p = document.createElement('p');
    p.className = 'entities';
    p.textContent = `Entities: ${graph.entities.join(' · ')}`;
    box.append(p);
  }
}
