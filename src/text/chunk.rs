//! Noun-phrase chunks (base NPs) from part-of-speech tags.
//!
//! A regular-expression chunker over UPOS tags in the style of Ramshaw & Marcus (1995) base NPs
//! and NLTK's `RegexpParser` grammars, shaped after what spaCy's `noun_chunks` returns for
//! English (a head noun with its left dependents, possessors included):
//!
//! ```text
//! NP  := (DET | possessive PRON)? MOD* HEAD+ (POSS MOD* HEAD+)*
//! MOD := ADJ | NUM | ADV (before ADJ or a participle) | VERB-participle/gerund (before a
//!        common noun or adjective, not first in the chunk)
//!        | a hyphen joining two words without spaces (`well-known`, `state-of-the-art`)
//! HEAD:= NOUN | PROPN | NUM, and `&` between proper nouns (`AT&T`, `Resort & Country Club`)
//! POSS:= `'s` | `'`  (possessive PART)
//! NP  := PRON   (a personal, demonstrative, relative or indefinite pronoun on its own)
//! ```
//!
//! The chunk ends at its last head word (nominal or number), which is its head. Chunks never
//! cross sentences and never overlap.

use std::ops::Range;

use super::tagger::{Upos, VerbForm};

/// What a chunk is headed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ChunkKind {
    /// A proper noun (`the Las Vegas Strip`).
    Proper,
    /// A common noun (`the largest hotel`).
    Common,
    /// A number on its own or a numeral-headed phrase (`1990`, `110`).
    Number,
    /// A pronoun on its own (`It`, `which`).
    Pronoun,
}

/// A noun-phrase chunk: the words `words` (indices into [`super::Document::words`]), whose head
/// is word `head`, covering the bytes `start..end` of the text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Chunk {
    /// Word indices, `start..end` (end exclusive).
    pub words: Range<usize>,
    /// Index of the head word (the last nominal or number of the chunk).
    pub head: usize,
    /// Byte offset of the chunk's first byte in the text.
    pub start: usize,
    /// Byte offset one past the chunk's last byte.
    pub end: usize,
    /// What the chunk is headed by.
    pub kind: ChunkKind,
}

/// What the chunker needs to know about a word.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkWord<'a> {
    pub text: &'a str,
    pub upos: Upos,
    pub verb_form: Option<VerbForm>,
    pub start: usize,
    pub end: usize,
}

const POSSESSIVE_DETERMINERS: &[&str] = &["my", "your", "his", "her", "its", "our", "their", "whose"];

pub(crate) fn is_possessive_determiner(lower: &str) -> bool {
    POSSESSIVE_DETERMINERS.contains(&lower)
}

fn lower_eq(word: &str, options: &[&str]) -> bool {
    options.iter().any(|o| word.eq_ignore_ascii_case(o))
}

fn is_head(w: &ChunkWord) -> bool {
    matches!(w.upos, Upos::Noun | Upos::Propn | Upos::Num)
}

fn is_possessive_mark(w: &ChunkWord) -> bool {
    w.upos == Upos::Part && lower_eq(w.text, &["'s", "’s", "'", "’"])
}

fn adjacent(a: &ChunkWord, b: &ChunkWord) -> bool {
    a.end == b.start
}

/// Whether word `i` may stand inside a chunk that already has words before it.
fn may_continue(words: &[ChunkWord], i: usize, end: usize) -> bool {
    let Some(w) = words.get(i) else { return false };
    let next = words.get(i + 1).filter(|_| i + 1 < end);
    let prev = i.checked_sub(1).and_then(|p| words.get(p));
    match w.upos {
        Upos::Noun | Upos::Propn | Upos::Num | Upos::Adj => true,
        Upos::Adv => next.is_some_and(|n| n.upos == Upos::Adj || is_participle(n)),
        Upos::Verb => is_participle(w) && next.is_some_and(|n| matches!(n.upos, Upos::Noun | Upos::Adj)),
        Upos::Part => is_possessive_mark(w) && next.is_some_and(|n| may_start_after_possessive(n)),
        Upos::Punct => {
            // A hyphen inside a word: no space on either side, words on both sides.
            matches!(w.text, "-" | "–" | "‐")
                && prev.is_some_and(|p| adjacent(p, w))
                && next.is_some_and(|n| adjacent(w, n) && n.upos != Upos::Punct)
        }
        Upos::Cconj => {
            w.text == "&"
                && prev.is_some_and(|p| p.upos == Upos::Propn)
                && next.is_some_and(|n| n.upos == Upos::Propn)
        }
        Upos::Det | Upos::Adp | Upos::X => {
            // Hyphenated compounds: `state-of-the-art`, `up-to-date`.
            prev.is_some_and(|p| matches!(p.text, "-" | "–" | "‐") && adjacent(p, w))
                && next.is_some_and(|n| matches!(n.text, "-" | "–" | "‐") && adjacent(w, n))
        }
        _ => false,
    }
}

fn is_participle(w: &ChunkWord) -> bool {
    w.upos == Upos::Verb && matches!(w.verb_form, Some(VerbForm::Part | VerbForm::Ger))
}

fn may_start_after_possessive(w: &ChunkWord) -> bool {
    matches!(w.upos, Upos::Noun | Upos::Propn | Upos::Adj | Upos::Num | Upos::Adv) || is_participle(w)
}

/// Whether word `i` may open a chunk.
fn may_start(words: &[ChunkWord], i: usize, end: usize) -> bool {
    let Some(w) = words.get(i) else { return false };
    match w.upos {
        Upos::Det => true,
        Upos::Pron => {
            is_possessive_determiner(&w.text.to_ascii_lowercase())
                && words.get(i + 1).filter(|_| i + 1 < end).is_some_and(|n| may_start_after_possessive(n))
        }
        Upos::Noun | Upos::Propn | Upos::Num | Upos::Adj => true,
        // Not a participle: "(has) written books", "(was) revealed Andrew" are no noun phrases.
        Upos::Adv => words.get(i + 1).filter(|_| i + 1 < end).is_some_and(|n| n.upos == Upos::Adj),
        _ => false,
    }
}

/// Append the chunks of the sentence whose words are `words[range]` to `out`.
pub(crate) fn chunk_sentence(words: &[ChunkWord], range: Range<usize>, out: &mut Vec<Chunk>) {
    let end = range.end.min(words.len());
    let mut i = range.start;
    while i < end {
        let Some(w) = words.get(i) else { break };
        if w.upos == Upos::Pron && !(may_start(words, i, end)) {
            out.push(Chunk {
                words: i..i + 1,
                head: i,
                start: w.start,
                end: w.end,
                kind: ChunkKind::Pronoun,
            });
            i += 1;
            continue;
        }
        if may_start(words, i, end) {
            let mut j = i + 1;
            let mut head = if is_head(w) { Some(i) } else { None };
            while j < end && may_continue(words, j, end) {
                if words.get(j).is_some_and(is_head) {
                    head = Some(j);
                }
                j += 1;
            }
            if let Some(h) = head {
                let kind = match words.get(h).map(|w| w.upos) {
                    Some(Upos::Propn) => ChunkKind::Proper,
                    Some(Upos::Num) => ChunkKind::Number,
                    _ => ChunkKind::Common,
                };
                let (s, e) = (w.start, words.get(h).map_or(w.end, |hw| hw.end));
                out.push(Chunk { words: i..h + 1, head: h, start: s, end: e, kind });
                i = h + 1;
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words<'a>(spec: &[(&'a str, Upos)]) -> Vec<ChunkWord<'a>> {
        let mut at = 0;
        spec.iter()
            .map(|&(text, upos)| {
                let w = ChunkWord { text, upos, verb_form: None, start: at, end: at + text.len() };
                at += text.len() + 1;
                w
            })
            .collect()
    }

    /// The chunks as their words joined by spaces.
    fn chunks(ws: &[ChunkWord]) -> Vec<(String, ChunkKind)> {
        let mut out = Vec::new();
        chunk_sentence(ws, 0..ws.len(), &mut out);
        out.iter()
            .map(|c| (ws[c.words.clone()].iter().map(|w| w.text).collect::<Vec<_>>().join(" "), c.kind))
            .collect()
    }

    #[test]
    fn base_noun_phrases() {
        use Upos::*;
        // "It was the largest hotel in Las Vegas with 110 rooms ." tagged as spaCy tags it.
        let ws = words(&[
            ("It", Pron),
            ("was", Aux),
            ("the", Det),
            ("largest", Adj),
            ("hotel", Noun),
            ("in", Adp),
            ("Las", Propn),
            ("Vegas", Propn),
            ("with", Adp),
            ("110", Num),
            ("rooms", Noun),
            (".", Punct),
        ]);
        assert_eq!(
            chunks(&ws),
            vec![
                ("It".to_string(), ChunkKind::Pronoun),
                ("the largest hotel".to_string(), ChunkKind::Common),
                ("Las Vegas".to_string(), ChunkKind::Proper),
                ("110 rooms".to_string(), ChunkKind::Common),
            ]
        );
    }

    #[test]
    fn possessives_and_hyphens() {
        use Upos::*;
        let mut ws = words(&[
            ("its", Pron),
            ("four", Num),
            ("corners", Noun),
            ("and", Cconj),
            ("the", Det),
            ("economy", Noun),
            ("'s", Part),
            ("state", Noun),
            ("-", Punct),
            ("of", Adp),
            ("-", Punct),
            ("the", Det),
            ("-", Punct),
            ("art", Noun),
            ("design", Noun),
        ]);
        // Make "'s" and the hyphens touch their neighbours.
        for i in [6, 8, 9, 10, 11, 12, 13] {
            let shift = ws[i].start - ws[i - 1].end;
            for w in ws.iter_mut().skip(i) {
                w.start -= shift;
                w.end -= shift;
            }
        }
        assert_eq!(
            chunks(&ws),
            vec![
                ("its four corners".to_string(), ChunkKind::Common),
                ("the economy 's state - of - the - art design".to_string(), ChunkKind::Common),
            ]
        );
    }

    #[test]
    fn participles_only_inside_a_chunk() {
        use Upos::*;
        let mut ws = words(&[
            ("has", Aux),
            ("written", Verb),
            ("books", Noun),
            ("on", Adp),
            ("the", Det),
            ("destroyed", Verb),
            ("hotel", Noun),
        ]);
        ws[1].verb_form = Some(VerbForm::Part);
        ws[5].verb_form = Some(VerbForm::Part);
        assert_eq!(
            chunks(&ws),
            vec![
                ("books".to_string(), ChunkKind::Common),
                ("the destroyed hotel".to_string(), ChunkKind::Common)
            ]
        );
    }

    #[test]
    fn no_head_no_chunk() {
        use Upos::*;
        assert!(chunks(&words(&[("the", Det), ("very", Adv), ("big", Adj)])).is_empty());
        assert!(chunks(&[]).is_empty());
    }
}
