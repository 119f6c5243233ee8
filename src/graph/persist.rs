//! The knowledge graph in the index file (section `graph`, [`crate::format`]).
//!
//! Stored: the configuration, the node table, entity names and keys, each entity's passages and
//! facts, each passage node's corpus indices, entities and facts, the fact table, each entity's
//! synonym list (the kNN's result, the expensive part: 10⁹ pairs at 6k passages) and how many
//! entities are linked. Rebuilt on load, as pure functions of that: the lookup maps (entity by
//! key, passage by corpus index and by content hash, fact by key), relation weights (one per
//! (fact, passage) statement), the entity and fact vectors (re-embedded with the graph's
//! embedder) and the CSR. Lists are written in their in-memory order, which is deterministic.
//!
//! Body layout (little-endian; `list` = u32 count then items; `str` = u32 length then UTF-8):
//! ```text
//! config: synonym_threshold f32, synonym_top_k u32, synonym_weight f32, synonym_min_alnum u32,
//!         context_weight f32
//! nodes:  list of (kind u8: 0 entity / 1 passage, ordinal u32)
//! entities: list of (node u32, name str, key str, passages list<u32>, facts list<u32>,
//!                    neighbours list of (entity ordinal u32, cosine f32))
//! linked: u32
//! passages: list of (node u32, corpus indices list<u32>, entities list<u32>, facts list<u32>)
//! facts:  list of (subject u32, object u32, relation str, text str, passages list<u32>)
//! ```

use rustc_hash::FxHashMap;

use super::build::passage_hash;
use super::{normalize_relation, Fact, Graph, GraphBuilder, GraphConfig, NodeKind, Store};
use crate::corpus::Passage;
use crate::embed::Embedder;
use crate::error::Result;
use crate::format::{Reader, Writer};

impl Graph {
    /// Write the graph's section body (module docs) to `w`.
    ///
    /// # Errors
    /// [`crate::Error::Config`] when a count exceeds `u32::MAX`.
    pub(crate) fn write_to(&self, w: &mut Writer) -> Result<()> {
        let s = &self.store;
        let c = &s.config;
        w.f32(c.synonym_threshold);
        w.len(c.synonym_top_k)?;
        w.f32(c.synonym_weight);
        w.len(c.synonym_min_alnum)?;
        w.f32(c.context_weight);
        w.len(s.nodes.len())?;
        for &(kind, ord) in &s.nodes {
            w.u8(match kind {
                NodeKind::Entity => 0,
                NodeKind::Passage => 1,
            });
            w.u32(ord);
        }
        w.len(s.entity_nodes.len())?;
        for e in 0..s.entity_nodes.len() {
            w.u32(s.entity_nodes[e]);
            w.str(&s.entity_names[e])?;
            w.str(&s.entity_keys[e])?;
            w.u32s(&s.entity_passages[e])?;
            w.u32s(&s.entity_facts[e])?;
            let list = s.neighbours.get(e).map_or(&[][..], Vec::as_slice);
            w.len(list.len())?;
            for &(o, cos) in list {
                w.u32(o);
                w.f32(cos);
            }
        }
        w.len(s.linked)?;
        w.len(s.passage_nodes.len())?;
        for p in 0..s.passage_nodes.len() {
            w.u32(s.passage_nodes[p]);
            w.u32s(&s.passage_indices[p])?;
            w.u32s(&s.passage_entities[p])?;
            w.u32s(&s.passage_facts[p])?;
        }
        w.len(s.facts.len())?;
        for f in &s.facts {
            w.u32(f.subject);
            w.u32(f.object);
            w.str(&f.relation)?;
            w.str(&f.text)?;
            w.u32s(&f.passages)?;
        }
        Ok(())
    }

    /// Read a graph written by [`Graph::write_to`] over `passages` (the index's corpus), embed
    /// its entity names and fact texts with `embedder` (the one it was built with) and assemble
    /// the CSR. `progress(done, total)` counts embedded texts.
    ///
    /// # Errors
    /// [`crate::Error::IndexCorrupt`] when the body does not parse or is inconsistent (an id out
    /// of range, a list out of order, a node table that does not match the entity and passage
    /// tables, a corpus index past `passages`); the embedder's errors.
    pub(crate) fn read_from(
        r: &mut Reader<'_>,
        passages: &[Passage],
        embedder: &dyn Embedder,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Graph> {
        let config = GraphConfig {
            synonym_threshold: r.f32()?,
            synonym_top_k: r.u32()? as usize,
            synonym_weight: r.f32()?,
            synonym_min_alnum: r.u32()? as usize,
            context_weight: r.f32()?,
            // Not in the file: a loaded graph links new entities with the default search.
            ..GraphConfig::default()
        };
        config.validate().map_err(|e| r.corrupt(e))?;
        let mut s = Store { config, ..Store::default() };
        let n_nodes = r.count(5)?;
        s.nodes.reserve(n_nodes);
        for _ in 0..n_nodes {
            let kind = match r.u8()? {
                0 => NodeKind::Entity,
                1 => NodeKind::Passage,
                k => return Err(r.corrupt(format!("unknown node kind {k}"))),
            };
            s.nodes.push((kind, r.u32()?));
        }
        let n_entities = r.count(24)?;
        for _ in 0..n_entities {
            s.entity_nodes.push(r.u32()?);
            s.entity_names.push(r.string()?);
            s.entity_keys.push(r.string()?);
            s.entity_passages.push(r.u32s()?);
            s.entity_facts.push(r.u32s()?);
            let k = r.count(8)?;
            let mut list = Vec::with_capacity(k);
            for _ in 0..k {
                list.push((r.u32()?, r.f32()?));
            }
            s.neighbours.push(list);
        }
        s.linked = r.u32()? as usize;
        let n_passages = r.count(16)?;
        for _ in 0..n_passages {
            s.passage_nodes.push(r.u32()?);
            s.passage_indices.push(r.u32s()?);
            s.passage_entities.push(r.u32s()?);
            s.passage_facts.push(r.u32s()?);
        }
        let n_facts = r.count(20)?;
        for _ in 0..n_facts {
            s.facts.push(Fact {
                subject: r.u32()?,
                object: r.u32()?,
                relation: r.string()?,
                text: r.string()?,
                passages: r.u32s()?,
            });
        }
        r.finish()?;
        check_and_index(&mut s, passages).map_err(|m| r.corrupt(m))?;
        let mut builder = GraphBuilder::from_store(s);
        builder.embed(embedder, progress)?;
        builder.finish()
    }
}

/// Check every id and list of a freshly read store, then rebuild its lookup maps and relation
/// weights. `Err` carries what is wrong.
fn check_and_index(s: &mut Store, passages: &[Passage]) -> std::result::Result<(), String> {
    let (ne, np, nf) = (s.entity_nodes.len(), s.passage_nodes.len(), s.facts.len());
    if s.nodes.len() != ne + np {
        return Err(format!("{} nodes for {ne} entities and {np} passages", s.nodes.len()));
    }
    for (id, &(kind, ord)) in s.nodes.iter().enumerate() {
        let back = match kind {
            NodeKind::Entity => s.entity_nodes.get(ord as usize),
            NodeKind::Passage => s.passage_nodes.get(ord as usize),
        };
        if back != Some(&(id as u32)) {
            return Err(format!("node {id} does not match its {kind:?} table"));
        }
    }
    let is_kind = |id: u32, want: NodeKind| s.nodes.get(id as usize).is_some_and(|&(k, _)| k == want);
    let ascending = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
    for e in 0..ne {
        let ps = &s.entity_passages[e];
        let fs = &s.entity_facts[e];
        if !ascending(ps) || !ps.iter().all(|&p| is_kind(p, NodeKind::Passage)) {
            return Err(format!("entity {e}'s passages are not ascending passage nodes"));
        }
        if !ascending(fs) || !fs.iter().all(|&f| (f as usize) < nf) {
            return Err(format!("entity {e}'s facts are not ascending fact ids"));
        }
        if !s.neighbours[e].iter().all(|&(o, c)| (o as usize) < ne && c.is_finite()) {
            return Err(format!("entity {e}'s synonym list names an unknown entity or a non-finite cosine"));
        }
    }
    if s.linked != ne {
        return Err(format!("{} of {ne} entities are linked", s.linked));
    }
    for p in 0..np {
        let idx = &s.passage_indices[p];
        if idx.is_empty() || !idx.iter().all(|&i| (i as usize) < passages.len()) {
            return Err(format!(
                "passage node {p} has no corpus index or one past the corpus's {}",
                passages.len()
            ));
        }
        let es = &s.passage_entities[p];
        let fs = &s.passage_facts[p];
        if !ascending(es) || !es.iter().all(|&e| is_kind(e, NodeKind::Entity)) {
            return Err(format!("passage node {p}'s entities are not ascending entity nodes"));
        }
        if !ascending(fs) || !fs.iter().all(|&f| (f as usize) < nf) {
            return Err(format!("passage node {p}'s facts are not ascending fact ids"));
        }
    }
    for (i, f) in s.facts.iter().enumerate() {
        if !is_kind(f.subject, NodeKind::Entity) || !is_kind(f.object, NodeKind::Entity) {
            return Err(format!("fact {i}'s subject or object is not an entity node"));
        }
        if !ascending(&f.passages) || !f.passages.iter().all(|&p| is_kind(p, NodeKind::Passage)) {
            return Err(format!("fact {i}'s passages are not ascending passage nodes"));
        }
    }
    // Lookup maps and relation weights, as the builder keeps them.
    let mut by_key = FxHashMap::default();
    for (e, key) in s.entity_keys.iter().enumerate() {
        if by_key.insert(key.clone(), s.entity_nodes[e]).is_some() {
            return Err(format!("two entities share the key {key:?}"));
        }
    }
    s.entity_by_key = by_key;
    for p in 0..np {
        let node = s.passage_nodes[p];
        for &i in &s.passage_indices[p] {
            if s.passage_by_index.insert(i, node).is_some() {
                return Err(format!("corpus passage {i} belongs to two passage nodes"));
            }
        }
        let first = &passages[s.passage_indices[p][0] as usize];
        s.passage_by_hash.insert(passage_hash(&first.title, &first.text), node);
    }
    for (i, f) in s.facts.iter().enumerate() {
        s.fact_by_key.insert((f.subject, normalize_relation(&f.relation), f.object), i as u32);
        if f.subject != f.object {
            *s.relation_weights.entry((f.subject.min(f.object), f.subject.max(f.object))).or_insert(0.0) +=
                f.passages.len() as f32;
        }
    }
    Ok(())
}
