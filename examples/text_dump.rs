//! Run Cairn's English text pipeline over a corpus and print what it found, as JSON lines.
//!
//!     cargo run --release --example text_dump -- CORPUS.jsonl [--limit N] [--skip N] [--bench] [--raw-tags]
//!
//! CORPUS is a JSONL file with `id`, `title` and `text` per line (the format of
//! `../shared/data/*/corpus.jsonl`). For each passage one line is printed:
//!
//! ```json
//! {"id": "...", "english": true,
//!  "tokens": [[start, end, "UPOS", "lemma", "VerbForm" | null, tagged_by_perceptron], ...],
//!  "sents": [start byte of each sentence],
//!  "chunks": [[start, end, "Kind"], ...],
//!  "corefs": [[pronoun start, pronoun end, "antecedent text"], ...]}
//! ```
//!
//! With `--queries`, CORPUS is a questions JSONL (`id`, `question`) and each line is
//! `{"id": ..., "question": ..., "mentions": [[start, end, "text", "kind"], ...]}` from
//! [`Pipeline::query_entities`].
//!
//! With `--raw-tags` each line is instead `{"id": ..., "raw": [[[start, end, "LABEL"], ...], ...]}`:
//! per sentence, the words the perceptron tags and its own label for each, before any other step
//! (for checking the port against `perceptron.py`).
//!
//! Offsets are UTF-8 byte offsets into `text`. `tools/check_text_pipeline.py` compares this with
//! spaCy. With `--bench` nothing is printed per passage: the whole corpus is analysed three
//! times on one thread and the best passages per second is reported on stderr.

use std::io::{BufRead, BufWriter, Write};
use std::time::Instant;

use cairn::text::{Antecedent, Document, Pipeline};
use serde_json::{json, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut path, mut limit, mut skip, mut bench, mut raw) = (None, usize::MAX, 0usize, false, false);
    let mut queries = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--limit" => limit = args.next().ok_or("--limit needs a number")?.parse()?,
            "--skip" => skip = args.next().ok_or("--skip needs a number")?.parse()?,
            "--bench" => bench = true,
            "--raw-tags" => raw = true,
            "--queries" => queries = true,
            _ => path = Some(a),
        }
    }
    let path = path.ok_or("usage: text_dump CORPUS.jsonl [--limit N] [--skip N] [--bench]")?;
    let file = std::io::BufReader::new(std::fs::File::open(&path)?);
    let mut passages = Vec::new();
    for line in file.lines().skip(skip).take(limit) {
        let v: Value = serde_json::from_str(&line?)?;
        let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let text = if queries { field("question") } else { field("text") };
        passages.push((field("id"), field("title"), text));
    }
    let t0 = Instant::now();
    let pipeline = Pipeline::english()?;
    eprintln!("resources loaded in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    let mut doc = Document::default();
    if queries {
        let stdout = std::io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        for (id, _, question) in &passages {
            let mentions: Vec<Value> = pipeline
                .query_entities(question)
                .iter()
                .map(|m| json!([m.start, m.end, m.text, format!("{:?}", m.kind)]))
                .collect();
            writeln!(out, "{}", json!({"id": id, "question": question, "mentions": mentions}))?;
        }
        return Ok(());
    }
    if bench {
        let mut best = f64::INFINITY;
        let mut words = 0usize;
        for _ in 0..3 {
            let t = Instant::now();
            words = 0;
            for (_, title, text) in &passages {
                pipeline.analyze_into(title, text, &mut doc);
                words += doc.words.len();
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        eprintln!(
            "{} passages, {} tokens: best of 3 {:.3} s = {:.0} passages/s, {:.0} tokens/s",
            passages.len(),
            words,
            best,
            passages.len() as f64 / best,
            words as f64 / best
        );
        return Ok(());
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for (id, title, text) in &passages {
        pipeline.analyze_into(title, text, &mut doc);
        if raw {
            let tagger = pipeline.tagger();
            let mut classes = Vec::new();
            let mut sentences = Vec::new();
            for s in &doc.sentences {
                let idx: Vec<usize> = s
                    .words
                    .clone()
                    .filter(|&i| cairn::text::tagger::rule_tag(doc.word_text(i), true).is_none())
                    .collect();
                let words: Vec<&str> = idx.iter().map(|&i| doc.word_text(i)).collect();
                let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
                let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
                tagger.tag(&words, &lower, &mut classes);
                let sent: Vec<Value> = idx
                    .iter()
                    .zip(&classes)
                    .filter_map(|(&i, &c)| {
                        doc.words.get(i).map(|w| json!([w.start, w.end, tagger.class_label(c)]))
                    })
                    .collect();
                sentences.push(Value::Array(sent));
            }
            writeln!(out, "{}", json!({"id": id, "raw": sentences}))?;
            continue;
        }
        let tokens: Vec<Value> = doc
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let by_rule = cairn::text::tagger::rule_tag(doc.word_text(i), false).is_some();
                json!([
                    w.start,
                    w.end,
                    w.upos.as_str(),
                    doc.lemma(i),
                    w.verb_form.map(|f| f.as_str()),
                    !by_rule
                ])
            })
            .collect();
        let sents: Vec<usize> = doc.sentences.iter().map(|s| s.start).collect();
        let chunks: Vec<Value> =
            doc.chunks.iter().map(|c| json!([c.start, c.end, format!("{:?}", c.kind)])).collect();
        let corefs: Vec<Value> = doc
            .coreferences
            .iter()
            .filter_map(|c| {
                let w = doc.words.get(c.pronoun)?;
                let kind = match c.antecedent {
                    Antecedent::Title => "title",
                    Antecedent::Chunk(_) => "chunk",
                };
                Some(json!([w.start, w.end, doc.antecedent_text(c.antecedent), kind]))
            })
            .collect();
        let line = json!({
            "id": id, "english": doc.language.english, "tokens": tokens, "sents": sents,
            "chunks": chunks, "corefs": corefs,
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}
