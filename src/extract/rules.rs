//! Rule-based OpenIE over Cairn's text pipeline (docs/method/spec.md §1, "Triples", offline default).
//!
//! ReVerb-style extraction (Fader, Soderland & Etzioni 2011, "Identifying Relations for Open
//! Information Extraction", EMNLP) over the pipeline's UPOS tags, noun-phrase chunks and pronoun
//! resolution ([`crate::text`]), producing the (subject, relation, object) facts HippoRAG 2 §3
//! gets from an LLM. Precision matters more than recall: a wrong triple adds a wrong edge to the
//! knowledge graph, a missing one only loses an edge the passage's context edges partly cover.
//!
//! Measured on the hand-checked gold set `tests/fixtures/openie/gold.jsonl` (72 dev sentences,
//! 192 triples; `cargo test --test openie_gold -- --nocapture`, matching criterion in that file):
//! precision 0.81 / recall 0.72 with lenient argument matching, 0.72 / 0.65 with exact
//! normalised arguments. On text it was not developed on it is lower: 32 of 50 triples sampled
//! evenly from the HotpotQA dev passages were judged correct (64%).
//!
//! ## Arguments
//! The arguments are the pipeline's base NP chunks, with these repairs:
//! - joined where a name spans several: `Proper of Proper` (`University of Oxford`, `Prince
//!   William of Schaumburg- Lippe`), hyphens followed by a space (`Sackville- West`, as the
//!   2WikiMultihopQA text has them), name particles (`Mishaal bin Hamad`), a nickname in quotes
//!   (`Marshall Ambrose "Mickey" Neilan`) and dates (`October 11, 1949`);
//! - the passage title, where it occurs verbatim, is one argument (`Dead by Sunrise`, `Look
//!   Who's Talking`, `His Last Haul`, or a one-word name the tagger took for a verb);
//! - split at brackets (`Incerti( born` — the bracket glued to the name stays with it), at a
//!   linking gerund (`the label featuring performances`) and before a year opening a name after
//!   a preposition (`In 2003 BAE Systems` → `2003` | `BAE Systems`);
//! - extended over a quantifier (`more than 20 books`, `about 25 km`);
//! - `a`/`an` + adjectives before a comma or conjunction is a noun phrase (the tagger's
//!   `an Albanian politician/ADJ,`).
//!
//! An argument's text is its words without leading articles and demonstratives. A role noun
//! before a name reduces it to the name and states the role (`his wife Princess Bathildis` →
//! `Princess Bathildis` and (Princess Bathildis, is wife of, owner); `jazz saxophonist Stanley
//! Turrentine` → (Stanley Turrentine, is, jazz saxophonist)). Pronouns become their antecedent
//! ([`Document::antecedent_of`]; the title, without a trailing ` (qualifier)` or a `, qualifier`
//! the text leaves out, is the default antecedent), or the subject whose predicate noun that
//! antecedent is (`She is an actress and musician. She …` → the actress, not "musician"). A
//! possessive determiner becomes `Antecedent's`. A definite description `the/this NOUN` is the
//! title when the noun is the title's last word or in its qualifier (`The creek` in "Cedar
//! Creek", `The game` in "Teen Titans (2005 video game)"), the predicate noun of an earlier
//! "TITLE is a NOUN" sentence, or — while the passage has not said what the title is — a kind
//! of encyclopaedic topic (`KIND_NOUNS`: film, album, river, club …) not mentioned before
//! (`The film was released in Japan …`). Other definite descriptions (`the couple`) are not
//! subjects: they would join unrelated passages in the graph. Unresolved pronouns, stop words,
//! demonstrative or `same` objects, and empty phrases are never arguments.
//!
//! ## Relations (verb patterns)
//! A verb group is a run of verbs and auxiliaries with negation, adverbs between verbs and
//! infinitival `to` + verb. ReVerb's pattern `V | V P | V W* P` is applied to what follows:
//! prepositions and particles join the relation (`was born in`); a copula's predicate noun, a
//! direct object before a preposition, and any object noun before `of` join it too when a noun
//! phrase follows (`was a queen of Lotharingia` → `was queen of` + `Lotharingia`; `bought a
//! grist mill on Silver Creek` → `bought grist mill on` + `Silver Creek`, and the direct object
//! on its own, `bought` + `grist mill`, unless the verb is passive). Relations are **surface
//! text** (the verb group without adverbs but with `not`/`never`, then particles, prepositions
//! and absorbed nouns without determiners; at most `MAX_RELATION_WORDS` words), as HippoRAG's
//! OpenIE keeps them short and surface (`was born in`); the graph embeds `subject relation
//! object` as text.
//!
//! The subject is the nearest argument to the left of the verb group in its clause, skipping
//! brackets, a comma-delimited phrase and prepositional modifiers (`The capital of France is` →
//! `capital of France`); an apposition's name (`X, a Y, was` → X); a relative pronoun (`who`,
//! `which`, `that`) stands for the phrase before it, or for the subject whose predicate noun or
//! apposition that phrase is; a verb group after `and`/`,` shares the previous group's subject
//! (or has none); a bare participle or gerund (`a film directed by X`, `…, consisting of X`)
//! takes the noun it modifies (a name after a preposition passes it on to the phrase or clause
//! above), or the subject of the clause it continues; a sentence-initial `After playing …`
//! takes the main clause's subject; `…, including X` is kept only after a name. A possessive
//! subject of a copula gives its owner (`Its elevation is 4816 meters` → (Burji La, elevation
//! is, 4816 meters)).
//!
//! Each object is followed through lists (`stars A, B and C` → three triples; numbers only list
//! with numbers; `(…)` inside a list is skipped) and trailing prepositional phrases
//! (`TRAILING_PREPS`: after a direct object any, after a prepositional object or a first
//! trailing phrase only dates and names — `was born in Paris in 1947` → also `was born in` 1947;
//! after a copula only `in` + a name); a sentence-initial `In 1990,` attaches to the first
//! clause.
//!
//! ## Copula, apposition and place facts
//! `X is a Y` → (X, is, Y) (or `is Y of` + Z, as above); `X, a Y,` / `X, the Y of Z` →
//! (X, is, Y) / (X, is Y of, Z); `the Y, X` or `Z's Y, X` (a common noun then a name) →
//! (X, is, Y) / (X, is Y of, Z); a sentence-initial `A Y of Z, he …` → (he, is Y of, Z);
//! `X (or Y)` / `X, also Y` → (X, also known as, Y); `X, formerly Y` → (X, formerly known as, Y);
//! `A, B` where B is a place (a GeoNames gazetteer country, state or city, optionally after a
//! compass word, or a name ending in an administrative word such as `County`) and A is not a
//! country → (A, is in, B), and B is then no list item of the verb before (`born in Austin,
//! Texas` → (…, born in, Austin), (Austin, is in, Texas)).
//!
//! ## Output
//! Each triple keeps its passage index and its sentence's byte span. Triples with an empty
//! argument or relation, with the same normalised subject and object, or whose object is the
//! subject's own thing (`X began X's career`) are dropped; duplicates (same normalised subject
//! and object, same relation) within a passage are dropped. Passages the pipeline judges
//! non-English ([`crate::text::LanguageGuess`]) give no triples. Work is linear in the passage
//! length (about 0.2 ms per passage natively, pipeline included).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Triple;
use crate::text::normalize::normalize_entity;
use crate::text::{Antecedent, ChunkKind, Document, EntityKind, Gazetteer, Pipeline, Upos, VerbForm};
use crate::{Corpus, Passage};

/// What [`extract_corpus`] returns: every triple, in passage order, and counts.
#[derive(Debug, Clone, Default)]
pub struct ExtractOutput {
    /// The triples of all passages, passage by passage in corpus order (each carries its
    /// passage index and sentence byte span).
    pub triples: Vec<Triple>,
    /// Counts over the run.
    pub stats: ExtractStats,
}

/// Counts of one extraction run ([`extract_corpus`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtractStats {
    /// Passages seen.
    pub passages: usize,
    /// Passages the pipeline judged English (triples were extracted from these).
    pub english_passages: usize,
    /// Passages judged non-English: no triples were extracted from them (they are still
    /// indexed by everything else: tokens, BM25, embeddings).
    pub non_english_passages: usize,
    /// Sentences of the English passages.
    pub sentences: usize,
    /// Triples extracted.
    pub triples: usize,
}

/// Extract triples from every passage of `corpus` (passage index = corpus order), skipping text
/// the pipeline flags as non-English (docs/method/spec.md §1, "Triples": the offline rule-based OpenIE;
/// rules in the module docs, after ReVerb, Fader et al. 2011, for HippoRAG 2 §3's graph).
///
/// `progress(done, total)` is called with `(0, total)` first, then every 64 passages and at the
/// end. Never fails and never panics on passage text; about 0.2 ms per passage natively
/// (release build, pipeline included: 6,119 2WikiMultihopQA passages in about 1 s).
pub fn extract_corpus(
    pipeline: &Pipeline,
    corpus: &Corpus,
    progress: &mut dyn FnMut(usize, usize),
) -> ExtractOutput {
    extract_passages(pipeline, 0, corpus.passages(), progress)
}

/// As [`extract_corpus`] for `passages`, which are corpus passages `first_index..` (the index
/// copied into each triple): the new passages of a grown corpus, for an incremental graph.
pub fn extract_passages(
    pipeline: &Pipeline,
    first_index: u32,
    passages: &[Passage],
    progress: &mut dyn FnMut(usize, usize),
) -> ExtractOutput {
    let mut ex = RuleExtractor::new(*pipeline);
    let total = passages.len();
    let mut out = ExtractOutput::default();
    progress(0, total);
    for (i, p) in passages.iter().enumerate() {
        let index = u32::try_from(i).ok().and_then(|i| first_index.checked_add(i)).unwrap_or(u32::MAX);
        let info = ex.extract_into(index, &p.title, &p.text, &mut out.triples);
        out.stats.passages += 1;
        if info.english {
            out.stats.english_passages += 1;
            out.stats.sentences += info.sentences;
        } else {
            out.stats.non_english_passages += 1;
        }
        if (i + 1) % 64 == 0 || i + 1 == total {
            progress(i + 1, total);
        }
    }
    out.stats.triples = out.triples.len();
    out
}

impl ExtractStats {
    /// Add `other`'s counts to these (the stats of a corpus grown by a batch).
    pub fn merge(&mut self, other: &ExtractStats) {
        self.passages += other.passages;
        self.english_passages += other.english_passages;
        self.non_english_passages += other.non_english_passages;
        self.sentences += other.sentences;
        self.triples += other.triples;
    }
}

/// Extract the triples of one passage (`index` is its corpus index, copied into each triple;
/// `title` may be empty and is the default antecedent of pronouns). Returns the triples and
/// whether the passage looked English (no triples when it did not). Never panics.
///
/// For many passages, reuse one [`RuleExtractor`] instead (it keeps its buffers).
pub fn extract_passage(pipeline: &Pipeline, index: u32, title: &str, text: &str) -> (Vec<Triple>, bool) {
    let mut ex = RuleExtractor::new(*pipeline);
    let mut out = Vec::new();
    let info = ex.extract_into(index, title, text, &mut out);
    (out, info.english)
}

/// What [`RuleExtractor::extract_into`] reports about one passage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassageInfo {
    /// Whether the passage looked English ([`crate::text::LanguageGuess::english`]).
    pub english: bool,
    /// Its sentences (0 when not English).
    pub sentences: usize,
    /// Triples appended.
    pub triples: usize,
}

/// The rule extractor (module docs) with buffers reused from passage to passage; use one per
/// thread.
#[derive(Debug)]
pub struct RuleExtractor {
    pipeline: Pipeline,
    doc: Document,
    args: Vec<Arg>,
    arg_at: Vec<u32>,
    seen: HashSet<(String, String, String)>,
    title_nouns: Vec<String>,
    /// Predicate noun or apposition argument → its subject, over the passage so far.
    predicates: HashMap<usize, String>,
    /// Head lemmas of common-noun arguments seen so far in the passage.
    heads: HashSet<String>,
}

const NONE: u32 = u32::MAX;

/// Maximum number of words in a relation (longer verb-pattern matches are cut off: ReVerb's
/// over-specific relations).
const MAX_RELATION_WORDS: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgKind {
    Proper,
    Common,
    Number,
    Pronoun,
}

/// One argument candidate: words `first..end` (head `head`), its display text (empty = not
/// usable as an argument) and, for a relative pronoun, a flag.
#[derive(Debug, Clone)]
struct Arg {
    first: usize,
    end: usize,
    head: usize,
    kind: ArgKind,
    text: String,
    relative: bool,
    /// For `X's N` / `his N`: (X, N).
    owner: Option<(String, String)>,
    /// A role stated inside the phrase: (relation, object) with the argument as subject.
    role: Option<(String, String)>,
    /// A title occurrence.
    title: bool,
    /// For a pronoun or a phrase opened by a possessive determiner: the argument the pronoun
    /// refers to (when it is a noun phrase, not the title).
    antecedent: Option<usize>,
}

/// A verb group: words `first..end`, its relation words (indices), whether it is a copula.
#[derive(Debug, Clone)]
struct Group {
    first: usize,
    end: usize,
    rel: Vec<usize>,
    copular: bool,
    /// A participle or gerund without auxiliary or finite verb (`directed`, `starring`).
    bare: bool,
    subject: Option<String>,
}

impl RuleExtractor {
    /// A new extractor over `pipeline`.
    pub fn new(pipeline: Pipeline) -> Self {
        RuleExtractor {
            pipeline,
            doc: Document::default(),
            args: Vec::new(),
            arg_at: Vec::new(),
            seen: HashSet::new(),
            title_nouns: Vec::new(),
            predicates: HashMap::new(),
            heads: HashSet::new(),
        }
    }

    /// Extract the triples of one passage (module docs), appending them to `out` with passage
    /// index `index`. `title` may be empty. Never panics; non-English text gives no triples
    /// (`english: false`).
    pub fn extract_into(
        &mut self,
        index: u32,
        title: &str,
        text: &str,
        out: &mut Vec<Triple>,
    ) -> PassageInfo {
        self.pipeline.analyze_into(title, text, &mut self.doc);
        if !self.doc.language.english {
            return PassageInfo::default();
        }
        let before = out.len();
        self.seen.clear();
        self.title_nouns.clear();
        self.predicates.clear();
        self.heads.clear();
        let title_name = title_name(title, text);
        build_args(&self.doc, &title_name, &mut self.args, &mut self.arg_at);
        for si in 0..self.doc.sentences.len() {
            let mut cx = SentenceCx {
                doc: &self.doc,
                args: &mut self.args,
                arg_at: &self.arg_at,
                title: &title_name,
                title_nouns: &mut self.title_nouns,
                gazetteer: self.pipeline.gazetteer(),
                heads_before: &self.heads,
                si,
                out: Vec::new(),
                complement_of: Vec::new(),
            };
            cx.resolve_descriptions();
            cx.resolve_predicate_antecedents(&self.predicates);
            cx.run();
            let SentenceCx { out: found, complement_of, .. } = cx;
            self.predicates.extend(complement_of);
            if let Some(s) = self.doc.sentences.get(si) {
                for a in self.args.iter().filter(|a| a.first >= s.words.start && a.first < s.words.end) {
                    if a.kind == ArgKind::Common {
                        self.heads.insert(lower(self.doc.lemma(a.head)));
                    }
                }
            }
            let Some(s) = self.doc.sentences.get(si) else { continue };
            for (subject, relation, object) in found {
                let key = (normalize_entity(&subject), relation.to_lowercase(), normalize_entity(&object));
                if key.0.is_empty() || key.2.is_empty() || key.0 == key.2 || relation.is_empty() {
                    continue;
                }
                if !self.seen.insert(key) {
                    continue;
                }
                out.push(Triple {
                    subject,
                    relation,
                    object,
                    passage: index,
                    sentence: (to_u32(s.start), to_u32(s.end)),
                });
            }
        }
        PassageInfo { english: true, sentences: self.doc.sentences.len(), triples: out.len() - before }
    }
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// The name the passage title gives its topic: without a trailing parenthetical
/// (`Dwight Davis (basketball)` → `Dwight Davis`), and without a trailing `, qualifier` when
/// the text uses the shorter name (`Bruemmerville, Wisconsin` → `Bruemmerville`).
fn title_name(title: &str, text: &str) -> String {
    let mut t = title.trim();
    if t.ends_with(')') {
        if let Some(open) = t.rfind('(') {
            let head = t[..open].trim();
            if !head.is_empty() {
                t = head;
            }
        }
    }
    if let Some(comma) = t.find(", ") {
        let head = t[..comma].trim();
        if !head.is_empty() && !text.contains(t) && text.contains(head) {
            t = head;
        }
    }
    t.to_owned()
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

fn is_word(doc: &Document, i: usize, options: &[&str]) -> bool {
    let t = doc.word_text(i);
    options.iter().any(|o| t.eq_ignore_ascii_case(o))
}

fn upos(doc: &Document, i: usize) -> Option<Upos> {
    doc.words.get(i).map(|w| w.upos)
}

const ARTICLES: &[&str] = &["the", "a", "an", "this", "that", "these", "those"];
const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "jan.",
    "feb.",
    "mar.",
    "apr.",
    "aug.",
    "sep.",
    "sept.",
    "oct.",
    "nov.",
    "dec.",
];
const NAME_PARTICLES: &[&str] = &[
    "bin", "ibn", "bint", "al", "van", "von", "der", "den", "de", "du", "la", "le", "da", "di", "del", "dos",
    "das", "y",
];
const RELATIVES: &[&str] = &["who", "which", "that", "whom"];
const PERSONAL: &[&str] =
    &["he", "she", "it", "they", "him", "her", "them", "himself", "herself", "itself", "themselves"];
const POSSESSIVES: &[&str] = &["his", "her", "its", "their"];
/// Prepositions whose phrase after an object is kept as another fact of the same verb
/// (time and place adjuncts, recipients, sources).
const TRAILING_PREPS: &[&str] = &[
    "in", "at", "on", "for", "from", "to", "during", "since", "until", "after", "before", "with", "by",
    "into", "as",
];
const COPULAS: &[&str] = &["be", "become", "remain"];
/// Gerunds that start a reduced relative clause inside what the chunker took for one noun
/// phrase ("the label featuring performances").
const LINKING_GERUNDS: &[&str] = &[
    "featuring",
    "starring",
    "including",
    "containing",
    "comprising",
    "consisting",
    "depicting",
    "portraying",
    "involving",
    "connecting",
    "linking",
    "serving",
    "covering",
];

fn is_hyphen(t: &str) -> bool {
    matches!(t, "-" | "–" | "‐")
}

fn is_year(t: &str) -> bool {
    t.len() == 4 && t.bytes().all(|b| b.is_ascii_digit())
}

fn starts_upper(t: &str) -> bool {
    t.chars().next().is_some_and(char::is_uppercase)
}

/// A piece of an argument before joins: words `first..end`, head word, kind.
#[derive(Debug, Clone, Copy)]
struct Piece {
    first: usize,
    end: usize,
    head: usize,
    kind: ArgKind,
    /// A title occurrence (never split or re-tagged).
    title: bool,
}

fn is_head_word(doc: &Document, i: usize) -> bool {
    matches!(upos(doc, i), Some(Upos::Noun | Upos::Propn | Upos::Num | Upos::Pron))
}

/// The kind of a piece whose head is word `h`.
fn kind_at(doc: &Document, h: usize) -> ArgKind {
    match upos(doc, h) {
        Some(Upos::Propn) => ArgKind::Proper,
        Some(Upos::Num) => ArgKind::Number,
        Some(Upos::Pron) => ArgKind::Pronoun,
        _ => ArgKind::Common,
    }
}

/// Push `first..end` as a piece if it has a head word (its last head-like word).
fn push_piece(doc: &Document, first: usize, end: usize, pieces: &mut Vec<Piece>) {
    if first >= end {
        return;
    }
    if let Some(h) = (first..end).rev().find(|&i| is_head_word(doc, i)) {
        pieces.push(Piece { first, end: h + 1, head: h, kind: kind_at(doc, h), title: false });
    }
}

/// Word ranges where the passage title occurs verbatim, at word boundaries: titles of works
/// often contain words a chunker cuts at ("Dead by Sunrise", "Look Who's Talking", "His Last
/// Haul"), and a one-word name may be mistagged ("Hucbert, the lay-abbot" as a verb). A
/// one-word title must be capitalised; a longer one must contain a proper noun.
fn title_spans(doc: &Document, title: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let words = title.split_whitespace().count();
    if words == 0 || title.len() > 120 || (words == 1 && !(starts_upper(title) && title.chars().count() >= 2))
    {
        return spans;
    }
    let mut from = 0;
    while let Some(pos) = doc.text.get(from..).and_then(|t| t.find(title)) {
        let (a, b) = (from + pos, from + pos + title.len());
        let first = doc.words.binary_search_by_key(&a, |w| w.start).ok();
        let last = doc.words.binary_search_by_key(&b, |w| w.end).ok();
        if let (Some(f), Some(l)) = (first, last) {
            let same_sentence = doc.words.get(f).map(|w| w.sentence) == doc.words.get(l).map(|w| w.sentence);
            if f <= l && same_sentence && (words == 1 || (f..=l).any(|i| upos(doc, i) == Some(Upos::Propn))) {
                spans.push((f, l + 1));
            }
        }
        from = b;
    }
    spans
}

/// The pieces of the chunks: chunks split at bracket tokens, at a gerund after a noun
/// ("the label featuring performances"), and before a sentence-initial year ("In 2003 BAE
/// Systems"); extended leftwards over a quantifier ("more than 20 books").
fn chunk_pieces(doc: &Document, pieces: &mut Vec<Piece>) {
    for c in &doc.chunks {
        let mut first = c.words.start;
        if c.kind == ChunkKind::Pronoun {
            pieces.push(Piece {
                first,
                end: c.words.end,
                head: c.head,
                kind: ArgKind::Pronoun,
                title: false,
            });
            continue;
        }
        // A year opening a name after a preposition.
        if c.kind == ChunkKind::Proper
            && c.words.len() >= 2
            && is_year(doc.word_text(first))
            && upos(doc, first) == Some(Upos::Num)
            && first.checked_sub(1).is_some_and(|p| upos(doc, p) == Some(Upos::Adp))
        {
            pieces.push(Piece { first, end: first + 1, head: first, kind: ArgKind::Number, title: false });
            first += 1;
        }
        let start_len = pieces.len();
        let mut i = first;
        while i < c.words.end {
            let t = doc.word_text(i);
            let bracket = t.contains(['(', ')', '[', ']']);
            let gerund = i > first
                && upos(doc, i) == Some(Upos::Verb)
                && is_word(doc, i, LINKING_GERUNDS)
                && matches!(upos(doc, i - 1), Some(Upos::Noun | Upos::Propn));
            if bracket {
                let name_part = t.chars().next().is_some_and(char::is_alphanumeric)
                    && matches!(upos(doc, i), Some(Upos::Propn | Upos::Noun | Upos::Num));
                if name_part {
                    // "Incerti(": the word ends the piece.
                    push_piece(doc, first, i + 1, pieces);
                } else {
                    push_piece(doc, first, i, pieces);
                }
                first = i + 1;
            } else if gerund {
                push_piece(doc, first, i, pieces);
                first = i + 1;
            }
            i += 1;
        }
        push_piece(doc, first, c.words.end, pieces);
        // Quantifiers before a number: "more than 20 books", "about 25 km", "over 100 games".
        if let Some(p) = pieces.get_mut(start_len) {
            if upos(doc, p.first) == Some(Upos::Num) {
                let q = p.first;
                let two = q >= 2 && {
                    let a = lower(doc.word_text(q - 2));
                    let b = lower(doc.word_text(q - 1));
                    b == "than" && matches!(a.as_str(), "more" | "less" | "fewer")
                        || (a == "at" && matches!(b.as_str(), "least" | "most"))
                };
                let one = q >= 1
                    && is_word(
                        doc,
                        q - 1,
                        &["about", "around", "approximately", "nearly", "almost", "over", "some", "roughly"],
                    );
                if two {
                    p.first = q - 2;
                } else if one {
                    p.first = q - 1;
                }
            }
        }
    }
}

/// Noun phrases the tagger left without a noun: `a`/`an` + adjectives before a comma, a
/// conjunction, `of`, `who` or the end ("was an Albanian politician, mayor of X": the perceptron
/// tags "politician" ADJ before the comma). The last adjective is the head.
fn adjective_pieces(doc: &Document, pieces: &mut Vec<Piece>) {
    let mut covered = vec![false; doc.words.len()];
    for p in pieces.iter() {
        for c in covered.iter_mut().take(p.end).skip(p.first) {
            *c = true;
        }
    }
    for c in &doc.chunks {
        for x in covered.iter_mut().take(c.words.end).skip(c.words.start) {
            *x = true;
        }
    }
    let n = doc.words.len();
    let mut added = false;
    let mut i = 0;
    while i < n {
        if covered[i] || !(is_word(doc, i, &["a", "an"]) && upos(doc, i) == Some(Upos::Det)) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < n && j - i <= 3 && !covered[j] && upos(doc, j) == Some(Upos::Adj) {
            j += 1;
        }
        let same_sentence = doc.words.get(j).map(|w| w.sentence) == doc.words.get(i).map(|w| w.sentence);
        let ends = j >= n
            || !same_sentence
            || matches!(doc.word_text(j), "," | "." | ";")
            || is_word(doc, j, &["and", "or", "of", "who", "from"]);
        if j > i + 1 && ends {
            pieces.push(Piece { first: i, end: j, head: j - 1, kind: ArgKind::Common, title: false });
            added = true;
        }
        i = j.max(i + 1);
    }
    if added {
        pieces.sort_by_key(|p| p.first);
    }
}

/// Build the arguments of the whole document (module docs, "Arguments").
fn build_args(doc: &Document, title: &str, args: &mut Vec<Arg>, arg_at: &mut Vec<u32>) {
    args.clear();
    arg_at.clear();
    arg_at.resize(doc.words.len(), NONE);
    let mut pieces = Vec::with_capacity(doc.chunks.len() + 4);
    chunk_pieces(doc, &mut pieces);
    adjective_pieces(doc, &mut pieces);
    // Title occurrences replace the pieces they overlap.
    let spans = title_spans(doc, title);
    if !spans.is_empty() {
        let mut merged: Vec<Piece> = Vec::with_capacity(pieces.len());
        let mut si = 0;
        for p in pieces.iter().copied() {
            while si < spans.len() && spans[si].1 <= p.first {
                let (f, e) = spans[si];
                if merged.last().map_or(true, |m: &Piece| m.end <= f) {
                    merged.push(Piece { first: f, end: e, head: e - 1, kind: ArgKind::Proper, title: true });
                }
                si += 1;
            }
            match spans.get(si) {
                Some(&(f, e)) if p.first < e && p.end > f => {
                    // Overlap: the part before the title stays, the title takes the rest.
                    if p.first < f {
                        push_piece(doc, p.first, f, &mut merged);
                    }
                    let end = p.end.max(e);
                    let head = if p.end > e { p.head } else { e - 1 };
                    match merged.last_mut() {
                        Some(m) if m.title && m.first == f => {
                            m.end = m.end.max(end);
                            m.head = if end > e { head } else { m.head };
                        }
                        _ => merged.push(Piece { first: f, end, head, kind: ArgKind::Proper, title: true }),
                    }
                }
                _ => {
                    if merged.last().map_or(true, |m| m.end <= p.first) {
                        merged.push(p);
                    }
                }
            }
        }
        while si < spans.len() {
            let (f, e) = spans[si];
            if merged.last().map_or(true, |m: &Piece| m.end <= f) {
                merged.push(Piece { first: f, end: e, head: e - 1, kind: ArgKind::Proper, title: true });
            }
            si += 1;
        }
        pieces = merged;
    }
    // Joins.
    let mut k = 0;
    while k < pieces.len() {
        let p = pieces[k];
        let sentence = doc.words.get(p.first).map_or(0, |w| w.sentence);
        let (first, mut end, mut head, mut kind) = (p.first, p.end, p.head, p.kind);
        let mut next = k + 1;
        while let Some(n) = pieces.get(next).copied() {
            if doc.words.get(n.first).map(|w| w.sentence) != Some(sentence)
                || n.first < end
                || kind == ArgKind::Pronoun
                || n.kind == ArgKind::Pronoun
            {
                break;
            }
            let gap = end..n.first;
            let gap_len = gap.len();
            let n_first_content =
                (n.first..n.head + 1).find(|&i| upos(doc, i) != Some(Upos::Det)).unwrap_or(n.head);
            let last_text = doc.word_text(end - 1);
            let both_proper = kind == ArgKind::Proper && n.kind == ArgKind::Proper;
            // "University of Oxford"
            let of_name = both_proper
                && gap_len == 1
                && is_word(doc, end, &["of", "de", "du", "del", "des", "di", "da", "von", "van"])
                && doc.word_text(end).chars().all(char::is_lowercase)
                && starts_upper(doc.word_text(n_first_content))
                && starts_upper(last_text);
            // "Mishaal bin Hamad"
            let particles = both_proper
                && (1..=2).contains(&gap_len)
                && gap.clone().all(|i| is_word(doc, i, NAME_PARTICLES))
                && starts_upper(doc.word_text(n_first_content));
            // "Sackville- West", "Schaumburg- Lippe"
            let hyphen = hyphen_gap(doc, gap.clone()) || (gap_len == 0 && last_text.ends_with(['-', '–']));
            let join = if of_name || particles || hyphen {
                true
            } else if both_proper && gap_len == 1 && is_quote(doc.word_text(end)) {
                // A nickname: Marshall Ambrose "Mickey" Neilan.
                let close = n.end;
                let after = pieces.get(next + 1).copied();
                if is_quote(doc.word_text(close))
                    && after.is_some_and(|a| a.first == close + 1 && a.kind == ArgKind::Proper)
                {
                    if let Some(a) = after {
                        end = a.end;
                        head = a.head;
                        next += 2;
                        continue;
                    }
                }
                false
            } else {
                // Dates: "October 11 , 1949", "Apr 17 , 1988".
                gap_len == 1
                    && doc.word_text(end) == ","
                    && n.end - n.first == 1
                    && is_year(doc.word_text(n.head))
                    && upos(doc, end - 1) == Some(Upos::Num)
                    && (first..end).any(|i| MONTHS.contains(&lower(doc.word_text(i)).as_str()))
            };
            if !join {
                break;
            }
            if n.kind == ArgKind::Proper {
                kind = ArgKind::Proper;
            }
            end = n.end;
            head = n.head;
            next += 1;
        }
        let a = args.len() as u32;
        for slot in arg_at.iter_mut().take(end).skip(first) {
            *slot = a;
        }
        let relative = kind == ArgKind::Pronoun && is_word(doc, first, RELATIVES);
        args.push(Arg {
            first,
            end,
            head,
            kind,
            text: String::new(),
            relative,
            owner: None,
            role: None,
            title: p.title,
            antecedent: None,
        });
        k = next;
    }
    // Texts: names and nouns first, then pronouns (whose antecedents come before them).
    for a in 0..args.len() {
        if args[a].kind != ArgKind::Pronoun {
            set_plain_text(doc, a, title, args, &arg_at[..]);
        }
    }
    for a in 0..args.len() {
        if args[a].kind == ArgKind::Pronoun && !args[a].relative {
            let w = args[a].head;
            let t = if is_word(doc, w, PERSONAL) {
                antecedent_text(doc, w, title, args, &arg_at[..])
            } else {
                String::new()
            };
            args[a].text = t;
            args[a].antecedent = antecedent_arg(doc, w, &arg_at[..]);
        }
    }
}

fn is_quote(t: &str) -> bool {
    matches!(t, "\"" | "“" | "”" | "''" | "``")
}

/// Whether the words `gap` are a hyphen attached to the word before it, optionally followed by
/// a short lower-case word and another attached hyphen: `Sackville -West`, `Beaulieu- sur- Loire`.
fn hyphen_gap(doc: &Document, gap: std::ops::Range<usize>) -> bool {
    if gap.is_empty() || gap.len() > 3 || gap.len() == 2 {
        return false;
    }
    let attached = |i: usize| {
        i.checked_sub(1)
            .and_then(|p| doc.words.get(p))
            .zip(doc.words.get(i))
            .is_some_and(|(p, w)| p.end == w.start)
    };
    let s = gap.start;
    if !(is_hyphen(doc.word_text(s)) && attached(s)) {
        return false;
    }
    if gap.len() == 3 {
        let mid = doc.word_text(s + 1);
        return mid.len() <= 4
            && mid.chars().all(|c| c.is_alphabetic() && c.is_lowercase())
            && is_hyphen(doc.word_text(s + 2))
            && attached(s + 2);
    }
    true
}

/// The argument a pronoun refers to, when that is a noun phrase of the passage.
fn antecedent_arg(doc: &Document, pronoun: usize, arg_at: &[u32]) -> Option<usize> {
    match doc.antecedent_of(pronoun) {
        Some(Antecedent::Chunk(k)) => {
            let a = doc.chunks.get(k).and_then(|c| arg_at.get(c.head)).copied().unwrap_or(NONE);
            (a != NONE).then_some(a as usize)
        }
        _ => None,
    }
}

fn antecedent_text(doc: &Document, pronoun: usize, title: &str, args: &[Arg], arg_at: &[u32]) -> String {
    match doc.antecedent_of(pronoun) {
        Some(Antecedent::Title) => title.to_owned(),
        Some(Antecedent::Chunk(k)) => {
            let a = doc.chunks.get(k).and_then(|c| arg_at.get(c.head)).copied().unwrap_or(NONE);
            match args.get(a as usize) {
                Some(a) if a.kind != ArgKind::Pronoun => a.text.clone(),
                _ => String::new(),
            }
        }
        None => String::new(),
    }
}

/// Trim brackets, commas and quotes a tokenizer left on a phrase's ends.
fn trim_phrase(s: &str) -> &str {
    s.trim_matches(|c: char| {
        c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ',' | ';' | ':' | '"' | '“' | '”')
    })
}

/// Set the text of a non-pronoun argument: leading articles trimmed; a possessive determiner
/// replaced by its antecedent's name; a role before a name ("his wife Princess Bathildis",
/// "Linkin Park lead singer Chester Bennington", "jazz saxophonist Stanley Turrentine")
/// reduced to the name, the role kept as a fact; empty when unusable.
fn set_plain_text(doc: &Document, a: usize, title: &str, args: &mut [Arg], arg_at: &[u32]) {
    let arg = args[a].clone();
    let text_of = |f: usize, e: usize| -> &str {
        let (Some(fw), Some(lw)) = (doc.words.get(f), e.checked_sub(1).and_then(|l| doc.words.get(l))) else {
            return "";
        };
        if fw.start > lw.end {
            return "";
        }
        trim_phrase(doc.text.get(fw.start..lw.end).unwrap_or(""))
    };
    if arg.title {
        args[a].text = text_of(arg.first, arg.end).to_owned();
        return;
    }
    let mut first = arg.first;
    while first < arg.head && is_word(doc, first, ARTICLES) && upos(doc, first) == Some(Upos::Det) {
        first += 1;
    }
    let Some(fw) = doc.words.get(first) else { return };
    // Owner: a possessive determiner or "X 's".
    let mut owner: Option<String> = None;
    let mut rest = first;
    if fw.upos == Upos::Pron {
        if !is_word(doc, first, POSSESSIVES) {
            return;
        }
        let o = antecedent_text(doc, first, title, args, arg_at);
        if o.is_empty() {
            return;
        }
        owner = Some(o);
        args[a].antecedent = antecedent_arg(doc, first, arg_at);
        rest = first + 1;
    } else if let Some(m) = (first..arg.end)
        .find(|&i| is_word(doc, i, &["'s", "’s", "'", "’"]) && upos(doc, i) == Some(Upos::Part))
    {
        if m > first {
            owner = Some(text_of(first, m).to_owned());
            rest = m + 1;
        }
    }
    // A role before a name: a lower-case noun directly followed by a capitalised proper noun,
    // no lower-case noun after it ("his wife Princess Bathildis of Anhalt- Dessau").
    let lower_noun = |m: usize| upos(doc, m) == Some(Upos::Noun) && !starts_upper(doc.word_text(m));
    let role_noun = (rest..arg.end).rev().find(|&m| lower_noun(m)).filter(|&m| {
        // A singular noun of three letters or more, not a name particle ("bin") and not
        // part of a hyphenated name ("Beaulieu- sur- Loire").
        let t = doc.word_text(m);
        let hyphen_before = m.checked_sub(1).is_some_and(|p| doc.word_text(p).ends_with(['-', '–']));
        t.chars().count() >= 3
            && !is_word(doc, m, NAME_PARTICLES)
            && !hyphen_before
            && lower(doc.lemma(m)) == lower(t)
            // Not after a capitalised name ("WestPunt municipality Barber"): owner roles only.
            && (m == rest || !starts_upper(doc.word_text(rest)) || upos(doc, rest) != Some(Upos::Propn))
    });
    let name_start = role_noun
        .map(|m| m + 1)
        .filter(|&n| n < arg.end && upos(doc, n) == Some(Upos::Propn) && starts_upper(doc.word_text(n)));
    if let Some(ns) = name_start {
        let name = text_of(ns, arg.end).to_owned();
        // The role's own owner: a possessor, or a name before the role nouns.
        let role_first = (rest..ns)
            .find(|&m| !starts_upper(doc.word_text(m)) || upos(doc, m) != Some(Upos::Propn))
            .unwrap_or(rest);
        let proper_prefix = (role_first > rest).then(|| text_of(rest, role_first).to_owned());
        let role = text_of(role_first, ns).to_owned();
        let of = owner.clone().or(proper_prefix);
        // An owner that is not a name (a pronoun resolved to "son") makes no role fact.
        args[a].role = match of {
            Some(o) if starts_upper(&o) => Some((format!("is {role} of"), o)),
            Some(_) => None,
            None => Some(("is".to_owned(), role)),
        };
        args[a].text = name;
        return;
    }
    if let Some(o) = owner {
        let r = text_of(rest, arg.end).to_owned();
        if r.is_empty() {
            return;
        }
        args[a].text = format!("{o}'s {r}");
        args[a].owner = Some((o, r));
        return;
    }
    // A single stop word ("one", "all") is no argument.
    if arg.end - first == 1 && fw.is_stop {
        return;
    }
    args[a].text = text_of(first, arg.end).to_owned();
}

/// Per-sentence state.
struct SentenceCx<'a> {
    doc: &'a Document,
    args: &'a mut Vec<Arg>,
    arg_at: &'a [u32],
    title: &'a str,
    title_nouns: &'a mut Vec<String>,
    gazetteer: &'a Gazetteer,
    /// Head lemmas of the common-noun arguments of the passage's earlier sentences.
    heads_before: &'a HashSet<String>,
    si: usize,
    out: Vec<(String, String, String)>,
    /// (argument, subject text): the argument is a predicate noun or apposition of the subject.
    complement_of: Vec<(usize, String)>,
}

impl SentenceCx<'_> {
    fn range(&self) -> std::ops::Range<usize> {
        self.doc.sentences.get(self.si).map_or(0..0, |s| s.words.clone())
    }

    /// The indices of the arguments that start in this sentence (arguments are in text order).
    fn arg_ids(&self) -> std::ops::Range<usize> {
        let r = self.range();
        let lo = self.args.partition_point(|a| a.first < r.start);
        let hi = self.args.partition_point(|a| a.first < r.end);
        lo..hi.max(lo)
    }

    fn arg_starting(&self, i: usize) -> Option<usize> {
        let a = *self.arg_at.get(i)?;
        if a == NONE {
            return None;
        }
        let arg = self.args.get(a as usize)?;
        (arg.first == i).then_some(a as usize)
    }

    fn arg_ending(&self, end: usize) -> Option<usize> {
        let i = end.checked_sub(1)?;
        let a = *self.arg_at.get(i)?;
        if a == NONE {
            return None;
        }
        let arg = self.args.get(a as usize)?;
        (arg.end == end).then_some(a as usize)
    }

    fn text_of(&self, a: usize) -> &str {
        self.args.get(a).map_or("", |x| x.text.as_str())
    }

    fn w(&self, i: usize) -> &str {
        self.doc.word_text(i)
    }

    fn up(&self, i: usize) -> Option<Upos> {
        upos(self.doc, i)
    }

    fn in_arg(&self, i: usize) -> bool {
        self.arg_at.get(i).is_some_and(|&a| a != NONE)
    }

    /// A pronoun whose antecedent is a predicate noun ("She is an actress and musician. She
    /// rose …": the pipeline picks "musician") refers to that predicate's subject.
    fn resolve_predicate_antecedents(&mut self, predicates: &HashMap<usize, String>) {
        let r = self.range();
        for a in self.arg_ids() {
            let arg = &self.args[a];
            if arg.first < r.start || arg.first >= r.end {
                continue;
            }
            let Some(ant) = arg.antecedent else { continue };
            let Some(subj) = predicates.get(&ant) else { continue };
            let subj = subj.clone();
            if arg.kind == ArgKind::Pronoun {
                self.args[a].text = subj;
            } else if let Some((_, rest)) = arg.owner.clone() {
                self.args[a].text = format!("{subj}'s {rest}");
                self.args[a].owner = Some((subj, rest));
            }
        }
    }

    /// `the/this NOUN` (optionally followed by `'s …`) whose noun names what the title is.
    fn resolve_descriptions(&mut self) {
        let r = self.range();
        // The title's last word ("Cedar Creek" → creek) and the words of its qualifier
        // ("Teen Titans (2005 video game)" → game).
        let mut title_words: Vec<String> = self
            .title
            .rsplit(|c: char| !c.is_alphanumeric())
            .find(|w| !w.is_empty())
            .map(lower)
            .into_iter()
            .collect();
        if let (Some(open), true) = (self.doc.title.rfind('('), self.doc.title.trim_end().ends_with(')')) {
            title_words.extend(
                self.doc.title[open..]
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(lower),
            );
        }
        for a in self.arg_ids() {
            let (first, end, kind) = (self.args[a].first, self.args[a].end, self.args[a].kind);
            if first < r.start || first >= r.end || kind != ArgKind::Common || self.title.is_empty() {
                continue;
            }
            if !(is_word(self.doc, first, &["the", "this"]) && self.up(first) == Some(Upos::Det)) {
                continue;
            }
            let noun = first + 1;
            if self.up(noun) != Some(Upos::Noun) {
                continue;
            }
            let lemma = lower(self.doc.lemma(noun));
            // A kind of titled thing ("The film was released …") not mentioned before in the
            // passage is the article's topic.
            // Only while the passage has not said what its topic is ("X is an album. The band
            // …" is not X).
            let kind_of_topic = KIND_NOUNS.contains(&lemma.as_str())
                && !self.heads_before.contains(&lemma)
                && self.title_nouns.is_empty();
            let names_title = title_words.contains(&lemma)
                || title_words.contains(&lower(self.w(noun)))
                || self.title_nouns.contains(&lemma)
                || kind_of_topic;
            if !names_title {
                continue;
            }
            if end == noun + 1 {
                self.args[a].text = self.title.to_owned();
            } else if is_word(self.doc, noun + 1, &["'s", "’s"]) && end > noun + 2 {
                let last_end = self.doc.words.get(end - 1).map_or(0, |w| w.end);
                let rest_start = self.doc.words.get(noun + 2).map_or(last_end, |w| w.start);
                let rest = self.doc.text.get(rest_start..last_end).unwrap_or("");
                self.args[a].text = format!("{}'s {rest}", self.title);
                self.args[a].owner = Some((self.title.to_owned(), rest.to_owned()));
            }
        }
    }

    fn emit(&mut self, s: &str, rel: &str, o: &str) {
        let (s, rel, o) = (trim_phrase(s), rel.trim(), trim_phrase(o));
        if s.is_empty() || o.is_empty() || rel.is_empty() {
            return;
        }
        // "(Tony Klinger, began, Tony Klinger's career)": the object is the subject's own
        // thing, a node of no use to the graph.
        if let Some(rest) = o.strip_prefix(s) {
            if rest.starts_with("'s ") || rest.starts_with("' ") {
                return;
            }
        }
        self.out.push((s.to_owned(), rel.to_owned(), o.to_owned()));
    }

    fn run(&mut self) {
        let r = self.range();
        let mut groups = self.verb_groups(r.clone());
        // Inside brackets only a group that opens them counts ("(born 1949)", "(formerly
        // known as X)"), not words of a list in brackets ("(guitar, backing vocals)").
        groups.retain(|g| self.opens_bracket_or_outside(g.first));
        self.roles(r.clone());
        self.appositions(r.clone());
        let leading = self.leading_date_pp(r.clone());
        let mut leading_used = false;
        for gi in 0..groups.len() {
            let subject = self.subject_of(&groups, gi);
            groups[gi].subject = subject.as_ref().map(|s| s.text.clone());
            let Some(subject) = subject else { continue };
            let g = groups[gi].clone();
            self.objects(&g, &subject, &groups, gi);
            if let (Some((p, a)), false) = (leading, leading_used) {
                if !g.bare {
                    let rel = self.verb_text(&g);
                    let o = self.text_of(a).to_owned();
                    self.emit(&subject.text, &format!("{rel} {}", lower(self.w(p))), &o);
                    leading_used = true;
                }
            }
        }
        // Copulas with the title as subject tell what the title is ("X is a 1995 film").
        if self.si <= 1 {
            let tkey = normalize_entity(self.title);
            let nouns: Vec<String> = self
                .complement_of
                .iter()
                .filter(|(_, s)| normalize_entity(s) == tkey)
                .filter_map(|&(a, _)| self.args.get(a).map(|x| lower(self.doc.lemma(x.head))))
                .collect();
            for n in nouns {
                if !self.title_nouns.contains(&n) {
                    self.title_nouns.push(n);
                }
            }
        }
    }

    /// Whether word `i` is outside brackets, or only adverbs stand between it and the opening
    /// bracket of the innermost bracket it is in.
    fn opens_bracket_or_outside(&self, i: usize) -> bool {
        let r = self.range();
        let mut depth = 0i32;
        let mut k = i;
        while k > r.start {
            k -= 1;
            let t = self.w(k);
            for c in t.chars().rev() {
                match c {
                    ')' | ']' => depth += 1,
                    '(' | '[' => depth -= 1,
                    _ => {}
                }
            }
            if depth < 0 {
                // k holds the opening bracket of the bracket word i is in.
                return (k + 1..i).all(|m| self.up(m) == Some(Upos::Adv));
            }
        }
        true
    }

    /// Roles stated inside a noun phrase ("his wife Princess Bathildis").
    fn roles(&mut self, r: std::ops::Range<usize>) {
        for a in self.arg_ids() {
            let arg = &self.args[a];
            if arg.first < r.start || arg.first >= r.end || arg.text.is_empty() {
                continue;
            }
            if let Some((rel, obj)) = arg.role.clone() {
                let st = arg.text.clone();
                self.emit(&st, &rel, &obj);
            }
        }
    }

    /// The verb groups of the sentence (module docs, "Relations").
    fn verb_groups(&self, r: std::ops::Range<usize>) -> Vec<Group> {
        let mut groups = Vec::new();
        let mut i = r.start;
        while i < r.end {
            let is_verb = |j: usize| matches!(self.up(j), Some(Upos::Verb | Upos::Aux)) && !self.in_arg(j);
            if !is_verb(i) {
                i += 1;
                continue;
            }
            let first = i;
            let mut rel = Vec::new();
            let mut j = i;
            while j < r.end {
                let t = lower(self.w(j));
                let negation = self.up(j) == Some(Upos::Part) && matches!(t.as_str(), "not" | "n't" | "n’t");
                let infinitive = t == "to"
                    && self.up(j) == Some(Upos::Part)
                    && j + 1 < r.end
                    && is_verb(j + 1)
                    && !rel.is_empty();
                if is_verb(j) || negation || infinitive {
                    rel.push(j);
                    j += 1;
                } else if self.up(j) == Some(Upos::Adv) && !self.in_arg(j) {
                    // Adverbs between verbs ("was later elected"); "never" is kept.
                    let mut k = j;
                    while k < r.end && self.up(k) == Some(Upos::Adv) {
                        k += 1;
                    }
                    if k < r.end && (is_verb(k) || matches!(lower(self.w(k)).as_str(), "not" | "n't")) {
                        for m in j..k {
                            if is_word(self.doc, m, &["never", "not"]) {
                                rel.push(m);
                            }
                        }
                        j = k;
                    } else {
                        break;
                    }
                } else {
                    break;
                }
            }
            let verbs: Vec<usize> =
                rel.iter().copied().filter(|&v| matches!(self.up(v), Some(Upos::Verb | Upos::Aux))).collect();
            let main = verbs.last().copied().unwrap_or(first);
            let main_lemma = lower(self.doc.lemma(main));
            let copular = COPULAS.contains(&main_lemma.as_str())
                && (self.up(main) == Some(Upos::Aux) || main_lemma != "be");
            let bare = verbs.len() == 1
                && self.up(main) == Some(Upos::Verb)
                && matches!(
                    self.doc.words.get(main).and_then(|w| w.verb_form),
                    Some(VerbForm::Part | VerbForm::Ger)
                );
            groups.push(Group { first, end: j.max(first + 1), rel, copular, bare, subject: None });
            i = j.max(first + 1);
        }
        groups
    }

    /// Whether word `k`, a particle, belongs in a relation ("set up", "was sold to"): not a
    /// possessive, a negation or an infinitive `to` before a verb.
    fn particle(&self, k: usize) -> bool {
        let infinitive =
            is_word(self.doc, k, &["to"]) && matches!(self.up(k + 1), Some(Upos::Verb | Upos::Aux));
        !(is_word(self.doc, k, &["'s", "’s", "not"]) || infinitive)
    }

    /// Whether the group is a passive (a form of `be` before a past participle).
    fn passive(&self, g: &Group) -> bool {
        let verbs: Vec<usize> =
            g.rel.iter().copied().filter(|&v| matches!(self.up(v), Some(Upos::Verb | Upos::Aux))).collect();
        match verbs.as_slice() {
            [.., a, v] => {
                lower(self.doc.lemma(*a)) == "be"
                    && self.doc.words.get(*v).and_then(|w| w.verb_form) == Some(VerbForm::Part)
            }
            [v] => self.doc.words.get(*v).and_then(|w| w.verb_form) == Some(VerbForm::Part),
            _ => false,
        }
    }

    /// The relation text of the verb group alone.
    fn verb_text(&self, g: &Group) -> String {
        let mut s = String::new();
        for &i in &g.rel {
            let t = trim_phrase(self.w(i));
            let t = match t {
                "n't" | "n’t" => "not",
                _ => t,
            };
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(t);
        }
        s
    }

    /// `In 1990, …` / `On June 17, 1960, …` at the start of the sentence: the preposition and
    /// the date argument.
    fn leading_date_pp(&self, r: std::ops::Range<usize>) -> Option<(usize, usize)> {
        let p = r.start;
        if self.up(p) != Some(Upos::Adp)
            || !is_word(self.doc, p, &["in", "on", "since", "during", "until", "by"])
        {
            return None;
        }
        let a = self.arg_starting(p + 1)?;
        let arg = self.args.get(a)?;
        let dateish = arg.kind == ArgKind::Number
            || (arg.first..arg.end)
                .any(|i| MONTHS.contains(&lower(self.w(i)).as_str()) || is_year(self.w(i)));
        (dateish && !arg.text.is_empty()).then_some((p, a))
    }

    /// The subject of group `gi` (module docs).
    fn subject_of(&self, groups: &[Group], gi: usize) -> Option<Subj> {
        let g = groups.get(gi)?;
        let r = self.range();
        // Skip adverbs to the left.
        let mut j = g.first;
        while j > r.start && self.up(j - 1) == Some(Upos::Adv) && !self.in_arg(j - 1) {
            j -= 1;
        }
        // "…, including X": examples of the phrase before, only kept after a name.
        if g.bare && is_word(self.doc, g.first, &["including", "includes"]) {
            let k = if j > r.start && self.w(j - 1) == "," { j - 1 } else { j };
            return match self.arg_ending(k) {
                Some(a) if self.args[a].kind == ArgKind::Proper => self.nonempty(a),
                _ => None,
            };
        }
        if g.bare {
            // Right after a noun phrase ("a film directed by"; "Incerti( born 1965").
            let mut k = j;
            if k > r.start && self.w(k - 1) == "(" {
                k -= 1;
            }
            if let Some(a) = self.arg_ending(k) {
                // After a prepositional object the participle belongs to the phrase the
                // preposition hangs on ("an album by X recorded for Y"), or to the clause.
                // A common noun keeps it ("with an orchestra arranged by Y").
                let pp_object =
                    self.args[a].first.checked_sub(1).is_some_and(|p| self.up(p) == Some(Upos::Adp))
                        && self.args[a].kind == ArgKind::Proper;
                if pp_object {
                    let c = self.climb(a);
                    if c != a {
                        return self.subject_from_arg(c);
                    }
                    let prev = gi.checked_sub(1).and_then(|p| groups.get(p)).and_then(|p| p.subject.clone());
                    if let Some(text) = prev {
                        return Some(Subj { text, arg: None });
                    }
                }
                return self.subject_from_arg(a);
            }
            // After a preposition or at the start: "After playing …, Davis was …",
            // "… since replacing X": the clause's subject (the previous group's, or the next's).
            let after_prep = j > r.start && matches!(self.up(j - 1), Some(Upos::Adp | Upos::Sconj));
            if after_prep || j == r.start {
                let prev = gi.checked_sub(1).and_then(|p| groups.get(p)).and_then(|p| p.subject.clone());
                if let (Some(text), false) = (prev, j == r.start || j == r.start + 1) {
                    return Some(Subj { text, arg: None });
                }
                return groups.iter().skip(gi + 1).find_map(|h| {
                    if h.bare {
                        None
                    } else {
                        self.left_subject(h.first, groups, usize::MAX)
                    }
                });
            }
        }
        self.left_subject(j, groups, gi)
    }

    /// Walk left from word `j` (exclusive) for a subject; `gi` is the group's index (for
    /// coordination with the previous group), `usize::MAX` to disable that.
    fn left_subject(&self, j: usize, groups: &[Group], gi: usize) -> Option<Subj> {
        let r = self.range();
        let mut j = j;
        while j > r.start && self.up(j - 1) == Some(Upos::Adv) && !self.in_arg(j - 1) {
            j -= 1;
        }
        let prev_group = if gi == usize::MAX { None } else { gi.checked_sub(1).and_then(|p| groups.get(p)) };
        if j > r.start {
            let t = self.w(j - 1);
            // Apposition right before the verb: "X, a Y, was …".
            if t == "," {
                if let Some(b) = self.arg_ending(j - 1) {
                    if let Some(a) = self.apposition_head(b) {
                        return self.subject_from_arg(a);
                    }
                }
            }
            let coordinator = matches!(t, "," | ";") || (self.up(j - 1) == Some(Upos::Cconj) && t != "&");
            if coordinator {
                if let Some(p) = prev_group {
                    // Shares the previous group's subject, or has none (never the previous
                    // group's object: "The season began on X, and ended on Y").
                    return p.subject.clone().map(|text| Subj { text, arg: None });
                }
            }
            // "The Empire, under the direction of the Emperor, is …": skip the phrase
            // between commas.
            if t == "," && prev_group.is_none() {
                if let Some(pc) = (r.start..j - 1).rev().find(|&m| self.w(m) == ",") {
                    if self.arg_ending(pc).is_some() {
                        j = pc;
                    }
                }
            }
        }
        // Walk left, jumping over brackets.
        let mut k = j;
        while k > r.start {
            let i = k - 1;
            let t = self.w(i);
            if t.starts_with(')') {
                let open = self.open_bracket(i);
                k = if open < k { open } else { i };
                continue;
            }
            if let Some(&a) = self.arg_at.get(i) {
                if a != NONE {
                    return self.subject_from_arg(self.climb(a as usize));
                }
            }
            if matches!(self.up(i), Some(Upos::Verb | Upos::Aux)) {
                return None;
            }
            k -= 1;
        }
        None
    }

    /// From the closing bracket at word `close`, the position to continue walking left from:
    /// before the opening bracket, or just after a word with the bracket attached ("Incerti(").
    fn open_bracket(&self, close: usize) -> usize {
        let start = self.range().start;
        let mut depth = 0i32;
        let mut m = close + 1;
        while m > start {
            m -= 1;
            let t = self.w(m);
            for (pos, c) in t.char_indices().rev() {
                match c {
                    ')' | ']' => depth += 1,
                    '(' | '[' => {
                        depth -= 1;
                        let prefix = &t[..pos];
                        if depth == 0 && !prefix.contains([')', ']']) {
                            let name_part = prefix.chars().any(char::is_alphanumeric);
                            return if name_part { m + 1 } else { m };
                        }
                    }
                    _ => {}
                }
            }
        }
        start
    }

    /// From a prepositional object to the noun phrase it modifies ("capital of France" →
    /// "capital"); stops at a sentence-initial phrase.
    fn climb(&self, a: usize) -> usize {
        let mut a = a;
        for _ in 0..4 {
            let Some(arg) = self.args.get(a) else { break };
            let Some(p) = arg.first.checked_sub(1) else { break };
            if self.up(p) != Some(Upos::Adp) || p < self.range().start {
                break;
            }
            match self.arg_ending(p) {
                Some(h) if !self.args[h].relative && self.args[h].kind != ArgKind::Pronoun => a = h,
                _ => break,
            }
        }
        a
    }

    /// If argument `b` is an apposition `A, B` (B common, A a name), A.
    fn apposition_head(&self, b: usize) -> Option<usize> {
        let arg = self.args.get(b)?;
        if arg.kind != ArgKind::Common {
            return None;
        }
        let comma = arg.first.checked_sub(1)?;
        if self.w(comma) != "," {
            return None;
        }
        let a = self.arg_ending(comma)?;
        (self.args[a].kind == ArgKind::Proper).then_some(a)
    }

    /// The subject an argument stands for: a relative pronoun → the phrase before it (or the
    /// subject that phrase is a predicate of); a common noun that is a predicate of a subject →
    /// that subject; "of"-modifiers composed ("capital of France").
    fn subject_from_arg(&self, a: usize) -> Option<Subj> {
        let arg = self.args.get(a)?;
        if arg.relative {
            let mut k = arg.first;
            if k > 0 && self.w(k - 1) == "," {
                k -= 1;
            }
            let b = self.arg_ending(k)?;
            if let Some((_, s)) = self.complement_of.iter().find(|(x, _)| *x == b) {
                return Some(Subj { text: s.clone(), arg: None });
            }
            if let Some(h) = self.apposition_head(b) {
                return self.nonempty(h);
            }
            return self.nonempty(b);
        }
        if let Some((_, s)) = self.complement_of.iter().find(|(x, _)| *x == a) {
            if self.args[a].kind == ArgKind::Common {
                return Some(Subj { text: s.clone(), arg: None });
            }
        }
        let mut text = arg.text.clone();
        // An unresolved definite description ("the couple", "the town") names no entity of its
        // own: as a subject it would join unrelated passages in the graph.
        let definite = is_word(self.doc, arg.first, &["the", "this", "that", "these", "those"])
            && self.up(arg.first) == Some(Upos::Det);
        let of_follows = is_word(self.doc, arg.end, &["of"]);
        if arg.kind == ArgKind::Common && definite && !of_follows && text != self.title && arg.owner.is_none()
        {
            return None;
        }
        if text.is_empty() {
            return None;
        }
        let mut cur = a;
        let mut composed = false;
        for _ in 0..2 {
            let end = self.args[cur].end;
            if !is_word(self.doc, end, &["of"]) || self.args[cur].kind != ArgKind::Common {
                break;
            }
            match self.arg_starting(end + 1) {
                Some(n) if !self.args[n].text.is_empty() && self.args[n].kind != ArgKind::Pronoun => {
                    text.push_str(" of ");
                    text.push_str(&self.args[n].text);
                    cur = n;
                    composed = true;
                }
                _ => break,
            }
        }
        Some(Subj { text, arg: (!composed).then_some(a) })
    }

    fn nonempty(&self, a: usize) -> Option<Subj> {
        let t = self.text_of(a);
        (!t.is_empty()).then(|| Subj { text: t.to_owned(), arg: Some(a) })
    }

    /// Whether argument `b`, after a name and a comma, is a place that locates the name
    /// ("Nashua, New Hampshire", "Parramatta, Sydney"): a gazetteer place or a name ending in an
    /// administrative word. The name must not itself be a country (a list of countries).
    fn locates(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.args[a], &self.args[b]);
        if x.kind != ArgKind::Proper || y.kind != ArgKind::Proper || x.text.is_empty() || y.text.is_empty() {
            return false;
        }
        let gaz = self.gazetteer;
        let place = |t: &str| gaz.lookup(&t.split_whitespace().collect::<Vec<_>>().join(" "));
        if matches!(place(&x.text), Some(EntityKind::Country | EntityKind::Continent)) {
            return false;
        }
        if place(&y.text).is_some() {
            return true;
        }
        // "South Australia", "Northern Ireland".
        if let Some((compass, rest)) = y.text.split_once(' ') {
            let compass_word =
                ["North", "South", "East", "West", "Northern", "Southern", "Eastern", "Western", "Central"]
                    .contains(&compass);
            if compass_word && place(rest).is_some() {
                return true;
            }
        }
        let last = y.text.rsplit(' ').next().unwrap_or("");
        ADMIN_WORDS.iter().any(|w| last.eq_ignore_ascii_case(w))
    }

    /// The objects of group `g` with subject `subject` (module docs).
    fn objects(&mut self, g: &Group, subject: &Subj, groups: &[Group], gi: usize) {
        let r = self.range();
        let verb = self.verb_text(g);
        if verb.is_empty() {
            return;
        }
        // Tail: particles, prepositions, adverbs before a preposition or object, an adjective
        // before a preposition after a copula ("is famous for").
        let mut k = g.end;
        let mut tail: Vec<usize> = Vec::new();
        while k < r.end && tail.len() < 3 {
            if self.arg_starting(k).is_some() {
                break;
            }
            let next_ok =
                matches!(self.up(k + 1), Some(Upos::Adp | Upos::Adv)) || self.arg_starting(k + 1).is_some();
            match self.up(k) {
                Some(Upos::Adp) => tail.push(k),
                Some(Upos::Part) if self.particle(k) => tail.push(k),
                Some(Upos::Adv) if next_ok && !self.in_arg(k) => {}
                Some(Upos::Adj) if g.copular && tail.is_empty() && self.up(k + 1) == Some(Upos::Adp) => {
                    tail.push(k)
                }
                _ => break,
            }
            k += 1;
        }
        let Some(obj) = self.arg_starting(k) else {
            // "written and directed by X": borrow the next group's preposition and object.
            if tail.is_empty() && k < r.end && self.up(k) == Some(Upos::Cconj) {
                if let Some(next) = groups.get(gi + 1) {
                    if next.first == k + 1 {
                        let mut m = next.end;
                        let mut preps = Vec::new();
                        while m < r.end && self.up(m) == Some(Upos::Adp) && preps.len() < 2 {
                            preps.push(m);
                            m += 1;
                        }
                        if let Some(o) = self.arg_starting(m) {
                            if !preps.is_empty() {
                                let rel = self.join_rel(&verb, &preps);
                                let ot = self.text_of(o).to_owned();
                                self.emit(&subject.text, &rel, &ot);
                            }
                        }
                    }
                }
            }
            return;
        };
        if self.args[obj].relative || !self.usable_object(obj) {
            return;
        }
        // "Its elevation is 4816 meters" → (Burji La, elevation is, 4816 meters).
        let (subject_text, verb) = match subject.arg.and_then(|a| self.args[a].owner.clone()) {
            Some((owner, noun))
                if g.copular && tail.is_empty() && self.args[obj].kind != ArgKind::Pronoun =>
            {
                (owner, format!("{noun} {verb}"))
            }
            _ => (subject.text.clone(), verb),
        };
        let subject = subject_text.as_str();
        let predicate = g.copular && tail.is_empty();
        let base_rel = self.join_rel(&verb, &tail);
        // V W* P: a copula's predicate noun, or a direct object (common noun), before a
        // preposition joins the relation.
        let (rel, last, absorbed) = self.absorb(&base_rel, obj, predicate, tail.is_empty());
        let ot = self.text_of(last).to_owned();
        if predicate {
            self.complement_of.push((obj, subject.to_owned()));
        }
        if absorbed && !predicate && tail.is_empty() && !self.passive(g) {
            // The direct object is a fact of its own too ("bought a grist mill (on X)").
            let dt = self.text_of(obj).to_owned();
            self.emit(subject, &base_rel, &dt);
        }
        self.emit(subject, &rel, &ot);
        // Lists: ", B", "and C"; a place after a name locates it.
        let mut end = self.args[last].end;
        let mut prev = last;
        let mut conjuncts = 0;
        let mut cur_rel = rel.clone();
        loop {
            let mut m = end;
            if self.w(m) == "(" {
                // skip a bracket inside a list ("Gary Lightbody (vocals, guitar), …")
                let mut depth = 0;
                while m < r.end {
                    match self.w(m) {
                        "(" => depth += 1,
                        ")" => {
                            depth -= 1;
                            if depth == 0 {
                                m += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    m += 1;
                }
            }
            let comma = self.w(m) == ",";
            if comma {
                m += 1;
            }
            let conj = self.up(m) == Some(Upos::Cconj) && is_word(self.doc, m, &["and", "or"]);
            if conj {
                m += 1;
            }
            if !(comma || conj) {
                break;
            }
            let Some(c) = self.arg_starting(m) else { break };
            let ck = self.args[c].kind;
            if ck == ArgKind::Pronoun {
                break;
            }
            // Numbers only list with numbers ("born 1912, date of death unknown"), and
            // "four of which" starts a new clause.
            if (ck == ArgKind::Number) != (self.args[prev].kind == ArgKind::Number)
                || (is_word(self.doc, self.args[c].end, &["of"])
                    && is_word(self.doc, self.args[c].end + 1, &["which", "whom"]))
            {
                break;
            }
            // The conjunct starts a new clause ("…, and Z was born").
            let after = self.args[c].end;
            if matches!(self.up(after), Some(Upos::Verb | Upos::Aux)) && !self.in_arg(after) {
                let participle = self.up(after) == Some(Upos::Verb)
                    && self.doc.words.get(after).and_then(|w| w.verb_form) == Some(VerbForm::Part);
                if !participle {
                    break;
                }
            }
            if comma && !conj && self.locates(prev, c) {
                // "Paris, France": handled as a location fact (appositions), not a list item.
                end = self.args[c].end;
                prev = c;
                continue;
            }
            // "X, the Y of Z" after a name is an apposition of the name, not a list item.
            let first_det = is_word(self.doc, self.args[c].first, &["a", "an", "the"]);
            if comma && !conj && self.args[prev].kind == ArgKind::Proper && ck == ArgKind::Common {
                let _ = first_det;
                break;
            }
            if comma && !conj && self.args[prev].kind == ArgKind::Common && ck == ArgKind::Proper {
                break;
            }
            let (crel, clast) = {
                let (cr, cl, ca) = self.absorb(&base_rel, c, predicate, false);
                if ca {
                    (cr, cl)
                } else if predicate && ck == ArgKind::Common {
                    // Another predicate noun ("an American businessman, creator of X, and
                    // Republican politician").
                    (base_rel.clone(), c)
                } else {
                    (cur_rel.clone(), c)
                }
            };
            cur_rel = crel.clone();
            let ct = self.text_of(clast).to_owned();
            if predicate {
                self.complement_of.push((c, subject.to_owned()));
            }
            self.emit(subject, &crel, &ct);
            end = self.args[clast].end;
            prev = clast;
            conjuncts += 1;
            if conjuncts > 12 {
                break;
            }
        }
        // Trailing prepositional phrases (time, place, source, ...); after a copula only a
        // place ("is a tributary of X in Mendocino County" → is in Mendocino County).
        if conjuncts == 0 {
            let mut m = end;
            for _ in 0..2 {
                if m >= r.end || self.up(m) != Some(Upos::Adp) || !is_word(self.doc, m, TRAILING_PREPS) {
                    break;
                }
                let Some(c) = self.arg_starting(m + 1) else { break };
                if self.args[c].text.is_empty() || self.args[c].relative {
                    break;
                }
                if g.copular && !(is_word(self.doc, m, &["in"]) && self.args[c].kind == ArgKind::Proper) {
                    break;
                }
                // After a prepositional object, or after a first trailing phrase, a further
                // phrase usually hangs on the noun before it ("influenced by his divorce from
                // X"); only times and names are kept then ("born in Paris in 1947").
                let dateish = self.args[c].kind == ArgKind::Number
                    || (self.args[c].first..self.args[c].end)
                        .any(|i| MONTHS.contains(&lower(self.w(i)).as_str()));
                let after_pp = !tail.is_empty() || m != end;
                if after_pp && !(dateish || (self.args[c].kind == ArgKind::Proper && m == end)) {
                    break;
                }
                let prel = self.join_rel(&verb, &[m]);
                let (prel, clast, _) = self.absorb(&prel, c, false, false);
                let ct = self.text_of(clast).to_owned();
                self.emit(subject, &prel, &ct);
                m = self.args[clast].end;
            }
        }
    }

    /// Whether argument `a` can be an object: not a demonstrative or "the same" phrase, which
    /// point back to something the rules do not resolve ("by that name").
    fn usable_object(&self, a: usize) -> bool {
        let arg = &self.args[a];
        !(is_word(self.doc, arg.first, &["this", "that", "these", "those"])
            || (arg.first..arg.end).any(|i| is_word(self.doc, i, &["same"])))
    }

    /// `verb` + the words `tail` as one relation phrase.
    fn join_rel(&self, verb: &str, tail: &[usize]) -> String {
        let mut s = verb.to_owned();
        for &i in tail {
            s.push(' ');
            s.push_str(&lower(self.w(i)));
        }
        s
    }

    /// ReVerb's `V W* P`: while the object is a common noun followed by a preposition and
    /// another argument, move the noun and the preposition into the relation. The first step
    /// takes any preposition when the object is a copula's predicate noun (`predicate`) or a
    /// direct object (`direct`, only the prepositions of `TRAILING_PREPS` and `of`); later
    /// steps only `of`. A bracket between the noun and the preposition is skipped. Returns
    /// (relation, final object, whether anything was absorbed).
    fn absorb(&self, rel: &str, obj: usize, predicate: bool, direct: bool) -> (String, usize, bool) {
        let mut rel = rel.to_owned();
        let mut obj = obj;
        let mut absorbed = false;
        let mut first = true;
        let end = self.range().end;
        for _ in 0..3 {
            let arg = &self.args[obj];
            let common = arg.kind == ArgKind::Common
                || (arg.kind == ArgKind::Number && is_word(self.doc, arg.head, &["one"]));
            if !common || arg.owner.is_some() || arg.role.is_some() {
                break;
            }
            let mut p = arg.end;
            if self.w(p) == "(" {
                while p < end && self.w(p) != ")" {
                    p += 1;
                }
                p += 1;
            }
            if self.up(p) != Some(Upos::Adp) {
                break;
            }
            let of = is_word(self.doc, p, &["of"]);
            let ok = of
                || (first && predicate)
                || (first
                    && direct
                    && is_word(self.doc, p, TRAILING_PREPS)
                    && !is_word(self.doc, p, &["by", "as"]));
            if !ok {
                break;
            }
            let Some(next) = self.arg_starting(p + 1) else { break };
            if self.args[next].text.is_empty() || self.args[next].relative {
                break;
            }
            // The noun phrase's surface text without leading determiners ("lay-abbot").
            let mut f = arg.first;
            while f < arg.head && matches!(self.up(f), Some(Upos::Det | Upos::Pron)) {
                f += 1;
            }
            let (Some(fw), Some(lw)) = (self.doc.words.get(f), self.doc.words.get(arg.end - 1)) else {
                break;
            };
            let noun = trim_phrase(self.doc.text.get(fw.start..lw.end).unwrap_or(""));
            if noun.is_empty()
                || noun.split_whitespace().count() + rel.split(' ').count() + 1 > MAX_RELATION_WORDS
            {
                break;
            }
            rel.push(' ');
            rel.push_str(noun);
            rel.push(' ');
            rel.push_str(&lower(self.w(p)));
            obj = next;
            absorbed = true;
            first = false;
        }
        (rel, obj, absorbed)
    }

    /// Apposition facts: `A, a Y,` → (A, is, Y); `the Y, A` → (A, is, Y); `A, B` with B a
    /// place → (A, is in, B); `A Y of Z, he …` → (he, is Y of, Z).
    fn appositions(&mut self, r: std::ops::Range<usize>) {
        // Sentence-initial "A specialist in X, he wrote …".
        if let Some(a0) = self.arg_starting(r.start) {
            if is_word(self.doc, r.start, &["a", "an"]) && self.args[a0].kind == ArgKind::Common {
                let (rel, last, _) = self.absorb("is", a0, true, false);
                let mut m = self.args[last].end;
                while m < r.end && self.w(m) != "," && !matches!(self.up(m), Some(Upos::Verb | Upos::Aux)) {
                    m += 1;
                }
                if self.w(m) == "," {
                    if let Some(s) = self.arg_starting(m + 1) {
                        let after = self.args[s].end;
                        let verb_follows = matches!(self.up(after), Some(Upos::Verb | Upos::Aux))
                            || (self.up(after) == Some(Upos::Adv)
                                && matches!(self.up(after + 1), Some(Upos::Verb | Upos::Aux)));
                        let st = self.args[s].text.clone();
                        if verb_follows && !st.is_empty() {
                            let ot = self.text_of(last).to_owned();
                            self.emit(&st, &rel, &ot);
                        }
                    }
                }
            }
        }
        let ids: Vec<usize> = self.arg_ids().filter(|&a| self.args[a].end <= r.end).collect();
        // Other names: "Burji La (or Burji Pass)", "Nashua High School South, formerly Nashua
        // High School," → (A, also known as | formerly known as, B).
        for &a in &ids {
            if self.args[a].kind != ArgKind::Proper || self.args[a].text.is_empty() {
                continue;
            }
            let e = self.args[a].end;
            let (open, word) = (self.w(e), e + 1);
            let rel = match (open, lower(self.w(word)).as_str()) {
                ("(", "or" | "also") | (",", "also") => "also known as",
                ("(" | ",", "formerly" | "previously") => "formerly known as",
                _ => continue,
            };
            let b = self.arg_starting(word + 1).or_else(|| {
                // "(also called X)", "(formerly X)": one more word at most.
                is_word(self.doc, word + 1, &["called", "named", "known"])
                    .then(|| self.arg_starting(word + 2))
                    .flatten()
            });
            let Some(b) = b else { continue };
            if self.args[b].kind != ArgKind::Proper || self.args[b].text.is_empty() {
                continue;
            }
            let closes = matches!(self.w(self.args[b].end), ")" | ",");
            if closes {
                let (st, ot) = (self.args[a].text.clone(), self.args[b].text.clone());
                self.emit(&st, rel, &ot);
            }
        }
        for &a in &ids {
            let comma = self.args[a].end;
            if comma >= r.end || self.w(comma) != "," {
                continue;
            }
            let Some(b) = self.arg_starting(comma + 1) else { continue };
            let (ak, bk) = (self.args[a].kind, self.args[b].kind);
            if self.args[a].text.is_empty() || self.args[b].text.is_empty() {
                continue;
            }
            if self.locates(a, b) {
                let (st, ot) = (self.args[a].text.clone(), self.args[b].text.clone());
                self.emit(&st, "is in", &ot);
            } else if ak == ArgKind::Proper
                && bk == ArgKind::Common
                && !is_word(self.doc, self.args[b].head, COMPASS)
            {
                let (rel, last, _) = self.absorb("is", b, true, false);
                if !self.closes_apposition(self.args[last].end) {
                    continue;
                }
                let (st, ot) = (self.args[a].text.clone(), self.text_of(last).to_owned());
                self.complement_of.push((b, st.clone()));
                self.emit(&st, &rel, &ot);
            } else if ak == ArgKind::Common && bk == ArgKind::Proper {
                // "his daughter, Caroline Kennedy" / "a second school, Nashua High School North,"
                if !self.closes_apposition(self.args[b].end)
                    || is_word(self.doc, self.args[b].end, &["and", "or"])
                {
                    continue;
                }
                if !is_word(self.doc, self.args[a].first, &["a", "an", "the", "his", "her", "its", "their"])
                    && self.args[a].owner.is_none()
                {
                    continue;
                }
                let rel = match &self.args[a].owner {
                    Some((_, noun)) => format!("is {noun} of"),
                    None => "is".to_owned(),
                };
                let ot = match &self.args[a].owner {
                    Some((owner, _)) => owner.clone(),
                    None => self.args[a].text.clone(),
                };
                let st = self.args[b].text.clone();
                self.emit(&st, &rel, &ot);
            }
        }
    }

    /// Whether an apposition may end before word `i`: a comma, a closing bracket or dash, the
    /// end of the sentence, a relative pronoun.
    fn closes_apposition(&self, i: usize) -> bool {
        let r = self.range();
        if i >= r.end {
            return true;
        }
        let t = self.w(i);
        matches!(t, "," | ")" | "." | ";" | "–" | "—" | ":" | "!" | "?")
            || is_word(self.doc, i, &["who", "which", "whose", "that"])
            || (self.up(i) == Some(Upos::Punct) && i + 1 == r.end)
    }
}

/// A subject: its text and, when it is one argument, which.
#[derive(Debug, Clone)]
struct Subj {
    text: String,
    arg: Option<usize>,
}

/// Kinds of things encyclopaedia articles are about: `The film …` in an article that has not
/// mentioned another film is the article's topic (as the title is the default antecedent of
/// pronouns).
const KIND_NOUNS: &[&str] = &[
    "film",
    "movie",
    "documentary",
    "album",
    "song",
    "single",
    "novel",
    "book",
    "series",
    "show",
    "game",
    "band",
    "company",
    "school",
    "university",
    "college",
    "club",
    "team",
    "church",
    "village",
    "town",
    "city",
    "river",
    "lake",
    "mountain",
    "island",
    "magazine",
    "newspaper",
    "station",
    "species",
    "genus",
    "ship",
    "episode",
    "opera",
    "painting",
    "poem",
    "hotel",
    "museum",
    "airport",
    "stadium",
    "bridge",
    "party",
    "organization",
    "organisation",
    "building",
    "castle",
    "park",
    "municipality",
    "commune",
    "district",
    "county",
    "parish",
    "play",
    "musical",
    "sitcom",
    "brand",
    "tournament",
    "festival",
    "award",
    "label",
    "sequel",
];

/// Directions, which are no apposition ("X, northeast of Y").
const COMPASS: &[&str] = &[
    "north",
    "south",
    "east",
    "west",
    "northeast",
    "northwest",
    "southeast",
    "southwest",
    "north-east",
    "north-west",
    "south-east",
    "south-west",
];

/// Last words of names of administrative areas ("Kewaunee County").
const ADMIN_WORDS: &[&str] = &[
    "County",
    "Province",
    "State",
    "Voivodeship",
    "Prefecture",
    "Department",
    "Region",
    "Oblast",
    "District",
    "Municipality",
    "Parish",
    "Territory",
    "Governorate",
    "Canton",
    "Shire",
    "Borough",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Passage;

    type T = (String, String, String);

    fn triples(title: &str, text: &str) -> Vec<T> {
        let p = Pipeline::english().expect("pipeline");
        let (t, english) = extract_passage(&p, 7, title, text);
        assert!(english, "{text}");
        for x in &t {
            assert_eq!(x.passage, 7);
            let (a, b) = (x.sentence.0 as usize, x.sentence.1 as usize);
            assert!(a < b && b <= text.len() && text.is_char_boundary(a) && text.is_char_boundary(b));
        }
        t.into_iter().map(|x| (x.subject, x.relation, x.object)).collect()
    }

    fn t(s: &str, r: &str, o: &str) -> T {
        (s.to_owned(), r.to_owned(), o.to_owned())
    }

    /// Every expected triple is extracted, exactly as written.
    #[track_caller]
    fn assert_has(got: &[T], expected: &[T]) {
        for e in expected {
            assert!(got.contains(e), "missing {e:?} in {got:#?}");
        }
    }

    #[test]
    fn copula_with_a_predicate_noun_and_a_resolved_pronoun() {
        let got = triples("Paris", "Paris is the capital of France. It has 2.1 million people.");
        assert_eq!(got, vec![t("Paris", "is capital of", "France"), t("Paris", "has", "2.1 million people")]);
    }

    #[test]
    fn passive_and_prepositions_with_dates_and_coordinated_verbs() {
        let got = triples(
            "Marie Curie",
            "Marie Curie was a Polish-born physicist. She was born in Warsaw in 1867 and died in 1934.",
        );
        assert_has(
            &got,
            &[
                t("Marie Curie", "was", "Polish-born physicist"),
                t("Marie Curie", "was born in", "Warsaw"),
                t("Marie Curie", "was born in", "1867"),
                t("Marie Curie", "died in", "1934"),
            ],
        );
        assert_eq!(got.len(), 4, "{got:#?}");
    }

    #[test]
    fn participles_lists_and_the_title_as_one_name() {
        let got = triples(
            "The Great Escape (film)",
            "The Great Escape is a 1963 film directed by John Sturges. It stars Steve McQueen, James Garner and Richard Attenborough.",
        );
        assert_eq!(
            got,
            vec![
                t("The Great Escape", "is", "1963 film"),
                t("The Great Escape", "directed by", "John Sturges"),
                t("The Great Escape", "stars", "Steve McQueen"),
                t("The Great Escape", "stars", "James Garner"),
                t("The Great Escape", "stars", "Richard Attenborough"),
            ]
        );
    }

    #[test]
    fn apposition_names_and_the_subject_behind_it() {
        let got =
            triples("Hucbert", "Hucbert, the lay-abbot of St. Maurice's Abbey, was a brother of Teutberga.");
        assert_eq!(
            got,
            vec![
                t("Hucbert", "is lay-abbot of", "St. Maurice's Abbey"),
                t("Hucbert", "was brother of", "Teutberga")
            ]
        );
    }

    #[test]
    fn relative_pronouns_and_definite_descriptions() {
        // "The album" opening an article that has mentioned no other album is its topic;
        // "who" is Rick Rubin.
        let got = triples(
            "Licensed to Ill",
            "The album was produced by Rick Rubin, who also founded Def Jam Recordings.",
        );
        assert_eq!(
            got,
            vec![
                t("Licensed to Ill", "was produced by", "Rick Rubin"),
                t("Rick Rubin", "founded", "Def Jam Recordings")
            ]
        );
        // Once the passage has said what the title is, "the record" is the title too.
        let got = triples(
            "Licensed to Ill",
            "Licensed to Ill is the debut record by the Beastie Boys. The record was produced by Rick Rubin.",
        );
        assert_eq!(
            got,
            vec![
                t("Licensed to Ill", "is debut record by", "Beastie Boys"),
                t("Licensed to Ill", "was produced by", "Rick Rubin")
            ]
        );
        // When the passage has said the title is an album, "the band" is not the title; after
        // another album "the album" is not either; a noun that names no kind of topic never
        // is. Unresolved, they make no subject.
        let got = triples(
            "Paul's Boutique",
            "Paul's Boutique is the second album by the Beastie Boys. The band recorded it in Los Angeles.",
        );
        assert_eq!(got, vec![t("Paul's Boutique", "is second album by", "Beastie Boys")]);
        let got = triples(
            "Paul's Boutique",
            "The Dust Brothers made an album in 1988. The album was produced by Rick Rubin.",
        );
        assert_eq!(
            got,
            vec![t("Dust Brothers", "made", "album"), t("Dust Brothers", "made album in", "1988")]
        );
        assert!(triples("Paul's Boutique", "The couple moved to Paris in 1990.").is_empty());
    }

    #[test]
    fn possessives_roles_and_places() {
        assert_eq!(
            triples("Portugal", "Its capital is Lisbon."),
            vec![t("Portugal", "capital is", "Lisbon")]
        );
        let got = triples("John Smith", "John Smith was born in Austin, Texas.");
        assert_eq!(got, vec![t("Austin", "is in", "Texas"), t("John Smith", "was born in", "Austin")]);
        let got = triples("Richard III", "Richard III married his cousin Anne Neville in 1472.");
        assert_eq!(
            got,
            vec![
                t("Anne Neville", "is cousin of", "Richard III"),
                t("Richard III", "married", "Anne Neville"),
                t("Richard III", "married in", "1472"),
            ]
        );
    }

    #[test]
    fn brackets_attached_to_names_and_bare_participles() {
        // 2WikiMultihopQA's text has "Name( born …)" with the bracket glued to the name.
        let got =
            triples("Stefano Incerti", "Stefano Incerti( born 25 July 1965) is an Italian film director.");
        assert_eq!(
            got,
            vec![
                t("Stefano Incerti", "born", "25 July 1965"),
                t("Stefano Incerti", "is", "Italian film director")
            ]
        );
    }

    #[test]
    fn no_triples_from_unresolved_pronouns_or_non_english_text() {
        let p = Pipeline::english().expect("pipeline");
        // No title and no name before: "He" stays unresolved.
        let (got, english) = extract_passage(&p, 0, "", "He was born in Paris.");
        assert!(english && got.is_empty(), "{got:?}");
        let (got, english) = extract_passage(
            &p,
            0,
            "Tour Eiffel",
            "La tour Eiffel est une tour de fer puddlé de 330 mètres de hauteur située à Paris.",
        );
        assert!(!english && got.is_empty());
    }

    #[test]
    fn corpus_counts_and_passage_indices() {
        let p = Pipeline::english().expect("pipeline");
        let mut corpus = Corpus::new();
        let passages = [
            ("a", "Paris", "Paris is the capital of France."),
            ("b", "Москва", "Москва — столица России и крупнейший город страны по численности населения."),
            ("c", "", ""),
            ("d", "Lyon", "Lyon is a city in France. It lies at the confluence of the Rhône and the Saône."),
        ];
        for (id, title, text) in passages {
            corpus.add(Passage { id: id.into(), title: title.into(), text: text.into() }).expect("add");
        }
        let mut calls = Vec::new();
        let out = extract_corpus(&p, &corpus, &mut |d, n| calls.push((d, n)));
        assert_eq!(calls.first(), Some(&(0, 4)));
        assert_eq!(calls.last(), Some(&(4, 4)));
        let s = &out.stats;
        assert_eq!((s.passages, s.english_passages, s.non_english_passages), (4, 2, 2));
        assert_eq!(s.sentences, 3);
        assert_eq!(s.triples, out.triples.len());
        assert!(out.triples.iter().any(|t| t.passage == 0 && t.object == "France"));
        assert!(out.triples.iter().any(|t| t.passage == 3 && t.subject == "Lyon"));
        assert!(out.triples.iter().all(|t| t.passage == 0 || t.passage == 3));
        assert!(out.triples.windows(2).all(|w| w[0].passage <= w[1].passage));
    }

    #[test]
    fn degenerate_and_mixed_text_never_panics() {
        let p = Pipeline::english().expect("pipeline");
        let mut ex = RuleExtractor::new(p);
        let long = "The hotel was built in 1990 by John Smith, who sold it to Bob Jones. ".repeat(400);
        let inputs = [
            "",
            " ",
            ")))((( ( ) ] [",
            "( born 1950) was a",
            "He, she, it, they.",
            "X( Y( Z)( born 1) is) a(",
            "Smith- - - Jones- is a- b -c.",
            "\"\"\" '' `` “ ” ' ’s 's",
            ", also known as, was the wife of Emperor Meiji of Japan.",
            "東京タワーは東京都港区にある電波塔である。 Tokyo Tower is a tower in Tokyo.",
            "Mishaal bin Hamad( born 2 July 1972)( Arabic: مشعل بن حمد) is a member of the House of Thani.",
            "The the the of of of and and, , , is is is was was.",
            "In 1990 In 1991 In 1992, , and and who which that was born in in in.",
            long.as_str(),
        ];
        let mut out = Vec::new();
        for (i, text) in inputs.iter().enumerate() {
            for title in ["", "X", "The Hotel (1990 film)", "A, B", "(", ")("] {
                out.clear();
                let info = ex.extract_into(i as u32, title, text, &mut out);
                assert_eq!(info.triples, out.len());
                for t in &out {
                    assert!(
                        !t.subject.trim().is_empty()
                            && !t.relation.trim().is_empty()
                            && !t.object.trim().is_empty()
                    );
                    assert!(text.get(t.sentence.0 as usize..t.sentence.1 as usize).is_some());
                }
            }
        }
        // The long text: every sentence gives the same facts, kept once per passage.
        out.clear();
        ex.extract_into(0, "Hotel", &long, &mut out);
        assert!(!out.is_empty() && out.len() < 10, "{}", out.len());
    }

    #[test]
    fn title_name_drops_qualifiers() {
        assert_eq!(title_name("Dwight Davis (basketball)", "Dwight Davis is"), "Dwight Davis");
        assert_eq!(title_name("Bruemmerville, Wisconsin", "Bruemmerville is a"), "Bruemmerville");
        assert_eq!(title_name("Blood, Sweat & Tears", "Blood, Sweat & Tears is"), "Blood, Sweat & Tears");
        assert_eq!(title_name("(", ""), "(");
        assert_eq!(title_name("", ""), "");
    }
}
