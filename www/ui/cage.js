// CAGE's scores on a hit and the SVG drawing of a passage graph (a small spring layout).
import { lazyDetails, onWorkerMessage } from './channel.js';
import { svg } from './dom.js';
import { shorten } from './format.js';
import { methodInfo } from './methods.js';
import { state } from './state.js';

// CAGE (docs/method/spec.md §4) reranks a first stage's top N (methods(): `candidates`) by the coherence
// of their passage graphs. Each result shows its relevance (cos(query, passage), static
// embedder), its coherence (mean cosine of its R-GCN graph embedding with the other
// candidates') and the fused score, and a "Passage graph" toggle that asks the worker for
// Engine.cagePassageGraph and draws it as SVG.

/** A labelled score with a bar over [0, 1] (negative values show an empty bar). */
export function cageScore(label, value, title) {
  const wrap = document.createElement('span');
  wrap.className = 'cage-score';
  wrap.title = title;
  const name = document.createElement('span');
  name.className = 'cage-score-name';
  name.textContent = label;
  const bar = document.createElement('span');
  bar.className = 'bar';
  bar.setAttribute('aria-hidden', 'true');
  const fill = document.createElement('span');
  fill.className = 'bar-fill';
  fill.style.width = `${Math.round(100 * Math.min(1, Math.max(0, value)))}%`;
  bar.append(fill);
  const num = document.createElement('span');
  num.className = 'score-num';
  num.textContent = value.toFixed(3);
  wrap.append(name, bar, num);
  return wrap;
}

/** A CAGE hit's relevance, coherence and fused score. */
export function cageScoresElement(hit, method) {
  const info = methodInfo(method);
  const row = document.createElement('div');
  row.className = 'cage-scores';
  row.dataset.testid = 'cage-scores';
  row.dataset.relevance = String(hit.relevance);
  row.dataset.coherence = String(hit.coherence);
  row.dataset.score = String(hit.score);
  row.append(
    cageScore('relevance', hit.relevance, `${methodInfo(info.first_stage).short}'s score, min-max normalised over the ${info.candidates} candidates`),
    cageScore('coherence', hit.coherence, "Mean cosine of this passage's R-GCN graph embedding with those of the first stage's top candidates (CAGE's anchors), itself excluded"),
    cageScore('fused', hit.score, info.score),
  );
  return row;
}

/** The "Passage graph" toggle of a CAGE hit: the graph is fetched and drawn when first opened. */
export function cageGraphElement(id) {
  const d = lazyDetails('hit-cage-graph', 'Passage graph (CAGE)', 'cage-graph-box', 'cage-graph', id);
  d.dataset.testid = 'cage-graph';
  return d;
}

// Edge colours by relation index (RELATIONS in src/cage/graph.rs; 0, the self-loop, is implicit).
export const CAGE_RELATION_COLOURS = ['#999999', '#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#ff7f0e'];
// Nodes drawn at most; a bigger graph shows its best-connected nodes.
export const CAGE_GRAPH_MAX_DRAWN = 60;
// The engine's own cap on a passage graph's nodes (MAX_NODES in src/cage/graph.rs).
export const CAGE_ENGINE_MAX_NODES = 128;

/**
 * Which nodes of `graph` to draw: all of them up to CAGE_GRAPH_MAX_DRAWN, else the most
 * connected (degree, then text order). Returns node indices in text order.
 */
export function cageDrawnNodes(graph) {
  const n = graph.nodes.length;
  if (n <= CAGE_GRAPH_MAX_DRAWN) return [...Array(n).keys()];
  const degree = new Array(n).fill(0);
  for (const e of graph.edges) {
    degree[e.source] += 1;
    degree[e.target] += 1;
  }
  return [...Array(n).keys()]
    .sort((a, b) => degree[b] - degree[a] || a - b)
    .slice(0, CAGE_GRAPH_MAX_DRAWN)
    .sort((a, b) => a - b);
}

/**
 * Node positions: on a circle in text order (edges mostly join nearby words), then a few
 * deterministic spring iterations that pull joined nodes together and keep others apart.
 */
export function cageLayout(count, edges, size) {
  const c = size / 2;
  const r = size / 2 - 70;
  const pos = [...Array(count).keys()].map((i) => {
    const a = (2 * Math.PI * i) / Math.max(1, count) - Math.PI / 2;
    return [c + r * Math.cos(a), c + r * Math.sin(a)];
  });
  const ideal = Math.min(90, (2 * Math.PI * r) / Math.max(1, count) * 1.5);
  for (let it = 0; it < 60; it += 1) {
    const f = pos.map(() => [0, 0]);
    for (let i = 0; i < count; i += 1) {
      for (let j = i + 1; j < count; j += 1) {
        const dx = pos[i][0] - pos[j][0];
        const dy = pos[i][1] - pos[j][1];
        const d2 = Math.max(25, dx * dx + dy * dy);
        const k = (ideal * ideal) / d2;
        f[i][0] += dx * k * 0.05; f[i][1] += dy * k * 0.05;
        f[j][0] -= dx * k * 0.05; f[j][1] -= dy * k * 0.05;
      }
    }
    for (const [a, b] of edges) {
      const dx = pos[b][0] - pos[a][0];
      const dy = pos[b][1] - pos[a][1];
      const d = Math.max(1, Math.hypot(dx, dy));
      const k = ((d - ideal) / d) * 0.1;
      f[a][0] += dx * k; f[a][1] += dy * k;
      f[b][0] -= dx * k; f[b][1] -= dy * k;
    }
    const step = 8 * (1 - it / 60) + 1;
    pos.forEach((p, i) => {
      const m = Math.hypot(f[i][0], f[i][1]);
      const s = m > step ? step / m : 1;
      p[0] = Math.min(size - 60, Math.max(60, p[0] + f[i][0] * s));
      p[1] = Math.min(size - 20, Math.max(20, p[1] + f[i][1] * s));
    });
  }
  return pos;
}

/** Draw a 'cage-graph' reply in its box: the SVG, the relations' legend, and notes. */
/** Draw the CAGE passage graphs the worker sends. */
export function initCage() {
  onWorkerMessage('cage-graph', showCageGraph);
}

export function showCageGraph({ id, graph }) {
  const box = state.passageGraphs.get(id);
  state.passageGraphs.delete(id);
  if (!box) return;
  box.replaceChildren();
  const n = graph.nodes.length;
  const minFlags = graph.min_out_degree || [];
  const summary = document.createElement('p');
  summary.className = 'cage-graph-summary';
  const factual = minFlags.filter(Boolean).length;
  summary.textContent = `${n} nodes (lemmas), ${graph.edges.length} typed edges; ${factual} factual end points (minimum out-degree), weighted ×${graph.beta}.`;
  box.append(summary);
  if (n === 0) return;
  const drawn = cageDrawnNodes(graph);
  const at = new Map(drawn.map((v, i) => [v, i]));
  const edges = graph.edges.filter((e) => at.has(e.source) && at.has(e.target) && e.source !== e.target);
  if (drawn.length < n || n >= CAGE_ENGINE_MAX_NODES) {
    const cap = document.createElement('p');
    cap.className = 'cage-graph-cap';
    cap.dataset.testid = 'cage-graph-cap';
    const notes = [];
    if (n >= CAGE_ENGINE_MAX_NODES) notes.push(`the engine caps a passage graph at ${CAGE_ENGINE_MAX_NODES} nodes, so the rest of this passage is not in it`);
    if (drawn.length < n) notes.push(`only the ${drawn.length} best-connected of its ${n} nodes are drawn (${graph.edges.length - edges.length} edges to the others are left out)`);
    cap.textContent = `Capped: ${notes.join('; ')}.`;
    box.append(cap);
  }
  const size = drawn.length > 30 ? 620 : 480;
  const pos = cageLayout(drawn.length, edges.map((e) => [at.get(e.source), at.get(e.target)]), size);
  const root = svg('svg', { viewBox: `0 0 ${size} ${size}`, width: size, height: size, class: 'cage-graph', role: 'img' });
  root.dataset.testid = 'cage-graph-svg';
  const title = svg('title');
  title.textContent = 'CAGE passage graph: lemmas and typed edges';
  root.append(title);
  const defs = svg('defs');
  CAGE_RELATION_COLOURS.forEach((colour, r) => {
    const m = svg('marker', { id: `cage-arrow-${r}`, viewBox: '0 0 10 10', refX: 16, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' });
    m.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: colour }));
    defs.append(m);
  });
  root.append(defs);
  const used = new Set();
  for (const e of edges) {
    const [a, b] = [pos[at.get(e.source)], pos[at.get(e.target)]];
    used.add(e.relation);
    const line = svg('line', {
      x1: a[0].toFixed(1), y1: a[1].toFixed(1), x2: b[0].toFixed(1), y2: b[1].toFixed(1),
      stroke: CAGE_RELATION_COLOURS[e.relation] || '#555', 'stroke-width': (1 + Math.min(2, e.weight - 1)).toFixed(2),
      'marker-end': `url(#cage-arrow-${e.relation})`, class: 'cage-edge', opacity: 0.85,
    });
    line.dataset.relation = String((graph.relations || [])[e.relation] || e.relation);
    const t = svg('title');
    t.textContent = `${graph.nodes[e.source]} —${line.dataset.relation}→ ${graph.nodes[e.target]} (weight ${e.weight.toFixed(2)})`;
    line.append(t);
    root.append(line);
  }
  drawn.forEach((v, i) => {
    const [x, y] = pos[i];
    const g = svg('g', { class: minFlags[v] ? 'cage-node min-out' : 'cage-node' });
    const c = svg('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: 6, fill: minFlags[v] ? '#f39c12' : '#5d6d7e', stroke: '#fff', 'stroke-width': 1.5 });
    const t = svg('title');
    t.textContent = `${graph.nodes[v]}${minFlags[v] ? ' (minimum out-degree: a factual end point)' : ''}`;
    c.append(t);
    const label = svg('text', { x: (x + 8).toFixed(1), y: (y + 4).toFixed(1), class: 'cage-node-label' });
    label.textContent = shorten(graph.nodes[v], 16);
    g.append(c, label);
    root.append(g);
  });
  box.append(root);
  const legend = document.createElement('ul');
  legend.className = 'cage-legend';
  legend.dataset.testid = 'cage-legend';
  for (const r of [...used].sort((a, b) => a - b)) {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = CAGE_RELATION_COLOURS[r] || '#555';
    li.append(sw, (graph.relations || [])[r] || `relation ${r}`);
    legend.append(li);
  }
  const li = document.createElement('li');
  const dot = document.createElement('span');
  dot.className = 'swatch dot';
  dot.style.background = '#f39c12';
  li.append(dot, `minimum out-degree (×${graph.beta})`);
  legend.append(li);
  box.append(legend);
}
