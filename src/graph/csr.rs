//! CSR assembly from the edge lists (module docs of [`super`]): relation weights, synonym top-k
//! lists and passage entities become two arcs per undirected edge, each node's arcs sorted by
//! (target, type). O(arcs · log degree); deterministic whatever the hash-map order.

use super::{Csr, EdgeType, Store};
use crate::error::{Error, Result};

pub(super) fn build(s: &Store) -> Result<Csr> {
    let n = s.nodes.len();
    let cfg = &s.config;

    // Synonym edges: the union of both ends' lists, each unordered pair once. The cosine of a
    // pair is the same bits from either end (the dot product is symmetric).
    let mut synonyms: Vec<(u32, u32, f32)> = Vec::new();
    for (e, list) in s.neighbours.iter().enumerate() {
        for &(o, c) in list {
            let (a, b) = (e as u32, o);
            synonyms.push((a.min(b), a.max(b), c));
        }
    }
    synonyms.sort_unstable_by_key(|&(a, b, _)| (a, b));
    synonyms.dedup_by_key(|&mut (a, b, _)| (a, b));
    let context_edges: usize = s.passage_entities.iter().map(Vec::len).sum();
    let edges = s.relation_weights.len() + synonyms.len() + context_edges;
    let arcs = edges.checked_mul(2).filter(|&a| a <= u32::MAX as usize).ok_or_else(|| {
        Error::Config(format!("the graph has {edges} edges; at most {} fit its 32-bit offsets", u32::MAX / 2))
    })?;

    // Every undirected edge as (node, node, type, weight), in node ids.
    let entity = |o: u32| s.entity_nodes[o as usize];
    let syn_weight = cfg.synonym_weight;
    let each_edge = || {
        let relation = s.relation_weights.iter().map(|(&(a, b), &w)| (a, b, EdgeType::Relation, w));
        let synonym =
            synonyms.iter().map(|&(a, b, c)| (entity(a), entity(b), EdgeType::Synonym, syn_weight * c));
        let context = s.passage_entities.iter().enumerate().flat_map(move |(p, ents)| {
            let pnode = s.passage_nodes[p];
            ents.iter().map(move |&e| (pnode, e, EdgeType::Context, cfg.context_weight))
        });
        relation.chain(synonym).chain(context)
    };

    let mut offsets = vec![0u32; n + 1];
    for (a, b, _, _) in each_edge() {
        offsets[a as usize + 1] += 1;
        offsets[b as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut cursor: Vec<u32> = offsets[..n].to_vec();
    let mut arcs_buf: Vec<(u32, EdgeType, f32)> = vec![(0, EdgeType::Relation, 0.0); arcs];
    for (a, b, t, w) in each_edge() {
        for (from, to) in [(a, b), (b, a)] {
            let slot = &mut cursor[from as usize];
            arcs_buf[*slot as usize] = (to, t, w);
            *slot += 1;
        }
    }
    for u in 0..n {
        arcs_buf[offsets[u] as usize..offsets[u + 1] as usize].sort_unstable_by_key(|&(to, t, _)| (to, t));
    }
    let mut targets = Vec::with_capacity(arcs);
    let mut weights = Vec::with_capacity(arcs);
    let mut edge_types = Vec::with_capacity(arcs);
    for (to, t, w) in arcs_buf {
        targets.push(to);
        edge_types.push(t);
        weights.push(w);
    }
    Ok(Csr {
        offsets,
        targets,
        weights,
        edge_types,
        relation_edges: s.relation_weights.len(),
        synonym_edges: synonyms.len(),
        context_edges,
        ppr: std::sync::OnceLock::new(),
    })
}
