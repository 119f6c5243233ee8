//! Lemmatisation: spaCy's English rule lemmatiser (`spacy.lang.en.EnglishLemmatizer`, mode
//! `"rule"`, the one `en_core_web_sm` 3.x uses) over the tables of `spacy-lookups-data` 1.0.5.
//!
//! For a word tagged NOUN, VERB, ADJ or ADV (and PUNCT, whose rules straighten curly quotes):
//! 1. if the word is a base form it is its own lemma (lower-cased);
//! 2. otherwise every suffix rule `(old, new)` of the tag whose `old` ends the lower-cased word
//!    gives a candidate `word - old + new`; candidates found in the tag's index of base forms
//!    (WordNet 3.0 lemmas) are kept, the last matching rule first, then candidates containing
//!    a non-letter; the exceptions
//!    table's lemmas for the word (irregular forms: `went` → `go`, `children` → `child`) are
//!    put in front; if none is kept, the out-of-index candidates are used; if there are none
//!    either, the word itself. The first candidate is the lemma.
//!
//! spaCy decides step 1 from the fine-grained morphology its tagger predicts (NN vs NNS, VB vs
//! VBZ, JJ vs JJR). Cairn's tagger predicts UPOS and, for verbs, `VerbForm` only, so
//! [`Lemmatizer::is_base_form`] approximates it: an infinitive is a base form, a participle or
//! gerund never is; a finite verb is one if the index lists it and the exceptions do not (`need`
//! but not `needed`, `found`); a noun unless it ends in `s` (but not `ss`, `us`, `is`) or is an
//! irregular plural or a `-men` plural of an indexed `-man`; an adjective unless it is an irregular comparative or an `-er`/`-est` form
//! of an indexed adjective; an adverb unless it is an irregular comparative.
//!
//! Other tags are lower-cased, except the special cases `en_core_web_sm`'s attribute ruler sets
//! ([`special_lemma`]: `was` → `be`, `n't` → `not`, `him` → `he`, `ca` → `can` ...), and proper
//! nouns keep their case (spaCy has no PROPN table).
//!
//! Data: `assets/text/lemma-en.txt` (rules and exceptions) and `assets/text/lemma-index.bin`
//! (the index as 32-bit FNV-1a hashes), built by `tools/fetch_text_resources.py`. Licence:
//! spacy-lookups-data is MIT; the tables come from WordNet 3.0 (`assets/text/LICENSE-WordNet`).

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::tagger::{Upos, VerbForm};
use crate::error::{Error, Result};

/// The tags that have lemma tables, in table order.
const TABLE_POS: [&str; 5] = ["noun", "verb", "adj", "adv", "punct"];

fn table_of(upos: Upos) -> Option<usize> {
    match upos {
        Upos::Noun => Some(0),
        Upos::Verb => Some(1),
        Upos::Adj => Some(2),
        Upos::Adv => Some(3),
        Upos::Punct => Some(4),
        _ => None,
    }
}

#[derive(Default)]
struct Table {
    rules: Vec<(String, String)>,
    exceptions: FxHashMap<String, Vec<String>>,
    /// Sorted FNV-1a hashes of the base forms.
    index: Vec<u32>,
}

impl Table {
    fn in_index(&self, form: &str) -> bool {
        self.index.binary_search(&fnv1a(form.as_bytes())).is_ok()
    }
}

/// The rule + exception + index lemmatiser described in the module docs. Built once from the
/// embedded tables; read-only afterwards.
pub struct Lemmatizer {
    tables: [Table; 5],
}

impl std::fmt::Debug for Lemmatizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sizes: Vec<(usize, usize, usize)> =
            self.tables.iter().map(|t| (t.rules.len(), t.exceptions.len(), t.index.len())).collect();
        f.debug_struct("Lemmatizer").field("rules/exceptions/index", &sizes).finish()
    }
}

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn model_err(message: String) -> Error {
    Error::Model { what: "lemma tables (lemma-en.txt, lemma-index.bin)".into(), message }
}

impl Lemmatizer {
    /// Build from the rules/exceptions text (`lemma-en.txt`) and the index (`lemma-index.bin`);
    /// formats in `assets/text/README.md`.
    ///
    /// Errors: [`Error::Model`] when a line or the binary index is malformed.
    pub fn from_bytes(rules_text: &[u8], index: &[u8]) -> Result<Self> {
        let text =
            std::str::from_utf8(rules_text).map_err(|_| model_err("lemma-en.txt is not UTF-8".into()))?;
        let mut tables: [Table; 5] = Default::default();
        for (n, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut f = line.split('\t');
            let (kind, pos) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
            let Some(t) = TABLE_POS.iter().position(|p| *p == pos) else {
                // Tables for tags Cairn's tagger does not produce are skipped.
                continue;
            };
            let table = &mut tables[t];
            match kind {
                "rule" => {
                    let (old, new) = (f.next(), f.next());
                    let (Some(old), Some(new)) = (old, new) else {
                        return Err(model_err(format!(
                            "lemma-en.txt line {}: a rule needs two fields",
                            n + 1
                        )));
                    };
                    table.rules.push((old.to_string(), new.to_string()));
                }
                "exc" => {
                    let form = f.next().unwrap_or("");
                    let lemmas: Vec<String> = f.map(str::to_string).collect();
                    if form.is_empty() || lemmas.is_empty() {
                        return Err(model_err(format!(
                            "lemma-en.txt line {}: an exception needs a form and a lemma",
                            n + 1
                        )));
                    }
                    table.exceptions.insert(form.to_string(), lemmas);
                }
                _ => return Err(model_err(format!("lemma-en.txt line {}: unknown record {kind:?}", n + 1))),
            }
        }
        let bad = || model_err("lemma-index.bin is truncated or not a Cairn lemma index".into());
        let mut at = 0usize;
        let mut take = |k: usize| -> Result<&[u8]> {
            let end = at.checked_add(k).filter(|&e| e <= index.len()).ok_or_else(bad)?;
            let s = &index[at..end];
            at = end;
            Ok(s)
        };
        let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if take(8)? != b"CAIRNLIX" || u32_of(take(4)?) != 1 {
            return Err(bad());
        }
        let n_pos = u32_of(take(4)?);
        for _ in 0..n_pos {
            let len = take(1)?[0] as usize;
            let name = std::str::from_utf8(take(len)?).map_err(|_| bad())?.to_string();
            let count = u32_of(take(4)?) as usize;
            let hashes = take(count.checked_mul(4).ok_or_else(bad)?)?;
            let mut v: Vec<u32> = hashes.chunks_exact(4).map(u32_of).collect();
            v.sort_unstable();
            if let Some(t) = TABLE_POS.iter().position(|p| *p == name) {
                tables[t].index = v;
            }
        }
        Ok(Lemmatizer { tables })
    }

    /// The lemma of `word` tagged `upos` (with `verb_form` for verbs), appended to `out`.
    /// `possessive` says a PRON is a possessive determiner (`her` in `her book`), whose lemma is
    /// itself rather than `she`. Never fails; an unknown word is its own lemma.
    pub fn lemma_into(
        &self,
        word: &str,
        upos: Upos,
        verb_form: Option<VerbForm>,
        possessive: bool,
        out: &mut String,
    ) {
        let lower = lowercase(word);
        if let Some(special) = special_lemma(&lower, upos, possessive) {
            out.push_str(special);
            return;
        }
        match (upos, table_of(upos)) {
            (Upos::Propn, _) => out.push_str(word),
            (_, Some(t)) => {
                if self.is_base_form(&lower, upos, verb_form) {
                    out.push_str(&lower);
                } else {
                    self.rule_lemma(t, word, &lower, out);
                }
            }
            _ => out.push_str(&lower),
        }
    }

    /// The lemma of `word` as a new `String` (see [`Lemmatizer::lemma_into`]).
    pub fn lemma(&self, word: &str, upos: Upos, verb_form: Option<VerbForm>) -> String {
        let mut s = String::new();
        self.lemma_into(word, upos, verb_form, false, &mut s);
        s
    }

    /// Whether `word` is a verb's base form in the index (`star` for `stars`).
    pub fn is_verb_base(&self, word: &str) -> bool {
        self.tables[1].in_index(word)
    }

    /// Whether a lower-cased word is its own lemma (see the module docs for the approximation
    /// of spaCy's morphology-based test).
    pub fn is_base_form(&self, lower: &str, upos: Upos, verb_form: Option<VerbForm>) -> bool {
        let Some(t) = table_of(upos) else { return true };
        let table = &self.tables[t];
        let irregular = table.exceptions.contains_key(lower);
        match upos {
            Upos::Verb => match verb_form {
                Some(VerbForm::Inf) => true,
                Some(VerbForm::Part | VerbForm::Ger) => false,
                Some(VerbForm::Fin) | None => !irregular && table.in_index(lower),
            },
            Upos::Noun => {
                let plural_s = lower.ends_with('s')
                    && !(lower.ends_with("ss") || lower.ends_with("us") || lower.ends_with("is"));
                let plural_men = lower
                    .strip_suffix("men")
                    .is_some_and(|stem| !table.in_index(lower) && table.in_index(&format!("{stem}man")));
                !plural_s && !plural_men && !irregular
            }
            Upos::Adj => {
                if irregular {
                    return false;
                }
                let graded = |suffix: &str| {
                    lower.strip_suffix(suffix).is_some_and(|stem| {
                        !stem.is_empty() && (table.in_index(stem) || table.in_index(&format!("{stem}e")))
                    })
                };
                !(graded("er") || graded("est"))
            }
            Upos::Adv => !irregular,
            _ => false,
        }
    }

    /// spaCy 3.8's `Lemmatizer.rule_lemmatize` for table `t`; pushes the first candidate.
    /// One addition: a noun whose candidates are all out of the index while the noun itself is
    /// in it (`series`, `species`) is its own lemma (spaCy gets these right through the tag NN).
    fn rule_lemma(&self, t: usize, orig: &str, lower: &str, out: &mut String) {
        let table = &self.tables[t];
        let mut forms: Vec<Cow<str>> = Vec::new();
        let mut oov: Vec<Cow<str>> = Vec::new();
        for (old, new) in &table.rules {
            if let Some(stem) = lower.strip_suffix(old.as_str()) {
                let form = format!("{stem}{new}");
                if form.is_empty() {
                    continue;
                }
                if table.in_index(&form) {
                    // spaCy puts indexed forms in front: the last matching rule ranks first.
                    forms.insert(0, Cow::Owned(form));
                } else if !form.chars().all(char::is_alphabetic) {
                    forms.push(Cow::Owned(form));
                } else {
                    oov.push(Cow::Owned(form));
                }
            }
        }
        // Remove duplicates, keeping the first of each.
        let mut k = 0;
        while k < forms.len() {
            if forms[..k].contains(&forms[k]) {
                forms.remove(k);
            } else {
                k += 1;
            }
        }
        if let Some(lemmas) = table.exceptions.get(lower) {
            for l in lemmas {
                if !forms.iter().any(|f| f == l) {
                    forms.insert(0, Cow::Borrowed(l.as_str()));
                }
            }
        }
        if forms.is_empty() && t == 0 && table.in_index(lower) {
            out.push_str(lower);
            return;
        }
        let first = forms.into_iter().next().or_else(|| oov.into_iter().next());
        match first {
            Some(f) => out.push_str(&f),
            None => out.push_str(orig),
        }
    }
}

/// Lower-case without allocating when the word is already lower case.
pub(crate) fn lowercase(word: &str) -> Cow<'_, str> {
    if word.chars().any(char::is_uppercase) {
        Cow::Owned(word.to_lowercase())
    } else {
        Cow::Borrowed(word)
    }
}

/// The lemmas `en_core_web_sm` 3.8's attribute ruler sets whatever the tables say (pronoun
/// case forms, the inflections of `be`, `have` and `do`, negation, clipped modals).
/// `lower` is the lower-cased word; `possessive` marks a possessive `her`.
pub fn special_lemma(lower: &str, upos: Upos, possessive: bool) -> Option<&'static str> {
    match upos {
        Upos::Pron => match lower {
            "i" | "me" => Some("I"),
            "him" => Some("he"),
            "her" if !possessive => Some("she"),
            "us" => Some("we"),
            "them" | "'em" => Some("they"),
            _ => None,
        },
        Upos::Part | Upos::Adv if matches!(lower, "n't" | "n’t" | "not" | "nt") => Some("not"),
        Upos::Aux | Upos::Verb => match lower {
            "is" | "'s" | "’s" | "are" | "'re" | "’re" | "am" | "'m" | "’m" | "was" | "were" | "been"
            | "being" | "be" => Some("be"),
            "has" | "have" | "'ve" | "’ve" | "had" => Some("have"),
            "does" | "did" | "do" => Some("do"),
            "'d" | "’d" => Some("would"),
            "ca" => Some("can"),
            "wo" | "'ll" | "’ll" => Some("will"),
            "sha" => Some("shall"),
            "gets" | "got" => Some("get"),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lemmatizer() -> Lemmatizer {
        Lemmatizer::from_bytes(super::super::assets::LEMMA_RULES, super::super::assets::LEMMA_INDEX)
            .expect("assets parse")
    }

    #[test]
    fn lemmas_as_spacy_gives_them() {
        // en_core_web_sm 3.8 on "Dr. Smith's children were born in 1990 and studied the
        // largest glasses; the mice ran" gives these lemmas.
        let l = lemmatizer();
        assert_eq!(l.lemma("children", Upos::Noun, None), "child");
        assert_eq!(l.lemma("were", Upos::Aux, Some(VerbForm::Fin)), "be");
        assert_eq!(l.lemma("born", Upos::Verb, Some(VerbForm::Part)), "bear");
        assert_eq!(l.lemma("studied", Upos::Verb, Some(VerbForm::Fin)), "study");
        assert_eq!(l.lemma("largest", Upos::Adj, None), "large");
        assert_eq!(l.lemma("glasses", Upos::Noun, None), "glass");
        assert_eq!(l.lemma("mice", Upos::Noun, None), "mouse");
        assert_eq!(l.lemma("ran", Upos::Verb, Some(VerbForm::Fin)), "run");
        assert_eq!(l.lemma("Smith", Upos::Propn, None), "Smith");
        assert_eq!(l.lemma("The", Upos::Det, None), "the");
        assert_eq!(l.lemma("n't", Upos::Part, None), "not");
        assert_eq!(l.lemma("him", Upos::Pron, None), "he");
        assert_eq!(l.lemma("“", Upos::Punct, None), "\"");
    }

    #[test]
    fn base_forms_are_kept() {
        let l = lemmatizer();
        assert_eq!(l.lemma("need", Upos::Verb, Some(VerbForm::Fin)), "need");
        assert_eq!(l.lemma("needed", Upos::Verb, Some(VerbForm::Fin)), "need");
        assert_eq!(l.lemma("found", Upos::Verb, Some(VerbForm::Fin)), "find");
        assert_eq!(l.lemma("business", Upos::Noun, None), "business");
        assert_eq!(l.lemma("status", Upos::Noun, None), "status");
        assert_eq!(l.lemma("other", Upos::Adj, None), "other");
        // spaCy's exceptions list "good" then "well" for "better" and the later one wins.
        assert_eq!(l.lemma("better", Upos::Adj, None), "well");
        assert_eq!(l.lemma("quickly", Upos::Adv, None), "quickly");
        assert_eq!(l.lemma("walking", Upos::Verb, Some(VerbForm::Ger)), "walk");
        // An unknown form falls back on the out-of-index candidate, as spaCy does.
        assert_eq!(l.lemma("blorfed", Upos::Verb, Some(VerbForm::Part)), "blorfe");
        assert_eq!(l.lemma("", Upos::Noun, None), "");
    }
}
