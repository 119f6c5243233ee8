//! Channel B: symbolic anchoring (CatRAG §3, "Symbolic Anchoring"; docs/method/spec.md §3 "Seeds, channel
//! B"). Each entity mention found in the query (rule-based NER, [`crate::text::Pipeline::
//! query_entities`]) is mapped to at most one entity node:
//!
//! 1. **exact**: the mention's normalised key ([`crate::graph::normalize_entity`]) is an entity
//!    node's key;
//! 2. **embedding**: otherwise the entity whose name vector has the highest cosine with the
//!    mention's vector, if that cosine is at least [`super::CatragConfig::anchor_threshold`]
//!    (default 0.9). Dates and numbers skip this step: "1987" must not anchor on "1988".
//!
//! Why 0.9 and not the synonym threshold 0.8: with the static embedder, names that share a word
//! are close whatever they denote. Reading every embedding match of the 282 dev questions
//! (hotpotqa, musique, 2wikimultihopqa; rule-based OpenIE graphs) by hand, about 40% of the
//! matches with cosine in [0.8, 0.9) were the entity the question meant ("Steven Covey" →
//! "Stephen R. Covey", "Mall Cop" → "Mall Cops: Mall of America"), the rest were not ("Harlem" →
//! "Harlem Nights", "Canadian-American" → "American", "Sydeney" → "Symington"); at 0.9 and above
//! about 70% were ("Letitia Stevenson" → "Letitia Green Stevenson", "Orlam" → "Orlams"). A wrong
//! anchor is worse than none (it pulls the walk to a wrong neighbourhood), so the default keeps
//! the range where most matches are right. The threshold was set from this reading, not from the
//! retrieval metrics.
//!
//! A mention that matches nothing is dropped, never forced onto the nearest node. Each matched
//! entity then gets `ε / |passages containing it|` of teleport weight (added by the caller).

use serde::Serialize;

use crate::embed::Embedder;
use crate::error::Result;
use crate::graph::{normalize_entity, Graph};
use crate::text::{EntityKind, Mention};

/// How a mention was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// Same normalised key.
    Exact,
    /// Name vectors' cosine at or above the threshold.
    Embedding,
}

/// One query mention and what it anchored to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anchor {
    /// The mention as written in the query.
    pub mention: String,
    /// Its NER kind.
    pub kind: EntityKind,
    /// Byte range in the query.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// The entity node it anchored to; `None` when it matched nothing (dropped).
    pub node: Option<u32>,
    /// How it matched (`None` when dropped).
    pub how: Option<MatchKind>,
    /// Exact: 1. Embedding: the cosine of the match. Dropped: the best cosine seen (−1 when no
    /// embedding comparison was made), to show how near it came.
    pub similarity: f32,
}

/// Map `mentions` to entity nodes (module docs). Mentions are embedded in one batch with
/// `embedder` (the graph's embedder) when some need the embedding step. Deterministic: ties go
/// to the lower entity ordinal.
///
/// # Errors
/// The embedder's errors.
pub fn anchor_mentions(
    graph: &Graph,
    mentions: &[Mention],
    embedder: &dyn Embedder,
    threshold: f32,
) -> Result<Vec<Anchor>> {
    let mut out: Vec<Anchor> = mentions
        .iter()
        .map(|m| {
            let node = graph.entity_id(&m.text);
            Anchor {
                mention: m.text.clone(),
                kind: m.kind,
                start: m.start,
                end: m.end,
                node,
                how: node.map(|_| MatchKind::Exact),
                similarity: if node.is_some() { 1.0 } else { -1.0 },
            }
        })
        .collect();
    let pending: Vec<usize> = out
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            a.node.is_none()
                && !matches!(a.kind, EntityKind::Date | EntityKind::Number)
                && !normalize_entity(&a.mention).is_empty()
        })
        .map(|(i, _)| i)
        .collect();
    let dim = graph.entity_dim();
    if pending.is_empty() || graph.embedded_entities() == 0 || embedder.dim() != dim {
        return Ok(out);
    }
    let texts: Vec<&str> = pending.iter().map(|&i| out[i].mention.as_str()).collect();
    let rows = embedder.embed_batch(&texts, &mut |_, _| {})?;
    for (j, &i) in pending.iter().enumerate() {
        let Some(q) = rows.get(j * dim..(j + 1) * dim) else { break };
        if crate::embed::is_zero(q) {
            continue;
        }
        let Some(best) = graph.nearest_entity(q)? else { continue };
        let a = &mut out[i];
        a.similarity = best.score;
        if best.score >= threshold {
            if let Some(&node) = graph.entity_nodes().get(best.row as usize) {
                a.node = Some(node);
                a.how = Some(MatchKind::Embedding);
            }
        }
    }
    Ok(out)
}
