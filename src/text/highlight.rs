//! Highlight ranges: which words of a text match a query's index terms, as byte ranges and as
//! the UTF-16 code-unit ranges JavaScript strings are indexed by.

use std::collections::HashSet;

use super::Analyzer;

/// Byte ranges `[start, end)` of the words of `text` whose index term ([`Analyzer`]) is in
/// `terms`, in order; none for an empty `terms`.
pub fn highlight_ranges(analyzer: &Analyzer, terms: &HashSet<String>, text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if terms.is_empty() {
        return out;
    }
    analyzer.for_each_token(text, |term, s, e| {
        if terms.contains(term) {
            out.push((s, e));
        }
    });
    out
}

/// Byte ranges of `text` (ascending, on character boundaries) to UTF-16 code-unit ranges
/// (JavaScript string offsets). A range past the end of `text` ends at its end.
pub fn utf16_ranges(text: &str, ranges: &[(usize, usize)]) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(ranges.len());
    let (mut byte, mut unit) = (0usize, 0u32);
    let mut chars = text.char_indices().peekable();
    let mut advance_to = |target: usize, byte: &mut usize, unit: &mut u32| {
        while *byte < target {
            match chars.next() {
                Some((i, c)) => {
                    *byte = i + c.len_utf8();
                    *unit += c.len_utf16() as u32;
                }
                None => break,
            }
        }
    };
    for &(s, e) in ranges {
        advance_to(s, &mut byte, &mut unit);
        let us = unit;
        advance_to(e, &mut byte, &mut unit);
        out.push((us, unit));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_offsets_count_code_units() {
        // "é" is 2 bytes and 1 unit; "𝄞" is 4 bytes and 2 units
        let t = "é ab 𝄞 cd";
        assert_eq!(utf16_ranges(t, &[(0, 2), (3, 5), (6, 10), (11, 13)]), vec![(0, 1), (2, 4), (5, 7), (8, 10)]);
    }

    #[test]
    fn matching_words_by_their_stems() {
        let a = Analyzer::english();
        let terms: HashSet<String> = a.terms("running").into_iter().collect();
        assert_eq!(highlight_ranges(&a, &terms, "He runs; the runner was running."), vec![(3, 7), (24, 31)]);
    }
}
