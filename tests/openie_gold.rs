//! Precision and recall of the rule-based OpenIE extractor ([`cairn::extract`]) on a hand-checked
//! gold set.
//!
//! `tests/fixtures/openie/gold.jsonl` holds 72 sentences from the dev passages of
//! `../shared/data/{hotpotqa,musique,2wikimultihopqa}/corpus.jsonl`, one a line:
//! `{"dataset", "id" (passage id), "title", "sentence", "tags", "triples": [[s, r, o], ...]}`.
//! The triples are what a careful reader expects from the sentence alone (plus its passage title,
//! which pronouns and definite descriptions like "the film" refer to). They were written by
//! reading the sentences, before the extractor was run on them, and were not changed after.
//! Conventions of the gold: ReVerb-style relations (verb phrase with its prepositions; a
//! copula's predicate noun goes into the relation when a preposition follows it: "was queen
//! of"), arguments as entity names without leading articles, pronouns replaced by their
//! referent. `tags` say what each sentence exercises (copula, apposition, passive, pronoun,
//! dates, list, relative, participle, ...).
//!
//! The extractor sees each sentence on its own with the passage title (`extract_passage`), so
//! what only the rest of the passage would resolve ("The community" after "Bruemmerville is an
//! unincorporated community") counts as missed. One sentence made mostly of names is judged
//! non-English by the pipeline on its own and yields nothing.
//!
//! ## Matching criterion
//! An extracted triple matches a gold triple when
//! - **arguments**: the subjects match and the objects match, where two phrases match when
//!   their [`cairn::graph::normalize_entity`] keys are equal (*strict*), or one key contains
//!   the other at word boundaries (*lenient*: "embassy" ~ "embassy in ulaanbaatar",
//!   "3rd overall pick" ~ "3rd overall pick of 1972 nba draft");
//! - **relation**: the relations' *content lemmas* (the pipeline's lemmas of the relation
//!   phrase, without auxiliaries/copulas, determiners, prepositions, particles and
//!   punctuation; `have` dropped when another content word follows it) share a lemma; when
//!   both have no content lemma (pure copulas such as "is", "were", "is in") their
//!   prepositions must be equal; content on one side only is no match ("is" ≠ "was queen of").
//! - for a pure copula without preposition ("is"), subject and object may be swapped
//!   (apposition "the federal government, the Federal Council" states the identity both ways).
//!
//! Precision = extracted triples that match some gold triple / extracted triples; recall = gold
//! triples matched by some extracted triple / gold triples; both micro-averaged over all
//! sentences. The lenient figures are the headline; the strict ones are printed too.
//!
//! Run: `cargo test --test openie_gold -- --nocapture` (set `OPENIE_GOLD_VERBOSE=1` to print
//! every sentence's misses and false positives).

use std::collections::BTreeMap;

use cairn::extract::{extract_passage, Triple};
use cairn::graph::normalize_entity;
use cairn::text::{Pipeline, Upos};
use serde::Deserialize;

#[derive(Deserialize)]
struct GoldSentence {
    dataset: String,
    id: String,
    title: String,
    sentence: String,
    tags: Vec<String>,
    triples: Vec<(String, String, String)>,
}

fn load_gold() -> Vec<GoldSentence> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openie/gold.jsonl");
    let text = std::fs::read_to_string(path).expect("gold file present");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("gold line {}: {e}", i + 1)))
        .collect()
}

/// The content lemmas and prepositions of a relation phrase (see the module docs).
#[derive(Debug, Clone, PartialEq)]
struct RelKey {
    content: Vec<String>,
    preps: Vec<String>,
}

const AUX_LEMMAS: &[&str] =
    &["be", "do", "will", "would", "can", "could", "may", "might", "shall", "should", "must"];

fn rel_key(pipeline: &Pipeline, relation: &str) -> RelKey {
    let doc = pipeline.analyze("", relation);
    let mut content = Vec::new();
    let mut preps = Vec::new();
    let n = doc.words.len();
    for i in 0..n {
        let w = &doc.words[i];
        let lemma = doc.lemma(i).to_lowercase();
        let text = doc.word_text(i).to_lowercase();
        match w.upos {
            Upos::Adp | Upos::Sconj => preps.push(text),
            Upos::Part if text == "to" => preps.push(text),
            Upos::Det | Upos::Punct | Upos::Cconj => {}
            _ => {
                if AUX_LEMMAS.contains(&lemma.as_str()) || text == "been" || text == "being" {
                    continue;
                }
                if lemma == "have"
                    && (i + 1..n).any(|j| !matches!(doc.words[j].upos, Upos::Adp | Upos::Det | Upos::Punct))
                {
                    continue;
                }
                content.push(lemma);
            }
        }
    }
    RelKey { content, preps }
}

fn rel_match(a: &RelKey, b: &RelKey) -> bool {
    match (a.content.is_empty(), b.content.is_empty()) {
        (false, false) => a.content.iter().any(|x| b.content.contains(x)),
        (true, true) => a.preps == b.preps,
        _ => false,
    }
}

fn arg_match(a: &str, b: &str, strict: bool) -> bool {
    let (a, b) = (normalize_entity(a), normalize_entity(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    if strict {
        return false;
    }
    let (pa, pb) = (format!(" {a} "), format!(" {b} "));
    pa.contains(&pb) || pb.contains(&pa)
}

struct Keyed<'a> {
    s: &'a str,
    o: &'a str,
    rel: RelKey,
}

fn triple_match(gold: &Keyed, got: &Keyed, strict: bool) -> bool {
    if !rel_match(&gold.rel, &got.rel) {
        return false;
    }
    let straight = arg_match(gold.s, got.s, strict) && arg_match(gold.o, got.o, strict);
    let pure_copula = gold.rel.content.is_empty() && gold.rel.preps.is_empty();
    straight || (pure_copula && arg_match(gold.s, got.o, strict) && arg_match(gold.o, got.s, strict))
}

#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    extracted: usize,
    correct: usize,
    gold: usize,
    found: usize,
}

impl Counts {
    fn precision(&self) -> f64 {
        if self.extracted == 0 {
            0.0
        } else {
            self.correct as f64 / self.extracted as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.gold == 0 {
            0.0
        } else {
            self.found as f64 / self.gold as f64
        }
    }
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

struct Evaluation {
    lenient: Counts,
    strict: Counts,
    by_tag: BTreeMap<String, Counts>,
    non_english: usize,
}

fn evaluate(verbose: bool) -> Evaluation {
    let pipeline = Pipeline::english().expect("pipeline");
    let gold = load_gold();
    let mut lenient = Counts::default();
    let mut strict = Counts::default();
    let mut by_tag: BTreeMap<String, Counts> = BTreeMap::new();
    let mut non_english = 0usize;
    for (n, g) in gold.iter().enumerate() {
        let (got, english) = extract_passage(&pipeline, n as u32, &g.title, &g.sentence);
        if !english {
            // The pipeline's language guess is made on this one sentence; a sentence made of
            // names can fall below its stop-word share. It then yields no triples (recall).
            non_english += 1;
            println!("note: judged non-English on its own (no triples): {}", g.sentence);
        }
        for t in &got {
            assert_eq!(t.passage, n as u32);
            assert!(t.sentence.0 <= t.sentence.1 && t.sentence.1 as usize <= g.sentence.len());
        }
        let gk: Vec<Keyed> =
            g.triples.iter().map(|(s, r, o)| Keyed { s, o, rel: rel_key(&pipeline, r) }).collect();
        let xk: Vec<Keyed> = got
            .iter()
            .map(|t: &Triple| Keyed { s: &t.subject, o: &t.object, rel: rel_key(&pipeline, &t.relation) })
            .collect();
        let mut sentence_counts = Counts::default();
        for (strictness, counts) in [(false, &mut lenient), (true, &mut strict)] {
            let correct = xk.iter().filter(|x| gk.iter().any(|gt| triple_match(gt, x, strictness))).count();
            let found = gk.iter().filter(|gt| xk.iter().any(|x| triple_match(gt, x, strictness))).count();
            counts.extracted += xk.len();
            counts.correct += correct;
            counts.gold += gk.len();
            counts.found += found;
            if !strictness {
                sentence_counts = Counts { extracted: xk.len(), correct, gold: gk.len(), found };
            }
        }
        for tag in &g.tags {
            let c = by_tag.entry(tag.clone()).or_default();
            c.extracted += sentence_counts.extracted;
            c.correct += sentence_counts.correct;
            c.gold += sentence_counts.gold;
            c.found += sentence_counts.found;
        }
        if verbose {
            println!("\n[{} {}] {} | {}", g.dataset, g.id, g.title, g.sentence);
            for (gt, (s, r, o)) in gk.iter().zip(&g.triples) {
                let hit = xk.iter().any(|x| triple_match(gt, x, false));
                println!("  gold {} ({s}; {r}; {o})", if hit { "ok  " } else { "MISS" });
            }
            for (x, t) in xk.iter().zip(&got) {
                let hit = gk.iter().any(|gt| triple_match(gt, x, false));
                println!(
                    "  got  {} ({}; {}; {})",
                    if hit { "ok  " } else { "FP  " },
                    t.subject,
                    t.relation,
                    t.object
                );
            }
        }
    }
    Evaluation { lenient, strict, by_tag, non_english }
}

#[test]
fn gold_set_is_well_formed() {
    let gold = load_gold();
    assert!(gold.len() >= 40, "at least 40 gold sentences, got {}", gold.len());
    for g in &gold {
        assert!(!g.sentence.is_empty() && !g.title.is_empty() && !g.id.is_empty());
        assert!(!g.triples.is_empty(), "{}", g.sentence);
        for (s, r, o) in &g.triples {
            assert!(
                !normalize_entity(s).is_empty() && !r.trim().is_empty() && !normalize_entity(o).is_empty()
            );
        }
    }
}

#[test]
fn matching_criterion() {
    let p = Pipeline::english().expect("pipeline");
    let k = |s: &'static str, r: &str, o: &'static str| Keyed { s, o, rel: rel_key(&p, r) };
    // Copula variants agree; a predicate noun in the relation must be matched.
    assert!(triple_match(
        &k("Chelsea", "were", "defending champions"),
        &k("Chelsea", "are", "the defending champions"),
        true
    ));
    assert!(!triple_match(
        &k("Teutberga", "was queen of", "Lotharingia"),
        &k("Teutberga", "was", "Lotharingia"),
        false
    ));
    assert!(triple_match(
        &k("Teutberga", "was queen of", "Lotharingia"),
        &k("Teutberga", "was a queen of", "Lotharingia"),
        true
    ));
    assert!(triple_match(&k("X", "was born in", "Paris"), &k("X", "born in", "Paris"), true));
    assert!(!triple_match(&k("X", "was daughter of", "Y"), &k("X", "was sister of", "Y"), false));
    assert!(!triple_match(&k("X", "is in", "Y"), &k("X", "is from", "Y"), false));
    // Lenient containment at word boundaries only.
    assert!(arg_match("the Embassy in Ulaanbaatar", "Embassy", false));
    assert!(!arg_match("the Embassy in Ulaanbaatar", "Embassy", true));
    assert!(!arg_match("Burji La", "Burji Las elevation", false));
    // Pure copulas match either way round.
    assert!(triple_match(
        &k("Federal Council", "is", "federal government"),
        &k("federal government", "is", "Federal Council"),
        false
    ));
}

#[test]
fn precision_and_recall_on_the_gold_set() {
    let verbose = std::env::var_os("OPENIE_GOLD_VERBOSE").is_some();
    let e = evaluate(verbose);
    let (l, s) = (e.lenient, e.strict);
    println!(
        "\nOpenIE gold set: {} gold triples, {} extracted\n  lenient: precision {:.3} ({}/{}), recall {:.3} ({}/{}), F1 {:.3}\n  strict:  precision {:.3} ({}/{}), recall {:.3} ({}/{}), F1 {:.3}",
        l.gold,
        l.extracted,
        l.precision(),
        l.correct,
        l.extracted,
        l.recall(),
        l.found,
        l.gold,
        l.f1(),
        s.precision(),
        s.correct,
        s.extracted,
        s.recall(),
        s.found,
        s.gold,
        s.f1()
    );
    println!("  sentences judged non-English on their own: {}", e.non_english);
    println!("  by tag (lenient): tag precision recall (gold)");
    for (tag, c) in &e.by_tag {
        println!("    {tag:22} {:.2} {:.2} ({})", c.precision(), c.recall(), c.gold);
    }
    // Floors slightly below the measured figures (below), so that a regression fails.
    assert!(l.precision() >= PRECISION_FLOOR, "lenient precision {:.3} < {PRECISION_FLOOR}", l.precision());
    assert!(l.recall() >= RECALL_FLOOR, "lenient recall {:.3} < {RECALL_FLOOR}", l.recall());
    assert!(
        s.precision() >= STRICT_PRECISION_FLOOR,
        "strict precision {:.3} < {STRICT_PRECISION_FLOOR}",
        s.precision()
    );
    assert!(s.recall() >= STRICT_RECALL_FLOOR, "strict recall {:.3} < {STRICT_RECALL_FLOOR}", s.recall());
}

// Measured when the floors were set: lenient precision 0.808 (139/172), recall 0.719
// (138/192); strict precision 0.721 (124/172), recall 0.646 (124/192).
const PRECISION_FLOOR: f64 = 0.78;
const RECALL_FLOOR: f64 = 0.69;
const STRICT_PRECISION_FLOOR: f64 = 0.69;
const STRICT_RECALL_FLOOR: f64 = 0.62;
