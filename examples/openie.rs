//! Rule-based OpenIE (`cairn::extract`, METHOD.md §1 "Triples") over a corpus or one text.
//!
//!     cargo run --release --example openie -- [CORPUS.jsonl] [--dump OUT.jsonl] [--sample N]
//!     cargo run --release --example openie -- --text "TITLE" "TEXT"
//!
//! Default corpus: `../shared/data/2wiki-corpus-6k/corpus.jsonl`. Prints the extraction time
//! (wall clock of `extract_corpus`, one thread, best of three runs), the counts
//! ([`cairn::extract::ExtractStats`]) and triples per passage. `--dump` writes every triple as
//! a JSON line (`passage`, `id`, `title`, `sentence`, `subject`, `relation`, `object`);
//! `--sample N` prints N triples picked evenly across the corpus with their sentences (for
//! judging precision by hand). `--text` prints the pipeline's tags, chunks and pronoun
//! resolutions for one text and its triples.

use std::io::Write;
use std::time::Instant;

use cairn::corpus::parse_jsonl;
use cairn::extract::{extract_corpus, extract_passage};
use cairn::text::Pipeline;
use cairn::Corpus;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pipeline = Pipeline::english()?;
    if args.first().map(String::as_str) == Some("--text") {
        let title = args.get(1).cloned().unwrap_or_default();
        let text = args.get(2).cloned().unwrap_or_default();
        let doc = pipeline.analyze(&title, &text);
        for i in 0..doc.words.len() {
            let w = &doc.words[i];
            let form = w.verb_form.map_or(String::new(), |f| format!(":{}", f.as_str()));
            print!("{}/{}{} ", doc.word_text(i), w.upos.as_str(), form);
        }
        println!();
        let chunks: Vec<&str> = doc.chunks.iter().map(|c| doc.chunk_text(c)).collect();
        println!("chunks: {chunks:?}");
        for c in &doc.coreferences {
            println!("coref: {} -> {}", doc.word_text(c.pronoun), doc.antecedent_text(c.antecedent));
        }
        let (triples, english) = extract_passage(&pipeline, 0, &title, &text);
        println!("english: {english}");
        for t in triples {
            println!("({}; {}; {})", t.subject, t.relation, t.object);
        }
        return Ok(());
    }
    let mut path = "../shared/data/2wiki-corpus-6k/corpus.jsonl".to_string();
    let (mut dump, mut sample) = (None, 0usize);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dump" => dump = Some(it.next().ok_or("--dump needs a path")?),
            "--sample" => sample = it.next().ok_or("--sample needs a number")?.parse()?,
            _ => path = a,
        }
    }
    let input = std::fs::read_to_string(&path)?;
    let mut corpus = Corpus::new();
    corpus.extend(parse_jsonl(&path, &input)?)?;
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..3 {
        let t0 = Instant::now();
        let o = extract_corpus(&pipeline, &corpus, &mut |_, _| {});
        best = best.min(t0.elapsed().as_secs_f64());
        out = Some(o);
    }
    let out = out.ok_or("no run")?;
    let s = &out.stats;
    println!("corpus: {path}");
    println!(
        "extraction: {best:.2} s for {} passages ({:.2} ms/passage, one thread, best of 3)",
        s.passages,
        best * 1e3 / s.passages.max(1) as f64
    );
    println!("stats: {}", serde_json::to_string(s)?);
    println!(
        "triples per passage: {:.2} (per English passage {:.2}); per sentence {:.2}",
        s.triples as f64 / s.passages.max(1) as f64,
        s.triples as f64 / s.english_passages.max(1) as f64,
        s.triples as f64 / s.sentences.max(1) as f64
    );
    let entities: std::collections::HashSet<String> = out
        .triples
        .iter()
        .flat_map(|t| [cairn::graph::normalize_entity(&t.subject), cairn::graph::normalize_entity(&t.object)])
        .collect();
    println!("distinct normalised entities: {}", entities.len());
    let passage_text = |i: u32| corpus.get(i).map(|p| (p.id.as_str(), p.title.as_str(), p.text.as_str()));
    if let Some(d) = dump {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&d)?);
        for t in &out.triples {
            let (id, title, text) = passage_text(t.passage).unwrap_or(("", "", ""));
            let sentence = text.get(t.sentence.0 as usize..t.sentence.1 as usize).unwrap_or("");
            let line = serde_json::json!({"passage": t.passage, "id": id, "title": title, "sentence": sentence,
                "subject": t.subject, "relation": t.relation, "object": t.object});
            writeln!(f, "{line}")?;
        }
        println!("wrote {} triples to {d}", out.triples.len());
    }
    if sample > 0 && !out.triples.is_empty() {
        let step = (out.triples.len() / sample).max(1);
        for (k, t) in out.triples.iter().step_by(step).take(sample).enumerate() {
            let (_, title, text) = passage_text(t.passage).unwrap_or(("", "", ""));
            let sentence = text.get(t.sentence.0 as usize..t.sentence.1 as usize).unwrap_or("");
            println!("\n#{k} [{title}] {sentence}\n    ({}; {}; {})", t.subject, t.relation, t.object);
        }
    }
    Ok(())
}
