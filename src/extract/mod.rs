//! OpenIE triples (ARCHITECTURE.md, module `extract`; METHOD.md §1, "Triples").
//!
//! This module will hold the rule-based extractor (chunks and verb patterns over Cairn's own text
//! pipeline) and the LLM variant. For now it defines only the data the knowledge graph
//! ([`crate::graph`]) consumes: the [`Triple`].

use serde::{Deserialize, Serialize};

/// One (subject, relation, object) fact extracted from a passage, as in HippoRAG 2 §3 (OpenIE
/// over every passage) and CatRAG §3.1.
///
/// The strings are surface text as extracted; the graph normalises the subject and object into
/// entity names ([`crate::graph::normalize_entity`]) and embeds `"subject relation object"` as
/// the fact's text. Any string may be empty or non-English: the graph skips a triple whose
/// subject or object normalises to nothing, and never panics on one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Triple {
    /// The subject phrase (for example `"Teutberga"`).
    pub subject: String,
    /// The relation phrase (for example `"was queen of"`); may be empty.
    pub relation: String,
    /// The object phrase (for example `"Lotharingia"`).
    pub object: String,
    /// Index of the passage in the corpus ([`crate::Corpus`] insertion order) the triple comes
    /// from.
    pub passage: u32,
    /// Byte span `[start, end)` of the sentence the triple comes from, in the passage's text.
    /// Informational (for showing the source sentence); the graph does not read it.
    pub sentence: (u32, u32),
}

impl Triple {
    /// A triple from `passage` with an empty sentence span `(0, 0)` (convenient in tests and for
    /// extractors that do not track sentences).
    pub fn new(subject: &str, relation: &str, object: &str, passage: u32) -> Self {
        Triple {
            subject: subject.to_owned(),
            relation: relation.to_owned(),
            object: object.to_owned(),
            passage,
            sentence: (0, 0),
        }
    }
}
