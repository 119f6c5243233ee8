//! An index file in three parts, for a static site whose first keyword result should wait for
//! neither the passages' texts, the embedder, the text pipeline nor the knowledge graph.
//!
//! - The **base** (the keyword part) holds the config, the passages' ids and titles
//!   ([`SectionKind::Passages`]) and BM25's inverted index ([`SectionKind::Postings`]): BM25
//!   answers as soon as it is read, with nothing rebuilt. [`Index::from_bytes`] opens it; its
//!   hits carry ids and titles, their texts empty.
//! - The **texts** ([`SectionKind::Texts`]) complete the passages: [`Index::attach_texts`]. The
//!   passages section stores their CRC32, which ties them to their base.
//! - The **extras** hold a copy of the config section, then the sections that need an embedder
//!   (dense, graph, graph report, CAGE embeddings), in [`Index::to_bytes`]'s order. They are not an
//!   index on their own (no corpus): [`Index::attach_extras`] reads them into an index opened
//!   from the base once its texts are in.
//!
//! All three are the same format ([`crate::format`]); the extras' sections are the one-file
//! form's, and an index opened from the parts ranks exactly as one opened from the whole file and
//! saves to its bytes (tested). The extras are tied to their base by the config section
//! (byte-equal) and by the checks the sections already carry: the static embedder's passage
//! vectors are re-embedded from the passages and checked against the stored CRC32, and the
//! graph's passage tables must match the corpus.
//!
//! On 2wiki-corpus-6k the keyword part is 0.52 MB gzipped, where a base holding the passages'
//! texts was 1.12 MB; in all, the postings cost 0.42 MB gzipped that the one-file form does not
//! carry (`docs/method/downloads.md`).

use std::rc::Rc;

use super::persist::{only_section, read_texts, write_passage_heads, write_texts, LoadNotes};
use super::{EmbedderSlot, Index};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::format::{assemble, split, SectionKind, Writer};

/// The three files of [`Index::to_split_bytes`] (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct SplitIndex {
    /// The keyword part: config, passage ids and titles, BM25's postings.
    pub base: Vec<u8>,
    /// The passages' texts.
    pub texts: Vec<u8>,
    /// The sections that need an embedder; `None` when the index holds none (a BM25-only index).
    pub extras: Option<Vec<u8>>,
}

impl Index {
    /// The index file in three parts (module docs).
    ///
    /// # Errors
    /// As [`Index::to_bytes`].
    pub fn to_split_bytes(&self) -> Result<SplitIndex> {
        self.require_texts("saving the index")?;
        let config = self.config_section()?;
        let passages = self.corpus.passages();
        let texts_body = write_texts(passages)?;
        let mut postings = Writer::default();
        self.bm25.write_to(&mut postings)?;
        let base = [
            (SectionKind::Config, config.clone()),
            (SectionKind::Passages, write_passage_heads(passages, &texts_body)?),
            (SectionKind::Postings, postings.buf),
        ];
        let rest = self.embedder_sections()?;
        let extras = if rest.is_empty() {
            None
        } else {
            let mut extras = Vec::with_capacity(rest.len() + 1);
            extras.push((SectionKind::Config, config));
            extras.extend(rest);
            Some(assemble(&extras)?)
        };
        Ok(SplitIndex {
            base: assemble(&base)?,
            texts: assemble(&[(SectionKind::Texts, texts_body)])?,
            extras,
        })
    }

    /// Read the texts file of [`Index::to_split_bytes`] into this index, opened from its base:
    /// the passages get their texts and everything that needs them (vectors, the graph, the
    /// extras, saving) works from then on. Nothing is rebuilt.
    ///
    /// On error the index is as it was.
    ///
    /// # Errors
    /// [`Error::Config`] when the texts are in already (an index not opened from a base, or
    /// texts read twice); [`Error::IndexCorrupt`] when `bytes` hold anything but one texts
    /// section or when it holds another number of texts; [`Error::IndexPartsMismatch`] when its
    /// CRC32 is not the one the keyword part stores (the texts of another index); otherwise as
    /// [`Index::from_bytes`].
    pub fn attach_texts(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(want) = self.texts_pending else {
            return Err(Error::Config(
                "the passages' texts are in already: texts attach once, to an index opened from its base"
                    .into(),
            ));
        };
        let sections = split(bytes)?;
        let body = only_section(&sections, SectionKind::Texts)?;
        if sections.len() != 1 {
            return Err(Error::IndexCorrupt("a texts file holds the texts section and nothing else".into()));
        }
        let got = crc32fast::hash(body);
        if got != want {
            return Err(Error::IndexPartsMismatch(format!(
                "these texts belong to another index (their CRC32 is {got:08x}, the keyword part expects {want:08x})"
            )));
        }
        let texts = read_texts(body)?;
        if texts.len() != self.corpus.len() {
            return Err(Error::IndexCorrupt(format!(
                "{} texts for {} passages",
                texts.len(),
                self.corpus.len()
            )));
        }
        self.corpus.set_texts(texts);
        self.texts_pending = None;
        Ok(())
    }

    /// Read the extras written by [`Index::to_split_bytes`] into this index, opened from their
    /// base with its texts attached: the passage vectors of each slot in `embedders`
    /// (re-embedded and checked for the static embedder), the knowledge graph (its entity and
    /// fact vectors re-embedded, `progress(done, total)` in texts) and CAGE's graph embeddings.
    /// Slots stored without an embedder given are skipped and listed in the [`LoadNotes`].
    ///
    /// On error the index is as it was.
    ///
    /// # Errors
    /// [`Error::TextsNotLoaded`] before [`Index::attach_texts`];
    /// [`Error::Config`] when this index already holds a graph or CAGE embeddings (attach the
    /// extras once, to an index opened from the base; passage vectors attached meanwhile with the
    /// same embedder are kept and checked like re-embedded ones);
    /// [`Error::IndexCorrupt`] when `bytes` hold passages (a whole index file or another part,
    /// not extras); [`Error::IndexPartsMismatch`] for a config that differs from this index's
    /// (extras of another index); otherwise as [`Index::from_bytes`].
    pub fn attach_extras(
        &mut self,
        bytes: &[u8],
        embedders: &[(EmbedderSlot, Rc<dyn Embedder>)],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<LoadNotes> {
        self.require_texts("reading the extras (passage vectors and knowledge graph)")?;
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
        if let Some((kind, _)) = sections.iter().find(|(k, _)| {
            matches!(
                k,
                SectionKind::Corpus | SectionKind::Passages | SectionKind::Texts | SectionKind::Postings
            )
        }) {
            return Err(Error::IndexCorrupt(format!(
                "these bytes hold a {} section: they are a whole index file or another part of one, not its extras",
                kind.name()
            )));
        }
        let config = only_section(&sections, SectionKind::Config)?;
        let ours = serde_json::to_vec(&self.config).map_err(|e| Error::Config(e.to_string()))?;
        if config != ours.as_slice() {
            return Err(Error::IndexPartsMismatch(
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
    fn sample(
        config: &IndexConfig,
        change: Option<(usize, &str)>,
        graph: bool,
    ) -> (Index, Rc<dyn Embedder>, Vec<String>) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
        let mut passages = crate::corpus::hotpot_sample();
        if let Some((i, t)) = change {
            passages[i].text = t.to_string();
        }
        let mut corpus = Corpus::new();
        corpus.extend(passages).unwrap();
        let questions: Vec<String> = std::fs::read_to_string(format!("{dir}/questions.jsonl"))
            .unwrap()
            .lines()
            .take(10)
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["question"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
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
        index.searcher().search(q, 10, m).unwrap().into_iter().map(|h| (h.passage, h.score.to_bits())).collect()
    }

    /// The passages' texts, in corpus order.
    fn texts_of(index: &Index) -> Vec<String> {
        index.corpus().passages().iter().map(|p| p.text.clone()).collect()
    }

    #[test]
    fn the_three_parts_hold_the_whole_file_and_rank_alike() {
        let (index, e, questions) = sample(&IndexConfig::default(), None, true);
        let whole = index.to_bytes().unwrap();
        let SplitIndex { base, texts, extras } = index.to_split_bytes().unwrap();
        let extras = extras.expect("an index with vectors and a graph has extras");
        assert_eq!(u32::from_le_bytes(base[8..12].try_into().unwrap()), crate::format::SPLIT_FORMAT_VERSION);
        assert_eq!(u32::from_le_bytes(whole[8..12].try_into().unwrap()), crate::format::BASE_FORMAT_VERSION);
        let slots = [(EmbedderSlot::Static, e.clone())];
        let (mut opened, notes) = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap();
        // BM25 is read, not rebuilt
        let steps: Vec<&str> = notes.phases_ms.iter().map(|(s, _)| *s).collect();
        assert_eq!(steps, ["split", "corpus", "postings"]);
        assert!(
            !opened.texts_loaded()
                && opened.graph().is_none()
                && opened.dense(EmbedderSlot::Static).is_none()
        );
        // the keyword part answers as the whole index does, score for score, with ids and titles
        for q in &questions {
            assert_eq!(ranking(&opened, q, Method::Bm25), ranking(&index, q, Method::Bm25), "{q}");
        }
        for (got, want) in opened.corpus().passages().iter().zip(index.corpus().passages()) {
            assert_eq!(
                (got.id.as_str(), got.title.as_str(), got.text.as_str()),
                (want.id.as_str(), want.title.as_str(), "")
            );
        }
        // everything that needs the texts says so
        for err in [
            opened.to_bytes().unwrap_err(),
            opened.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap_err(),
            opened.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap_err(),
            opened.build_graph(e.clone(), &mut |_, _, _| {}).unwrap_err(),
        ] {
            assert!(matches!(err, Error::TextsNotLoaded(_)), "{err}");
        }
        opened.attach_texts(&texts).unwrap();
        assert!(opened.texts_loaded());
        assert_eq!(opened.corpus().passages(), index.corpus().passages());
        opened.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap();
        // the per-graph search structures are made with the graph, not by the first search
        let kg = opened.knowledge_graph().unwrap();
        assert!(kg.titles.is_some() && kg.entity_lookup.is_some());
        for m in [Method::Bm25, Method::Dense, Method::Hybrid, Method::Hipporag, Method::Catrag] {
            for q in &questions {
                assert_eq!(ranking(&opened, q, m), ranking(&index, q, m), "{m}: {q}");
            }
        }
        assert_eq!(opened.to_bytes().unwrap(), whole);

        // a page sets the embedder once the texts are in (which embeds the passages): the
        // extras keep those vectors, check them, and add the graph
        let (mut early, _) = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap();
        early.attach_texts(&texts).unwrap();
        early.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
        early.attach_extras(&extras, &slots, &mut |_, _| {}).unwrap();
        assert_eq!(early.to_bytes().unwrap(), whole);
        for q in &questions {
            assert_eq!(ranking(&early, q, Method::Catrag), ranking(&index, q, Method::Catrag), "{q}");
        }
        // ... and refuse the extras of other passages without dropping them
        let (mut kept, _) = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap();
        kept.attach_texts(&texts).unwrap();
        let (other, _, _) = sample(
            &IndexConfig::default(),
            Some((3, "Teutberga was the daughter of Boso the Elder.")),
            false,
        );
        kept.attach_embedder(EmbedderSlot::Static, e.clone(), &mut |_, _| {}).unwrap();
        let err = kept
            .attach_extras(&other.to_split_bytes().unwrap().extras.unwrap(), &slots, &mut |_, _| {})
            .unwrap_err();
        assert!(matches!(err, Error::Model { .. }), "{err}");
        assert!(kept.dense(EmbedderSlot::Static).is_some() && kept.graph().is_none());
    }

    #[test]
    fn a_bm25_index_has_no_extras_and_its_parts_make_the_whole_file() {
        let mut corpus = Corpus::new();
        corpus.extend(crate::corpus::hotpot_sample()).unwrap();
        let index = Index::build(corpus, &IndexConfig::default()).unwrap();
        let split = index.to_split_bytes().unwrap();
        assert!(split.extras.is_none());
        let (mut opened, _) = Index::from_bytes(&split.base, &[], &mut |_, _| {}).unwrap();
        opened.attach_texts(&split.texts).unwrap();
        assert_eq!(opened.to_bytes().unwrap(), index.to_bytes().unwrap());
        // the parts are deterministic
        assert_eq!(index.to_split_bytes().unwrap(), split);
    }

    #[test]
    fn wrong_texts_are_refused_and_change_nothing() {
        let (index, _, _) = sample(&IndexConfig::default(), None, false);
        let split = index.to_split_bytes().unwrap();
        let (mut opened, _) = Index::from_bytes(&split.base, &[], &mut |_, _| {}).unwrap();
        let before = texts_of(&opened);

        // the texts of an index with one passage changed: their checksum is not the base's
        let (other, _, _) = sample(
            &IndexConfig::default(),
            Some((3, "Teutberga was the daughter of Boso the Elder.")),
            false,
        );
        let err = opened.attach_texts(&other.to_split_bytes().unwrap().texts).unwrap_err();
        assert!(
            matches!(err, Error::IndexPartsMismatch(_))
                && err.to_string().contains("belong to another index"),
            "{err}"
        );
        // a whole index file, the base itself and the extras are not texts
        for bytes in [index.to_bytes().unwrap(), split.base.clone(), split.extras.clone().unwrap()] {
            let err = opened.attach_texts(&bytes).unwrap_err();
            assert!(matches!(err, Error::IndexCorrupt(_)), "{err}");
        }
        // a damaged byte: the section's checksum
        let mut bad = split.texts.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        assert!(matches!(opened.attach_texts(&bad), Err(Error::IndexCorrupt(_))));
        assert!(!opened.texts_loaded());
        assert_eq!(texts_of(&opened), before);

        // the right texts attach, once
        opened.attach_texts(&split.texts).unwrap();
        assert_eq!(texts_of(&opened), texts_of(&index));
        assert!(matches!(opened.attach_texts(&split.texts), Err(Error::Config(_))));
        // a whole index has its texts
        let (mut whole, _) = Index::from_bytes(&index.to_bytes().unwrap(), &[], &mut |_, _| {}).unwrap();
        assert!(matches!(whole.attach_texts(&split.texts), Err(Error::Config(_))));
    }

    #[test]
    fn a_keyword_part_with_a_section_missing_or_added_is_refused() {
        let (index, _, _) = sample(&IndexConfig::default(), None, false);
        let split = index.to_split_bytes().unwrap();
        let parts = split_sections(&split.base);
        let without = |kind: SectionKind| {
            let kept: Vec<(SectionKind, Vec<u8>)> =
                parts.iter().filter(|(k, _)| *k != kind).cloned().collect();
            assemble(&kept).unwrap()
        };
        let err = Index::from_bytes(&without(SectionKind::Postings), &[], &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("without its postings"), "{err}");
        let err = Index::from_bytes(&without(SectionKind::Passages), &[], &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("the corpus section is missing"), "{err}");
        let mut more = parts.clone();
        more.push((SectionKind::GraphReport, b"{}".to_vec()));
        let err = Index::from_bytes(&assemble(&more).unwrap(), &[], &mut |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("cannot hold a graph-report section"), "{err}");
    }

    /// The sections of `bytes`, owned.
    fn split_sections(bytes: &[u8]) -> Vec<(SectionKind, Vec<u8>)> {
        split(bytes).unwrap().into_iter().map(|(k, b)| (k, b.to_vec())).collect()
    }

    #[test]
    fn wrong_extras_are_refused_and_change_nothing() {
        let (index, e, _) = sample(&IndexConfig::default(), None, true);
        let SplitIndex { base, texts, extras } = index.to_split_bytes().unwrap();
        let extras = extras.unwrap();
        let slots = [(EmbedderSlot::Static, e.clone())];
        let mut opened = Index::from_bytes(&base, &slots, &mut |_, _| {}).unwrap().0;
        opened.attach_texts(&texts).unwrap();

        // a whole index file, the base and the texts are not extras
        for bytes in [index.to_bytes().unwrap(), base.clone(), texts.clone()] {
            let err = opened.attach_extras(&bytes, &slots, &mut |_, _| {}).unwrap_err();
            assert!(err.to_string().contains("not its extras"), "{err}");
        }

        // the extras of an index with one passage changed: the re-embedded vectors' CRC32 differs
        let (other, _, _) = sample(
            &IndexConfig::default(),
            Some((3, "Teutberga was the daughter of Boso the Elder.")),
            false,
        );
        let err = opened
            .attach_extras(&other.to_split_bytes().unwrap().extras.unwrap(), &slots, &mut |_, _| {})
            .unwrap_err();
        assert!(matches!(err, Error::Model { .. }), "{err}");
        assert!(opened.dense(EmbedderSlot::Static).is_none() && opened.graph().is_none());

        // extras written with another configuration
        let mut config = IndexConfig::default();
        config.bm25.k1 = 1.2;
        let (k1, _, _) = sample(&config, None, false);
        let err = opened
            .attach_extras(&k1.to_split_bytes().unwrap().extras.unwrap(), &slots, &mut |_, _| {})
            .unwrap_err();
        assert!(
            matches!(err, Error::IndexPartsMismatch(_)) && err.to_string().contains("another configuration"),
            "{err}"
        );

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
