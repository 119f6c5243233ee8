//! Title bridges: the second hop of a multi-hop question through a passage's title entity.
//!
//! In HotpotQA and 2WikiMultihopQA (and in any encyclopaedic corpus) a passage's title is its
//! main entity, and the bridge of a two-hop question is an entity named in the first passage
//! whose own passage is titled by it ("the director of film A" → passage A names director X →
//! the passage titled X). The knowledge graph already holds the first half of that path (passage
//! A —context→ entity X); this module adds the second half at query time: each entity node is
//! mapped to the passage nodes whose title normalises to the entity's key ([`TitleIndex`], built
//! once per graph), and [`bridge_weights`] gives those passages teleport mass from the lexical
//! passage prior of the passages that name them. It is the lexical evidence of the query carried
//! one hop along the graph, as HippoRAG 2's PPR carries the dense passage prior (METHOD.md §2–3),
//! but with a weight comparable to the evidence itself instead of the share that survives two
//! damped PPR steps through a passage's many entities.
//!
//! A bridged passage keeps part of its weight only when the query also points at it: its weight
//! is scaled by `floor + (1 − floor) × its own BM25 score ÷ the best`, so an unrelated passage
//! that happens to be titled by an entity of a top passage gets at most `floor` of the weight.

use std::collections::HashMap;

use crate::graph::{normalize_entity, Graph};

/// Entity node → the passage nodes titled by it, as positions in [`Graph::passage_nodes`]
/// (module docs). Built once per graph.
#[derive(Debug, Clone, Default)]
pub struct TitleIndex {
    by_entity: HashMap<u32, Vec<u32>>,
}

/// A title without a trailing parenthesised qualifier: `"Nadja (film)"` → `"Nadja"`
/// (Wikipedia's disambiguation style). The title itself when nothing precedes the parenthesis.
pub fn title_entity_name(title: &str) -> &str {
    let t = title.trim();
    if t.ends_with(')') {
        if let Some(open) = t.rfind(" (") {
            let head = t[..open].trim_end();
            if !head.is_empty() {
                return head;
            }
        }
    }
    t
}

impl TitleIndex {
    /// Map every passage node of `graph` to the entity node its title names (exact normalised
    /// key of [`title_entity_name`] of the title, [`normalize_entity`]), if any. `title(i)` is
    /// the title of corpus passage `i`; a passage node standing for duplicates uses its first.
    pub fn build<'a>(graph: &Graph, title: impl Fn(u32) -> Option<&'a str>) -> TitleIndex {
        let mut by_entity: HashMap<u32, Vec<u32>> = HashMap::new();
        for (pos, &node) in graph.passage_nodes().iter().enumerate() {
            let Some(&first) = graph.passage_indices(node).first() else { continue };
            let Some(t) = title(first) else { continue };
            let name = title_entity_name(t);
            if normalize_entity(name).is_empty() {
                continue;
            }
            if let Some(e) = graph.entity_id(name) {
                by_entity.entry(e).or_default().push(pos as u32);
            }
        }
        TitleIndex { by_entity }
    }

    /// The passage nodes titled by entity node `entity`, as positions in
    /// [`Graph::passage_nodes`] (empty when none).
    pub fn passages_titled(&self, entity: u32) -> &[u32] {
        self.by_entity.get(&entity).map_or(&[], Vec::as_slice)
    }

    /// Entities that title at least one passage.
    pub fn len(&self) -> usize {
        self.by_entity.len()
    }

    /// No entity titles a passage.
    pub fn is_empty(&self) -> bool {
        self.by_entity.is_empty()
    }
}

/// Teleport weights of bridged passages, `[passage nodes]` in [`Graph::passage_nodes`] order
/// (module docs).
///
/// `source` is every passage node's lexical prior (from [`super::seeds::lexical_passage_weights`])
/// and `relevance` every passage node's own BM25 score ÷ the best, in [0, 1]. The `sources`
/// passage nodes with the largest positive `source` weights (ties: lower position) are the
/// sources. Every entity of a source that titles another passage node P bridges to it: P gets
/// `weight × (source's weight ÷ the best source weight) × (floor + (1 − floor) × relevance[P])`,
/// the largest over its sources, times `(2 ÷ |passages containing the bridging entity|)^specificity`
/// (an entity in two passages, the source and the one it titles, keeps it all; a generic entity
/// such as a country named in hundreds of passages bridges weakly; `specificity` 0 turns this
/// off). A source never bridges to itself; a passage that is a source
/// keeps its own prior and may be bridged to as well. With `split_title`, a title shared by
/// several passages (one article cut into paragraphs, as in MuSiQue's corpus) gives each of them
/// 1/|passages with that title| of the weight, so one bridge adds one passage's worth of mass
/// however many paragraphs carry the title. All zeros when `weight` is 0, no source has weight,
/// or the index is empty.
pub fn bridge_weights(
    graph: &Graph,
    titles: &TitleIndex,
    source: &[f64],
    relevance: &[f64],
    sources: usize,
    weight: f64,
    floor: f64,
    specificity: f64,
    split_title: bool,
) -> Vec<f64> {
    let nodes = graph.passage_nodes();
    let mut out = vec![0.0f64; nodes.len()];
    if weight <= 0.0 || titles.is_empty() || sources == 0 {
        return out;
    }
    let mut order: Vec<usize> = (0..source.len().min(nodes.len())).filter(|&i| source[i] > 0.0).collect();
    order.sort_by(|&a, &b| source[b].total_cmp(&source[a]).then(a.cmp(&b)));
    order.truncate(sources);
    let Some(&best) = order.first() else { return out };
    let top = source[best];
    for &s in &order {
        let from = nodes[s];
        let strength = source[s] / top;
        for &e in graph.entities_of(from) {
            let titled = titles.passages_titled(e);
            if titled.is_empty() {
                continue;
            }
            let spread = graph.passages_of(e).len().max(2) as f64;
            let specific = if specificity == 0.0 { 1.0 } else { (2.0 / spread).powf(specificity) };
            let share = if split_title { 1.0 / titled.len() as f64 } else { 1.0 };
            for &to in titled {
                let j = to as usize;
                if j == s || j >= out.len() {
                    continue;
                }
                let rel = relevance.get(j).copied().filter(|r| r.is_finite()).unwrap_or(0.0).clamp(0.0, 1.0);
                let w = weight * strength * specific * share * (floor + (1.0 - floor) * rel);
                if w > out[j] {
                    out[j] = w;
                }
            }
        }
    }
    out
}
