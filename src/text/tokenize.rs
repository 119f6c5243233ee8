//! Tokenisation into Penn-Treebank-like tokens with byte offsets.
//!
//! The rules follow spaCy's English tokenizer (prefix, suffix and infix rules plus
//! special cases; `spacy/lang/en`, `spacy/lang/punctuation.py`), which is itself close to the
//! Penn Treebank / Universal Dependencies English conventions the POS tagger was trained on:
//! - text is split on white space (and on zero-width format characters);
//! - opening punctuation (`( [ { " “ ‘ $ £ € # …`) is split off the front of a chunk, closing
//!   punctuation (`) ] } " ” , ; : ! ? % …`) and a final period off the back, except the period
//!   of an abbreviation (`U.S.`, `Dr.`, `e.g.`, `Inc.`, initials such as `J.`);
//! - clitics are split off as their own tokens: `don't` → `do` `n't`, `can't` → `ca` `n't`,
//!   `Obama's` → `Obama` `'s`, `I'm` → `I` `'m`, `parents'` → `parents` `'`, `cannot` →
//!   `can` `not`;
//! - infixes: a hyphen or dash between a letter or digit and a letter is its own token
//!   (`well-known` → `well` `-` `known`, as spaCy and UD English-EWT do; `COVID-19` and `A-10`
//!   stay whole), so are `/` between words (`actor/singer`), an ASCII hyphen between digits
//!   (`1990-91`), a comma between letters and a missing space after a sentence's period
//!   (`end.The`);
//! - a unit after a number is split off (`10km` → `10` `km`, `3pm` → `3` `pm`);
//! - URLs and e-mail addresses stay whole;
//! - text in scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) is segmented
//!   by Unicode's word-boundary rules (UAX #29), so it never comes out as one huge token.
//!
//! Every byte of the input that is not white space belongs to exactly one token; tokens are in
//! reading order and never overlap. Never panics, whatever the input.

use unicode_segmentation::UnicodeSegmentation;

/// One token: the byte range `start..end` of the analysed text (UTF-8 byte offsets; `end` is one
/// past the last byte, so `&text[start..end]` is the token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// Byte offset of the token's first byte.
    pub start: usize,
    /// Byte offset one past the token's last byte.
    pub end: usize,
}

/// Tokenise `text` (see the module docs for the rules). Allocates the result; use
/// [`tokenize_into`] to reuse a buffer.
pub fn tokenize(text: &str) -> Vec<Span> {
    let mut out = Vec::new();
    tokenize_into(text, &mut out);
    out
}

/// Tokenise `text` into `out` (cleared first), reusing its allocation.
pub fn tokenize_into(text: &str, out: &mut Vec<Span>) {
    out.clear();
    let mut suffixes = Vec::new();
    let mut chunk_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_separator(c) {
            if let Some(s) = chunk_start.take() {
                let next_digit = text
                    .get(i..)
                    .and_then(|r| r.trim_start().chars().next())
                    .is_some_and(|c| c.is_ascii_digit());
                split_chunk(text, s, i, next_digit, out, &mut suffixes);
            }
        } else if chunk_start.is_none() {
            chunk_start = Some(i);
        }
    }
    if let Some(s) = chunk_start {
        split_chunk(text, s, text.len(), false, out, &mut suffixes);
    }
}

/// White space, and the zero-width format characters that Wikipedia text carries (LRM, RLM,
/// ZWSP, ZWNJ, ZWJ, BOM), which belong to no token.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{feff}' | '\u{2060}')
}

/// Scripts written without spaces between words.
fn is_unspaced_script(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}' // Hiragana, Katakana
        | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' // Han
        | '\u{0e00}'..='\u{0eff}' // Thai, Lao
        | '\u{1000}'..='\u{109f}' // Myanmar
        | '\u{1780}'..='\u{17ff}' // Khmer
        | '\u{ff66}'..='\u{ff9f}' // half-width Katakana
    )
}

/// Characters split off the front of a chunk.
fn is_prefix_char(c: char) -> bool {
    matches!(
        c,
        '(' | '['
            | '{'
            | '"'
            | '“'
            | '‘'
            | '„'
            | '«'
            | '‹'
            | '\''
            | '`'
            | '$'
            | '£'
            | '€'
            | '¥'
            | '₹'
            | '#'
            | '§'
            | '¿'
            | '¡'
            | '*'
            | '<'
            | '~'
            | '&'
            | '>'
            | '|'
            | '¬'
    )
}

/// Characters split off the back of a chunk (the period has its own rule).
fn is_suffix_char(c: char) -> bool {
    matches!(
        c,
        ')' | ']'
            | '}'
            | '"'
            | '”'
            | '’'
            | '\''
            | '»'
            | '›'
            | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | '%'
            | '…'
            | '*'
            | '>'
            | '|'
            | '°'
            | '‰'
    )
}

/// Hyphens and dashes that split words (spaCy's `HYPHENS`).
fn is_hyphen(c: char) -> bool {
    matches!(c, '-' | '–' | '—' | '‒' | '―' | '‐' | '‑')
}

/// Abbreviations whose final period stays in the token (compared lower-cased, period removed).
/// From spaCy's English tokenizer exceptions (`spacy/lang/en/tokenizer_exceptions.py`) and the
/// usual titles, months, US states and company suffixes of encyclopaedic text.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "gen", "col", "lt", "sgt", "capt", "cmdr",
    "adm", "gov", "sen", "rep", "rev", "hon", "pres", "supt", "messrs", "mme", "mlle", "inc", "ltd", "co",
    "corp", "bros", "cos", "vs", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "e.g", "i.e", "a.m", "p.m", "ph.d", "vol", "vols", "approx", "dept", "fig", "al", "ala",
    "ariz", "ark", "calif", "colo", "conn", "fla", "kan", "kans", "ky", "md", "mich", "minn", "mont", "neb",
    "nev", "okla", "tenn", "vt", "wis", "wyo", "ave", "blvd", "esq", "pp", "eds", "univ", "assn", "ca", "cf",
];

/// Abbreviations that are titles or name parts: never the end of a sentence.
const TITLE_ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "st", "mt", "ft", "gen", "col", "lt", "sgt", "capt", "cmdr",
    "adm", "gov", "sen", "rep", "rev", "hon", "pres", "supt", "messrs", "mme", "mlle", "vs", "vol", "vols",
    "pp", "fig", "ca", "cf",
];

/// Units split off a preceding number (`10km` → `10` `km`), after spaCy's `UNITS`.
const UNITS: &[&str] = &[
    "km", "m", "cm", "mm", "dm", "nm", "ha", "yd", "ft", "kg", "g", "mg", "lb", "lbs", "oz", "mph", "kmh",
    "hpa", "mb", "kb", "gb", "tb", "am", "pm", "km²", "m²", "km2", "mi",
];

/// Whether a chunk ending in `stem` + `.` keeps its period (an abbreviation or an initial).
pub(crate) fn keeps_period(stem: &str) -> bool {
    if stem.is_empty() || stem.len() > 12 {
        return false;
    }
    let mut chars = stem.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        // An initial ("J."): one upper-case letter.
        return c.is_uppercase();
    }
    if is_dotted_abbreviation(stem) {
        return true;
    }
    let lower = ascii_lower_small(stem);
    ABBREVIATIONS.contains(&lower.as_str())
}

/// Abbreviations that keep their period before a number only: `No. 1`, `c. 1700` (circa),
/// `b. 1980` (born), `d. 1950` (died), `fl. 1200`, `r. 1500`, `p. 12`, `nos. 3`.
fn is_numbering_abbreviation(stem: &str) -> bool {
    matches!(stem, "No" | "no" | "Nos" | "nos" | "c" | "b" | "d" | "fl" | "r" | "p" | "Op" | "op")
}

/// Whether `token` (with its final period) is a title-like abbreviation (`Dr.`, `St.`, `Mr.`)
/// or an initial (`J.`), after which a sentence does not end.
pub(crate) fn is_title_abbreviation(token: &str) -> bool {
    let Some(stem) = token.strip_suffix('.') else { return false };
    if is_numbering_abbreviation(stem) {
        return true;
    }
    let mut chars = stem.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return c.is_uppercase();
    }
    let lower = ascii_lower_small(stem);
    TITLE_ABBREVIATIONS.contains(&lower.as_str())
}

/// `U.S`, `D.C`, `e.g`, `Ph.D`, `U.S.A`: letters in groups of one or two joined by periods.
fn is_dotted_abbreviation(stem: &str) -> bool {
    stem.contains('.')
        && stem.split('.').all(|seg| {
            let n = seg.chars().count();
            (1..=2).contains(&n) && seg.chars().all(|c| c.is_alphabetic())
        })
}

fn ascii_lower_small(s: &str) -> String {
    s.chars().map(|c| c.to_ascii_lowercase()).collect()
}

/// The length in bytes of a clitic at the end of `rest` (`n't`, `'s`, `'ll`, ... with either
/// apostrophe), if what precedes it is a non-empty word ending in a letter.
fn clitic_len(rest: &str) -> Option<usize> {
    const CLITICS: &[&str] =
        &["n't", "n’t", "'s", "’s", "'m", "’m", "'d", "’d", "'ll", "’ll", "'re", "’re", "'ve", "’ve"];
    for cl in CLITICS {
        if rest.len() > cl.len() && ends_with_ignore_ascii_case(rest, cl) {
            let stem = &rest[..rest.len() - cl.len()];
            if stem.chars().next_back().is_some_and(|c| c.is_alphabetic()) {
                return Some(cl.len());
            }
        }
    }
    None
}

fn ends_with_ignore_ascii_case(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.is_char_boundary(s.len() - suffix.len())
        && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// Tokens kept whole wherever they stand: clitics written apart and a few contractions.
fn is_special_token(rest: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "'s", "’s", "'m", "’m", "'d", "’d", "'ll", "’ll", "'re", "’re", "'ve", "’ve", "n't", "n’t", "'em",
        "'n'", "'til", "'cause", "'tis", "'twas", "o'clock",
    ];
    SPECIAL.iter().any(|s| rest.eq_ignore_ascii_case(s))
}

/// A leading apostrophe that belongs to the word (`'60s`, `'em`).
fn apostrophe_belongs(rest: &str) -> bool {
    is_special_token(rest) || {
        let after = rest.get(1..).unwrap_or("");
        let digits = after.bytes().take_while(|b| b.is_ascii_digit()).count();
        digits == 2 && matches!(&after[digits..], "" | "s")
    }
}

fn is_url_or_email(chunk: &str) -> bool {
    chunk.contains("://")
        || chunk.starts_with("www.")
        || (chunk.contains('@') && chunk.rsplit('@').next().is_some_and(|d| d.contains('.') && d.len() > 2))
}

/// A number written with digits and `.`/`,` separators (`2.5`, `12,536`).
fn is_number(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && s.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
}

fn unit_len(rest: &str) -> Option<usize> {
    for u in UNITS {
        if rest.len() > u.len() && ends_with_ignore_ascii_case(rest, u) {
            let num = &rest[..rest.len() - u.len()];
            if is_number(num) {
                return Some(u.len());
            }
        }
    }
    None
}

fn push(out: &mut Vec<Span>, start: usize, end: usize) {
    if end > start {
        out.push(Span { start, end });
    }
}

/// Split one white-space-free chunk `text[lo..hi]`; `next_digit` says the next chunk starts
/// with a digit (`No. 1`, `c. 1700`, `b. 1980` keep their periods).
fn split_chunk(
    text: &str,
    mut lo: usize,
    mut hi: usize,
    next_digit: bool,
    out: &mut Vec<Span>,
    suffixes: &mut Vec<Span>,
) {
    let Some(chunk) = text.get(lo..hi) else { return };
    if chunk.chars().any(is_unspaced_script) {
        for (i, seg) in chunk.split_word_bound_indices() {
            if !seg.chars().all(is_separator) {
                push(out, lo + i, lo + i + seg.len());
            }
        }
        return;
    }
    if chunk.eq_ignore_ascii_case("cannot") {
        push(out, lo, lo + 3);
        push(out, lo + 3, hi);
        return;
    }
    // Prefixes.
    while lo < hi {
        let rest = &text[lo..hi];
        if is_special_token(rest) || is_url_or_email(rest) {
            break;
        }
        let Some(c) = rest.chars().next() else { break };
        if c == '.' && rest.starts_with("..") {
            let n = rest.bytes().take_while(|&b| b == b'.').count();
            push(out, lo, lo + n);
            lo += n;
            continue;
        }
        if is_prefix_char(c) && rest.len() > c.len_utf8() && !(c == '\'' && apostrophe_belongs(rest)) {
            push(out, lo, lo + c.len_utf8());
            lo += c.len_utf8();
            continue;
        }
        break;
    }
    // Suffixes, collected back to front.
    suffixes.clear();
    while lo < hi {
        let rest = &text[lo..hi];
        if is_special_token(rest) {
            break;
        }
        let Some(c) = rest.chars().next_back() else { break };
        if is_url_or_email(rest) {
            if matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')' | '"' | '\'' | ']' | '>') {
                suffixes.push(Span { start: hi - 1, end: hi });
                hi -= 1;
                continue;
            }
            break;
        }
        if c == '.' {
            let dots = rest.bytes().rev().take_while(|&b| b == b'.').count();
            if dots >= 2 {
                if dots == rest.len() {
                    break;
                }
                suffixes.push(Span { start: hi - dots, end: hi });
                hi -= dots;
                continue;
            }
            let stem = &rest[..rest.len() - 1];
            if stem.is_empty() || keeps_period(stem) || (next_digit && is_numbering_abbreviation(stem)) {
                break;
            }
            suffixes.push(Span { start: hi - 1, end: hi });
            hi -= 1;
            continue;
        }
        if is_suffix_char(c) && rest.len() > c.len_utf8() {
            suffixes.push(Span { start: hi - c.len_utf8(), end: hi });
            hi -= c.len_utf8();
            continue;
        }
        if let Some(n) = clitic_len(rest).or_else(|| unit_len(rest)) {
            suffixes.push(Span { start: hi - n, end: hi });
            hi -= n;
            continue;
        }
        break;
    }
    split_infixes(text, lo, hi, out);
    out.extend(suffixes.iter().rev());
}

/// Split `text[lo..hi]` at infixes (see the module docs).
fn split_infixes(text: &str, lo: usize, hi: usize, out: &mut Vec<Span>) {
    let Some(core) = text.get(lo..hi) else { return };
    if core.is_empty() {
        return;
    }
    if is_url_or_email(core) || is_special_token(core) {
        push(out, lo, hi);
        return;
    }
    let mut piece = lo;
    let mut prev: Option<char> = None;
    let mut iter = core.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let at = lo + i;
        let next = iter.peek().map(|&(_, n)| n);
        let prev_alnum = prev.is_some_and(|p| p.is_alphanumeric());
        let next_alpha = next.is_some_and(|n| n.is_alphabetic());
        let split_len = if c == '.' && next == Some('.') && at > piece {
            // An ellipsis inside a chunk ("on...Then").
            Some(core[i..].bytes().take_while(|&b| b == b'.').count())
        } else if is_hyphen(c) && next.is_some_and(is_hyphen) {
            Some(core[i..].chars().take_while(|&h| is_hyphen(h)).map(char::len_utf8).sum())
        } else if (is_hyphen(c) && prev_alnum && next_alpha)
            || (c == '-'
                && prev.is_some_and(|p| p.is_ascii_digit())
                && next.is_some_and(|n| n.is_ascii_digit()))
            || (matches!(c, '/' | '=' | '<' | '>' | '+') && prev_alnum && next_alpha)
            || (c == ',' && prev.is_some_and(char::is_alphabetic) && next_alpha)
            || (c == '.' && sentence_period_infix(&core[..i], &core[i + 1..]))
        {
            Some(c.len_utf8())
        } else {
            None
        };
        if let Some(n) = split_len {
            push(out, piece, at);
            push(out, at, at + n);
            piece = at + n;
            // Skip the rest of the split run.
            while iter.peek().is_some_and(|&(j, _)| lo + j < piece) {
                iter.next();
            }
            prev = text.get(..piece).and_then(|s| s.chars().next_back());
            continue;
        }
        prev = Some(c);
    }
    push(out, piece, hi);
}

/// A period between two words with no space after it (`end.The`): at least two lower-case
/// letters before and an upper-case letter followed by a lower-case one after.
fn sentence_period_infix(before: &str, after: &str) -> bool {
    let mut b = before.chars().rev();
    let mut a = after.chars();
    b.next().is_some_and(char::is_lowercase)
        && b.next().is_some_and(char::is_lowercase)
        && a.next().is_some_and(char::is_uppercase)
        && a.next().is_some_and(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<&str> {
        tokenize(text).iter().map(|s| &text[s.start..s.end]).collect()
    }

    #[test]
    fn contractions_and_possessives_as_spacy() {
        // spaCy 3.8 (blank English tokenizer) gives exactly these tokens.
        assert_eq!(
            toks("Don't can't won't ain't I'm you're they've she'd parents' Obama's"),
            vec![
                "Do", "n't", "ca", "n't", "wo", "n't", "ai", "n't", "I", "'m", "you", "'re", "they", "'ve",
                "she", "'d", "parents", "'", "Obama", "'s"
            ]
        );
        assert_eq!(
            toks("it’s don’t o'clock rock'n'roll"),
            vec!["it", "’s", "do", "n’t", "o'clock", "rock'n'roll"]
        );
        assert_eq!(toks("I cannot"), vec!["I", "can", "not"]);
    }

    #[test]
    fn abbreviations_keep_their_period() {
        assert_eq!(
            toks("He moved to the U.S. He said no. Mr. Smith went to Washington, D.C. in 1990."),
            vec![
                "He",
                "moved",
                "to",
                "the",
                "U.S.",
                "He",
                "said",
                "no",
                ".",
                "Mr.",
                "Smith",
                "went",
                "to",
                "Washington",
                ",",
                "D.C.",
                "in",
                "1990",
                "."
            ]
        );
        assert_eq!(
            toks("No. 1 in c. 1700 (b. 1980), said no. 2"),
            vec!["No.", "1", "in", "c.", "1700", "(", "b.", "1980", ")", ",", "said", "no.", "2"]
        );
        assert_eq!(toks("He said no. Then"), vec!["He", "said", "no", ".", "Then"]);
        assert_eq!(
            toks("e.g. J. R. R. Tolkien, Ph.D. Inc. USA. Smith."),
            vec!["e.g.", "J.", "R.", "R.", "Tolkien", ",", "Ph.D.", "Inc.", "USA", ".", "Smith", "."]
        );
    }

    #[test]
    fn hyphens_units_numbers_symbols() {
        assert_eq!(
            toks("1941–1942 and 1990-91 and COVID-19 and A-10, well-known—the end."),
            vec![
                "1941–1942",
                "and",
                "1990",
                "-",
                "91",
                "and",
                "COVID-19",
                "and",
                "A-10",
                ",",
                "well",
                "-",
                "known",
                "—",
                "the",
                "end",
                "."
            ]
        );
        assert_eq!(
            toks("Stats: 5%, $5, #1, 10km, 2.5m, 3pm, 4:30, 12,536."),
            vec![
                "Stats", ":", "5", "%", ",", "$", "5", ",", "#", "1", ",", "10", "km", ",", "2.5", "m", ",",
                "3", "pm", ",", "4:30", ",", "12,536", "."
            ]
        );
        assert_eq!(
            toks("(born 15 May 1950) is an actor/singer. http://x.com/a?b=c foo@bar.com"),
            vec![
                "(",
                "born",
                "15",
                "May",
                "1950",
                ")",
                "is",
                "an",
                "actor",
                "/",
                "singer",
                ".",
                "http://x.com/a?b=c",
                "foo@bar.com"
            ]
        );
        assert_eq!(
            toks("end.The and, so on...Then \"Quoted\" “Curly”"),
            vec![
                "end", ".", "The", "and", ",", "so", "on", "...", "Then", "\"", "Quoted", "\"", "“", "Curly",
                "”"
            ]
        );
    }

    #[test]
    fn offsets_are_bytes_and_cover_the_text() {
        let text = "Café “Zürich” — 東京タワー is 333 m.";
        let spans = tokenize(text);
        let words: Vec<&str> = spans.iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(words[..4], ["Café", "“", "Zürich", "”"]);
        assert!(words.contains(&"東") && words.contains(&"京") && words.contains(&"タワー"));
        assert_eq!(words[words.len() - 3..], ["333", "m", "."]);
        let covered: usize = spans.iter().map(|s| s.end - s.start).sum();
        let non_space: usize = text.chars().filter(|c| !c.is_whitespace()).map(char::len_utf8).sum();
        assert_eq!(covered, non_space);
        assert!(spans.windows(2).all(|w| w[0].end <= w[1].start));
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        assert!(tokenize("").is_empty());
        assert!(tokenize(" \n\t \u{200e} ").is_empty());
        assert_eq!(toks("..."), vec!["..."]);
        assert_eq!(toks("'"), vec!["'"]);
        assert_eq!(toks("--"), vec!["--"]);
        assert_eq!(toks("a-"), vec!["a-"]);
        for s in ["'s'", "n't.", "\"'", "((((", "-.-", ".’", "’", "x’’", "é.é.", "₹₹", "'60s'"]
        {
            let spans = tokenize(s);
            let covered: usize = spans.iter().map(|s| s.end - s.start).sum();
            assert_eq!(covered, s.len(), "{s}");
        }
    }
}
