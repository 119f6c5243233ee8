//! The endpoint's OpenIE at indexing and query NER for CatRAG's anchoring (docs/method/spec.md §1
//! "Triples", optional LLM OpenIE; §3 channel B, optional LLM NER), HippoRAG 2's prompts
//! ([`prompts::openie_prompt`], [`prompts::ner_prompt`]) read by the tolerant parsers.
//!
//! Both degrade per item, never for the whole run: a passage whose call fails or whose answer
//! parses to no triple keeps its rule-based triples ([`crate::extract`]); a query whose call
//! fails or whose answer names no entity keeps the rule-based mentions. Every such fallback is
//! counted ([`LlmExtractStats`]).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::{parse, prompts, LlmClient};
use crate::error::{Error, Result};
use crate::extract::Triple;

/// Counters of an [`LlmOpenIe`] or an [`LlmNer`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LlmExtractStats {
    /// Calls made (passages for OpenIE, queries for NER).
    pub calls: usize,
    /// Calls that failed after their retries (HTTP, timeout, not a completion).
    pub failed_calls: usize,
    /// Answers that arrived but parsed to nothing (no triple, no entity).
    pub empty_answers: usize,
    /// Items that fell back to the rule-based output (= failed calls + empty answers).
    pub fallbacks: usize,
    /// Triples (OpenIE) or entities (NER) taken from the endpoint.
    pub items: usize,
    /// Wall-clock milliseconds in calls and parsing.
    pub llm_ms: f64,
    /// The first 20 failures and unparseable answers.
    pub log: Vec<String>,
}

impl LlmExtractStats {
    fn fail(&mut self, empty: bool, what: String) {
        if empty {
            self.empty_answers += 1;
        } else {
            self.failed_calls += 1;
        }
        self.fallbacks += 1;
        if self.log.len() < 20 {
            self.log.push(what);
        }
    }
}

fn head(s: &str) -> String {
    s.chars().take(120).collect()
}

/// The byte span of the sentence of `text` holding the first case-insensitive occurrence of
/// `needle` (sentences end at `.`, `!` or `?` followed by white space), or the whole passage
/// when it does not occur (LLM triples carry no source sentence).
fn sentence_span(text: &str, needle: &str) -> (u32, u32) {
    let whole = (0, text.len() as u32);
    if needle.trim().is_empty() {
        return whole;
    }
    let Some((at, _)) = parse::find_ci(text, needle.trim()) else { return whole };
    let b = text.as_bytes();
    let ends = |i: usize| {
        matches!(b[i], b'.' | b'!' | b'?') && b.get(i + 1).map_or(true, |c| c.is_ascii_whitespace())
    };
    let mut start = 0;
    for i in (0..at).rev() {
        if ends(i) {
            start = i + 1;
            break;
        }
    }
    while start < at && b[start].is_ascii_whitespace() {
        start += 1;
    }
    let mut end = text.len();
    for i in at..text.len() {
        if ends(i) {
            end = i + 1;
            break;
        }
    }
    (start as u32, end as u32)
}

/// The graph's triples of passage `passage` (text `text`) from the endpoint's parsed triples
/// ([`parse::parse_triples`]): each gets the span of the sentence holding its subject (else its
/// object), else the whole passage (LLM triples carry no source sentence).
pub fn llm_triples(passage: u32, text: &str, parsed: Vec<parse::LlmTriple>) -> Vec<Triple> {
    parsed
        .into_iter()
        .map(|[subject, relation, object]| {
            let mut span = sentence_span(text, &subject);
            if span == (0, text.len() as u32) {
                span = sentence_span(text, &object);
            }
            Triple { subject, relation, object, passage, sentence: span }
        })
        .collect()
}

/// OpenIE by the endpoint: one call per passage ([`prompts::openie_prompt`]), answer read with
/// [`parse::parse_triples`]. Sentence spans: the sentence holding the triple's subject (else its
/// object), else the whole passage.
pub struct LlmOpenIe {
    client: Arc<dyn LlmClient>,
    stats: Mutex<LlmExtractStats>,
}

impl LlmOpenIe {
    /// OpenIE over `client`.
    pub fn new(client: Arc<dyn LlmClient>) -> Self {
        LlmOpenIe { client, stats: Mutex::new(LlmExtractStats::default()) }
    }

    /// A copy of the counters.
    pub fn stats(&self) -> LlmExtractStats {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The triples of passage `passage` (`title`, `text`) from the endpoint, or `rule` (its
    /// rule-based triples) when the call fails or the answer holds no triple (counted).
    pub fn extract(&self, passage: u32, title: &str, text: &str, rule: &[Triple]) -> Vec<Triple> {
        let t = Instant::now();
        // Indexing: no query deadline, only the request timeout (and the breaker).
        self.client.begin_query(None);
        let answer = self.client.chat(&prompts::openie_prompt(title, text));
        let mut s = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        s.calls += 1;
        let out = match answer {
            Err(e) => {
                s.fail(false, format!("openie of {title:?}: {e}"));
                rule.to_vec()
            }
            Ok(r) => {
                let triples = parse::parse_triples(&r.content);
                if triples.is_empty() {
                    s.fail(true, format!("openie of {title:?}: no triple in {:?}", head(&r.content)));
                    rule.to_vec()
                } else {
                    s.items += triples.len();
                    llm_triples(passage, text, triples)
                }
            }
        };
        s.llm_ms += t.elapsed().as_secs_f64() * 1e3;
        out
    }
}

/// Query NER by the endpoint ([`prompts::ner_prompt`], [`parse::parse_entities`]) for CatRAG's
/// anchoring; named `llm-ner:{model}`. A failed call or an answer without entity is an error
/// (counted), on which the index uses the rule-based mentions.
pub struct LlmNer {
    client: Arc<dyn LlmClient>,
    name: String,
    stats: Mutex<LlmExtractStats>,
}

impl LlmNer {
    /// Query NER over `client`.
    pub fn new(client: Arc<dyn LlmClient>) -> Self {
        let name = format!("llm-ner:{}", client.config().model);
        LlmNer { client, name, stats: Mutex::new(LlmExtractStats::default()) }
    }

    /// A copy of the counters.
    pub fn stats(&self) -> LlmExtractStats {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl LlmNer {
    /// Its name for reports: `llm-ner:{model}`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The entity names of `query` by the endpoint (the query's deadline starts here when this
    /// is its first call).
    ///
    /// # Errors
    /// [`Error::Llm`] for a failed call or an answer without entity (both counted).
    pub fn recognise(&self, query: &str) -> Result<Vec<String>> {
        let t = Instant::now();
        self.client.begin_query(Some(query));
        let answer = self.client.chat(&prompts::ner_prompt(query));
        let mut s = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        s.calls += 1;
        let out = match answer {
            Err(e) => {
                s.fail(false, format!("ner of {query:?}: {e}"));
                Err(e)
            }
            Ok(r) => {
                let names = parse::parse_entities(&r.content);
                if names.is_empty() {
                    s.fail(true, format!("ner of {query:?}: no entity in {:?}", head(&r.content)));
                    Err(Error::Llm("no entity in the answer".into()))
                } else {
                    s.items += names.len();
                    Ok(names)
                }
            }
        };
        s.llm_ms += t.elapsed().as_secs_f64() * 1e3;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::sentence_span;

    #[test]
    fn spans_find_the_sentence_or_the_whole_passage() {
        let t = "Ada was born in London. She wrote notes! Bye";
        assert_eq!(sentence_span(t, "london"), (0, 23));
        assert_eq!(sentence_span(t, "notes"), (24, 40));
        assert_eq!(sentence_span(t, "Bye"), (41, 44));
        assert_eq!(sentence_span(t, "Paris"), (0, 44));
        assert_eq!(sentence_span(t, " "), (0, 44));
    }
}
