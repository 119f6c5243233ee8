//! Unicode normalisation and accent folding: where text enters the engine and where it is
//! matched.
//!
//! - [`nfc`]: canonical composition (Unicode UAX #15, NFC). Passages are stored in NFC when they
//!   enter a [`crate::corpus::Corpus`] and queries are composed before they are analysed, so a
//!   passage typed with a combining accent (`"Cafe\u{301}"`, NFD) and a query typed with the
//!   precomposed letter (`"Café"`, NFC) are the same text. NFC never changes how text looks,
//!   so the stored passage is still the one displayed, and highlight offsets are offsets into it.
//! - [`fold_diacritics`]: the accent folding of Lucene's `ASCIIFoldingFilter` /
//!   `ICUFoldingFilter` restricted to diacritics: compatibility decomposition (NFKD, so ligatures
//!   and full-width forms fold too), removal of the combining diacritical marks (U+0300–U+036F,
//!   U+1AB0–U+1AFF, U+1DC0–U+1DFF, U+20D0–U+20FF, U+FE20–U+FE2F), a few letters whose stroke is
//!   not a combining mark (`ø ł đ ħ ı ŧ`), and recomposition (NFC). `"Pál Erdős"` folds to
//!   `"Pal Erdos"`, `"Zürich"` to `"Zurich"`. Marks of other scripts (Devanagari vowel signs,
//!   Thai tone marks, Hebrew points) are letters of their words, not accents, and are kept.
//!   Applied to index terms ([`crate::text::Analyzer::term_of`]) and to entity keys
//!   ([`crate::text::normalize::normalize_entity`]), never to the stored text.
//! - [`is_cjk_char`]: the characters that are written without spaces between words (Han,
//!   Hiragana, Katakana), which the analyser indexes as overlapping character bigrams (as
//!   Lucene's `CJKBigramFilter`).

use std::borrow::Cow;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// `text` in Unicode Normalization Form C (borrowed when it already is: the quick check passes
/// for almost all text, so this is cheap).
pub fn nfc(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfc().collect()),
    }
}

/// Whether `c` is a combining diacritical mark removed by [`fold_diacritics`].
pub fn is_diacritic(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Letters with a stroke or without a dot, which no decomposition takes apart, and their base.
fn stroke_base(c: char) -> Option<char> {
    Some(match c {
        'ø' => 'o',
        'Ø' => 'O',
        'ł' => 'l',
        'Ł' => 'L',
        'đ' => 'd',
        'Đ' => 'D',
        'ħ' => 'h',
        'Ħ' => 'H',
        'ı' => 'i',
        'ŧ' => 't',
        'Ŧ' => 'T',
        _ => return None,
    })
}

/// `text` with its accents folded (module docs): NFKD, diacritics removed, stroked letters to
/// their base letter, NFC. ASCII text is returned borrowed. Case is kept (callers lower-case).
pub fn fold_diacritics(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let folded: String = text
        .nfkd()
        .filter(|&c| !is_diacritic(c))
        .map(|c| stroke_base(c).unwrap_or(c))
        .nfc()
        .collect();
    if folded == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(folded)
    }
}

/// Whether `c` belongs to a script written without spaces between words and indexed as
/// character bigrams: CJK Unified Ideographs (and extensions A–F, compatibility ideographs),
/// Hiragana, Katakana (and its half-width forms).
pub fn is_cjk_char(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x309F          // Hiragana
        | 0x30A0..=0x30FF        // Katakana
        | 0x3400..=0x4DBF        // CJK Extension A
        | 0x4E00..=0x9FFF        // CJK Unified Ideographs
        | 0xF900..=0xFAFF        // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F        // Half-width Katakana
        | 0x20000..=0x2FA1F) // Extensions B–F, Compatibility Supplement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfc_composes_and_borrows_composed_text() {
        assert_eq!(nfc("Cafe\u{301}"), "Café");
        assert!(matches!(nfc("Café"), Cow::Borrowed(_)));
        assert_eq!(nfc("A\u{30A}ngstro\u{308}m"), "Ångström");
    }

    #[test]
    fn accents_fold_in_several_scripts() {
        assert_eq!(fold_diacritics("Pál Erdős"), "Pal Erdos");
        assert_eq!(fold_diacritics("Zürich"), "Zurich");
        assert_eq!(fold_diacritics("Cafe\u{301}"), "Cafe");
        assert_eq!(fold_diacritics("Łódź Ørsted Đorđe"), "Lodz Orsted Dorde");
        assert_eq!(fold_diacritics("Ἀθῆναι"), "Αθηναι"); // polytonic Greek
        assert_eq!(fold_diacritics("Йошкар-Ола"), "Иошкар-Ола"); // Cyrillic short i (breve)
        assert_eq!(fold_diacritics("ﬁnal"), "final"); // ligature (NFKD)
        // Marks that are letters of their script stay: Devanagari vowel signs, Hangul.
        assert_eq!(fold_diacritics("हिन्दी"), "हिन्दी");
        assert_eq!(fold_diacritics("서울"), "서울");
        assert_eq!(fold_diacritics("长城"), "长城");
        assert!(matches!(fold_diacritics("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn cjk_characters() {
        assert!(is_cjk_char('长') && is_cjk_char('の') && is_cjk_char('カ'));
        assert!(!is_cjk_char('a') && !is_cjk_char('서') && !is_cjk_char('é'));
    }
}
