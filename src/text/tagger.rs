//! Part-of-speech tagging: an averaged perceptron over Honnibal's feature set, with the
//! published weights of `denckring-en-pos` 0.6.0.
//!
//! Model: the greedy left-to-right averaged perceptron of Collins (2002) with the feature set
//! Honnibal published for `textblob-aptagger` ("A good part-of-speech tagger in about 200 lines
//! of Python", 2013) and spaCy's first tagger, exactly as `denckring_en_pos/perceptron.py`
//! specifies it: bias, 3/2/1-character suffixes, first character, shape (upper-case first
//! letter, digits), the lower-cased word, the two previous tags, their pair, the two words on
//! either side, and the previous tag with the word. Unambiguous frequent words are looked up in
//! a tag dictionary first. Labels are Universal Dependencies UPOS tags joined with the verb's
//! `VerbForm` (`VERB|Fin`, `AUX|Part`, `NOUN|-` ...).
//!
//! Weights: trained by the denckring project on UD English-EWT v2.18 (train split), UPOS
//! accuracy 93.4% on its test split *without punctuation*, which it was trained without.
//! Licence: **CC-BY-SA-4.0** (the treebank's licence; see `assets/text/LICENSE-UD` and
//! `assets/text/NOTICE-denckring`). The file `assets/text/pos-perceptron.bin` stores them
//! losslessly (weights × 1000 as i16, feature strings as 32-bit FNV-1a hashes chosen
//! collision-free by `tools/fetch_text_resources.py`).
//!
//! As in training, punctuation and symbol tokens are not shown to the perceptron: they are
//! tagged by rule ([`rule_tag`]), and the perceptron tags the remaining words of each sentence
//! with the punctuation removed from their context.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

/// Universal Dependencies part-of-speech tags (UPOS, UD v2; <https://universaldependencies.org/u/pos/>).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Upos {
    /// Adjective.
    Adj,
    /// Adposition (preposition, postposition).
    Adp,
    /// Adverb.
    Adv,
    /// Auxiliary verb (including the copula).
    Aux,
    /// Coordinating conjunction.
    Cconj,
    /// Determiner.
    Det,
    /// Interjection.
    Intj,
    /// Common noun.
    Noun,
    /// Numeral.
    Num,
    /// Particle (`'s`, `not`, infinitival `to`).
    Part,
    /// Pronoun.
    Pron,
    /// Proper noun.
    Propn,
    /// Punctuation.
    Punct,
    /// Subordinating conjunction.
    Sconj,
    /// Symbol.
    Sym,
    /// Verb.
    Verb,
    /// Other (foreign words, typos, unanalysable tokens).
    X,
}

impl Upos {
    /// The tag as UD writes it (`"NOUN"`, `"PROPN"` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Upos::Adj => "ADJ",
            Upos::Adp => "ADP",
            Upos::Adv => "ADV",
            Upos::Aux => "AUX",
            Upos::Cconj => "CCONJ",
            Upos::Det => "DET",
            Upos::Intj => "INTJ",
            Upos::Noun => "NOUN",
            Upos::Num => "NUM",
            Upos::Part => "PART",
            Upos::Pron => "PRON",
            Upos::Propn => "PROPN",
            Upos::Punct => "PUNCT",
            Upos::Sconj => "SCONJ",
            Upos::Sym => "SYM",
            Upos::Verb => "VERB",
            Upos::X => "X",
        }
    }

    /// Parse a UD tag (`"NOUN"`); `None` for anything else.
    pub fn parse(s: &str) -> Option<Upos> {
        Some(match s {
            "ADJ" => Upos::Adj,
            "ADP" => Upos::Adp,
            "ADV" => Upos::Adv,
            "AUX" => Upos::Aux,
            "CCONJ" => Upos::Cconj,
            "DET" => Upos::Det,
            "INTJ" => Upos::Intj,
            "NOUN" => Upos::Noun,
            "NUM" => Upos::Num,
            "PART" => Upos::Part,
            "PRON" => Upos::Pron,
            "PROPN" => Upos::Propn,
            "PUNCT" => Upos::Punct,
            "SCONJ" => Upos::Sconj,
            "SYM" => Upos::Sym,
            "VERB" => Upos::Verb,
            "X" => Upos::X,
            _ => return None,
        })
    }

    /// Nouns, proper nouns and pronouns: what a noun phrase is headed by.
    pub fn is_nominal(self) -> bool {
        matches!(self, Upos::Noun | Upos::Propn | Upos::Pron)
    }
}

impl std::fmt::Display for Upos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The UD `VerbForm` feature the tagger predicts jointly with `VERB` and `AUX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum VerbForm {
    /// Finite (`walks`, `walked`, `is`).
    Fin,
    /// Infinitive or bare form (`to walk`, `can walk`).
    Inf,
    /// Participle (`walked` in `has walked`, `known`).
    Part,
    /// Gerund / present participle (`walking`).
    Ger,
}

impl VerbForm {
    /// The value as UD writes it (`"Fin"` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            VerbForm::Fin => "Fin",
            VerbForm::Inf => "Inf",
            VerbForm::Part => "Part",
            VerbForm::Ger => "Ger",
        }
    }
}

/// The tag the tagger gives a token made only of punctuation or symbols (no letter or digit),
/// following spaCy en_core_web_sm's conventions on Wikipedia text: `&` and `+` are CCONJ,
/// currency signs, `#`, `/`, `=`, `<`, `>` are SYM, `%` is NOUN, a `'` written right after a word
/// ending in `s` is the possessive PART (`parents'`), everything else PUNCT. `None` when the
/// token has a letter or digit (the perceptron tags it).
pub fn rule_tag(token: &str, attached_after_s: bool) -> Option<Upos> {
    if token.chars().any(char::is_alphanumeric) {
        return None;
    }
    Some(match token {
        "&" | "+" => Upos::Cconj,
        "%" | "‰" => Upos::Noun,
        "'" | "’" if attached_after_s => Upos::Part,
        _ if token.chars().all(|c| {
            matches!(
                c,
                '$' | '£'
                    | '€'
                    | '¥'
                    | '₹'
                    | '#'
                    | '/'
                    | '='
                    | '<'
                    | '>'
                    | '@'
                    | '^'
                    | '~'
                    | '|'
                    | '×'
                    | '±'
                    | '¬'
            )
        }) =>
        {
            Upos::Sym
        }
        _ => Upos::Punct,
    })
}

const FNV_PRIME: u32 = 0x0100_0193;

#[inline]
fn fnv(mut h: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// Feature templates, in `perceptron.py`'s order; each is hashed as its prefix then its value.
#[derive(Clone, Copy)]
enum Tpl {
    Bias,
    Suf3,
    Suf2,
    Suf1,
    Pre1,
    Shape,
    W,
    T1,
    T2,
    T1T2,
    Wm1,
    Wm2,
    Wp1,
    Wp2,
    T1W,
}

const TEMPLATES: [(Tpl, &str); 15] = [
    (Tpl::Bias, "bias"),
    (Tpl::Suf3, "suf3 "),
    (Tpl::Suf2, "suf2 "),
    (Tpl::Suf1, "suf1 "),
    (Tpl::Pre1, "pre1 "),
    (Tpl::Shape, "shape "),
    (Tpl::W, "w "),
    (Tpl::T1, "t-1 "),
    (Tpl::T2, "t-2 "),
    (Tpl::T1T2, "t-1t-2 "),
    (Tpl::Wm1, "w-1 "),
    (Tpl::Wm2, "w-2 "),
    (Tpl::Wp1, "w+1 "),
    (Tpl::Wp2, "w+2 "),
    (Tpl::T1W, "t-1 w "),
];

const START: &str = "<s>";
const END: &str = "</s>";

/// The averaged-perceptron tagger (see the module docs). Load once with
/// [`PerceptronTagger::from_bytes`]; tagging is read-only, so one tagger is shared freely.
pub struct PerceptronTagger {
    /// `(UPOS, VerbForm)` per class id; class ids are in the label's sort order.
    classes: Vec<(Upos, Option<VerbForm>)>,
    /// The label strings (`"NOUN|-"`), as hashed in the `t-1`... features.
    labels: Vec<String>,
    /// Lower-cased word → class id, for unambiguous frequent words.
    tagdict: FxHashMap<String, u8>,
    /// Feature hash → (first pair, number of pairs).
    features: FxHashMap<u32, (u32, u8)>,
    pair_class: Vec<u8>,
    pair_weight: Vec<i16>,
    /// The hash state after each template's prefix.
    prefix_hash: [u32; 15],
}

impl std::fmt::Debug for PerceptronTagger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerceptronTagger")
            .field("classes", &self.labels)
            .field("features", &self.features.len())
            .field("weights", &self.pair_class.len())
            .finish()
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| model_err("truncated"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn short_str(&mut self) -> Result<&'a str> {
        let n = self.u8()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| model_err("a string is not UTF-8"))
    }
}

fn model_err(message: &str) -> Error {
    Error::Model { what: "POS tagger weights (pos-perceptron.bin)".into(), message: message.into() }
}

impl PerceptronTagger {
    /// Parse the weights file `assets/text/pos-perceptron.bin` (format: `assets/text/README.md`).
    ///
    /// Errors: [`Error::Model`] if the bytes are truncated, of another format or version, or
    /// name a label that is not `UPOS|VerbForm`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(8)? != b"CAIRNPOS" {
            return Err(model_err("not a Cairn POS weights file"));
        }
        if r.u32()? != 1 {
            return Err(model_err("unsupported format version"));
        }
        let basis = r.u32()?;
        let n_classes = r.u8()? as usize;
        let mut classes = Vec::with_capacity(n_classes);
        let mut labels = Vec::with_capacity(n_classes);
        for _ in 0..n_classes {
            let label = r.short_str()?;
            let (upos, form) = label.split_once('|').ok_or_else(|| model_err("label without '|'"))?;
            let upos = Upos::parse(upos).ok_or_else(|| model_err("unknown UPOS label"))?;
            let form = match form {
                "Fin" => Some(VerbForm::Fin),
                "Inf" => Some(VerbForm::Inf),
                "Part" => Some(VerbForm::Part),
                "Ger" => Some(VerbForm::Ger),
                _ => None,
            };
            classes.push((upos, form));
            labels.push(label.to_string());
        }
        if classes.is_empty() || classes.len() > 32 {
            return Err(model_err("between 1 and 32 classes expected"));
        }
        let n_tagdict = r.u32()? as usize;
        let mut tagdict = FxHashMap::default();
        tagdict.reserve(n_tagdict.min(1 << 20));
        for _ in 0..n_tagdict {
            let word = r.short_str()?.to_string();
            let class = r.u8()?;
            if class as usize >= classes.len() {
                return Err(model_err("tag dictionary class out of range"));
            }
            tagdict.insert(word, class);
        }
        let n_features = r.u32()? as usize;
        let keys = r.take(n_features.checked_mul(4).ok_or_else(|| model_err("too many features"))?)?;
        let counts = r.take(n_features)?;
        let n_pairs = r.u32()? as usize;
        let pair_class = r.take(n_pairs)?.to_vec();
        let weights = r.take(n_pairs.checked_mul(2).ok_or_else(|| model_err("too many weights"))?)?;
        let pair_weight: Vec<i16> =
            weights.chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
        if pair_class.iter().any(|&c| c as usize >= classes.len()) {
            return Err(model_err("weight class out of range"));
        }
        let mut features = FxHashMap::default();
        features.reserve(n_features);
        let mut offset: u32 = 0;
        for (k, &count) in keys.chunks_exact(4).zip(counts) {
            let key = u32::from_le_bytes([k[0], k[1], k[2], k[3]]);
            features.insert(key, (offset, count));
            offset = offset.checked_add(u32::from(count)).ok_or_else(|| model_err("too many weights"))?;
        }
        if offset as usize != n_pairs {
            return Err(model_err("feature counts do not add up to the number of weights"));
        }
        let mut prefix_hash = [0u32; 15];
        for (slot, (_, prefix)) in prefix_hash.iter_mut().zip(TEMPLATES.iter()) {
            *slot = fnv(basis, prefix.as_bytes());
        }
        Ok(PerceptronTagger { classes, labels, tagdict, features, pair_class, pair_weight, prefix_hash })
    }

    /// The `(UPOS, VerbForm)` of class `id` (as returned by [`PerceptronTagger::tag`]);
    /// `(X, None)` for an id out of range.
    pub fn class(&self, id: u8) -> (Upos, Option<VerbForm>) {
        self.classes.get(id as usize).copied().unwrap_or((Upos::X, None))
    }

    /// The label of class `id` as the weights file names it (`"VERB|Fin"`); `"<s>"` if out
    /// of range.
    pub fn class_label(&self, id: u8) -> &str {
        self.label(Some(id))
    }

    /// The number of feature rows and of (class, weight) pairs: the model's size.
    pub fn size(&self) -> (usize, usize) {
        (self.features.len(), self.pair_class.len())
    }

    fn label(&self, tag: Option<u8>) -> &str {
        tag.and_then(|t| self.labels.get(t as usize)).map_or(START, String::as_str)
    }

    /// Tag one sentence's words (punctuation removed). `words` are the words as written and
    /// `lower` the same words lower-cased (`str::to_lowercase`); both must have the same length
    /// (extra entries of the longer one are ignored). Writes one class id per word to `out`
    /// (cleared first); see [`PerceptronTagger::class`].
    pub fn tag(&self, words: &[&str], lower: &[&str], out: &mut Vec<u8>) {
        out.clear();
        let n = words.len().min(lower.len());
        let mut prev: Option<u8> = None;
        let mut prev2: Option<u8> = None;
        let mut scores = [0i32; 32];
        for i in 0..n {
            let (word, low) = (words[i], lower[i]);
            let guess = match self.tagdict.get(low) {
                Some(&c) => c,
                None => {
                    scores.iter_mut().for_each(|s| *s = 0);
                    let before =
                        |k: usize| i.checked_sub(k).and_then(|j| lower.get(j).copied()).unwrap_or(START);
                    let after = |k: usize| {
                        Some(i + k).filter(|&j| j < n).and_then(|j| lower.get(j).copied()).unwrap_or(END)
                    };
                    let (p1, p2) = (self.label(prev), self.label(prev2));
                    for (t, (tpl, _)) in TEMPLATES.iter().enumerate() {
                        let h = self.prefix_hash[t];
                        let key = match tpl {
                            Tpl::Bias => h,
                            Tpl::Suf3 => fnv(h, last_chars(low, 3).as_bytes()),
                            Tpl::Suf2 => fnv(h, last_chars(low, 2).as_bytes()),
                            Tpl::Suf1 => fnv(h, last_chars(low, 1).as_bytes()),
                            Tpl::Pre1 => fnv(h, first_char(low).as_bytes()),
                            Tpl::Shape => {
                                let upper = word.chars().next().is_some_and(char::is_uppercase);
                                let digit = word.chars().any(char::is_numeric);
                                let shape: &[u8] = match (upper, digit) {
                                    (true, true) => b"Xd",
                                    (true, false) => b"X",
                                    (false, true) => b"xd",
                                    (false, false) => b"x",
                                };
                                fnv(h, shape)
                            }
                            Tpl::W => fnv(h, low.as_bytes()),
                            Tpl::T1 => fnv(h, p1.as_bytes()),
                            Tpl::T2 => fnv(h, p2.as_bytes()),
                            Tpl::T1T2 => fnv(fnv(fnv(h, p1.as_bytes()), b" "), p2.as_bytes()),
                            Tpl::Wm1 => fnv(h, before(1).as_bytes()),
                            Tpl::Wm2 => fnv(h, before(2).as_bytes()),
                            Tpl::Wp1 => fnv(h, after(1).as_bytes()),
                            Tpl::Wp2 => fnv(h, after(2).as_bytes()),
                            Tpl::T1W => fnv(fnv(fnv(h, p1.as_bytes()), b" "), low.as_bytes()),
                        };
                        if let Some(&(off, cnt)) = self.features.get(&key) {
                            let (a, b) = (off as usize, off as usize + cnt as usize);
                            if let (Some(cs), Some(ws)) =
                                (self.pair_class.get(a..b), self.pair_weight.get(a..b))
                            {
                                for (&c, &w) in cs.iter().zip(ws) {
                                    if let Some(s) = scores.get_mut(c as usize) {
                                        *s += i32::from(w);
                                    }
                                }
                            }
                        }
                    }
                    // Highest score; among equal scores the label that sorts last (perceptron.py).
                    let mut best = 0usize;
                    for c in 1..self.classes.len() {
                        if scores[c] >= scores[best] {
                            best = c;
                        }
                    }
                    best as u8
                }
            };
            out.push(guess);
            prev2 = prev;
            prev = Some(guess);
        }
    }
}

/// The last `n` characters of `s` (all of `s` if shorter), as Python's `s[-n:]`.
fn last_chars(s: &str, n: usize) -> &str {
    let start = s.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i);
    &s[start..]
}

fn first_char(s: &str) -> &str {
    s.chars().next().map_or("", |c| &s[..c.len_utf8()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagger() -> PerceptronTagger {
        PerceptronTagger::from_bytes(super::super::assets::POS_PERCEPTRON).expect("asset parses")
    }

    fn tag(words: &[&str]) -> Vec<String> {
        let t = tagger();
        let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
        let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
        let mut out = Vec::new();
        t.tag(words, &lower, &mut out);
        out.iter().map(|&c| t.labels[c as usize].clone()).collect()
    }

    #[test]
    fn loads_the_published_model() {
        let t = tagger();
        assert_eq!(t.size(), (66_441, 211_292));
        assert_eq!(t.labels.len(), 20);
        assert_eq!(t.tagdict.len(), 480);
    }

    #[test]
    fn tags_match_the_python_reference() {
        // Labels from denckring_en_pos.perceptron.Tagger.tag on the same words (Python 3.11).
        assert_eq!(
            tag(&["Paris", "is", "the", "capital", "of", "France"]),
            ["PROPN|-", "AUX|Fin", "DET|-", "NOUN|-", "ADP|-", "PROPN|-"]
        );
        assert_eq!(
            tag(&["She", "was", "born", "in", "1990", "and", "has", "written", "two", "books"]),
            [
                "PRON|-",
                "AUX|Fin",
                "VERB|Part",
                "ADP|-",
                "NUM|-",
                "CCONJ|-",
                "AUX|Fin",
                "VERB|Part",
                "NUM|-",
                "NOUN|-"
            ]
        );
        assert_eq!(
            tag(&["The", "hotel", "was", "destroyed", "by", "fire", "in", "Las", "Vegas"]),
            ["DET|-", "NOUN|-", "AUX|Fin", "VERB|Part", "ADP|-", "NOUN|-", "ADP|-", "PROPN|-", "PROPN|-"]
        );
        assert_eq!(tag(&["東京"]), ["NOUN|-"]);
    }

    #[test]
    fn rule_tags() {
        assert_eq!(rule_tag(",", false), Some(Upos::Punct));
        assert_eq!(rule_tag("&", false), Some(Upos::Cconj));
        assert_eq!(rule_tag("$", false), Some(Upos::Sym));
        assert_eq!(rule_tag("%", false), Some(Upos::Noun));
        assert_eq!(rule_tag("'", true), Some(Upos::Part));
        assert_eq!(rule_tag("'", false), Some(Upos::Punct));
        assert_eq!(rule_tag("x", false), None);
        assert_eq!(last_chars("héllo", 3), "llo");
        assert_eq!(last_chars("é", 3), "é");
        assert_eq!(first_char(""), "");
    }

    #[test]
    fn empty_and_odd_input() {
        assert!(tag(&[]).is_empty());
        assert_eq!(tag(&["東京"]).len(), 1);
        assert!(PerceptronTagger::from_bytes(b"CAIRNPOS").is_err());
        assert!(PerceptronTagger::from_bytes(b"").is_err());
    }
}
