//! OpenIE triples (docs/architecture.md, module `extract`; docs/method/spec.md §1, "Triples").
//!
//! - [`Triple`]: the fact the knowledge graph ([`crate::graph`]) consumes;
//! - [`rules`]: the offline default, a rule-based (ReVerb-style) extractor over Cairn's own
//!   text pipeline: [`extract_corpus`] for a whole [`crate::Corpus`], [`extract_passage`] for
//!   one passage, [`RuleExtractor`] to reuse buffers. Its rules, their sources and its measured
//!   precision and recall are in the [`rules`] docs.
//!
//! The LLM extractor (docs/method/spec.md §1, "Optional") is [`crate::llm::LlmOpenIe`]: one endpoint call per
//! passage, falling back to these rules for a passage whose answer fails or holds no triple.
//!
//! ```
//! use cairn::extract::extract_passage;
//! use cairn::text::Pipeline;
//!
//! let pipeline = Pipeline::english()?;
//! let (triples, english) = extract_passage(&pipeline, 0, "Marie Curie", "She was born in Warsaw in 1867.");
//! assert!(english);
//! let facts: Vec<(&str, &str, &str)> =
//!     triples.iter().map(|t| (t.subject.as_str(), t.relation.as_str(), t.object.as_str())).collect();
//! assert_eq!(facts, [("Marie Curie", "was born in", "Warsaw"), ("Marie Curie", "was born in", "1867")]);
//! assert_eq!(triples[0].sentence, (0, 31)); // byte span of the sentence in the text
//! # Ok::<(), cairn::Error>(())
//! ```

use serde::{Deserialize, Serialize};

pub mod rules;

pub use rules::{extract_corpus, extract_passage, extract_passages, ExtractOutput, ExtractStats, PassageInfo, RuleExtractor};

/// One (subject, relation, object) fact extracted from a passage, as in HippoRAG 2 §3 (OpenIE
/// over every passage) and CatRAG §3.1.
///
/// The strings are surface text as extracted; the graph normalises the subject and object into
/// entity names ([`crate::text::normalize::normalize_entity`]) and embeds `"subject relation object"` as
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
