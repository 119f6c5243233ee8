//! Channel A seeds (METHOD.md §3 "Seeds, channel A (dense)"; HippoRAG 2 §3, "dense-sparse
//! integration" and recognition memory without the LLM filter; CatRAG §3 keeps them): the top
//! facts by similarity to the query, entity weights from those facts, and every passage node's
//! dense weight.

use std::cmp::Ordering;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::graph::Graph;

/// A fact kept as a seed fact (one of the top `linking_top_k`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredFact {
    /// Fact id (index into [`Graph::facts`]).
    pub fact: u32,
    /// Cosine between the query and the fact's text vector, in [-1, 1].
    pub cosine: f32,
    /// The cosine min–max normalised over all facts of the graph, in [0, 1] (HippoRAG 2's
    /// `get_fact_scores`): what the entity weights are made of.
    pub score: f64,
}

/// Cosine of `query_vector` with every fact vector, `[facts]`.
///
/// # Errors
/// [`Error::Config`] when the query vector's dimension is not the graph's.
pub fn fact_cosines(graph: &Graph, query_vector: &[f32]) -> Result<Vec<f32>> {
    let m = graph.fact_vectors();
    if m.is_empty() {
        return Ok(Vec::new());
    }
    m.scores(query_vector)
}

/// Min–max normalisation of `x` to [0, 1]: `(x − min) / (max − min)`. When every value is the
/// same (or there is one), each becomes `if_flat`. Non-finite inputs count as the minimum.
pub fn min_max(x: &[f32], if_flat: f64) -> Vec<f64> {
    let finite = |v: f32| if v.is_finite() { Some(f64::from(v)) } else { None };
    let lo = x.iter().filter_map(|&v| finite(v)).fold(f64::INFINITY, f64::min);
    let hi = x.iter().filter_map(|&v| finite(v)).fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) || hi - lo <= 0.0 {
        return vec![if lo.is_finite() { if_flat } else { 0.0 }; x.len()];
    }
    x.iter().map(|&v| finite(v).map_or(0.0, |v| (v - lo) / (hi - lo))).collect()
}

/// The top `k` facts by cosine (ties: lower fact id first), with their min–max normalised
/// scores over all facts (METHOD.md §3: "score every fact by cosine; keep the top linking_top_k";
/// without an LLM the recognition-memory filter of HippoRAG 2 is skipped and the facts are kept as
/// they are). When all facts score the same, each normalised score is 1.
pub fn top_facts(cosines: &[f32], k: usize) -> Vec<ScoredFact> {
    let norm = min_max(cosines, 1.0);
    let mut order: Vec<u32> = (0..cosines.len() as u32).collect();
    let key = |i: u32| {
        let c = cosines[i as usize];
        if c.is_finite() {
            c
        } else {
            f32::NEG_INFINITY
        }
    };
    let cmp = |a: &u32, b: &u32| key(*b).total_cmp(&key(*a)).then(a.cmp(b));
    if k == 0 {
        return Vec::new();
    }
    if order.len() > k {
        order.select_nth_unstable_by(k - 1, cmp);
        order.truncate(k);
    }
    order.sort_unstable_by(cmp);
    order
        .into_iter()
        .map(|f| ScoredFact { fact: f, cosine: cosines[f as usize], score: norm[f as usize] })
        .collect()
}

/// Channel A entity weights (METHOD.md §3; HippoRAG 2 `graph_search_with_fact_entities`): each
/// entity (subject or object) of a seed fact gets `score / |passages containing the entity|`
/// (divided by 1 when it is in no passage), averaged over the seed facts it appears in; the top
/// `top_k` entities by weight are kept (ties: lower node id). Returns `(entity node, weight)`,
/// best first. A fact whose subject and object are the same node counts it once.
pub fn entity_weights(graph: &Graph, facts: &[ScoredFact], top_k: usize) -> Vec<(u32, f64)> {
    // (node, sum, occurrences) in first-seen order; a handful of entries.
    let mut acc: Vec<(u32, f64, u32)> = Vec::new();
    for f in facts {
        let Some(fact) = graph.facts().get(f.fact as usize) else { continue };
        let ends =
            if fact.subject == fact.object { vec![fact.subject] } else { vec![fact.subject, fact.object] };
        for e in ends {
            let passages = graph.passages_of(e).len().max(1) as f64;
            let w = f.score / passages;
            match acc.iter_mut().find(|x| x.0 == e) {
                Some(x) => {
                    x.1 += w;
                    x.2 += 1;
                }
                None => acc.push((e, w, 1)),
            }
        }
    }
    let mut out: Vec<(u32, f64)> = acc.into_iter().map(|(e, s, n)| (e, s / f64::from(n))).collect();
    out.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then(a.0.cmp(&b.0)));
    out.truncate(top_k);
    out
}

/// Every passage node's dense teleport weight (METHOD.md §3: "every passage node also gets its
/// min–max normalised dense score × passage_node_weight"; HippoRAG 2's `passage_node_weight`
/// 0.05), `[passage nodes]` in [`Graph::passage_nodes`] order.
///
/// `passage_scores[i]` is the dense cosine of corpus passage `i`; a passage node standing for
/// several duplicate passages takes the highest of theirs. The min–max runs over passage nodes;
/// when they all score the same the weights are 0 (the dense channel says nothing).
///
/// # Errors
/// [`Error::Config`] when a passage node names a corpus index past `passage_scores`.
pub fn passage_weights(graph: &Graph, passage_scores: &[f32], weight: f64) -> Result<Vec<f64>> {
    let mut per_node = Vec::with_capacity(graph.passage_nodes().len());
    for &node in graph.passage_nodes() {
        let mut best = f32::NEG_INFINITY;
        for &i in graph.passage_indices(node) {
            let s = *passage_scores.get(i as usize).ok_or_else(|| {
                Error::Config(format!(
                    "the graph has corpus passage {i} but only {} dense scores were given: rebuild the graph after changing the corpus",
                    passage_scores.len()
                ))
            })?;
            if s.is_finite() && s > best {
                best = s;
            }
        }
        per_node.push(best);
    }
    Ok(min_max(&per_node, 0.0).into_iter().map(|x| x * weight).collect())
}
