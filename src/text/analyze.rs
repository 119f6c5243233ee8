//! Text analysis for lexical retrieval (BM25) and query-term highlighting.
//!
//! The analysis chain, in order (the usual one for English ad-hoc retrieval, as in Lucene's
//! `EnglishAnalyzer` and Anserini's defaults):
//! 1. word segmentation by Unicode's word-boundary rules (UAX #29, `unicode-segmentation`), so
//!    any script is split into words and nothing is dropped for being non-English;
//!    Han, Hiragana and Katakana, written without spaces, come out of UAX #29 one character
//!    at a time; a run of two or more such characters is indexed as its overlapping character
//!    bigrams ("长城墙" → "长城", "城墙"; Lucene's `CJKBigramFilter`), a lone one as itself;
//! 2. Unicode lower-casing, accent folding ([`super::fold::fold_diacritics`]: "Erdős" and
//!    "Erdos" are one term, so are NFC and NFD spellings), and the typographic apostrophe
//!    (U+2019) folded to `'`;
//! 3. removal of English stop words (NLTK's list, [`ENGLISH_STOP_WORDS`]);
//! 4. Snowball English (Porter2) stemming (`rust-stemmers`).
//!
//! Words made only of punctuation never appear (UAX #29 yields them as non-words).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

use super::fold::{fold_diacritics, is_cjk_char};

/// Words longer than this many bytes are not indexed (they are almost always garbage such as
/// base64 blobs or URLs and would only bloat the vocabulary).
pub const MAX_TERM_BYTES: usize = 64;

/// One analysed word: its index term and where it stands in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The index term: lower-cased, stemmed.
    pub term: String,
    /// Byte offset of the word's first byte in the analysed text.
    pub start: usize,
    /// Byte offset one past the word's last byte.
    pub end: usize,
}

/// The English analysis chain described in the module docs.
///
/// Cheap to share: build one with [`Analyzer::english`] and reuse it. `Analyzer` is `Send + Sync`.
pub struct Analyzer {
    stemmer: Stemmer,
    stop_words: &'static HashSet<&'static str>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer").field("language", &"english").finish()
    }
}

/// NLTK's English stop-word list (the `stop-words` crate's `nltk` English list, word for word:
/// a test compares them). A copy, because the crate's lookup carries every language's list into
/// the wasm download.
pub const ENGLISH_STOP_WORDS: [&str; 198] = [
    "a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and", "any",
    "are", "aren", "aren't", "as", "at", "be", "because", "been", "before", "being", "below",
    "between", "both", "but", "by", "can", "couldn", "couldn't", "d", "did", "didn", "didn't", "do",
    "does", "doesn", "doesn't", "doing", "don", "don't", "down", "during", "each", "few", "for",
    "from", "further", "had", "hadn", "hadn't", "has", "hasn", "hasn't", "have", "haven", "haven't",
    "having", "he", "he'd", "he'll", "her", "here", "hers", "herself", "he's", "him", "himself",
    "his", "how", "i", "i'd", "if", "i'll", "i'm", "in", "into", "is", "isn", "isn't", "it", "it'd",
    "it'll", "it's", "its", "itself", "i've", "just", "ll", "m", "ma", "me", "mightn", "mightn't",
    "more", "most", "mustn", "mustn't", "my", "myself", "needn", "needn't", "no", "nor", "not",
    "now", "o", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out",
    "over", "own", "re", "s", "same", "shan", "shan't", "she", "she'd", "she'll", "she's", "should",
    "shouldn", "shouldn't", "should've", "so", "some", "such", "t", "than", "that", "that'll",
    "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "they'd",
    "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until",
    "up", "ve", "very", "was", "wasn", "wasn't", "we", "we'd", "we'll", "we're", "were", "weren",
    "weren't", "we've", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "won", "won't", "wouldn", "wouldn't", "y", "you", "you'd", "you'll", "your", "you're",
    "yours", "yourself", "yourselves", "you've",
];

fn english_stop_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| ENGLISH_STOP_WORDS.iter().copied().collect())
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::english()
    }
}

impl Analyzer {
    /// The English chain: UAX #29 words, lower case, NLTK stop words removed, Porter2 stems.
    pub fn english() -> Self {
        Analyzer { stemmer: Stemmer::create(Algorithm::English), stop_words: english_stop_words() }
    }

    /// Whether `word` (already lower-cased) is an English stop word.
    pub fn is_stop_word(&self, word: &str) -> bool {
        self.stop_words.contains(word)
    }

    /// Analyse `text` into tokens with byte offsets into `text`, in reading order.
    ///
    /// Stop words and words over [`MAX_TERM_BYTES`] are skipped. Never fails: any UTF-8 text is
    /// accepted, and text in other scripts yields its words lower-cased and (harmlessly) passed
    /// through the English stemmer.
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        self.for_each_token(text, |term, start, end| out.push(Token { term: term.to_string(), start, end }));
        out
    }

    /// Analyse `text` into index terms only (no offsets).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_token(text, |term, _, _| out.push(term.to_string()));
        out
    }

    /// Call `f(term, start, end)` for each token of `text`, without allocating a `Token` each.
    pub fn for_each_token(&self, text: &str, mut f: impl FnMut(&str, usize, usize)) {
        for (start, word) in word_indices(text) {
            if let Some(term) = self.term_of(word) {
                f(&term, start, start + word.len());
            }
        }
    }

    /// The words of `text` as UAX #29 finds them, with runs of CJK characters as their
    /// overlapping bigrams (module docs), unanalysed (what [`Analyzer::term_of`] takes). Each
    /// is a slice of `text`.
    pub fn words<'a>(&self, text: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        word_indices(text).map(|(_, w)| w)
    }

    /// The index term of one word, or `None` for a stop word, a word over [`MAX_TERM_BYTES`] or
    /// a word that stems to nothing. Pure: callers may cache it per distinct word.
    pub fn term_of(&self, word: &str) -> Option<String> {
        if word.len() > MAX_TERM_BYTES {
            return None;
        }
        let lower: Cow<str> = if word.is_ascii() && !word.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Borrowed(word)
        } else if word.is_ascii() {
            Cow::Owned(word.to_ascii_lowercase())
        } else {
            // Lower-case first: 'İ' lower-cases to "i" + U+0307, which folding then removes.
            let lower = word.to_lowercase().replace('\u{2019}', "'");
            Cow::Owned(fold_diacritics(&lower).into_owned())
        };
        if self.stop_words.contains(lower.as_ref()) {
            return None;
        }
        let stem = self.stemmer.stem(&lower);
        (!stem.is_empty()).then(|| stem.into_owned())
    }
}

/// The single-character UAX #29 word at `start` if it is a CJK character.
fn cjk_at(text: &str, start: usize, word: &str) -> bool {
    let mut cs = word.chars();
    matches!((cs.next(), cs.next()), (Some(c), None) if is_cjk_char(c)) && text.is_char_boundary(start)
}

/// UAX #29 words of `text` with their byte offsets, runs of adjacent single CJK characters
/// replaced by their overlapping bigrams (a lone CJK character stays a unigram).
fn word_indices(text: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    let mut words = uax29_word_indices(text);
    // The previous CJK character of the current run: (start, end), and whether it was emitted
    // as part of a bigram.
    let mut run: Option<(usize, usize, bool)> = None;
    let mut pending: std::collections::VecDeque<(usize, &str)> = std::collections::VecDeque::new();
    std::iter::from_fn(move || loop {
        if let Some(x) = pending.pop_front() {
            return Some(x);
        }
        let Some((start, word)) = words.next() else {
            // A lone CJK character at the end of the text.
            if let Some((s, e, false)) = run.take() {
                return Some((s, &text[s..e]));
            }
            return None;
        };
        if cjk_at(text, start, word) {
            let end = start + word.len();
            match run {
                Some((s, e, _)) if e == start => {
                    run = Some((start, end, true));
                    return Some((s, &text[s..end]));
                }
                Some((s, e, false)) => {
                    run = Some((start, end, false));
                    return Some((s, &text[s..e]));
                }
                _ => run = Some((start, end, false)),
            }
            continue;
        }
        if let Some((s, e, false)) = run.take() {
            pending.push_back((start, word));
            return Some((s, &text[s..e]));
        }
        run = None;
        return Some((start, word));
    })
}

/// `text.unicode_word_indices()` (UAX #29 words with their byte offsets), read one chunk at a
/// time: the text is cut at each run of ASCII white space and each chunk segmented on its own.
/// The segmentation crate has a fast path for text that is all ASCII and a table-driven one
/// otherwise; a single accented name used to send a whole passage down the slow one, now only
/// the chunk it is in.
///
/// The same words: an ASCII white-space character is CR, LF, Newline, WSegSpace or Other, and
/// no rule joins it to a word. WB3 and WB3d join white space only to white space; WB6, WB7, WB11
/// and WB12 look one character past a MidLetter, MidNum or MidNumLet character, which white
/// space is not; a run of regional indicators ends at it (WB15, WB16). WB4 lets an Extend,
/// Format or ZWJ character after white space cling to it, which moves only the end of that
/// non-word segment: at the start of a chunk the mark stands alone and breaks before the next
/// character just the same. Tested against the crate on random text.
pub(crate) fn uax29_word_indices(text: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut chunk: Option<(usize, unicode_segmentation::UnicodeWordIndices<'_>)> = None;
    std::iter::from_fn(move || loop {
        if let Some((base, words)) = &mut chunk {
            if let Some((i, w)) = words.next() {
                return Some((*base + i, w));
            }
            chunk = None;
        }
        while bytes.get(pos).is_some_and(u8::is_ascii_whitespace) {
            pos += 1;
        }
        if pos >= bytes.len() {
            return None;
        }
        // ASCII bytes are character boundaries in UTF-8.
        let start = pos;
        while bytes.get(pos).is_some_and(|b| !b.is_ascii_whitespace()) {
            pos += 1;
        }
        chunk = Some((start, text[start..pos].unicode_word_indices()));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_segmentation_equals_the_crates() {
        // Random text over characters that UAX #29 treats specially (letters, digits, the Mid*
        // and ExtendNumLet punctuation, every kind of ASCII white space, combining marks, ZWJ,
        // format characters, non-ASCII spaces, CJK, Katakana, Hebrew and its quotes, regional
        // indicators, emoji), against the crate run on the whole text.
        let alphabet = [
            "a", "Z", "7", ".", ",", ";", ":", "'", "\"", "_", "-", " ", "  ", "\t", "\n", "\r", "\r\n",
            "\u{b}", "\u{c}", "é", "e\u{301}", "\u{301}", "\u{200d}", "\u{200b}", "\u{ad}", "\u{a0}",
            "\u{3000}", "\u{2009}", "東", "京", "カ", "ー", "א", "\u{5f3}", "\u{1f1e9}", "\u{1f1ea}",
            "\u{1f600}", "\u{2019}", "\u{85}", "\u{2028}", "ß", "Ω", "٣", "x\u{200d}", "\u{fe0f}",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as usize) % m
        };
        for case in 0..20_000 {
            let len = next(24);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let want: Vec<(usize, &str)> = text.unicode_word_indices().collect();
            let got: Vec<(usize, &str)> = uax29_word_indices(&text).collect();
            assert_eq!(got, want, "case {case}: {text:?}");
        }
        // A passage's worth of English with one accented name.
        let text = "Ernő Rubik (born 13 July 1944) is a Hungarian inventor, architect and professor \
                    of architecture. He is best known for the invention of mechanical puzzles \
                    including Rubik's Cube (1974), Rubik's Magic, Rubik's Snake and Rubik's 360.";
        let want: Vec<(usize, &str)> = text.unicode_word_indices().collect();
        assert_eq!(uax29_word_indices(text).collect::<Vec<_>>(), want);
        assert_eq!(uax29_word_indices("").count(), 0);
        assert_eq!(uax29_word_indices(" \t\n").count(), 0);
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))] // the reference crate is a native dev-dependency
    fn the_stop_words_are_nltks_english_list() {
        // the crate is a dev-dependency: the list it ships is the reference
        let reference = stop_words::lookup("en").expect("the stop-words crate's English list");
        assert_eq!(&ENGLISH_STOP_WORDS[..], reference);
        assert!(ENGLISH_STOP_WORDS.contains(&"the") && ENGLISH_STOP_WORDS.contains(&"shouldn't"));
    }

    #[test]
    fn lowercases_removes_stop_words_and_stems() {
        let a = Analyzer::english();
        assert_eq!(
            a.terms("The Running dogs were running in the Parks of Paris."),
            vec!["run", "dog", "run", "park", "pari"]
        );
    }

    #[test]
    fn offsets_point_at_the_original_words() {
        let a = Analyzer::english();
        let text = "Café owners’ union, 1998";
        let toks = a.tokens(text);
        let words: Vec<&str> = toks.iter().map(|t| &text[t.start..t.end]).collect();
        // UAX #29 leaves a word-final apostrophe outside the word.
        assert_eq!(words, vec!["Café", "owners", "union", "1998"]);
        assert_eq!(toks[1].term, "owner");
    }

    #[test]
    fn non_english_text_is_kept() {
        let a = Analyzer::english();
        // Han characters are one word each under UAX #29 and are indexed as bigrams; Cyrillic
        // words pass through lower-cased.
        assert_eq!(a.terms("東京 Москва"), vec!["東京", "москва"]);
        assert!(a.terms("").is_empty());
        assert!(a.terms(" ,.;!? ").is_empty());
    }

    #[test]
    fn overlong_words_are_skipped() {
        let a = Analyzer::english();
        let long = "x".repeat(MAX_TERM_BYTES + 1);
        assert_eq!(a.terms(&format!("{long} ok")), vec!["ok"]);
    }
}

#[cfg(test)]
mod apostrophe_tests {
    use super::*;

    #[test]
    fn typographic_apostrophe_is_folded_before_stemming() {
        let a = Analyzer::english();
        assert_eq!(a.terms("Obama’s"), a.terms("Obama's"));
        assert_eq!(a.terms("Obama's"), vec!["obama"]);
    }

    #[test]
    fn accents_fold_and_nfd_equals_nfc() {
        let a = Analyzer::english();
        assert_eq!(a.terms("Pál Erdős"), a.terms("Pal Erdos"));
        assert_eq!(a.terms("Zürich Café"), vec!["zurich", "cafe"]);
        assert_eq!(a.terms("Cafe\u{301}"), a.terms("Café"));
        assert_eq!(a.terms("İstanbul"), vec!["istanbul"]);
        assert_eq!(a.terms("Ἀθῆναι"), a.terms("Αθηναι"));
        // Offsets still point at the original (accented, decomposed) words.
        let text = "Pa\u{301}l Erdo\u{30B}s";
        let words: Vec<&str> = a.tokens(text).iter().map(|t| &text[t.start..t.end]).collect();
        assert_eq!(words, vec!["Pa\u{301}l", "Erdo\u{30B}s"]);
    }

    #[test]
    fn cjk_runs_become_bigrams_with_offsets() {
        let a = Analyzer::english();
        let text = "长城墙 is 中, and の日本";
        let toks = a.tokens(text);
        let got: Vec<(&str, &str)> = toks.iter().map(|t| (t.term.as_str(), &text[t.start..t.end])).collect();
        assert_eq!(got, vec![("长城", "长城"), ("城墙", "城墙"), ("中", "中"), ("の日", "の日"), ("日本", "日本")]);
        assert_eq!(a.terms("长城"), vec!["长城"]);
        assert_eq!(a.terms("长 城"), vec!["长", "城"], "not adjacent: two unigrams");
    }
}
