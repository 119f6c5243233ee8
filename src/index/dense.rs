//! Dense retrieval over passage vectors, and reciprocal-rank fusion for `hybrid`.

use std::collections::HashMap;
use std::rc::Rc;

use crate::embed::{Embedder, VectorMatrix};
use crate::error::Result;
use crate::index::Hit;

/// RRF's k (Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
/// individual Rank Learning Methods", SIGIR 2009): 60.
pub const RRF_K: f32 = 60.0;

/// How deep each ranked list goes into the fusion (or `k`, when larger).
pub const RRF_DEPTH: usize = 100;

/// One embedder's passage vectors: row `i` is passage `i` ([`super::Index::passage_text`]).
pub struct DenseField {
    embedder: Rc<dyn Embedder>,
    vectors: VectorMatrix,
}

impl std::fmt::Debug for DenseField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseField")
            .field("rows", &self.vectors.len())
            .field("dim", &self.vectors.dim())
            .finish()
    }
}

impl DenseField {
    pub(crate) fn new(embedder: Rc<dyn Embedder>, vectors: VectorMatrix) -> Self {
        DenseField { embedder, vectors }
    }

    /// The passage vectors, `[passages, dim]`.
    pub fn vectors(&self) -> &VectorMatrix {
        &self.vectors
    }

    /// The embedder that made them (and embeds queries).
    pub fn embedder(&self) -> &Rc<dyn Embedder> {
        &self.embedder
    }

    /// Heap bytes of the vectors.
    pub fn heap_bytes(&self) -> usize {
        self.vectors.as_slice().len() * std::mem::size_of::<f32>()
    }

    /// Cosine of `query`'s vector with every passage: `(passage, score)` in passage order; none
    /// when the query embeds to the zero vector (no token the embedder knows, e.g. only emoji).
    ///
    /// # Errors
    /// The embedder's, when it fails on the query.
    pub fn score_all(&self, query: &str) -> Result<Vec<(u32, f32)>> {
        if self.vectors.is_empty() {
            return Ok(Vec::new());
        }
        let q = self.embedder.embed(query)?;
        // A query with no known token embeds to the zero vector: every cosine is 0, and ranking
        // by them would return passages in corpus order as if they matched. Nothing matches.
        if crate::embed::is_zero(&q) {
            return Ok(Vec::new());
        }
        Ok(self.vectors.scores(&q)?.into_iter().enumerate().map(|(i, s)| (i as u32, s)).collect())
    }
}

/// Reciprocal-rank fusion: `score(p) = Σ_lists 1 / (k + rank_list(p))`, ranks from 1; a passage
/// absent from a list gets nothing from it. Returns `(passage, score)` in no particular order.
pub fn reciprocal_rank_fusion(lists: &[&[Hit]], k: f32) -> Vec<(u32, f32)> {
    let mut fused: HashMap<u32, f32> = HashMap::new();
    for list in lists {
        for (rank, hit) in list.iter().enumerate() {
            *fused.entry(hit.passage).or_insert(0.0) += 1.0 / (k + (rank + 1) as f32);
        }
    }
    fused.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[u32]) -> Vec<Hit> {
        ids.iter().map(|&passage| Hit { passage, score: 0.0 }).collect()
    }

    #[test]
    fn rrf_by_hand() {
        // A = [1, 2, 3], B = [3, 1]: 1 → 1/61 + 1/62, 2 → 1/62, 3 → 1/63 + 1/61.
        let mut got = reciprocal_rank_fusion(&[&hits(&[1, 2, 3]), &hits(&[3, 1])], 60.0);
        got.sort_by_key(|&(p, _)| p);
        let want = [(1, 1.0 / 61.0 + 1.0 / 62.0), (2, 1.0 / 62.0), (3, 1.0 / 63.0 + 1.0 / 61.0)];
        assert_eq!(got.len(), 3);
        for ((p, s), (wp, ws)) in got.iter().zip(want) {
            assert_eq!(*p, wp);
            assert!((s - ws as f32).abs() < 1e-7);
        }
    }
}
