//! Channel A seeds (docs/method/spec.md §3 "Seeds, channel A (dense)"; HippoRAG 2 §3, "dense-sparse
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

/// Cosine of `query_vector` with every fact vector, `[facts]` ([`Graph::fact_cosines`]: the fact
/// vectors are held as `i8` rows with one scale each; the best `crate::graph::EXACT_TOP` and the
/// minimum are scored exactly against those rows, the others by an integer scan within its
/// error bound).
///
/// # Errors
/// [`Error::Config`] when the query vector's dimension is not the graph's.
pub fn fact_cosines(graph: &Graph, query_vector: &[f32]) -> Result<Vec<f32>> {
    graph.fact_cosines(query_vector)
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
/// scores over all facts (docs/method/spec.md §3: "score every fact by cosine; keep the top linking_top_k";
/// without an LLM the recognition-memory filter of HippoRAG 2 is skipped and the facts are kept as
/// they are). When all facts score the same, each normalised score is 1; a non-finite cosine
/// ranks last and normalises as [`min_max`] does it. One pass over `cosines` (every fact of the
/// graph, per query) keeping the best `k` in a sorted buffer: O(n + k²) time, O(k) memory.
pub fn top_facts(cosines: &[f32], k: usize) -> Vec<ScoredFact> {
    if k == 0 {
        return Vec::new();
    }
    let key = |c: f32| if c.is_finite() { c } else { f32::NEG_INFINITY };
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    // (key, fact) best first; facts come in increasing id, so a tie never displaces a kept one.
    let mut best: Vec<(f32, u32)> = Vec::with_capacity(k + 1);
    for (i, &c) in cosines.iter().enumerate() {
        if c.is_finite() {
            lo = lo.min(c);
            hi = hi.max(c);
        }
        let x = key(c);
        if best.len() == k {
            match best.last() {
                Some(last) if x.total_cmp(&last.0).is_gt() => {
                    best.pop();
                }
                _ => continue,
            }
        }
        let at = best.partition_point(|b| b.0.total_cmp(&x).is_ge());
        best.insert(at, (x, i as u32));
    }
    let (lo, hi) = (f64::from(lo), f64::from(hi));
    let flat = !(lo.is_finite() && hi.is_finite()) || hi - lo <= 0.0;
    best.into_iter()
        .map(|(_, f)| {
            let cosine = cosines[f as usize];
            let score = if flat {
                if lo.is_finite() {
                    1.0
                } else {
                    0.0
                }
            } else if !cosine.is_finite() {
                0.0
            } else {
                (f64::from(cosine) - lo) / (hi - lo)
            };
            ScoredFact { fact: f, cosine, score }
        })
        .collect()
}

/// Channel A entity weights (docs/method/spec.md §3; HippoRAG 2 `graph_search_with_fact_entities`): each
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

/// Every passage node's dense teleport weight (docs/method/spec.md §3: "every passage node also gets its
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

/// Keep the `top_n` largest finite positive entries of `x` (ties: lower index first) and zero
/// the rest; `top_n == 0` keeps every entry.
fn keep_top(x: &mut [f64], top_n: usize) {
    if top_n == 0 || x.len() <= top_n {
        return;
    }
    let mut order: Vec<usize> = (0..x.len()).collect();
    let key = |i: usize| if x[i].is_finite() { x[i] } else { f64::NEG_INFINITY };
    order.select_nth_unstable_by(top_n - 1, |&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    for &i in &order[top_n..] {
        x[i] = 0.0;
    }
}

/// Every passage node's lexical teleport weight: the passage prior of HippoRAG 2's
/// `passage_node_weight` (docs/method/spec.md §3), fed by BM25 instead of the dense cosine (CatRAG §3 keeps
/// HippoRAG 2's dense-sparse integration; the lexical evidence is Cairn's, see
/// `docs/method/graph.md`). `[passage nodes]` in [`Graph::passage_nodes`] order.
///
/// `lexical_scores[i]` is the BM25 score of corpus passage `i` for the query (0 when no query
/// term occurs in it); a passage node standing for duplicates takes the highest of theirs. Only
/// the `top_n` passage nodes by score keep a weight (0: all), each `weight × score ÷ best score`,
/// so the best passage gets `weight` and a passage with half its score half of it. An empty
/// `lexical_scores` (no lexical evidence) or no positive score gives all zeros.
///
/// # Errors
/// [`Error::Config`] when `lexical_scores` is neither empty nor covers every corpus passage of
/// the graph.
pub fn lexical_passage_weights(
    graph: &Graph,
    lexical_scores: &[f32],
    top_n: usize,
    weight: f64,
) -> Result<Vec<f64>> {
    let nodes = graph.passage_nodes();
    if lexical_scores.is_empty() || weight == 0.0 {
        return Ok(vec![0.0; nodes.len()]);
    }
    let mut per_node = Vec::with_capacity(nodes.len());
    for &node in nodes {
        let mut best = 0.0f64;
        for &i in graph.passage_indices(node) {
            let s = *lexical_scores.get(i as usize).ok_or_else(|| {
                Error::Config(format!(
                    "the graph has corpus passage {i} but only {} lexical scores were given: rebuild the graph after changing the corpus",
                    lexical_scores.len()
                ))
            })?;
            if s.is_finite() && f64::from(s) > best {
                best = f64::from(s);
            }
        }
        per_node.push(best);
    }
    keep_top(&mut per_node, top_n);
    let max = per_node.iter().copied().fold(0.0f64, f64::max);
    if max <= 0.0 {
        return Ok(vec![0.0; nodes.len()]);
    }
    Ok(per_node.into_iter().map(|s| weight * s / max).collect())
}

/// [`passage_weights`] restricted to the `top_n` passage nodes by dense score (0: every passage
/// node, HippoRAG 2's behaviour). At corpus scale (thousands of passages) the unrestricted prior
/// spreads most of the teleport mass over passages unrelated to the query.
///
/// # Errors
/// As [`passage_weights`].
pub fn dense_passage_weights(
    graph: &Graph,
    passage_scores: &[f32],
    top_n: usize,
    weight: f64,
) -> Result<Vec<f64>> {
    let mut w = passage_weights(graph, passage_scores, weight)?;
    keep_top(&mut w, top_n);
    Ok(w)
}

/// The passage vectors behind a query's dense passage scores and the query's vector under the
/// same embedder (MiniLM when the index holds its passage vectors, else the static table), for
/// [`residual_passage_weights`].
#[derive(Clone, Copy)]
pub struct PriorVectors<'a> {
    /// The query's vector, unit length, `[dim]`.
    pub query: &'a [f32],
    /// Every corpus passage's vector, `[corpus passages, dim]` (corpus order), unit length.
    pub passages: &'a crate::embed::VectorMatrix,
}

/// Query-residual passage weights, `[passage nodes]` in [`Graph::passage_nodes`] order: the
/// second hop by what the query asks beyond the passage it already found.
///
/// `top` is the passage node of the best passage by the fused first-stage evidence (the first
/// hop). The query vector q loses its component along that passage's vector p,
/// `r = q − (q·p) p`, renormalised (one Gram–Schmidt step: what the first hop already covers is
/// taken out), and every passage node gets its cosine with `r` (the highest of its duplicates);
/// the `top_n` best keep `weight × min–max normalised score` (as [`dense_passage_weights`]).
/// The first-hop passage itself gets nothing. All zeros when `weight` is 0, the passage has no
/// vector, or the residual vanishes (the query is its passage).
///
/// A multi-hop question's second passage answers the words the first passage does not hold
/// ("who married the publisher of The North Star": the North Star passage names Frederick
/// Douglass; the residual keeps "married"). Iterative multi-hop dense retrieval (MDR, Xiong et
/// al. 2021, §2) re-encodes the question together with the first passage for the second hop;
/// without a second encoder pass (the browser embeds the query once) Cairn takes the first
/// passage out of the query vector instead: one vector subtraction and one matrix-vector product.
///
/// # Errors
/// [`Error::Config`] when the vectors' dimensions disagree or a passage node names a corpus
/// index past the matrix.
pub fn residual_passage_weights(
    graph: &Graph,
    vectors: &PriorVectors<'_>,
    top: usize,
    top_n: usize,
    weight: f64,
) -> Result<Vec<f64>> {
    let nodes = graph.passage_nodes();
    let zeros = vec![0.0; nodes.len()];
    if weight <= 0.0 || vectors.passages.is_empty() {
        return Ok(zeros);
    }
    let Some(&first) = nodes.get(top).and_then(|&n| graph.passage_indices(n).first()) else {
        return Ok(zeros);
    };
    let Some(p) = vectors.passages.row(first as usize) else { return Ok(zeros) };
    if p.len() != vectors.query.len() {
        return Err(Error::Config(format!(
            "the query vector has {} dimensions and the passage vectors {}",
            vectors.query.len(),
            p.len()
        )));
    }
    let along = crate::embed::dot(vectors.query, p);
    let mut r: Vec<f32> = vectors.query.iter().zip(p).map(|(q, x)| q - along * x).collect();
    let norm = r.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm > 1e-4 && norm.is_finite()) {
        return Ok(zeros);
    }
    r.iter_mut().for_each(|x| *x /= norm);
    let scores = vectors.passages.scores(&r)?;
    let mut w = dense_passage_weights(graph, &scores, top_n, weight)?;
    if let Some(x) = w.get_mut(top) {
        *x = 0.0;
    }
    Ok(w)
}
