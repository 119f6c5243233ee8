//! Fuzzing on stable Rust: structure-aware random inputs (proptest strategies) for every reader
//! of user files and endpoint answers. Each target must never panic, and keeps the invariants
//! its callers rely on (byte ranges on character boundaries, unique ids, spans inside the text).
//!
//! - `cargo test --test fuzz`: a short fixed-seed run (a few hundred inputs per target, seconds);
//!   a panic fails the test and prints the input.
//! - `CAIRN_FUZZ_SECS=600 cargo test --release --test fuzz -- --ignored --nocapture`: the long
//!   run, that many seconds per target (seeded by `CAIRN_FUZZ_SEED`, default the clock), with
//!   panics caught, counted and their inputs printed; the summary line per target gives inputs
//!   tried, seconds and panics.
// Native only: proptest is a native dev-dependency, and wasm-pack's `--tests` builds every test
// file for wasm32.
#![cfg(not(target_arch = "wasm32"))]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use cairn::corpus::{parse_jsonl, parse_jsonl_bytes, split_document};
use cairn::llm::parse;
use cairn::text::{Analyzer, Pipeline};

/// Pieces that the parsers treat specially, mixed with arbitrary text: JSON punctuation, the
/// markers the answer parsers look for, reasoning tags, characters whose lower case has another
/// byte length, combining marks, CJK, HTML and Markdown syntax, control characters.
const FRAGMENTS: &[&str] = &[
    "{", "}", "[", "]", "\"", "'", ":", ",", "\\", "\\u00e9", "\\ud800", "null", "true", "1e999", "-0",
    "\"id\"", "\"text\"", "\"title\"", "\"a\"", "answer:", "Answer:", "ANSWER: ", "<think>", "</think>",
    "<THINK>", "<thinking>", "```json\n", "```", "e1", "e2", "E3", "e0", "e99999999999", "high", "weak",
    "direct", "irrelevant", "triples", "named_entities", "subject", "object", "İ", "ẞ", "ﬁ", "é", "e\u{301}",
    "\u{301}", "\u{30B}", "Pál Erdős", "长城", "の", "서울", "हिन्दी", "🙂", "\u{200D}", "\u{0}", "\u{FEFF}",
    "\u{FFFD}", "\r\n", "\n", "\n\n", " ", "\t", ".", "!", "?", "Mr.", "U.S.", "It", "he", "was", "born in",
    "The Beatles", "Paris", "1994", "<p>", "</p>", "<h1>", "</h1>", "<script>", "</script>", "<!--", "-->",
    "<a href=\"#x\">", "&amp;", "&#x10FFFF;", "&#0;", "&", "# ", "## ", "* ", "- ", "1. ", "> ", "|a|b|",
    "---", "[link](http://x)", "![i](x)", "`code`", "<br/>",
];

/// Text made of fragments and arbitrary characters.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        1 => "\\PC{0,12}",
        1 => any::<char>().prop_map(|c| c.to_string()),
    ];
    proptest::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

/// Bytes: text as UTF-8 with arbitrary bytes spliced in (invalid UTF-8, truncated sequences).
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    (text(), proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4)).prop_map(|(t, junk)| {
        let mut b = t.into_bytes();
        for (at, x) in junk {
            let i = if b.is_empty() { 0 } else { at % (b.len() + 1) };
            b.insert(i, x);
        }
        b
    })
}

/// JSONL-like input: lines that are mostly passages, some broken.
fn jsonl() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        3 => (0u8..6, text(), text()).prop_map(|(id, title, body)| {
            serde_json::json!({"id": format!("p{id}"), "title": title, "text": body}).to_string().into_bytes()
        }),
        1 => text().prop_map(String::into_bytes),
        1 => bytes(),
    ];
    proptest::collection::vec(line, 0..8).prop_map(|ls| ls.join(&b'\n'))
}

fn check_ranges(s: &str, ranges: impl IntoIterator<Item = (usize, usize)>) {
    for (a, b) in ranges {
        assert!(a <= b && b <= s.len(), "range {a}..{b} outside a text of {} bytes", s.len());
        assert!(s.is_char_boundary(a) && s.is_char_boundary(b), "range {a}..{b} not on char boundaries");
    }
}

fn target_jsonl(input: &[u8]) {
    let from_bytes = parse_jsonl_bytes("fuzz.jsonl", input);
    if let Ok(text) = std::str::from_utf8(input) {
        let from_text = parse_jsonl("fuzz.jsonl", text);
        assert_eq!(from_bytes.is_ok(), from_text.is_ok());
    }
    if let Ok(ps) = from_bytes {
        let mut ids: Vec<&str> = ps.iter().map(|p| p.id.as_str()).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate ids were accepted");
        let mut c = cairn::Corpus::new();
        c.extend(ps).expect("parsed passages are addable");
    }
}

fn target_text(pipeline: &Pipeline, analyzer: &Analyzer, (title, body): &(String, String)) {
    let doc = pipeline.analyze(title, body);
    check_ranges(body, doc.words.iter().map(|w| (w.start, w.end)));
    check_ranges(title, pipeline.query_entities(title).iter().map(|m| (m.start, m.end)));
    check_ranges(body, analyzer.tokens(body).iter().map(|t| (t.start, t.end)));
    let (triples, _) = cairn::extract::extract_passage(pipeline, 0, title, body);
    for t in &triples {
        let (a, b) = (t.sentence.0 as usize, t.sentence.1 as usize);
        check_ranges(body, [(a, b)]);
    }
    let _ = split_document("fuzz.md", body);
}

fn target_llm(text: &str) {
    for n in [0, 1, 3, 7] {
        assert_eq!(parse::parse_tiers(text, n).len(), n);
    }
    for t in parse::parse_triples(text) {
        assert!(t.iter().all(|x| !x.trim().is_empty()));
    }
    let _ = parse::parse_entities(text);
    let a = parse::parse_answer(text);
    assert!(!a.contains("<think>"), "a reasoning block leaked into the answer: {a:?}");
    let _ = parse::strip_think(text);
    let _ = parse::extract_json(text);
    let _ = parse::repair_truncated(text);
    for needle in ["answer:", "İ", "e\u{301}", "長"] {
        check_ranges(text, parse::find_ci(text, needle));
        check_ranges(text, parse::rfind_ci(text, needle));
    }
    let _ = cairn::llm::parse_completion(text);
}

fn target_site(text: &str) {
    for p in cairn::site::html_passages(text, "https://x.test/a.html", "Fallback") {
        assert!(!p.id.is_empty());
    }
    for p in cairn::site::markdown_passages(text, "https://x.test/a.md", "Fallback") {
        assert!(!p.id.is_empty());
    }
    let _ = cairn::site::slug(text);
}

/// Run `target` on values of `strategy`: `cases` of them, or for `secs` seconds when given.
/// Returns (inputs tried, panics). In the short run (`catch` false) a panic propagates.
fn run<S: Strategy>(
    name: &str,
    strategy: S,
    seed: u64,
    cases: u64,
    secs: Option<u64>,
    catch: bool,
    target: impl Fn(&S::Value),
) -> (u64, u64)
where
    S::Value: std::fmt::Debug,
{
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let start = Instant::now();
    let (mut tried, mut panics) = (0u64, 0u64);
    loop {
        match secs {
            Some(s) if start.elapsed() >= Duration::from_secs(s) => break,
            None if tried >= cases => break,
            _ => {}
        }
        let Ok(tree) = strategy.new_tree(&mut runner) else { continue };
        let value = tree.current();
        tried += 1;
        if catch {
            if catch_unwind(AssertUnwindSafe(|| target(&value))).is_err() {
                panics += 1;
                eprintln!("fuzz {name}: PANIC on {value:?}");
            }
        } else {
            target(&value);
        }
    }
    if secs.is_some() {
        println!(
            "fuzz {name}: {tried} inputs in {:.1} min, {panics} panics (seed {seed})",
            start.elapsed().as_secs_f64() / 60.0
        );
    }
    (tried, panics)
}

const SHORT_SEED: u64 = 17;

#[test]
fn fuzz_jsonl_short() {
    run("jsonl", jsonl(), SHORT_SEED, 400, None, false, |b| target_jsonl(b));
}

#[test]
fn fuzz_text_pipeline_and_openie_short() {
    let pipeline = Pipeline::english().unwrap();
    let analyzer = Analyzer::english();
    run("text", (text(), text()), SHORT_SEED, 150, None, false, |v| target_text(&pipeline, &analyzer, v));
}

#[test]
fn fuzz_llm_parsers_short() {
    run("llm", text(), SHORT_SEED, 600, None, false, |t| target_llm(t));
}

#[test]
fn fuzz_site_reader_short() {
    run("site", text(), SHORT_SEED, 300, None, false, |t| target_site(t));
}

/// The long run (see the module docs). Fails when any target panicked.
#[test]
#[ignore]
fn fuzz_long() {
    let secs: u64 = std::env::var("CAIRN_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = std::env::var("CAIRN_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs())
    });
    let only = std::env::var("CAIRN_FUZZ_TARGET").unwrap_or_default();
    let want = |t: &str| only.is_empty() || only.split(',').any(|x| x == t);
    // Panics are caught and reported with their input; keep the default hook's message short.
    let pipeline = Pipeline::english().unwrap();
    let analyzer = Analyzer::english();
    let mut panics = 0;
    if want("jsonl") {
        panics += run("jsonl", jsonl(), seed, 0, Some(secs), true, |b| target_jsonl(b)).1;
    }
    if want("text") {
        panics += run("text", (text(), text()), seed, 0, Some(secs), true, |v| target_text(&pipeline, &analyzer, v)).1;
    }
    if want("llm") {
        panics += run("llm", text(), seed, 0, Some(secs), true, |t| target_llm(t)).1;
    }
    if want("site") {
        panics += run("site", text(), seed, 0, Some(secs), true, |t| target_site(t)).1;
    }
    assert_eq!(panics, 0, "panics found: see the inputs above");
}
