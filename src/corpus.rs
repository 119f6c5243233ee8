//! Passages and the loaders that turn user files into passages.
//!
//! A passage is the unit of retrieval: `{id, title, text}` as in the evaluation data
//! (`../shared/data/README.md`). Loaders never panic on user data; every error names the input
//! and, for JSONL, the 1-based line.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::error::{Error, Result};
use crate::text::analyze::uax29_word_indices;
use crate::text::fold::nfc;

/// One retrievable passage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// Unique, stable id (the datasets use content hashes).
    pub id: String,
    /// Title of the document the passage comes from; may be empty.
    #[serde(default)]
    pub title: String,
    /// The passage text; may be empty (it is then only findable by its title).
    pub text: String,
}

/// An ordered set of passages with unique ids. Insertion order is the passage's internal index
/// (`u32`), which every index structure uses.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    passages: Vec<Passage>,
    by_id: HashMap<String, u32>,
}

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one passage. Its title and text are stored in Unicode NFC
    /// ([`crate::text::fold::nfc`]: the same look, one spelling of each accented letter, so
    /// NFD files and NFC queries agree); the id is kept byte for byte.
    ///
    /// # Errors
    /// [`Error::Passage`] when the id is empty or already present (the corpus is left unchanged),
    /// or when the corpus already holds `u32::MAX` passages.
    pub fn add(&mut self, passage: Passage) -> Result<u32> {
        if passage.id.is_empty() {
            return Err(Error::Passage { id: passage.id, message: "the id is empty".into() });
        }
        if self.by_id.contains_key(&passage.id) {
            return Err(Error::Passage {
                id: passage.id,
                message: "this id is already in the corpus".into(),
            });
        }
        let n = u32::try_from(self.passages.len())
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or_else(|| Error::Passage { id: passage.id.clone(), message: "corpus is full".into() })?;
        self.by_id.insert(passage.id.clone(), n);
        let mut passage = passage;
        if let Cow::Owned(t) = nfc(&passage.title) {
            passage.title = t;
        }
        if let Cow::Owned(t) = nfc(&passage.text) {
            passage.text = t;
        }
        self.passages.push(passage);
        Ok(n)
    }

    /// Check that `passages` could all be added: ids non-empty, unique among themselves and new
    /// to this corpus.
    ///
    /// # Errors
    /// [`Error::Passage`] naming the first offending id.
    pub fn check_new(&self, passages: &[Passage]) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        for p in passages {
            if p.id.is_empty() {
                return Err(Error::Passage { id: p.id.clone(), message: "the id is empty".into() });
            }
            if self.by_id.contains_key(&p.id) || !seen.insert(p.id.as_str()) {
                return Err(Error::Passage {
                    id: p.id.clone(),
                    message: "this id is already in the corpus".into(),
                });
            }
        }
        Ok(())
    }

    /// Add many passages; all or nothing: on the first error nothing is added.
    ///
    /// # Errors
    /// As [`Corpus::check_new`].
    pub fn extend(&mut self, passages: Vec<Passage>) -> Result<usize> {
        self.check_new(&passages)?;
        let n = passages.len();
        for p in passages {
            self.add(p)?;
        }
        Ok(n)
    }

    /// Remove every passage added after the first `len` (no-op when there are not more). Undoes
    /// a partly applied batch of adds: passages are only ever appended, so the first `len` are
    /// exactly the corpus as it was when it held `len` passages.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.passages.len() {
            return;
        }
        for p in &self.passages[len..] {
            self.by_id.remove(&p.id);
        }
        self.passages.truncate(len);
    }

    /// Number of passages.
    pub fn len(&self) -> usize {
        self.passages.len()
    }

    /// Whether there are no passages.
    pub fn is_empty(&self) -> bool {
        self.passages.is_empty()
    }

    /// The passage at internal index `i`, if any.
    pub fn get(&self, i: u32) -> Option<&Passage> {
        self.passages.get(i as usize)
    }

    /// Internal index of the passage with this id.
    pub fn index_of(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    /// All passages in insertion order.
    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }

    /// Give passage `i` the text `texts[i]` (a static site's texts, read after its ids and
    /// titles). `texts` has one entry per passage (the caller checks; extra entries are
    /// ignored, missing ones leave the text as it was).
    pub(crate) fn set_texts(&mut self, texts: Vec<String>) {
        for (p, t) in self.passages.iter_mut().zip(texts) {
            p.text = t;
        }
    }

    /// Total bytes of title and text (the "size of the text" in size-per-MB figures).
    pub fn text_bytes(&self) -> usize {
        self.passages.iter().map(|p| p.title.len() + p.text.len()).sum()
    }
}

/// One JSONL line as accepted from users: `id` and `title` are optional.
#[derive(Deserialize)]
struct JsonlPassage {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    title: Option<String>,
    text: String,
}

/// Parse JSONL passages: one JSON object per line, `{"id", "title", "text"}`.
///
/// Blank lines are skipped. `text` is required; `title` defaults to `""`; `id` may be a string or
/// a number and defaults to `"{source_name}:{line}"`. A leading UTF-8 byte-order mark is ignored.
///
/// # Errors
/// [`Error::Jsonl`] naming `source_name` and the 1-based line of the first line that is not a
/// JSON object with a string `text`.
pub fn parse_jsonl(source_name: &str, input: &str) -> Result<Vec<Passage>> {
    let input = input.strip_prefix('\u{feff}').unwrap_or(input);
    let mut out = Vec::new();
    // id → the line that gave it first.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, line) in input.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let err =
            |message: String| Error::Jsonl { source_name: source_name.to_string(), line: line_no, message };
        // Only an object is a passage: serde would read an array `["id", "title", "text"]` as
        // the struct's fields in order.
        if let Some(c) = trimmed.chars().next().filter(|&c| c != '{') {
            let kind = match c {
                '[' => "an array",
                '"' => "a string",
                't' | 'f' => "a boolean",
                'n' => "null",
                c if c == '-' || c.is_ascii_digit() => "a number",
                _ => "not JSON",
            };
            return Err(err(format!("expected a JSON object {{\"id\", \"title\", \"text\"}}, found {kind}")));
        }
        let rec: JsonlPassage = serde_json::from_str(trimmed).map_err(|e| {
            // serde_json says "… at line 1 column N": the line is the file's, so keep the column.
            let full = e.to_string();
            let what = full.rfind(" at line ").map_or(full.as_str(), |i| &full[..i]);
            err(match e.classify() {
                serde_json::error::Category::Data => {
                    format!("{what} (expected {{\"id\", \"title\", \"text\"}})")
                }
                _ => format!("not valid JSON: {what} at column {}", e.column()),
            })
        })?;
        let id = match rec.id {
            None | Some(serde_json::Value::Null) => format!("{source_name}:{line_no}"),
            Some(serde_json::Value::String(s)) => s,
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(other) => return Err(err(format!("\"id\" must be a string or a number, not {other}"))),
        };
        if id.is_empty() {
            return Err(err("\"id\" is empty".into()));
        }
        if let Some(first) = seen.get(&id) {
            return Err(err(format!("duplicate id {id:?} (first on line {first})")));
        }
        seen.insert(id.clone(), line_no);
        out.push(Passage { id, title: rec.title.unwrap_or_default(), text: rec.text });
    }
    Ok(out)
}

/// [`parse_jsonl`] over raw bytes (a file as read from disk): a line that is not UTF-8 is an
/// error naming that line and the byte column of the first bad byte, instead of failing the
/// whole file without a line.
///
/// # Errors
/// As [`parse_jsonl`], and [`Error::Jsonl`] for the first line that is not valid UTF-8.
pub fn parse_jsonl_bytes(source_name: &str, input: &[u8]) -> Result<Vec<Passage>> {
    match std::str::from_utf8(input) {
        Ok(text) => parse_jsonl(source_name, text),
        Err(e) => {
            let at = e.valid_up_to();
            let before = &input[..at];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = at - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
            // Earlier lines' errors come first (the order a reader of the file expects).
            let valid = std::str::from_utf8(&input[..at]).unwrap_or_default();
            let complete = valid.rfind('\n').map_or("", |p| &valid[..p]);
            parse_jsonl(source_name, complete)?;
            Err(Error::Jsonl {
                source_name: source_name.to_string(),
                line,
                message: format!("not valid UTF-8 (byte {column} of the line); save the file as UTF-8"),
            })
        }
    }
}

/// Longest passage, in words, that [`split_document`] makes before it splits a paragraph at
/// sentence boundaries. 200 words is close to the Wikipedia paragraphs of the evaluation data.
pub const MAX_PASSAGE_WORDS: usize = 200;

/// Split a plain-text or Markdown document into passages.
///
/// Paragraphs are separated by blank lines. A Markdown ATX heading (`# …` to `###### …`) sets
/// the title of the paragraphs after it (`"{name} › {heading}"`); otherwise the title is `name`.
/// A paragraph longer than [`MAX_PASSAGE_WORDS`] words is cut at sentence boundaries (UAX #29)
/// into pieces of at most that many words (a single longer sentence stays whole). Ids are
/// `"{name}#{n}"`, n counting from 1. Never fails; empty input gives no passages.
pub fn split_document(name: &str, text: &str) -> Vec<Passage> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut heading: Option<String> = None;
    let mut para = String::new();
    let flush = |para: &mut String, heading: &Option<String>, out: &mut Vec<Passage>| {
        let body = para.trim();
        if !body.is_empty() {
            let title = match heading {
                Some(h) => format!("{name} › {h}"),
                None => name.to_string(),
            };
            for piece in chunk_paragraph(body) {
                let id = format!("{name}#{}", out.len() + 1);
                out.push(Passage { id, title: title.clone(), text: piece });
            }
        }
        para.clear();
    };
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            flush(&mut para, &heading, &mut out);
            continue;
        }
        if let Some(h) = atx_heading(t) {
            flush(&mut para, &heading, &mut out);
            heading = Some(h.to_string());
            continue;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(t);
    }
    flush(&mut para, &heading, &mut out);
    out
}

fn atx_heading(line: &str) -> Option<&str> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        let h = line[hashes..].trim().trim_end_matches('#').trim();
        (!h.is_empty()).then_some(h)
    } else {
        None
    }
}

fn chunk_paragraph(body: &str) -> Vec<String> {
    if uax29_word_indices(body).count() <= MAX_PASSAGE_WORDS {
        return vec![body.to_string()];
    }
    // Units: sentences, and an over-long sentence cut into runs of MAX_PASSAGE_WORDS words.
    let mut units: Vec<(&str, usize)> = Vec::new();
    for sentence in body.split_sentence_bounds() {
        let w = uax29_word_indices(sentence).count();
        if w <= MAX_PASSAGE_WORDS {
            units.push((sentence, w));
            continue;
        }
        let (mut start, mut words) = (0, 0);
        for (i, piece) in sentence.split_word_bound_indices() {
            if piece.chars().any(char::is_alphanumeric) {
                if words == MAX_PASSAGE_WORDS {
                    units.push((&sentence[start..i], words));
                    start = i;
                    words = 0;
                }
                words += 1;
            }
        }
        units.push((&sentence[start..], words));
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_words = 0;
    for (unit, w) in units {
        if cur_words > 0 && cur_words + w > MAX_PASSAGE_WORDS {
            out.push(cur.trim().to_string());
            cur.clear();
            cur_words = 0;
        }
        cur.push_str(unit);
        cur_words += w;
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The 100 real HotpotQA dev passages of `tests/fixtures/hotpot-sample` (for tests).
#[cfg(test)]
pub(crate) fn hotpot_sample() -> Vec<Passage> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hotpot-sample/corpus.jsonl");
    parse_jsonl("corpus.jsonl", &std::fs::read_to_string(path).unwrap()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_parses_and_defaults() {
        let input = "\u{feff}{\"id\":\"a\",\"title\":\"T\",\"text\":\"x\"}\n\n{\"id\":7,\"text\":\"y\"}\n{\"text\":\"z\"}\n";
        let ps = parse_jsonl("f.jsonl", input).unwrap();
        assert_eq!(ps.len(), 3);
        assert_eq!(ps[0], Passage { id: "a".into(), title: "T".into(), text: "x".into() });
        assert_eq!(ps[1].id, "7");
        assert_eq!(ps[2].id, "f.jsonl:4");
    }

    #[test]
    fn jsonl_errors_name_the_line() {
        let e = parse_jsonl("c.jsonl", "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"b\",\"text\":").unwrap_err();
        // Line 2 is `{"id":"b","text":`, 17 characters; the value is missing after them.
        assert_eq!(e.to_string(), "c.jsonl, line 2: not valid JSON: EOF while parsing a value at column 17");
        let e = parse_jsonl("c.jsonl", "{\"id\":\"a\"}").unwrap_err();
        assert!(e.to_string().starts_with("c.jsonl, line 1: missing field `text`"), "{e}");
        let e = parse_jsonl("c.jsonl", "[1,2]").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn duplicate_ids_are_rejected_and_nothing_is_added() {
        let mut c = Corpus::new();
        c.add(Passage { id: "a".into(), title: String::new(), text: "x".into() }).unwrap();
        let batch = vec![
            Passage { id: "b".into(), title: String::new(), text: "y".into() },
            Passage { id: "a".into(), title: String::new(), text: "z".into() },
        ];
        let e = c.extend(batch).unwrap_err();
        assert_eq!(e.to_string(), "passage \"a\": this id is already in the corpus");
        assert_eq!(c.len(), 1);
        assert_eq!(c.index_of("b"), None);
    }

    #[test]
    fn truncate_undoes_later_adds() {
        let mut c = Corpus::new();
        for id in ["a", "b", "c"] {
            c.add(Passage { id: id.into(), title: String::new(), text: id.into() }).unwrap();
        }
        c.truncate(1);
        assert_eq!(c.len(), 1);
        assert_eq!(c.index_of("a"), Some(0));
        assert_eq!(c.index_of("b"), None);
        // The removed ids are free again, and their new indexes follow on.
        assert_eq!(c.add(Passage { id: "c".into(), title: String::new(), text: "c".into() }).unwrap(), 1);
        c.truncate(5);
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn markdown_headings_become_titles() {
        let md = "Intro line one\nline two\n\n# Usage #\n\nFirst para.\n\nSecond para.\n";
        let ps = split_document("guide.md", md);
        let got: Vec<(&str, &str, &str)> =
            ps.iter().map(|p| (p.id.as_str(), p.title.as_str(), p.text.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("guide.md#1", "guide.md", "Intro line one line two"),
                ("guide.md#2", "guide.md › Usage", "First para."),
                ("guide.md#3", "guide.md › Usage", "Second para."),
            ]
        );
        assert!(split_document("empty", " \n\n ").is_empty());
    }

    #[test]
    fn long_paragraphs_are_cut_at_sentences() {
        let sentence = "One two three four five six seven eight nine ten. ";
        let body = sentence.repeat(45); // 450 words in 45 sentences: 200 + 200 + 50
        let ps = split_document("long", &body);
        let words: Vec<usize> = ps.iter().map(|p| p.text.unicode_words().count()).collect();
        assert_eq!(words, vec![200, 200, 50]);
        assert!(ps[1].text.starts_with("One two") && ps[1].text.ends_with("ten."));
        // One 450-word sentence with no boundary is cut at words.
        let run_on = "word ".repeat(450);
        let words: Vec<usize> =
            split_document("run-on", &run_on).iter().map(|p| p.text.unicode_words().count()).collect();
        assert_eq!(words, vec![200, 200, 50]);
    }

    #[test]
    fn non_objects_invalid_utf8_and_duplicates_name_their_line() {
        let ok = "{\"id\":\"a\",\"text\":\"x\"}\n";
        let e = parse_jsonl("c.jsonl", &format!("{ok}[\"b\", \"T\", \"y\"]\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.jsonl, line 2: expected a JSON object {\"id\", \"title\", \"text\"}, found an array"
        );
        for (line, kind) in [("\"text\"", "a string"), ("42", "a number"), ("null", "null"), ("true", "a boolean")] {
            let e = parse_jsonl("c.jsonl", line).unwrap_err();
            assert!(e.to_string().ends_with(&format!("found {kind}")), "{e}");
        }
        let e = parse_jsonl("c.jsonl", &format!("{ok}\n{{\"id\":\"b\",\"text\":\"y\"}}\n{ok}")).unwrap_err();
        assert_eq!(e.to_string(), "c.jsonl, line 4: duplicate id \"a\" (first on line 1)");
        // A number id and the same string are the same id.
        let e = parse_jsonl("c.jsonl", "{\"id\":7,\"text\":\"x\"}\n{\"id\":\"7\",\"text\":\"y\"}").unwrap_err();
        assert!(e.to_string().starts_with("c.jsonl, line 2: duplicate id \"7\""), "{e}");
        let mut bytes = format!("{ok}{}", ok.replace("\"a\"", "\"b\"")).into_bytes();
        bytes.extend_from_slice(b"{\"id\":\"c\",\"text\":\"caf\xe9\"}\n");
        let e = parse_jsonl_bytes("c.jsonl", &bytes).unwrap_err();
        // `{"id":"c","text":"caf` is 21 bytes: the bad byte is the 22nd of line 3.
        assert_eq!(e.to_string(), "c.jsonl, line 3: not valid UTF-8 (byte 22 of the line); save the file as UTF-8");
        assert_eq!(parse_jsonl_bytes("c.jsonl", ok.as_bytes()).unwrap().len(), 1);
    }
}
