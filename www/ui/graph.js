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
  if (paths.length === 0) {
    const p = document.createElement('p');
    p.className = 'explain-none';
    p.textContent = `No path of up to 3 steps from a seed reaches this passage; it ranks by its PPR mass (${pe.score.toPrecision(3)}), ${(100 * pe.teleport).toFixed(2)}% of it from its own dense teleport share.`;
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
