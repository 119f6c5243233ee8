//! Coarse edge pruning (CatRAG §3, "Query-Aware Dynamic Edge Weighting", stage I "Coarse-Grained
//! Candidate Pruning"; docs/method/spec.md §3 "Coarse edge pruning"), and the candidate edges it hands to
//! the tierer.
//!
//! For a seed entity, the candidates are its relation edges: one per neighbouring entity joined
//! to it by at least one fact (synonym edges are never tiered: they carry no fact to judge, as in
//! CatRAG's code, which skips "semantic similarity links"). Each candidate is scored by the
//! highest cosine between the query and a fact joining the two. When a seed has more than
//! `K_edge` (15) candidates, the best 15 are kept (ties: lower neighbour node id) and the others
//! are demoted to the Weak multiplier without being tiered.

use serde::Serialize;

use super::tier::TierCandidate;
use crate::graph::{EdgeType, Graph};

/// A seed's candidate edges after pruning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Neighbourhood {
    /// The seed entity node.
    pub seed: u32,
    /// Candidates kept for tiering, best first (similarity descending, then neighbour id).
    pub kept: Vec<TierCandidate>,
    /// Candidates demoted to Weak by pruning, in the same order.
    pub pruned: Vec<TierCandidate>,
}

/// The ids present in both ascending lists.
fn intersect_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// The relation-edge candidates of `seed`, scored, best first (module docs). `fact_cosines` is
/// the query's cosine with every fact (`[facts]`).
pub fn candidates(graph: &Graph, seed: u32, fact_cosines: &[f32]) -> Vec<TierCandidate> {
    let csr = graph.csr();
    let seed_facts = graph.facts_of_entity(seed);
    let mut out = Vec::new();
    for a in csr.arcs_of(seed) {
        if csr.edge_types[a] != EdgeType::Relation {
            continue;
        }
        let neighbour = csr.targets[a];
        let joining = intersect_sorted(seed_facts, graph.facts_of_entity(neighbour));
        let similarity = joining
            .iter()
            .filter_map(|&f| fact_cosines.get(f as usize).copied())
            .filter(|c| c.is_finite())
            .fold(-1.0f32, f32::max);
        out.push(TierCandidate { neighbour, arc: a as u32, joining_facts: joining, similarity });
    }
    out.sort_by(|x, y| y.similarity.total_cmp(&x.similarity).then(x.neighbour.cmp(&y.neighbour)));
    out
}

/// Coarse pruning of one seed (module docs): keep the best `k_edge` candidates when there are
/// more, else all. With `enabled == false` (the `--no-prune` ablation) nothing is pruned.
pub fn prune(graph: &Graph, seed: u32, fact_cosines: &[f32], k_edge: usize, enabled: bool) -> Neighbourhood {
    let mut kept = candidates(graph, seed, fact_cosines);
    let pruned = if enabled && kept.len() > k_edge { kept.split_off(k_edge) } else { Vec::new() };
    Neighbourhood { seed, kept, pruned }
}
