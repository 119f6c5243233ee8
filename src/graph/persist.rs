//! The knowledge graph in the index file (section `graph`, [`crate::format`], version 3).
//!
//! **Stored**: the configuration; the node kinds in node-id order; each passage node's corpus
//! indices; entity names (and the key of an entity only when it is not the
//! [`normalize_entity`] of its name); the fact table (subject, object, relation, passages; the
//! text only when it is not "name relation name"); and the synonym pairs (the kNN's result,
//! the expensive part: 10⁹ pairs at 6k passages).
//!
//! **Derived on load** (pure functions of what is stored, so the loaded graph equals the saved
//! one; the round-trip tests compare every table): the entity and passage node tables (entity
//! and passage ordinals ascend with node ids); each passage's facts (the facts that name it)
//! and entities (their subjects and objects); each entity's facts and passages; the lookup maps
//! (entity by key, passage by corpus index and by content hash, fact by key); relation weights
//! (one per (fact, passage) statement); the entity and fact vectors (re-embedded with the graph's
//! embedder); the synonym cosines (the dot product of the two re-embedded entity vectors,
//! [`crate::embed::dot`], the very function the kNN scores pairs with, so the same bits) and each
//! entity's top-k list (its stored partners ordered by cosine, then ordinal, cut to
//! `synonym_top_k`: an entity's top-k neighbours are all among its stored partners, and any
//! other partner ranks below them); the CSR. The writer checks that each derivation gives back
//! the lists it holds. When the lists are not the top-k of their pairs (another synonym search
//! may miss a neighbour) but are sorted best first with dot-product cosines, it adds which end
//! lists each pair (storage 2); when they are not sorted, it stores the lists and derives the
//! cosines (3); otherwise it stores lists and cosines as they are (1).
//!
//! Body layout (`v` = varint [`Writer::varint`], `z` = zigzag varint, `stream` = v byte length
//! then its bytes; `\n`-ended = UTF-8 strings each followed by a newline, which names,
//! relations and fact texts never contain, their white space being collapsed):
//! ```text
//! config:   str (u32 length + UTF-8): GraphConfig as JSON (fields by name, so a new field with
//!           a default reads older files)
//! counts:   v entities, v passage nodes, v facts, v relations
//! stream kinds:     v runs, then v run lengths: entity run, passage run, entity run, … (node ids)
//! stream corpus:    per passage node v count, then z (index − previous index − 1) per index
//! stream names:     entity names, \n-ended, in ordinal order
//! stream keys:      v count, then per exception v (ordinal − previous − 1), key as v str
//! stream relations: the distinct relations, \n-ended, most used first (ties: first use)
//! stream fact entities:  per fact z (seen − subject ordinal), z (seen − object ordinal), where
//!                        seen = 1 + the largest ordinal so far (a new entity is 0)
//! stream fact relations: per fact v (row of the relation table)
//! stream fact passages:  per fact v count, z (first ordinal − the previous fact's first),
//!                        then v (ordinal − previous − 1) per further passage
//! stream fact texts:     v count, then per exception v (fact − previous − 1), text as v str
//! u8 synonym storage:    0 = pairs (cosines and top-k lists derived), 1 = lists and cosines as
//!                        held, 2 = pairs and which end lists each, 3 = lists as held, cosines
//!                        derived
//! stream synonym counts: per entity v (0, 2: partners with a higher ordinal; 1, 3: list
//!                        length); with 2, then one byte per pair in pair order: 0 both ends
//!                        list the other, 1 only the lower ordinal, 2 only the higher
//! stream synonyms:       0, 2: per partner v (ordinal − previous − 1), previous starting at
//!                        the entity's own; 1: per list entry v ordinal, f32 cosine; 3: per
//!                        list entry z (ordinal − previous), previous starting at the entity's
//! ```

use rustc_hash::FxHashMap;

use super::build::{entity_order, join_fact_text, passage_hash};
use super::{normalize_entity, EntityRows, Fact, Graph, GraphBuilder, GraphConfig, NodeKind, Store};
use crate::corpus::Passage;
use crate::embed::{dot, Embedder};
use crate::error::{Error, Result};
use crate::format::{Reader, Writer};

/// Each entity's synonym list from the unordered pairs `pairs[a]` (partners of `a` with a
/// higher ordinal): cosine = [`dot`] of the two rows of `vectors` (`dim` wide), every list
/// sorted best first (cosine descending, then ordinal ascending). Without `dirs`, both ends get
/// the pair and every list is cut to `k` (storage 0); with `dirs` (one code per pair, aligned
/// with `pairs`: 0 both ends list the other, 1 only the lower ordinal, 2 only the higher), only
/// the ends the code names get it, and nothing is cut (storage 2).
fn lists_from_pairs(
    pairs: &[Vec<u32>],
    dirs: Option<&[Vec<u8>]>,
    rows: &EntityRows<'_>,
    k: usize,
) -> Vec<Vec<(u32, f32)>> {
    let (mut first, mut second) = (Vec::new(), Vec::new());
    let mut lists: Vec<Vec<(u32, f32)>> = vec![Vec::new(); pairs.len()];
    for (a, partners) in pairs.iter().enumerate() {
        if !partners.is_empty() {
            rows.row_into(a as u32, &mut first);
        }
        for (j, &b) in partners.iter().enumerate() {
            let c = dot(&first, rows.row(b, &mut second));
            let code = dirs.and_then(|d| d.get(a)).and_then(|d| d.get(j)).copied().unwrap_or(0);
            if code != 2 {
                lists[a].push((b, c));
            }
            if code != 1 {
                lists[b as usize].push((a as u32, c));
            }
        }
    }
    for l in &mut lists {
        l.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        if dirs.is_none() {
            l.truncate(k);
        }
    }
    lists
}

/// Write `strings` each followed by `\n`.
fn lines<'s>(strings: impl Iterator<Item = &'s str>) -> Result<Writer> {
    let mut w = Writer::default();
    for s in strings {
        if s.contains('\n') {
            return Err(Error::Config(format!("{s:?} holds a line break: the graph cannot be saved")));
        }
        w.buf.extend_from_slice(s.as_bytes());
        w.u8(b'\n');
    }
    Ok(w)
}

/// Read exactly `n` `\n`-ended strings from a stream.
fn read_lines(r: &mut Reader<'_>, n: usize) -> Result<Vec<String>> {
    let all = r.take(r.remaining())?;
    let text = std::str::from_utf8(all).map_err(|_| r.corrupt("the strings are not UTF-8"))?;
    let mut out: Vec<String> = Vec::with_capacity(n.min(all.len()));
    let mut rest = text;
    while let Some(end) = rest.find('\n') {
        if out.len() == n {
            return Err(r.corrupt(format!("more than {n} strings")));
        }
        out.push(rest[..end].to_string());
        rest = &rest[end + 1..];
    }
    if out.len() != n || !rest.is_empty() {
        return Err(r.corrupt(format!("{} strings where {n} were expected", out.len())));
    }
    Ok(out)
}

impl Graph {
    /// Write the graph's section body (module docs) to `w`.
    ///
    /// # Errors
    /// [`crate::Error::Config`] when a count exceeds `u32::MAX`, a name holds a line break, or
    /// the store breaks an invariant the layout relies on (ordinals ascending with node ids).
    pub(crate) fn write_to(&self, w: &mut Writer) -> Result<()> {
        let s = &self.store;
        let (ne, np, nf) = (s.entity_nodes.len(), s.passage_nodes.len(), s.facts.len());
        let broken = |what: &str| Error::Config(format!("the graph cannot be saved: {what}"));
        let ascending = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
        if !ascending(&s.entity_nodes) || !ascending(&s.passage_nodes) || s.nodes.len() != ne + np {
            return Err(broken("its node tables are out of order"));
        }
        let config = serde_json::to_string(&s.config).map_err(|e| Error::Config(e.to_string()))?;
        w.str(&config)?;

        // Relation table, most used first (ties: first use).
        let mut rel_ids: FxHashMap<&str, usize> = FxHashMap::default();
        let mut rels: Vec<(&str, usize)> = Vec::new();
        for f in &s.facts {
            let i = *rel_ids.entry(f.relation.as_str()).or_insert_with(|| {
                rels.push((f.relation.as_str(), 0));
                rels.len() - 1
            });
            rels[i].1 += 1;
        }
        let mut order: Vec<usize> = (0..rels.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(rels[i].1), i));
        let mut row_of = vec![0u32; rels.len()];
        for (row, &i) in order.iter().enumerate() {
            row_of[i] = row as u32;
        }

        w.vlen(ne)?;
        w.vlen(np)?;
        w.vlen(nf)?;
        w.vlen(rels.len())?;

        let mut kinds = Writer::default();
        let mut runs: Vec<usize> = Vec::new();
        let mut want = NodeKind::Entity;
        let mut run = 0usize;
        for &(kind, _) in &s.nodes {
            if kind != want {
                runs.push(run);
                run = 0;
                want = kind;
            }
            run += 1;
        }
        runs.push(run);
        kinds.vlen(runs.len())?;
        for r in runs {
            kinds.vlen(r)?;
        }
        w.stream(kinds)?;

        let mut corpus = Writer::default();
        let mut prev = -1i64;
        for idx in &s.passage_indices {
            corpus.vlen(idx.len())?;
            for &i in idx {
                corpus.zigzag(i64::from(i) - prev - 1)?;
                prev = i64::from(i);
            }
        }
        w.stream(corpus)?;

        w.stream(lines(s.entity_names.iter().map(String::as_str))?)?;
        let mut keys = Writer::default();
        let exceptions: Vec<usize> =
            (0..ne).filter(|&e| normalize_entity(&s.entity_names[e]) != s.entity_keys[e]).collect();
        keys.vlen(exceptions.len())?;
        let mut prev = -1i64;
        for e in exceptions {
            keys.vlen((e as i64 - prev - 1) as usize)?;
            keys.vstr(&s.entity_keys[e])?;
            prev = e as i64;
        }
        w.stream(keys)?;
        w.stream(lines(order.iter().map(|&i| rels[i].0))?)?;

        let (mut ents, mut frels, mut fpass, mut texts) =
            (Writer::default(), Writer::default(), Writer::default(), Writer::default());
        let mut seen = 0i64;
        let mut prev_first = 0i64;
        let mut text_exceptions: Vec<usize> = Vec::new();
        for (i, f) in s.facts.iter().enumerate() {
            let ord = |node: u32| {
                s.entity_ordinal(node).ok_or_else(|| broken("a fact names a passage as its entity"))
            };
            let (so, oo) = (ord(f.subject)?, ord(f.object)?);
            for o in [so as i64, oo as i64] {
                ents.zigzag(seen - o)?;
                seen = seen.max(o + 1);
            }
            frels.varint(row_of[rel_ids[f.relation.as_str()]]);
            fpass.vlen(f.passages.len())?;
            let mut prev = -1i64;
            for (j, &p) in f.passages.iter().enumerate() {
                let po =
                    s.passage_ordinal(p).ok_or_else(|| broken("a fact names an entity as its passage"))?
                        as i64;
                if j == 0 {
                    fpass.zigzag(po - prev_first)?;
                    prev_first = po;
                } else {
                    fpass.vlen((po - prev - 1) as usize)?;
                }
                prev = po;
            }
            if join_fact_text(&s.entity_names[so], &f.relation, &s.entity_names[oo]) != f.text {
                text_exceptions.push(i);
            }
        }
        texts.vlen(text_exceptions.len())?;
        let mut prev = -1i64;
        for i in text_exceptions {
            texts.vlen((i as i64 - prev - 1) as usize)?;
            texts.vstr(&s.facts[i].text)?;
            prev = i as i64;
        }
        for st in [ents, frels, fpass, texts] {
            w.stream(st)?;
        }

        // Synonyms: the unordered pairs when the lists follow from them (module docs).
        let mut pairs: Vec<Vec<u32>> = vec![Vec::new(); ne];
        for (a, list) in s.neighbours.iter().enumerate() {
            for &(b, _) in list {
                let (lo, hi) = ((a as u32).min(b), (a as u32).max(b));
                if (hi as usize) < ne {
                    pairs[lo as usize].push(hi);
                }
            }
        }
        for p in &mut pairs {
            p.sort_unstable();
            p.dedup();
        }
        let rows = s.entity_rows();
        let usable = rows.len() == ne && rows.dim() > 0 && s.neighbours.len() == ne;
        let same = |lists: Vec<Vec<(u32, f32)>>| {
            lists.iter().zip(&s.neighbours).all(|(a, b)| {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| x.0 == y.0 && x.1.to_bits() == y.1.to_bits())
            })
        };
        let k = s.config.synonym_top_k;
        // Which end lists the other, per pair (for storage 2).
        let listed =
            |a: u32, b: u32| s.neighbours.get(a as usize).is_some_and(|l| l.iter().any(|&(o, _)| o == b));
        let mut dirs: Vec<Vec<u8>> = Vec::new();
        let mode = if usable && same(lists_from_pairs(&pairs, None, &rows, k)) {
            0
        } else if usable && {
            dirs = pairs
                .iter()
                .enumerate()
                .map(|(a, ps)| {
                    ps.iter()
                        .map(|&b| match (listed(a as u32, b), listed(b, a as u32)) {
                            (true, false) => 1,
                            (false, true) => 2,
                            _ => 0,
                        })
                        .collect()
                })
                .collect();
            same(lists_from_pairs(&pairs, Some(&dirs), &rows, k))
        } {
            2
        } else {
            1
        };
        let (mut counts, mut syn) = (Writer::default(), Writer::default());
        if mode == 0 || mode == 2 {
            w.u8(mode);
            for (a, partners) in pairs.iter().enumerate() {
                counts.vlen(partners.len())?;
                let mut prev = a as i64;
                for &b in partners {
                    syn.vlen((i64::from(b) - prev - 1) as usize)?;
                    prev = i64::from(b);
                }
            }
            for d in dirs.iter().flatten() {
                counts.u8(*d);
            }
        } else if usable && {
            let (mut first, mut second) = (Vec::new(), Vec::new());
            s.neighbours.iter().enumerate().all(|(e, list)| {
                rows.row_into(e as u32, &mut first);
                list.iter().all(|&(o, c)| {
                    (o as usize) < ne && dot(&first, rows.row(o, &mut second)).to_bits() == c.to_bits()
                })
            })
        } {
            // Lists that are neither (not sorted best first, say) but whose cosines are the
            // dot products: the lists, cosines derived.
            w.u8(3);
            for (e, list) in s.neighbours.iter().enumerate() {
                counts.vlen(list.len())?;
                let mut prev = e as i64;
                for &(o, _) in list {
                    syn.zigzag(i64::from(o) - prev)?;
                    prev = i64::from(o);
                }
            }
        } else {
            w.u8(1);
            for e in 0..ne {
                let list = s.neighbours.get(e).map_or(&[][..], Vec::as_slice);
                counts.vlen(list.len())?;
                for &(o, c) in list {
                    syn.varint(o);
                    syn.f32(c);
                }
            }
        }
        w.stream(counts)?;
        w.stream(syn)?;
        Ok(())
    }
    /// Read a graph written by [`Graph::write_to`] over `passages` (the index's corpus), derive
    /// the tables that follow from the stored ones (module docs), embed its entity names and
    /// fact texts with `embedder` (the one it was built with), derive the synonym cosines and
    /// lists from those vectors and assemble the CSR. `progress(done, total)` counts embedded
    /// texts.
    ///
    /// # Errors
    /// [`crate::Error::IndexCorrupt`] when the body does not parse or is inconsistent (an id out
    /// of range, counts that disagree, a corpus index past `passages` or in two passage nodes,
    /// two entities with one key); the embedder's errors.
    pub(crate) fn read_from(
        r: &mut Reader<'_>,
        passages: &[Passage],
        embedder: &dyn Embedder,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Graph> {
        let json = r.string()?;
        let config: GraphConfig = crate::format::json_of(json.as_bytes())
            .map_err(|e| r.corrupt(format!("the configuration: {e}")))?;
        config.validate().map_err(|e| r.corrupt(e))?;
        let (ne, np, nf, nrel) =
            (r.varint()? as usize, r.varint()? as usize, r.varint()? as usize, r.varint()? as usize);
        let mut kinds = r.stream("graph (node kinds)")?;
        let mut corpus = r.stream("graph (passage corpus indices)")?;
        let mut names = r.stream("graph (entity names)")?;
        let mut keys = r.stream("graph (entity keys)")?;
        let mut relations = r.stream("graph (relations)")?;
        let mut ents = r.stream("graph (fact entities)")?;
        let mut frels = r.stream("graph (fact relations)")?;
        let mut fpass = r.stream("graph (fact passages)")?;
        let mut texts = r.stream("graph (fact texts)")?;
        let synonym_mode = r.u8()?;
        let mut syn_counts = r.stream("graph (synonym counts)")?;
        let mut syn = r.stream("graph (synonyms)")?;
        r.finish()?;
        // Every count is bounded by the bytes that hold its items, so no allocation exceeds the
        // input: an entity takes a name line, a passage node two varints, a fact two entity
        // varints, a relation a line.
        if ne > names.remaining()
            || np.saturating_mul(2) > corpus.remaining()
            || nf.saturating_mul(2) > ents.remaining()
            || nrel > relations.remaining()
        {
            return Err(r.corrupt(format!(
                "{ne} entities, {np} passage nodes, {nf} facts and {nrel} relations do not fit their streams"
            )));
        }
        let mut s = Store { config, ..Store::default() };

        let runs = kinds.vcount(1)?;
        let mut kind = NodeKind::Entity;
        for _ in 0..runs {
            let len = kinds.varint()? as usize;
            if s.nodes.len() + len > ne + np {
                return Err(kinds.corrupt(format!("more than {} nodes", ne + np)));
            }
            for _ in 0..len {
                let id = s.nodes.len() as u32;
                let table = if kind == NodeKind::Entity { &mut s.entity_nodes } else { &mut s.passage_nodes };
                s.nodes.push((kind, table.len() as u32));
                table.push(id);
            }
            kind = if kind == NodeKind::Entity { NodeKind::Passage } else { NodeKind::Entity };
        }
        kinds.finish()?;
        if s.entity_nodes.len() != ne || s.passage_nodes.len() != np {
            return Err(kinds.corrupt(format!(
                "{} entity and {} passage nodes for {ne} entities and {np} passage nodes",
                s.entity_nodes.len(),
                s.passage_nodes.len()
            )));
        }

        let mut prev = -1i64;
        for _ in 0..np {
            let n = corpus.vcount(1)?;
            let mut idx = Vec::with_capacity(n);
            for _ in 0..n {
                let i = prev + 1 + corpus.zigzag()?;
                if i < 0 || i as usize >= passages.len() {
                    return Err(corpus
                        .corrupt(format!("corpus index {i} is outside the corpus's {}", passages.len())));
                }
                idx.push(i as u32);
                prev = i;
            }
            if idx.is_empty() {
                return Err(corpus.corrupt("a passage node has no corpus index"));
            }
            s.passage_indices.push(idx);
        }
        corpus.finish()?;

        s.entity_names = read_lines(&mut names, ne)?;
        s.entity_keys = s.entity_names.iter().map(|n| normalize_entity(n)).collect();
        let n_keys = keys.vcount(2)?;
        let mut prev = -1i64;
        for _ in 0..n_keys {
            let e = prev + 1 + i64::from(keys.varint()?);
            if e as usize >= ne {
                return Err(keys.corrupt(format!("entity {e} is past the {ne} entities")));
            }
            s.entity_keys[e as usize] = keys.vstr()?;
            prev = e;
        }
        keys.finish()?;
        let rels = read_lines(&mut relations, nrel)?;

        s.entity_passages = vec![Vec::new(); ne];
        s.entity_facts = vec![Vec::new(); ne];
        s.passage_entities = vec![Vec::new(); np];
        s.passage_facts = vec![Vec::new(); np];
        let n_texts = texts.vcount(2)?;
        let mut next_text = if n_texts > 0 { i64::from(texts.varint()?) } else { -1 };
        let mut texts_read = 0;
        let (mut seen, mut prev_first) = (0i64, 0i64);
        s.facts.reserve(nf);
        for i in 0..nf {
            let mut ord = |ents: &mut Reader<'_>| -> Result<usize> {
                let o = seen - ents.zigzag()?;
                if o < 0 || o as usize >= ne {
                    return Err(ents.corrupt(format!("entity {o} is outside the {ne} entities")));
                }
                seen = seen.max(o + 1);
                Ok(o as usize)
            };
            let (so, oo) = (ord(&mut ents)?, ord(&mut ents)?);
            let row = frels.varint()? as usize;
            let relation =
                rels.get(row).ok_or_else(|| frels.corrupt(format!("relation {row} of {nrel}")))?.clone();
            let n = fpass.vcount(1)?;
            if n == 0 {
                return Err(fpass.corrupt(format!("fact {i} is stated by no passage")));
            }
            let mut fps = Vec::with_capacity(n);
            let mut prev = 0i64;
            for j in 0..n {
                let po = if j == 0 {
                    prev_first += fpass.zigzag()?;
                    prev_first
                } else {
                    prev + 1 + i64::from(fpass.varint()?)
                };
                if po < 0 || po as usize >= np {
                    return Err(fpass.corrupt(format!("passage {po} is outside the {np} passage nodes")));
                }
                fps.push(po as usize);
                prev = po;
            }
            let text = if next_text == i as i64 {
                let t = texts.vstr()?;
                texts_read += 1;
                next_text = if texts_read < n_texts { i as i64 + 1 + i64::from(texts.varint()?) } else { -1 };
                t
            } else {
                join_fact_text(&s.entity_names[so], &relation, &s.entity_names[oo])
            };
            let f = i as u32;
            for &p in &fps {
                s.passage_facts[p].push(f);
            }
            s.entity_facts[so].push(f);
            if oo != so {
                s.entity_facts[oo].push(f);
            }
            s.facts.push(Fact {
                subject: s.entity_nodes[so],
                object: s.entity_nodes[oo],
                relation,
                text,
                passages: fps.iter().map(|&p| s.passage_nodes[p]).collect(),
            });
        }
        for st in [&ents, &frels, &fpass] {
            st.finish()?;
        }
        if texts_read != n_texts {
            return Err(texts.corrupt(format!("{texts_read} of {n_texts} fact texts belong to a fact")));
        }
        texts.finish()?;
        for p in 0..np {
            let mut es: Vec<u32> = s.passage_facts[p]
                .iter()
                .flat_map(|&f| [s.facts[f as usize].subject, s.facts[f as usize].object])
                .collect();
            es.sort_unstable();
            es.dedup();
            for &e in &es {
                if let Some(o) = s.entity_ordinal(e) {
                    s.entity_passages[o].push(s.passage_nodes[p]);
                }
            }
            s.passage_entities[p] = es;
        }

        let mut pairs: Vec<Vec<u32>> = Vec::new();
        let mut dirs: Vec<Vec<u8>> = Vec::new();
        match synonym_mode {
            0 | 2 => {
                pairs.reserve(ne);
                for a in 0..ne {
                    let n = syn_counts.varint()? as usize;
                    if n > syn.remaining() {
                        return Err(syn.corrupt(format!("{n} partners of entity {a} exceed the bytes left")));
                    }
                    let mut list = Vec::with_capacity(n);
                    let mut prev = a as i64;
                    for _ in 0..n {
                        let b = prev + 1 + i64::from(syn.varint()?);
                        if b as usize >= ne {
                            return Err(syn.corrupt(format!("entity {b} is past the {ne} entities")));
                        }
                        list.push(b as u32);
                        prev = b;
                    }
                    pairs.push(list);
                }
                if synonym_mode == 2 {
                    for list in &pairs {
                        let d = (0..list.len())
                            .map(|_| match syn_counts.u8()? {
                                c @ 0..=2 => Ok(c),
                                c => Err(syn_counts.corrupt(format!("synonym direction {c}"))),
                            })
                            .collect::<Result<Vec<u8>>>()?;
                        dirs.push(d);
                    }
                }
            }
            1 => {
                for e in 0..ne {
                    let n = syn_counts.varint()? as usize;
                    if n.saturating_mul(5) > syn.remaining() {
                        return Err(syn.corrupt(format!("{n} synonyms of entity {e} exceed the bytes left")));
                    }
                    let mut list = Vec::with_capacity(n);
                    for _ in 0..n {
                        let (o, c) = (syn.varint()?, syn.f32()?);
                        if o as usize >= ne || !c.is_finite() {
                            return Err(syn.corrupt(format!(
                                "entity {e}'s synonym list names an unknown entity or a non-finite cosine"
                            )));
                        }
                        list.push((o, c));
                    }
                    s.neighbours.push(list);
                }
            }
            3 => {
                for e in 0..ne {
                    let n = syn_counts.varint()? as usize;
                    if n > syn.remaining() {
                        return Err(syn.corrupt(format!("{n} synonyms of entity {e} exceed the bytes left")));
                    }
                    let mut list = Vec::with_capacity(n);
                    let mut prev = e as i64;
                    for _ in 0..n {
                        let o = prev + syn.zigzag()?;
                        if o < 0 || o as usize >= ne {
                            return Err(syn.corrupt(format!("entity {o} is outside the {ne} entities")));
                        }
                        list.push(o as u32);
                        prev = o;
                    }
                    pairs.push(list);
                }
            }
            m => return Err(r.corrupt(format!("unknown synonym storage {m}"))),
        }
        syn_counts.finish()?;
        syn.finish()?;
        if synonym_mode != 1 {
            s.neighbours = vec![Vec::new(); ne];
        }
        s.linked = ne;
        index_maps(&mut s, passages).map_err(|m| r.corrupt(m))?;
        let mut builder = GraphBuilder::from_store(s);
        builder.embed(embedder, progress)?;
        let st = &mut builder.store;
        let rows = EntityRows::of(&st.entity_vectors, &st.bags);
        if synonym_mode != 1 && rows.len() == ne {
            st.neighbours = if synonym_mode == 0 || synonym_mode == 2 {
                let dirs = (synonym_mode == 2).then_some(&dirs[..]);
                lists_from_pairs(&pairs, dirs, &rows, st.config.synonym_top_k)
            } else {
                let (mut first, mut second) = (Vec::new(), Vec::new());
                pairs
                    .iter()
                    .enumerate()
                    .map(|(e, list)| {
                        rows.row_into(e as u32, &mut first);
                        list.iter().map(|&o| (o, dot(&first, rows.row(o, &mut second)))).collect()
                    })
                    .collect()
            };
        }
        builder.finish()
    }
}

/// Rebuild a freshly read store's entity order, passage maps and relation weights (the entity
/// and fact lookups are made when passages are added).
/// `Err` carries what is wrong: two entities with one key, a corpus passage in two passage nodes.
fn index_maps(s: &mut Store, passages: &[Passage]) -> std::result::Result<(), String> {
    let order = entity_order(&s.entity_keys);
    if let Some(w) = order.windows(2).find(|w| s.entity_keys[w[0] as usize] == s.entity_keys[w[1] as usize]) {
        return Err(format!("two entities share the key {:?}", s.entity_keys[w[0] as usize]));
    }
    s.entity_order = order;
    for p in 0..s.passage_nodes.len() {
        let node = s.passage_nodes[p];
        for &i in &s.passage_indices[p] {
            if s.passage_by_index.insert(i, node).is_some() {
                return Err(format!("corpus passage {i} belongs to two passage nodes"));
            }
        }
        let first = &passages[s.passage_indices[p][0] as usize];
        s.passage_by_hash.insert(passage_hash(&first.title, &first.text), node);
    }
    for f in &s.facts {
        if f.subject != f.object {
            *s.relation_weights.entry((f.subject.min(f.object), f.subject.max(f.object))).or_insert(0.0) +=
                f.passages.len() as f32;
        }
    }
    Ok(())
}

#[cfg(test)]
impl Graph {
    /// Every table of the two graphs, compared (maps as sorted lists, vectors and cosines bit
    /// for bit): `Err` names the first that differs.
    pub(crate) fn same_tables(&self, other: &Graph) -> std::result::Result<(), String> {
        fn sorted<K: Clone + Ord, V: Clone>(m: &FxHashMap<K, V>) -> Vec<(K, V)> {
            let mut v: Vec<(K, V)> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        }
        let bits = |l: &[Vec<(u32, f32)>]| -> Vec<Vec<(u32, u32)>> {
            l.iter().map(|v| v.iter().map(|&(o, c)| (o, c.to_bits())).collect()).collect()
        };
        let weights = |m: &FxHashMap<(u32, u32), f32>| -> Vec<((u32, u32), u32)> {
            sorted(m).into_iter().map(|(k, w)| (k, w.to_bits())).collect()
        };
        let (a, b) = (&self.store, &other.store);
        let checks: [(&str, bool); 19] = [
            ("config", a.config == b.config),
            ("nodes", a.nodes == b.nodes),
            ("entity_nodes", a.entity_nodes == b.entity_nodes),
            ("entity_names", a.entity_names == b.entity_names),
            ("entity_keys", a.entity_keys == b.entity_keys),
            ("entity_order", a.entity_order == b.entity_order),
            ("entity_passages", a.entity_passages == b.entity_passages),
            ("entity_facts", a.entity_facts == b.entity_facts),
            ("passage_nodes", a.passage_nodes == b.passage_nodes),
            ("passage_indices", a.passage_indices == b.passage_indices),
            ("passage_entities", a.passage_entities == b.passage_entities),
            ("passage_facts", a.passage_facts == b.passage_facts),
            ("passage_by_index", sorted(&a.passage_by_index) == sorted(&b.passage_by_index)),
            ("passage_by_hash", sorted(&a.passage_by_hash) == sorted(&b.passage_by_hash)),
            ("facts", a.facts == b.facts),
            ("relation_weights", weights(&a.relation_weights) == weights(&b.relation_weights)),
            (
                "vectors",
                a.entity_vectors == b.entity_vectors
                    && a.fact_vectors == b.fact_vectors
                    && a.bags == b.bags
                    && a.fact_vectors_f32 == b.fact_vectors_f32,
            ),
            ("neighbours", bits(&a.neighbours) == bits(&b.neighbours) && a.linked == b.linked),
            (
                "csr",
                self.csr.offsets == other.csr.offsets
                    && self.csr.targets == other.csr.targets
                    && self.csr.weights.iter().map(|w| w.to_bits()).eq(other
                        .csr
                        .weights
                        .iter()
                        .map(|w| w.to_bits()))
                    && self.csr.edge_types == other.csr.edge_types,
            ),
        ];
        match checks.iter().find(|(_, same)| !same) {
            Some((name, _)) => Err(format!("{name} differ")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Corpus;
    use crate::embed::StaticEmbedder;

    /// The 100 HotpotQA passages of `tests/fixtures/hotpot-sample`, their rule-based OpenIE
    /// triples and the static embedder: a real graph with synonym edges.
    fn sample() -> (Graph, Vec<Passage>, StaticEmbedder) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
        let text = std::fs::read_to_string(format!("{dir}/corpus.jsonl")).unwrap();
        let mut corpus = Corpus::new();
        corpus.extend(crate::corpus::parse_jsonl("corpus.jsonl", &text).unwrap()).unwrap();
        let pipeline = crate::text::Pipeline::english().unwrap();
        let out = crate::extract::extract_corpus(&pipeline, &corpus, &mut |_, _| {});
        let e = StaticEmbedder::minilm().unwrap();
        let passages = corpus.passages().to_vec();
        let g =
            super::super::build_graph(GraphConfig::default(), &passages, &out.triples, &e, &mut |_, _, _| {})
                .unwrap();
        (g, passages, e)
    }

    fn round_trip(g: &Graph, passages: &[Passage], e: &dyn Embedder) -> (Graph, u8) {
        let mut w = Writer::default();
        g.write_to(&mut w).unwrap();
        // The synonym storage byte sits right before the last two streams.
        let mut r = Reader::new(&w.buf, "graph");
        let _ = r.string().unwrap();
        for _ in 0..4 {
            r.varint().unwrap();
        }
        for _ in 0..9 {
            r.stream("s").unwrap();
        }
        let mode = r.u8().unwrap();
        let mut r = Reader::new(&w.buf, "graph");
        (Graph::read_from(&mut r, passages, e, &mut |_, _| {}).unwrap(), mode)
    }

    #[test]
    fn synonyms_stored_as_pairs_come_back_with_the_same_cosines_and_lists() {
        let (g, passages, e) = sample();
        assert!(g.counts().synonym_edges > 50, "{:?}", g.counts());
        let (loaded, mode) = round_trip(&g, &passages, &e);
        assert_eq!(mode, 0, "the kNN's lists follow from its pairs");
        loaded.same_tables(&g).unwrap();
    }

    #[test]
    fn synonym_lists_that_do_not_follow_from_pairs_are_stored_as_they_are() {
        // A list whose cosine is not the dot product of the vectors (another synonym search
        // could score pairs differently): the lists and cosines are written as held.
        let (g, passages, e) = sample();
        let mut s = g.store.clone();
        let e0 = s.neighbours.iter().position(|l| !l.is_empty()).unwrap();
        s.neighbours[e0][0].1 = f32::from_bits(s.neighbours[e0][0].1.to_bits() - 1);
        let csr = super::super::csr::build(&s).unwrap();
        let odd = Graph { store: s, csr, entity_quant: Default::default() };
        let (loaded, mode) = round_trip(&odd, &passages, &e);
        assert_eq!(mode, 1);
        loaded.same_tables(&odd).unwrap();
        assert!(loaded.same_tables(&g).is_err());
    }

    #[test]
    fn unsorted_synonym_lists_with_dot_product_cosines_are_stored_without_their_cosines() {
        // Lists out of order (one swapped pair) whose cosines are the dot products: the lists
        // are stored, the cosines derived.
        let (g, passages, e) = sample();
        let mut s = g.store.clone();
        let e0 = s.neighbours.iter().position(|l| l.len() >= 2 && l[0].1 != l[1].1).unwrap();
        s.neighbours[e0].swap(0, 1);
        let csr = super::super::csr::build(&s).unwrap();
        let odd = Graph { store: s, csr, entity_quant: Default::default() };
        let (loaded, mode) = round_trip(&odd, &passages, &e);
        assert_eq!(mode, 3);
        loaded.same_tables(&odd).unwrap();
        assert!(loaded.same_tables(&g).is_err());
    }

    #[test]
    fn synonym_lists_short_of_their_top_k_are_stored_as_pairs_with_directions() {
        // An approximate synonym search may miss a neighbour: one entity's list loses an entry
        // that the other end still lists, so the lists are no longer the top-k of their pairs;
        // the pairs and which end lists each give them back.
        let (g, passages, e) = sample();
        let mut s = g.store.clone();
        let (a, j) = (0..s.neighbours.len())
            .find_map(|a| {
                let l = &s.neighbours[a];
                l.iter()
                    .position(|&(b, _)| s.neighbours[b as usize].iter().any(|&(o, _)| o as usize == a))
                    .map(|j| (a, j))
            })
            .unwrap();
        s.neighbours[a].remove(j);
        let csr = super::super::csr::build(&s).unwrap();
        let odd = Graph { store: s, csr, entity_quant: Default::default() };
        let (loaded, mode) = round_trip(&odd, &passages, &e);
        assert_eq!(mode, 2);
        loaded.same_tables(&odd).unwrap();
        assert!(loaded.same_tables(&g).is_err());
    }

    #[test]
    fn keys_and_fact_texts_that_do_not_follow_from_names_are_stored() {
        let (g, passages, e) = sample();
        let mut s = g.store.clone();
        // A key that is not the name's normal form, and a fact text from other surface forms.
        let old = std::mem::replace(&mut s.entity_keys[3], "a key of its own".into());
        assert_ne!(old, s.entity_keys[3]);
        s.entity_order = entity_order(&s.entity_keys);
        s.facts[5].text = "Surface Form relation Other Form".into();
        // Its tokens are those of its text, as the builder would have taken them.
        assert!(s.fact_vectors.is_empty(), "the static embedder's graph keeps its facts as token bags");
        // The builder bags the names first, then the facts (one chunk each here).
        use crate::graph::BagSet;
        let names: Vec<&str> = s.entity_names.iter().map(String::as_str).collect();
        let texts: Vec<&str> = s.facts.iter().map(|f| f.text.as_str()).collect();
        s.bags = crate::graph::TokenBags::with_dim(e.table().dims());
        s.bags.extend(BagSet::Entities, &e, &names).unwrap();
        s.bags.extend(BagSet::Facts, &e, &texts).unwrap();
        let csr = super::super::csr::build(&s).unwrap();
        let odd = Graph { store: s, csr, entity_quant: Default::default() };
        let (loaded, _) = round_trip(&odd, &passages, &e);
        loaded.same_tables(&odd).unwrap();
        assert_eq!(loaded.store.entity_keys[3], "a key of its own");
        assert_eq!(loaded.facts()[5].text, "Surface Form relation Other Form");
    }
}
