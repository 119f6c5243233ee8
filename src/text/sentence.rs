//! Sentence splitting over tokens.
//!
//! A rule-based splitter in the tradition of Punkt (Kiss & Strunk 2006) and Stanford CoreNLP's
//! `WordsToSentencesAnnotator`, run after tokenisation so that abbreviations have already kept
//! their periods:
//! - a sentence ends after a token `.`, `!`, `?` or an ellipsis (with any closing quotes and
//!   brackets that follow it) when the next token starts with a letter that is not lower case,
//!   a digit, or an opening quote or bracket (not a comma: `"Teen Titans Go!", and`);
//! - after an abbreviation that kept its period (`U.S.`, `Inc.`, `etc.`) it ends only when the
//!   next word is a capitalised function word that typically opens a sentence (`The`, `He`,
//!   `In`, `It` ...); after a title or an initial (`Dr.`, `St.`, `J.`) it never ends;
//! - a blank line (two line breaks) always ends a sentence;
//! - a sentence is cut after [`MAX_SENTENCE_TOKENS`] tokens, so text without any punctuation
//!   still comes out in bounded pieces.

use std::ops::Range;

use super::tokenize::{is_title_abbreviation, keeps_period, Span};

/// The longest sentence, in tokens, before it is cut (text without punctuation, lists, tables).
pub const MAX_SENTENCE_TOKENS: usize = 250;

/// Capitalised words that open sentences, used after an abbreviation's period.
const OPENERS: &[&str] = &[
    "The",
    "A",
    "An",
    "He",
    "She",
    "It",
    "They",
    "We",
    "I",
    "In",
    "On",
    "At",
    "This",
    "That",
    "These",
    "Those",
    "His",
    "Her",
    "Its",
    "Their",
    "There",
    "But",
    "And",
    "After",
    "Before",
    "During",
    "When",
    "While",
    "As",
    "Since",
    "For",
    "From",
    "By",
    "With",
    "However",
    "Although",
    "If",
    "Its",
    "Some",
    "Many",
    "Most",
    "According",
    "Following",
    "Today",
];

fn is_terminal(tok: &str) -> bool {
    !tok.is_empty() && tok.chars().all(|c| matches!(c, '.' | '!' | '?' | '…'))
}

fn is_closer(tok: &str) -> bool {
    matches!(tok, ")" | "]" | "}" | "\"" | "”" | "’" | "'" | "»")
}

/// Split the tokens `spans` of `text` into sentences: ranges of token indices, in order,
/// covering every token exactly once (no range is empty). Never panics.
pub fn split_sentences(text: &str, spans: &[Span], out: &mut Vec<Range<usize>>) {
    out.clear();
    let tok = |i: usize| spans.get(i).and_then(|s| text.get(s.start..s.end)).unwrap_or("");
    let mut start = 0usize;
    let mut i = 0usize;
    while i < spans.len() {
        let t = tok(i);
        let mut end_after: Option<usize> = None;
        if is_terminal(t) || abbreviation_ends_sentence(t, tok(i + 1)) {
            // Include closing quotes and brackets.
            // Include further terminals ("?!") and closing quotes and brackets that hug them.
            let mut j = i + 1;
            while j < spans.len()
                && (is_terminal(tok(j)) || is_closer(tok(j)))
                && !has_space_before(text, spans, j, i)
            {
                j += 1;
            }
            // The next sentence must open with a letter that is not lower case, a digit, or
            // an opening quote or bracket (not `,` after `Go!"`, not a lower-case word).
            let next = tok(j);
            let opens = next.chars().next().is_some_and(|c| {
                (c.is_alphanumeric() && !c.is_lowercase())
                    || matches!(c, '"' | '“' | '‘' | '\'' | '(' | '[' | '«' | '¿' | '¡')
            });
            if j >= spans.len() || opens {
                end_after = Some(j);
            }
        }
        if end_after.is_none() && i + 1 < spans.len() && blank_line_between(text, spans, i) {
            end_after = Some(i + 1);
        }
        if end_after.is_none() && i + 1 - start >= MAX_SENTENCE_TOKENS {
            end_after = Some(i + 1);
        }
        match end_after {
            Some(j) => {
                let j = j.min(spans.len()).max(i + 1);
                out.push(start..j);
                start = j;
                i = j;
            }
            None => i += 1,
        }
    }
    if start < spans.len() {
        out.push(start..spans.len());
    }
}

/// After an abbreviation that kept its period, a new sentence starts only with a typical opener.
fn abbreviation_ends_sentence(tok: &str, next: &str) -> bool {
    tok.len() > 1
        && tok.ends_with('.')
        && keeps_period(&tok[..tok.len() - 1])
        && !is_title_abbreviation(tok)
        && OPENERS.contains(&next)
}

/// Whether a closing mark at token `j` is separated from the terminal at `i` by white space
/// followed by more text, i.e. it opens the next sentence rather than closing this one. A closing
/// quote hugging the terminal (`."`) belongs to this sentence.
fn has_space_before(text: &str, spans: &[Span], j: usize, i: usize) -> bool {
    let (Some(a), Some(b)) = (spans.get(j.saturating_sub(1).max(i)), spans.get(j)) else { return false };
    a.end < b.start && text.get(a.end..b.start).is_some_and(|gap| !gap.is_empty())
}

fn blank_line_between(text: &str, spans: &[Span], i: usize) -> bool {
    let (Some(a), Some(b)) = (spans.get(i), spans.get(i + 1)) else { return false };
    text.get(a.end..b.start).is_some_and(|gap| gap.matches('\n').count() >= 2)
}

#[cfg(test)]
mod tests {
    use super::super::tokenize::tokenize;
    use super::*;

    fn sentences(text: &str) -> Vec<String> {
        let spans = tokenize(text);
        let mut out = Vec::new();
        split_sentences(text, &spans, &mut out);
        out.iter()
            .map(|r| {
                let (a, b) = (spans[r.start].start, spans[r.end - 1].end);
                text[a..b].to_string()
            })
            .collect()
    }

    #[test]
    fn abbreviations_initials_and_decimals() {
        assert_eq!(
            sentences("Dr. J. R. Smith moved to the U.S. in 1990. He earned 2.5 million dollars. The U.S. Army hired him."),
            vec![
                "Dr. J. R. Smith moved to the U.S. in 1990.",
                "He earned 2.5 million dollars.",
                "The U.S. Army hired him."
            ]
        );
        assert_eq!(
            sentences("He moved to the U.S. He said \"no.\" Then (he left.) Really?! yes"),
            vec!["He moved to the U.S.", "He said \"no.\"", "Then (he left.)", "Really?! yes"]
        );
        assert_eq!(sentences("See e.g. the list. Next"), vec!["See e.g. the list.", "Next"]);
        assert_eq!(
            sentences("He starred in \"Teen Titans Go!\", and won No. 1 in c. 1700. 1701 came."),
            vec!["He starred in \"Teen Titans Go!\", and won No. 1 in c. 1700.", "1701 came."]
        );
    }

    #[test]
    fn no_punctuation_blank_lines_and_caps() {
        assert_eq!(sentences("no punctuation at all here"), vec!["no punctuation at all here"]);
        assert_eq!(sentences("Title line\n\nBody text. More"), vec!["Title line", "Body text.", "More"]);
        assert!(sentences("").is_empty());
        let long = "word ".repeat(600);
        let s = sentences(&long);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].split(' ').count(), MAX_SENTENCE_TOKENS);
        assert_eq!(sentences("..."), vec!["..."]);
        assert_eq!(sentences(". . ."), vec![". . ."]);
    }
}
