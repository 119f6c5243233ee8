//! Pronoun resolution: third-person pronouns to their antecedent.
//!
//! A salience heuristic in the spirit of Lappin & Leass (1994) and Hobbs' naive algorithm,
//! reduced to what encyclopaedic passages need (and what HippoRAG-style OpenIE loses without it:
//! "Paris is the capital of France. It has 2.1 million people." → `It` = Paris):
//! 1. Each pronoun has a class: masculine (`he him his himself`), feminine (`she her hers
//!    herself`), neuter (`it its itself`) or plural (`they them their theirs themselves`).
//! 2. The passage **title** is the default antecedent. Its class is read from the passage: a
//!    name-like title (capitalised words, no digits, not a gazetteer place, no institution word
//!    such as `Hotel` or `University`) in a passage with `he`/`she` pronouns is a person of the
//!    gender most of them have; otherwise a title ending in `s` whose passage says `they`
//!    before `it` is plural; otherwise the title is neuter (a name-like title in a passage
//!    without any third-person pronoun stays unclassified).
//! 3. A pronoun resolves to the title when their classes agree and no compatible noun phrase
//!    precedes it in its own sentence (so sentence subjects and possessives at the start of a
//!    sentence go to the topic of the article); for `he`/`she` and a person title, only
//!    another name in the sentence overrides the title, not a common noun (`a member`).
//! 4. Otherwise it resolves to the first compatible noun-phrase chunk before it in its own
//!    sentence (the subject-most one), or else to the nearest compatible one in the previous
//!    sentence that is not the object of a preposition (the nearest at all if all are).
//!    Compatible: for `he`/`she` a name-like proper noun or a person noun of that gender
//!    (`actor`, `wife`); for `it` a singular non-person phrase; for `they` a plural one.
//! 5. Otherwise to the title if their classes agree; otherwise it stays unresolved.
//!
//! First- and second-person pronouns, `one`, relative and demonstrative pronouns are not
//! resolved, and coordinated phrases are not merged (`they` after `rooms and suites` gets
//! `suites`).

use super::chunk::{Chunk, ChunkKind};
use super::tagger::Upos;

/// What a pronoun refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Antecedent {
    /// The passage title (the default antecedent in encyclopaedic text).
    Title,
    /// A noun-phrase chunk: an index into [`super::Document::chunks`].
    Chunk(usize),
}

/// A resolved pronoun: word `pronoun` (an index into [`super::Document::words`]) refers to
/// `antecedent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Coreference {
    /// Index of the pronoun in the document's words.
    pub pronoun: usize,
    /// What it refers to.
    pub antecedent: Antecedent,
}

/// Grammatical class of a third-person pronoun (and of the mentions it may refer to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PronounClass {
    /// he, him, his, himself.
    Masculine,
    /// she, her, hers, herself.
    Feminine,
    /// it, its, itself.
    Neuter,
    /// they, them, their, theirs, themselves.
    Plural,
}

/// The class of a third-person personal pronoun (any case), or `None`.
pub fn pronoun_class(word: &str) -> Option<PronounClass> {
    let w = word.to_ascii_lowercase();
    Some(match w.as_str() {
        "he" | "him" | "his" | "himself" => PronounClass::Masculine,
        "she" | "her" | "hers" | "herself" => PronounClass::Feminine,
        "it" | "its" | "itself" => PronounClass::Neuter,
        "they" | "them" | "their" | "theirs" | "themselves" => PronounClass::Plural,
        _ => return None,
    })
}

/// Words that make a proper name an institution, place or work rather than a person.
const NON_PERSON_WORDS: &[&str] = &[
    "hotel",
    "casino",
    "resort",
    "club",
    "university",
    "college",
    "school",
    "academy",
    "institute",
    "company",
    "corporation",
    "inc",
    "inc.",
    "ltd",
    "ltd.",
    "group",
    "records",
    "band",
    "party",
    "river",
    "lake",
    "mountain",
    "mount",
    "island",
    "islands",
    "county",
    "city",
    "state",
    "province",
    "district",
    "street",
    "avenue",
    "boulevard",
    "road",
    "park",
    "church",
    "cathedral",
    "museum",
    "airport",
    "station",
    "stadium",
    "arena",
    "hall",
    "bridge",
    "award",
    "awards",
    "festival",
    "series",
    "film",
    "album",
    "song",
    "novel",
    "show",
    "league",
    "cup",
    "team",
    "fc",
    "association",
    "society",
    "council",
    "ministry",
    "department",
    "agency",
    "army",
    "navy",
    "force",
    "bank",
    "hospital",
    "library",
    "theatre",
    "theater",
    "tower",
    "building",
    "castle",
    "palace",
    "house",
    "valley",
    "bay",
    "sea",
    "ocean",
    "desert",
    "forest",
    "war",
    "battle",
    "act",
    "treaty",
    "game",
    "games",
    "magazine",
    "newspaper",
    "journal",
    "network",
    "channel",
    "system",
    "project",
    "foundation",
    "center",
    "centre",
    "region",
    "village",
    "town",
    "kingdom",
    "empire",
    "republic",
    "strip",
    "square",
    "plaza",
    "intersection",
    "highway",
    "route",
    "railway",
    "line",
];

const MASCULINE_NOUNS: &[&str] = &[
    "man",
    "boy",
    "father",
    "son",
    "brother",
    "husband",
    "king",
    "prince",
    "actor",
    "uncle",
    "nephew",
    "grandfather",
    "emperor",
    "duke",
    "lord",
    "sir",
    "mr.",
    "mr",
    "gentleman",
    "monk",
    "priest",
    "bishop",
    "pope",
    "sultan",
    "businessman",
    "chairman",
    "sportsman",
    "tsar",
];

const FEMININE_NOUNS: &[&str] = &[
    "woman",
    "girl",
    "mother",
    "daughter",
    "sister",
    "wife",
    "queen",
    "princess",
    "actress",
    "aunt",
    "niece",
    "grandmother",
    "empress",
    "duchess",
    "lady",
    "mrs.",
    "mrs",
    "ms.",
    "ms",
    "miss",
    "nun",
    "businesswoman",
    "chairwoman",
    "sportswoman",
];

const PERSON_NOUNS: &[&str] = &[
    "person",
    "singer",
    "writer",
    "author",
    "director",
    "producer",
    "player",
    "politician",
    "musician",
    "artist",
    "poet",
    "painter",
    "composer",
    "scientist",
    "engineer",
    "lawyer",
    "journalist",
    "footballer",
    "coach",
    "manager",
    "president",
    "minister",
    "leader",
    "founder",
    "member",
    "officer",
    "general",
    "soldier",
    "teacher",
    "professor",
    "student",
    "child",
    "rapper",
    "comedian",
    "screenwriter",
    "novelist",
    "philosopher",
    "physician",
    "businessperson",
    "entrepreneur",
    "architect",
    "designer",
    "dancer",
    "model",
    "athlete",
    "cricketer",
    "boxer",
    "wrestler",
    "guitarist",
    "drummer",
    "vocalist",
    "pianist",
    "songwriter",
    "historian",
    "economist",
];

/// A word of the document as the resolver sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CorefWord<'a> {
    pub text: &'a str,
    pub lemma: &'a str,
    pub upos: Upos,
    pub sentence: usize,
}

/// What a mention may be referred to by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MentionClass {
    masculine: bool,
    feminine: bool,
    neuter: bool,
    plural: bool,
}

impl MentionClass {
    fn accepts(self, p: PronounClass) -> bool {
        match p {
            PronounClass::Masculine => self.masculine,
            PronounClass::Feminine => self.feminine,
            PronounClass::Neuter => self.neuter,
            PronounClass::Plural => self.plural,
        }
    }
}

/// Whether a proper name (its words) could be a person's.
fn name_like(words: &[&str], is_place: &dyn Fn(&str) -> bool, joined: &str) -> bool {
    !words.is_empty()
        && words.len() <= 5
        && words.iter().all(|w| w.chars().next().is_some_and(|c| c.is_uppercase()) || matches!(*w, "." | "-" | "de" | "van" | "von" | "of" | "bin" | "al"))
        && !words.iter().any(|w| w.chars().any(|c| c.is_ascii_digit()))
        && !words.first().is_some_and(|w| w.eq_ignore_ascii_case("the"))
        && !words.iter().any(|w| NON_PERSON_WORDS.contains(&w.to_ascii_lowercase().as_str()))
        && !words.iter().any(|w| matches!(*w, "&" | "and" | "of"))
        && !is_place(joined)
        // "Best Actor", "Lead Singer": a role, not a person's name.
        && !words.last().is_some_and(|w| {
            let l = w.to_ascii_lowercase();
            PERSON_NOUNS.contains(&l.as_str()) || MASCULINE_NOUNS.contains(&l.as_str()) || FEMININE_NOUNS.contains(&l.as_str())
        })
}

fn chunk_class(
    chunk: &Chunk,
    words: &[CorefWord],
    text: &str,
    is_place: &dyn Fn(&str) -> bool,
) -> Option<MentionClass> {
    let head = words.get(chunk.head)?;
    let none = MentionClass { masculine: false, feminine: false, neuter: false, plural: false };
    match chunk.kind {
        ChunkKind::Pronoun | ChunkKind::Number => None,
        ChunkKind::Proper => {
            let ws: Vec<&str> = words
                .get(chunk.words.clone())?
                .iter()
                .filter(|w| w.upos == Upos::Propn || w.upos == Upos::Punct)
                .map(|w| w.text)
                .collect();
            let first = words.get(chunk.words.start)?;
            let title_word = first.lemma.to_ascii_lowercase();
            let joined = text.get(chunk.start..chunk.end).unwrap_or("");
            if MASCULINE_NOUNS.contains(&title_word.as_str()) {
                return Some(MentionClass { masculine: true, ..none });
            }
            if FEMININE_NOUNS.contains(&title_word.as_str()) {
                return Some(MentionClass { feminine: true, ..none });
            }
            let plural = head.text.ends_with('s')
                && !head.text.ends_with("ss")
                && matches!(first.upos, Upos::Det | Upos::Num);
            let person = name_like(&ws, is_place, joined) && !matches!(first.upos, Upos::Det | Upos::Num);
            // A one-word name ("Excalibur", "Smith") may be a person or a thing; a longer
            // name-like one ("Hugh Hefner") is taken for a person.
            let thing = !person || ws.len() == 1;
            Some(MentionClass { masculine: person, feminine: person, neuter: thing && !plural, plural })
        }
        ChunkKind::Common => {
            let lemma = head.lemma.to_ascii_lowercase();
            let plural = !head.lemma.eq_ignore_ascii_case(head.text);
            if MASCULINE_NOUNS.contains(&lemma.as_str()) {
                return Some(MentionClass { masculine: !plural, plural, ..none });
            }
            if FEMININE_NOUNS.contains(&lemma.as_str()) {
                return Some(MentionClass { feminine: !plural, plural, ..none });
            }
            if PERSON_NOUNS.contains(&lemma.as_str()) {
                return Some(MentionClass { masculine: !plural, feminine: !plural, plural, ..none });
            }
            Some(MentionClass { neuter: !plural, plural, ..none })
        }
    }
}

/// Whether a mention names the title (case-insensitive, a leading "the" ignored).
fn same_name(mention: &str, title: &str) -> bool {
    let strip = |s: &str| -> String {
        let s = s.trim();
        let s = match (s.get(..4), s.get(4..)) {
            (Some(the), Some(rest)) if the.eq_ignore_ascii_case("the ") && !rest.is_empty() => rest,
            _ => s,
        };
        s.to_lowercase()
    };
    !title.trim().is_empty() && strip(mention) == strip(title)
}

/// Resolve the third-person pronouns of a document (see the module docs). `words` are the
/// document's words, `chunks` its noun-phrase chunks in text order, `title` the passage title,
/// `is_place` a gazetteer lookup. Results are appended to `out` in word order.
pub(crate) fn resolve(
    text: &str,
    title: &str,
    words: &[CorefWord],
    chunks: &[Chunk],
    is_place: &dyn Fn(&str) -> bool,
    out: &mut Vec<Coreference>,
) {
    let title_words: Vec<&str> = title.split_whitespace().collect();
    let title_person = name_like(&title_words, is_place, title);
    let title_plural = title_words.last().is_some_and(|w| w.ends_with('s') && !w.ends_with("ss"));
    let pronouns = words
        .iter()
        .filter(|w| w.upos == Upos::Pron || w.upos == Upos::Det)
        .filter_map(|w| pronoun_class(w.text));
    let (mut masculine, mut feminine) = (0usize, 0usize);
    let mut first_thing = None;
    for c in pronouns {
        match c {
            PronounClass::Masculine => masculine += 1,
            PronounClass::Feminine => feminine += 1,
            PronounClass::Neuter | PronounClass::Plural => {
                first_thing.get_or_insert(c);
            }
        }
    }
    let title_class = if title.trim().is_empty() {
        None
    } else if title_person && masculine + feminine > 0 {
        // A person's article: the gender its pronouns mostly have.
        Some(if feminine > masculine { PronounClass::Feminine } else { PronounClass::Masculine })
    } else if first_thing == Some(PronounClass::Plural) && title_plural {
        Some(PronounClass::Plural)
    } else if title_person && first_thing.is_none() {
        None
    } else {
        Some(PronounClass::Neuter)
    };

    let classes: Vec<Option<MentionClass>> =
        chunks.iter().map(|c| chunk_class(c, words, text, is_place)).collect();
    // Chunks ending at or before each word: advance a cursor as words go by.
    let mut cursor = 0usize;
    for (i, w) in words.iter().enumerate() {
        if !matches!(w.upos, Upos::Pron | Upos::Det) {
            continue;
        }
        let Some(pc) = pronoun_class(w.text) else { continue };
        while chunks.get(cursor).is_some_and(|c| c.words.end <= i) {
            cursor += 1;
        }
        let compatible = |k: usize| classes.get(k).copied().flatten().is_some_and(|c| c.accepts(pc));
        let in_sentence = |k: usize, s: usize| {
            chunks.get(k).and_then(|c| words.get(c.head)).is_some_and(|h| h.sentence == s)
        };
        // The first (subject-most) compatible chunk before the pronoun in this sentence, and
        // the nearest compatible chunk in the previous sentence.
        let mut first_here = None;
        let mut nearest_before = None;
        for k in (0..cursor).rev() {
            if in_sentence(k, w.sentence) {
                if compatible(k) {
                    first_here = Some(k);
                }
            } else if w.sentence > 0 && in_sentence(k, w.sentence - 1) {
                if compatible(k) {
                    // A mention inside a prepositional phrase ("on 20 floors") is less salient
                    // than a subject or object: take the nearest one that is not, if any.
                    let in_pp = chunks
                        .get(k)
                        .and_then(|c| c.words.start.checked_sub(1))
                        .and_then(|p| words.get(p))
                        .is_some_and(|p| p.upos == Upos::Adp);
                    let best_in_pp = nearest_before.is_some_and(|(_, pp)| pp);
                    if nearest_before.is_none() || (best_in_pp && !in_pp) {
                        nearest_before = Some((k, in_pp));
                    }
                    if !in_pp {
                        break;
                    }
                }
            } else {
                break;
            }
        }
        let title_ok = title_class == Some(pc);
        // A chunk that is the title itself ("The Beatles" in the Beatles' article) counts as it.
        let is_title = |k: usize| {
            chunks.get(k).and_then(|c| text.get(c.start..c.end)).is_some_and(|t| same_name(t, title))
        };
        // When the title is a person of the pronoun's gender, only another name overrides it
        // ("his" in "as a member of the Göttingen Seven, he lost his position" is the title).
        let gendered = matches!(pc, PronounClass::Masculine | PronounClass::Feminine);
        let first_here = first_here.filter(|&k| {
            !(title_ok
                && (is_title(k) || gendered && chunks.get(k).is_some_and(|c| c.kind != ChunkKind::Proper)))
        });
        let nearest_before = nearest_before.map(|(k, _)| k);
        let antecedent = match (title_ok, first_here, nearest_before) {
            (true, None, _) => Some(Antecedent::Title),
            (_, Some(k), _) => Some(Antecedent::Chunk(k)),
            (false, None, Some(k)) => Some(Antecedent::Chunk(k)),
            (false, None, None) => None,
        };
        if let Some(antecedent) = antecedent {
            out.push(Coreference { pronoun: i, antecedent });
        }
    }
}
