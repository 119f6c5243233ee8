//! An index file in two parts, for a static site whose first keyword result should not wait for
//! the embedder, the text pipeline or the knowledge graph.
//!
//! - The **base** holds the config and corpus sections: everything BM25 needs. It is an index
//!   file of its own ([`Index::from_bytes`] opens it; BM25 is rebuilt from the passages).
//! - The **extras** hold a copy of the config section, then the sections that need an embedder
//!   (dense, graph, graph report, CAGE embeddings), in [`Index::to_bytes`]'s order. They are not an
//!   index on their own (no corpus): [`Index::attach_extras`] reads them into an index opened
//!   from the base.
//!
//! Both are the same format ([`crate::format`]) and the same section bodies as the one-file
//! form, so `base + extras` hold exactly what [`Index::to_bytes`] holds, and an index opened from
//! the base with the extras attached ranks exactly as one opened from the whole file (tested).
//! The extras are tied to their base by the config section (byte-equal) and by the checks the
//! sections already carry: the static embedder's passage vectors are re-embedded from the
//! base's passages and checked against the stored CRC32, and the graph's passage tables must
//! match the corpus.

use std::rc::Rc;

use super::persist::{only_section, LoadNotes};
use super::{EmbedderSlot, Index};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::format::{assemble, split, SectionKind};

impl Index {
    /// The index file in two parts (module docs): `(base, extras)`, `extras` `None` when the
    /// index holds nothing beyond its config and corpus (a BM25-only index: the base is then
    /// byte-equal to [`Index::to_bytes`]).
    ///
    /// # Errors
    /// As [`Index::to_bytes`].
    pub fn to_split_bytes(&self) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
        let sections = self.sections()?;
        let (base, rest): (Vec<_>, Vec<_>) =
            sections.into_iter().partition(|(k, _)| matches!(k, SectionKind::Config | SectionKind::Corpus));
        if rest.is_empty() {
            return Ok((assemble(&base)?, None));
        }
        let mut extras = Vec::with_capacity(rest.len() + 1);
        if let Some((_, config)) = base.iter().find(|(k, _)| *k == SectionKind::Config) {
            extras.push((SectionKind::Config, config.clone()));
        }
        extras.extend(rest);
        Ok((assemble(&base)?, Some(assemble(&extras)?)))
    }

    /// Read the extras written by [`Index::to_split_bytes`] into this index, opened from their
    /// base: the passage vectors of each slot in `embedders` (re-embedded and checked for the
    /// static embedder), the knowledge graph (its entity and fact vectors re-embedded,
    /// `progress(done, total)` in texts) and CAGE's graph embeddings. Slots stored without an
    /// embedder given are skipped and listed in the [`LoadNotes`].
    ///
    /// On error the index is as it was.
    ///
    /// # Errors
    /// [`Error::Config`] when this index already holds a graph or CAGE embeddings (attach the
    /// extras once, to an index opened from the base; passage vectors attached meanwhile with the
    /// same embedder are kept and checked like re-embedded ones);
    /// [`Error::IndexCorrupt`] when `bytes` hold a corpus (a whole index file, not extras) or a
    /// config that differs from this index's (extras of another index); otherwise as
    /// [`Index::from_bytes`].
    pub fn attach_extras(
        &mut self,
        bytes: &[u8],
        embedders: &[(EmbedderSlot, Rc<dyn Embedder>)],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<LoadNotes> {
        if self.graph.is_some() || self.cage_z.is_some() {
            return Err(Error::Config(
                "the index already holds a knowledge graph or graph embeddings: extras attach once, to an index opened from its base"
                    .into(),
            ));
        }
        // passage vectors the caller attached meanwhile (setting the embedder on the opened base
        // embeds the passages) stay, and are checked against the extras like re-embedded ones
        let had = [self.dense[0].is_some(), self.dense[1].is_some()];
        let sections = split(bytes)?;
        if sections.iter().any(|(k, _)| *k == SectionKind::Corpus) {
            return Err(Error::IndexCorrupt(
                "these bytes hold passages: they are a whole index file, not the extras of one".into(),
            ));
        }
        let config = only_section(&sections, SectionKind::Config)?;
        let ours = serde_json::to_vec(&self.config).map_err(|e| Error::Config(e.to_string()))?;
        if config != ours.as_slice() {
            return Err(Error::IndexCorrupt(
                "the extras were written with another configuration than this index: they belong to another index file"
                    .into(),
            ));
        }
        let mut notes = LoadNotes::default();
        if let Err(e) = self.attach_sections(&sections, embedders, progress, &mut notes) {
            for (slot, had) in self.dense.iter_mut().zip(had) {
                if !had {
                    *slot = None;
                }
            }
            self.graph = None;
            self.cage_z = None;
            return Err(e);
        }
        Ok(notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Corpus;
    use crate::embed::StaticEmbedder;
    use crate::index::{IndexConfig, Method};

    /// The 100 real HotpotQA passages of `tests/fixtures/hotpot-sample`, with `config`, the
    /// static embedder's vectors and (with `graph`) the real extractor's knowledge graph.
    fn sample(config: &IndexConfig, change: Option<(usize, &str)>, graph: bool) -> (Index, Rc<dyn Embedder>, Vec<String>) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
        let text = std::fs::read_to_string(format!("{dir}/corpus.jsonl")).unwrap();
        let mut passages = crate::corpus::parse_jsonl("corpus.jsonl", &text).unwrap();
        if let Some((i, t)) = change {
            passages[i].text = t.to_string();
        }
        let mut corpus = Corpus::new();
        corpus.extend(passages).unwrap();
        let questions: Vec<String> = std::fs::read_to_string(format!("{dir}/questions.jsonl"))
            .unwrap()
            .lines()
            .take(10)
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["question"].as_str().unwrap().to_string())
            .collect();
        let mut index = Index::build(corpus, config).unwrap();
        let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm().unwrap());
        index.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
        if graph {
            index.build_graph(e.clone(), &mut |_, _, _| {}).unwrap();
        }
        (index, e, questions)
    }

    fn ranking(index: &Index, q: &str, m: Method) -> Vec<(u32, u32)> {
        index.search(q, 10, m).unwrap().into_iter().map(|h| (h.passage, h.score.to_bits())).collect()
    }

    #[test]
    fn base_and_extras_hold_the_whole_file_and_rank_alike() {
        let (index, e, questions) = sample(&IndexConfig::default(), None, true);
        let whole = index.to_bytes().unwrap();
        let (base, extras) = index.to_split_bytes().unwrap();
        let extras = extras.expect("an index with vectors and a graph has extras");
        // the same section bodies: the parts add one header, one config copy and its table entry
        let config_len = serde_json::to_vec(index.config()).unwrap().len();
        assert_eq!(base.len() + extras.len(), whole.len() + 16 + 4 + config_len + 24);
        let slots = [(EmbedderSlot::Static, e.clone())];
        let (mut opened, notes) = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap();
        assert!(notes.skipped_slots.is_empty());
        assert!(opened.graph().is_none() && opened.dense(EmbedderSlot::Static).is_none());
        for q in &questions {
            assert_eq!(ranking(&opened, q, Method::Bm25), ranking(&index, q, Method::Bm25));
        }
        opened.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap();
        // the per-graph search structures are made with the graph, not by the first search
        let kg = opened.knowledge_graph().unwrap();
        assert!(kg.titles.get().is_some() && kg.entity_lookup.get().is_some());
        for m in [Method::Bm25, Method::Dense, Method::Hybrid, Method::Hipporag, Method::Catrag] {
            for q in &questions {
                assert_eq!(ranking(&opened, q, m), ranking(&index, q, m), "{m}: {q}");
            }
        }
        assert_eq!(opened.to_bytes().unwrap(), whole);

        // a page sets the embedder on the opened base first (which embeds the passages): the
        // extras keep those vectors, check them, and add the graph
        let (mut early, _) = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap();
        early.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
        early.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap();
        assert_eq!(early.to_bytes().unwrap(), whole);
        for q in &questions {
            assert_eq!(ranking(&early, q, Method::Catrag), ranking(&index, q, Method::Catrag), "{q}");
        }
        // ... and refuse the extras of other passages without dropping them
        let (mut kept, _) = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap();
        let (other, _, _) = sample(&IndexConfig::default(), Some((3, "Teutberga was the daughter of Boso the Elder.")), false);
        kept.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
        let err = kept.attach_extras(&other.to_split_bytes().unwrap().1.unwrap(), &slots, &mut |_, _| {}).unwrap_err();
        assert!(matches!(err, Error::Model { .. }), "{err}");
        assert!(kept.dense(EmbedderSlot::Static).is_some() && kept.graph().is_none());
    }

    #[test]
    fn a_bm25_index_has_no_extras_and_its_base_is_the_whole_file() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
        let text = std::fs::read_to_string(format!("{dir}/corpus.jsonl")).unwrap();
        let mut corpus = Corpus::new();
        corpus.extend(crate::corpus::parse_jsonl("corpus.jsonl", &text).unwrap()).unwrap();
        let index = Index::build(corpus, &IndexConfig::default()).unwrap();
        let (base, extras) = index.to_split_bytes().unwrap();
        assert!(extras.is_none());
        assert_eq!(base, index.to_bytes().unwrap());
    }

    #[test]
    fn wrong_extras_are_refused_and_change_nothing() {
        let (index, e, _) = sample(&IndexConfig::default(), None, true);
        let (base, extras) = index.to_split_bytes().unwrap();
        let extras = extras.unwrap();
        let slots = [(EmbedderSlot::Static, e.clone())];
        let mut opened = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap().0;

        // a whole index file is not extras
        let err = opened.attach_extras(&index.to_bytes().unwrap(), &slots, &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("whole index file"), "{err}");

        // the extras of an index with one passage changed: the re-embedded vectors' CRC32 differs
        let (other, _, _) = sample(&IndexConfig::default(), Some((3, "Teutberga was the daughter of Boso the Elder.")), false);
        let err = opened.attach_extras(&other.to_split_bytes().unwrap().1.unwrap(), &slots, &mut |_, _| {}).unwrap_err();
        assert!(matches!(err, Error::Model { .. }), "{err}");
        assert!(opened.dense(EmbedderSlot::Static).is_none() && opened.graph().is_none());

        // extras written with another configuration
        let mut config = IndexConfig::default();
        config.bm25.k1 = 1.2;
        let (k1, _, _) = sample(&config, None, false);
        let err = opened.attach_extras(&k1.to_split_bytes().unwrap().1.unwrap(), &slots, &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("another configuration"), "{err}");

        // a damaged byte: the section's checksum
        let mut bad = extras.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        assert!(matches!(opened.attach_extras(&bad, &slots, &mut |_, _| {}), Err(Error::IndexCorrupt(_))));
        assert!(opened.dense(EmbedderSlot::Static).is_none() && opened.graph().is_none());

        // the right extras still attach, once
        opened.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap();
        assert!(opened.graph().is_some());
        let err = opened.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err}");
    }
}
