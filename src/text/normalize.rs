//! Entity-name normalisation (docs/method/spec.md §1, "Nodes": one node per distinct normalised phrase).
//!
//! HippoRAG 2 keys its entity nodes by `re.sub('[^A-Za-z0-9 ]', ' ', text.lower()).strip()`,
//! which keeps ASCII only and so merges every non-Latin name into nothing. Cairn keeps the same
//! intent with Unicode classes, and also folds leading articles (docs/method/spec.md §1):
//!
//! 1. NFKC (composed and decomposed "é" agree; full-width forms and ligatures fold) with
//!    accents folded ([`crate::text::fold::fold_diacritics`]: "Pál Erdős", "Pal Erdos" and
//!    "PAL ERDOS" are one entity, and so are "Zürich" and "Zurich");
//! 2. lowercase (Unicode);
//! 3. letters, numbers and combining marks are kept; apostrophes (`'`, `’`, `ʼ`, `` ` ``, `´`) are
//!    deleted (`"O'Brien"` = `"OBrien"`, `"Maurice's"` = `"Maurices"`); every other character
//!    (punctuation, symbols, white space) becomes a space;
//! 4. runs of spaces collapse to one, and the ends are trimmed;
//! 5. one leading article `the`, `a` or `an` is dropped when something follows it.
//!
//! So `"The Beatles"`, `"beatles"` and `"the  Beatles."` are all `"beatles"`, and a phrase made
//! only of punctuation normalises to the empty string (such a triple is skipped).

use unicode_categories::UnicodeCategories;

use crate::text::fold::fold_diacritics;

/// Articles dropped from the start of an entity name (followed by a space).
const ARTICLES: [&str; 3] = ["the ", "a ", "an "];

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{02BC}' | '`' | '\u{00B4}')
}

/// Steps 1–4 of the module docs: NFKC with accents folded, lowercase, keep letters/numbers/marks, drop apostrophes,
/// everything else a single space, trimmed.
fn fold(phrase: &str) -> String {
    let mut out = String::with_capacity(phrase.len());
    let mut pending_space = false;
    for c in fold_diacritics(phrase).chars() {
        // (no ASCII character is a mark: the category tables are read for others only)
        if c.is_alphanumeric() || (!c.is_ascii() && c.is_mark()) {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.extend(c.to_lowercase());
        } else if is_apostrophe(c) {
            // deleted: the letters on both sides join
        } else {
            pending_space = true;
        }
    }
    out
}

/// The normalised key of an entity phrase (module docs: NFKC, accents folded, lowercase, punctuation to spaces,
/// apostrophes deleted, white space collapsed, one leading article dropped). Empty when the
/// phrase has no letter, number or mark. Never panics; linear in the phrase's length.
///
/// Source: docs/method/spec.md §1 ("entity nodes: normalised subject/object phrases"); HippoRAG 2's
/// `text_processing`, extended to Unicode.
pub fn normalize_entity(phrase: &str) -> String {
    let mut key = fold(phrase);
    for article in ARTICLES {
        if key.len() > article.len() && key.starts_with(article) {
            key.drain(..article.len());
            break;
        }
    }
    key
}

/// The normalised form of a relation phrase, used to tell facts apart: as [`normalize_entity`]
/// without dropping articles (`"is a"` stays `"is a"`). May be empty.
pub fn normalize_relation(phrase: &str) -> String {
    fold(phrase)
}

/// Number of letters and digits (Unicode alphanumeric characters) in `s`. Entities whose
/// normalised key has fewer than [`crate::graph::GraphConfig::synonym_min_alnum`] (default 3) get no
/// synonym edges (HippoRAG 2 counts ASCII `[A-Za-z0-9]` only; Cairn counts Unicode ones).
pub fn alnum_count(s: &str) -> usize {
    s.chars().filter(|c| c.is_alphanumeric()).count()
}

/// `s` with runs of white space collapsed to one space and the ends trimmed: the display form of
/// an entity name or a relation as the extractor wrote it.
pub fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ascii_character_is_a_mark() {
        assert!((0u8..128).all(|b| !char::from(b).is_mark()));
        assert_eq!(normalize_entity("Cafe\u{301} (Paris), l'Été!"), "cafe paris lete");
    }

    #[test]
    fn beatles_forms_agree() {
        for s in ["The Beatles", "beatles", "the  Beatles.", "  THE\tBEATLES!! ", "Beatles"] {
            assert_eq!(normalize_entity(s), "beatles", "{s:?}");
        }
    }

    #[test]
    fn articles_and_punctuation() {
        assert_eq!(normalize_entity("A Tale of Two Cities"), "tale of two cities");
        assert_eq!(normalize_entity("an apple"), "apple");
        // only one leading article, and not when it is the whole phrase
        assert_eq!(normalize_entity("The The"), "the");
        assert_eq!(normalize_entity("the"), "the");
        assert_eq!(normalize_entity("A"), "a");
        // an article inside the phrase or glued to the next word stays
        assert_eq!(normalize_entity("Theodred II"), "theodred ii");
        assert_eq!(normalize_entity("Anna"), "anna");
        assert_eq!(normalize_entity("Tuscany, the Margraviate"), "tuscany the margraviate");
        assert_eq!(normalize_entity("St. Maurice's Abbey"), "st maurices abbey");
        assert_eq!(normalize_entity("O’Brien"), "obrien");
        assert_eq!(normalize_entity("Jean-Paul Sartre"), "jean paul sartre");
        assert_eq!(normalize_entity("11 November 875"), "11 november 875");
        // punctuation only, or nothing at all
        assert_eq!(normalize_entity("!!! ... ---"), "");
        assert_eq!(normalize_entity(""), "");
        assert_eq!(normalize_entity("the ."), "the");
        assert_eq!(normalize_relation("is  a"), "is a");
        assert_eq!(normalize_relation("The"), "the");
    }

    #[test]
    fn non_ascii_names() {
        // composed and decomposed é agree; case folds beyond ASCII; accents fold; other
        // scripts' marks are kept
        assert_eq!(normalize_entity("Café Müller"), normalize_entity("cafe\u{301} MÜLLER"));
        assert_eq!(normalize_entity("Café Müller"), "cafe muller");
        assert_eq!(normalize_entity("Pál Erdős"), normalize_entity("Pal Erdos"));
        assert_eq!(normalize_entity("Zürich"), "zurich");
        assert_eq!(normalize_entity("İzmir"), "izmir");
        assert_eq!(normalize_entity("Ἀθῆναι"), normalize_entity("ΑΘΗΝΑΙ"));
        assert_eq!(normalize_entity("北京市"), "北京市");
        assert_eq!(normalize_entity("हिन्दी"), "हिन्दी"); // virama and vowel signs are marks
        assert_eq!(normalize_entity("Ｔｏｋｙｏ"), "tokyo"); // full-width forms (NFKC)
        assert_eq!(alnum_count("北京"), 2);
        assert_eq!(alnum_count("u 2"), 2);
        assert_eq!(alnum_count("abc"), 3);
    }

    #[test]
    fn whitespace_collapse() {
        assert_eq!(collapse_whitespace("  The \n Beatles  "), "The Beatles");
        assert_eq!(collapse_whitespace(""), "");
    }
}
