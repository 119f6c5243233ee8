// The knowledge graph: its summary under the corpus, and the SVG "Why this passage?" drawing of
// a graph method's walk.
import { el, svg } from './dom.js';
import { fmt, shorten } from './format.js';
import { state } from './state.js';


export function renderGraphInfo() {
  const g = state.graph;
  el.graphInfo.hidden = !g;
  if (!g) return;
  const c = g.counts;
  const ex = g.extract;
  el.graphInfo.replaceChildren();
  const head = document.createElement('strong');
  head.textContent = 'Knowledge graph';
  el.graphInfo.append(head, ` · ${fmt(c.entity_nodes)} entities · ${fmt(c.facts)} facts (${fmt(g.triples)} triples)`);
  const edges = document.createElement('div');
  edges.className = 'graph-edges';
  const total = Math.max(1, c.relation_edges + c.synonym_edges + c.context_edges);
  for (const [name, n] of [['relation', c.relation_edges], ['synonym', c.synonym_edges], ['context', c.context_edges]]) {
    const row = document.createElement('div');
    row.className = `edge-row edge-${name}`;
    const label = document.createElement('span');
    label.className = 'edge-label';
    label.textContent = `${name} edges`;
    const bar = document.createElement('span');
    bar.className = 'edge-bar';
    const fill = document.createElement('span');
    fill.className = 'edge-fill';
    fill.style.width = `${Math.max(1, Math.round((100 * n) / total))}%`;
    bar.append(fill);
    const num = document.createElement('span');
    num.className = 'edge-num';
    num.textContent = fmt(n);
    row.append(label, bar, num);
    edges.append(row);
  }
  el.graphInfo.append(edges);
  if (ex && ex.non_english_passages > 0) {
    const note = document.createElement('p');
    note.className = 'graph-note';
    note.dataset.testid = 'non-english-note';
    note.textContent =
      `Triples were extracted from English text only: ${fmt(ex.non_english_passages)} of ${fmt(ex.passages)} passages ` +
      'did not look English and are in the graph without facts (BM25 and embeddings still find them).';
    el.graphInfo.append(note);
  }
}


/** Colour of an arc by this query's multiplier: boosted, demoted, cut, or as stored. */
export function multiplierColour(m) {
  if (m === 0) return '#c0392b';
  if (m > 1) return '#1e8449';
  if (m < 1) return '#d68910';
  return '#7f8c8d';
}

// Teleport sources, in drawing order: [field of retrieval.sources / pe.sources, label, colour].
const SOURCES = [
  ['fact_seeds', 'fact seeds', '#2e86c1'],
  ['anchors', 'query entities (anchors)', '#8e44ad'],
  ['dense_prior', 'dense prior', '#95a5a6'],
  ['lexical_prior', 'lexical prior (BM25)', '#d4ac0d'],
  ['title_bridges', 'title bridges', '#e67e22'],
  ['query_titles', 'query titles', '#c0392b'],
  ['residual', 'query residual', '#16a085'],
];

/** A stacked bar of `shares` (fields of SOURCES; the bar's full width is `total`). */
function sourceBar(label, shares, total) {
  const row = document.createElement('div');
  row.className = 'explain-source-row';
  const name = document.createElement('span');
  name.className = 'explain-source-label';
  name.textContent = label;
  const bar = document.createElement('div');
  bar.className = 'explain-source-bar';
  const parts = [];
  for (const [key, text, colour] of SOURCES) {
    const x = shares[key] || 0;
    if (!(x > 0) || !(total > 0)) continue;
    const seg = document.createElement('span');
    seg.style.width = `${(100 * x) / total}%`;
    seg.style.background = colour;
    seg.title = `${text}: ${(100 * x).toFixed(2)}% of the teleport vector`;
    bar.append(seg);
    parts.push(`${text} ${((100 * x) / total).toFixed(x / total < 0.1 ? 1 : 0)}%`);
  }
  const words = document.createElement('span');
  words.className = 'explain-source-words';
  words.textContent = parts.length ? parts.join(' · ') : 'none';
  row.append(name, bar, words);
  return row;
}

/**
 * Where the walk started and what changed it, read from the search's trace: the teleport vector
 * by source for the whole query and for this passage, and the arcs the key-fact boost, pruning
 * and the edge tiers changed.
 */
function sourcesElement(explanation, pe) {
  const r = explanation.retrieval || {};
  const box = document.createElement('div');
  box.className = 'explain-sources';
  box.dataset.testid = 'explain-sources';
  const all = r.sources || {};
  const total = SOURCES.reduce((a, [k]) => a + (all[k] || 0), 0);
  box.append(sourceBar('Walk starts (whole query)', all, total));
  const own = pe.sources || {};
  const ownTotal = SOURCES.reduce((a, [k]) => a + (own[k] || 0), 0);
  box.append(sourceBar(`This passage's own start (${(100 * ownTotal).toFixed(1)}% of all)`, own, ownTotal));
  const c = explanation.changes;
  if (c) {
    const p = document.createElement('p');
    p.className = 'explain-changes';
    const boosted = (pe.changed_arcs || []).length;
    p.textContent = `Walk changed: ${c.boosted} arcs boosted by key facts${boosted ? ` (${boosted} into this passage)` : ''}, ${c.pruned} pruned; edge tiers (${explanation.tierer || 'none'}): ${c.direct} direct, ${c.high} high, ${c.weak} weak, ${c.irrelevant} cut.`;
    box.append(p);
  }
  return box;
}

/**
 * "Why this passage?": the seeds, the entities and the passage on the best paths of the walk,
 * drawn left to right (seeds, then entities, then the passage); edge width by the walk's
 * transition probability, colour by this query's multiplier.
 */
export function explainElement(explanation, pe, hit) {
  const d = document.createElement('details');
  d.className = 'hit-explain';
  d.dataset.testid = 'explain';
  const s = document.createElement('summary');
  s.textContent = 'Why this passage? (graph walk)';
  d.append(s);

  const seedLine = document.createElement('p');
  seedLine.className = 'explain-seeds';
  const seeds = explanation.retrieval && explanation.retrieval.seeds ? explanation.retrieval.seeds : [];
  seedLine.textContent = seeds.length
    ? `Seeds: ${seeds.slice(0, 8).map((x) => `${x.name} (${x.channel === 'anchor' ? 'query entity' : x.channel === 'both' ? 'query entity + fact' : 'fact'}, ${(100 * x.share).toFixed(1)}%)`).join(' · ')}`
    : 'No entity seeds: the ranking fell back to dense similarity.';
  d.append(seedLine);

  const paths = pe.paths || [];
  if (explanation.retrieval && explanation.retrieval.fallback) {
    const p = document.createElement('p');
    p.className = 'explain-none';
    p.textContent = `With no seed to start a walk from, this passage ranks by its dense similarity to the query (${pe.score.toPrecision(3)}).`;
    d.append(p);
    return d;
  }
  d.append(sourcesElement(explanation, pe));
  if (paths.length === 0) {
    const p = document.createElement('p');
    p.className = 'explain-none';
    p.textContent = `No path of up to 3 steps from a seed reaches this passage; it ranks by its PPR mass (${pe.score.toPrecision(3)}) and its own start mass (${(100 * pe.teleport).toFixed(2)}% of the teleport vector, above).`;
    d.append(p);
    return d;
  }
  // columns: seeds at 0, the passage in the last column, entities by their step
  const cols = Math.max(...paths.map((p) => p.nodes.length));
  const columns = Array.from({ length: cols }, () => []);
  const place = new Map(); // node id → {col, row}
  for (const path of paths) {
    path.nodes.forEach((n, i) => {
      const col = i === path.nodes.length - 1 ? cols - 1 : i;
      if (!place.has(n.node)) {
        place.set(n.node, { col, row: columns[col].length, n });
        columns[col].push(n);
      }
    });
  }
  const W = 640;
  const rowH = 34;
  const H = Math.max(...columns.map((c) => c.length)) * rowH + 24;
  const colX = (c) => (cols === 1 ? W / 2 : 95 + (c * (W - 190)) / (cols - 1));
  const pos = (id) => {
    const p = place.get(id);
    const colH = columns[p.col].length * rowH;
    return { x: colX(p.col), y: (H - colH) / 2 + p.row * rowH + rowH / 2 };
  };
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', class: 'explain-graph', role: 'img' });
  const title = svg('title');
  title.textContent = 'Paths of the graph walk from the seeds to this passage';
  root.append(title);
  const drawn = new Set();
  for (const path of paths) {
    path.edges.forEach((e, i) => {
      const a = path.nodes[i].node;
      const b = path.nodes[i + 1].node;
      const key = `${a}-${b}`;
      if (drawn.has(key)) return;
      drawn.add(key);
      const p = pos(a);
      const q = pos(b);
      const line = svg('line', {
        x1: p.x, y1: p.y, x2: q.x, y2: q.y,
        stroke: multiplierColour(e.multiplier),
        'stroke-width': (1 + 7 * Math.min(1, e.transition)).toFixed(2),
        'stroke-dasharray': e.multiplier === 0 ? '4 3' : 'none',
        'stroke-linecap': 'round',
        class: `edge ${e.edge_type}`,
      });
      const t = svg('title');
      const cause = e.cause ? ` (${e.cause.kind.replace(/_/g, ' ')}${e.cause.tier ? `: ${e.cause.tier}` : ''})` : '';
      t.textContent = `${e.edge_type} edge, weight ${e.static_weight} × ${e.multiplier}${cause}; step probability ${e.transition.toFixed(3)}${e.fact ? `\nfact: ${e.fact}` : ''}`;
      line.append(t);
      root.append(line);
    });
  }
  const seedIds = new Set(seeds.map((x) => x.node));
  const anchorIds = new Set(seeds.filter((x) => x.channel !== 'facts').map((x) => x.node));
  for (const [id, { n }] of place) {
    const { x, y } = pos(id);
    const kind = n.kind === 'passage' ? 'passage' : anchorIds.has(id) ? 'anchor' : seedIds.has(id) ? 'seed' : 'entity';
    const g = svg('g', { class: `node ${kind}` });
    const shape = kind === 'passage' ? svg('rect', { x: x - 7, y: y - 7, width: 14, height: 14, rx: 2 }) : svg('circle', { cx: x, cy: y, r: 7 });
    const label = svg('text', { x, y: y - 11, 'text-anchor': 'middle' });
    const name = kind === 'passage' && hit ? hit.title || hit.id : n.name;
    label.textContent = shorten(name, 24);
    const t = svg('title');
    t.textContent = `${name} (${kind}), PPR mass ${n.mass.toPrecision(3)}`;
    g.append(shape, label, t);
    root.append(g);
  }
  d.append(root);
  const legend = document.createElement('p');
  legend.className = 'explain-legend';
  for (const [cls, text] of [['anchor', 'query entity'], ['seed', 'fact seed'], ['entity', 'entity'], ['passage', 'passage'], ['same', 'edge as stored'], ['up', 'boosted edge'], ['down', 'demoted edge'], ['cut', 'cut edge']]) {
    const span = document.createElement('span');
    span.className = `legend-item ${cls}`;
    span.textContent = text;
    legend.append(span);
  }
  d.append(legend);
  return d;
}
