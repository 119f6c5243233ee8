//! Export CAGE passage graphs (METHOD.md §4; [`cairn::cage::PassageGraph`]) for training the
//! R-GCN offline (`tools/train_cage.py`), from passages only (no question, no label).
//!
//!     cargo run --release --example cage_export -- OUT_DIR CORPUS.jsonl [CORPUS.jsonl ...] [--beta B] [--limit N]
//!
//! Writes into OUT_DIR:
//! - `graphs.jsonl`: one line per passage (duplicates by id across corpora once):
//!   `{"id", "nodes": [feature row per node], "labels": [lemma per node],
//!     "edges": [[relation 1-9, source, target, weight], ...], "min": [0/1 per node]}`;
//! - `features.f32`: the node-feature table, little-endian f32, `rows × 256`: row k is the
//!   static embedder's vector of the k-th distinct lemma (`lemmas.txt`, one per line);
//!   the model's inputs multiply min-out-degree rows by β (weights in `edges` already carry it).
//!
//! With `--one` instead, prints one passage's graph (`--one "title" "text"`) as JSON.

use std::collections::{HashMap, HashSet};
use std::io::{BufWriter, Write};

use cairn::cage::PassageGraph;
use cairn::corpus::parse_jsonl;
use cairn::embed::{Embedder, StaticEmbedder};
use cairn::text::Pipeline;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut beta = 1.5f32;
    let mut limit = usize::MAX;
    let mut files = Vec::new();
    let mut i = 0;
    if args.first().map(String::as_str) == Some("--one") {
        let (title, text) = (args.get(1).ok_or("--one TITLE TEXT")?, args.get(2).ok_or("--one TITLE TEXT")?);
        let doc = Pipeline::english()?.analyze(title, text);
        println!("{}", serde_json::to_string_pretty(&PassageGraph::build(&doc, beta))?);
        return Ok(());
    }
    while i < args.len() {
        match args[i].as_str() {
            "--beta" => {
                beta = args.get(i + 1).ok_or("--beta needs a number")?.parse()?;
                i += 1;
            }
            "--limit" => {
                limit = args.get(i + 1).ok_or("--limit needs a number")?.parse()?;
                i += 1;
            }
            a => files.push(a.to_string()),
        }
        i += 1;
    }
    let out_dir = std::path::PathBuf::from(files.first().ok_or("usage: OUT_DIR CORPUS.jsonl ...")?);
    std::fs::create_dir_all(&out_dir)?;
    let pipeline = Pipeline::english()?;
    let embedder = StaticEmbedder::minilm()?;
    let mut seen = HashSet::new();
    let mut lemma_row: HashMap<String, usize> = HashMap::new();
    let mut lemmas: Vec<String> = Vec::new();
    let mut out = BufWriter::new(std::fs::File::create(out_dir.join("graphs.jsonl"))?);
    let mut n = 0usize;
    for path in &files[1..] {
        let text = std::fs::read_to_string(path)?;
        for p in parse_jsonl(path, &text)? {
            if n >= limit || !seen.insert(p.id.clone()) {
                continue;
            }
            let g = PassageGraph::build(&pipeline.analyze(&p.title, &p.text), beta);
            let rows: Vec<usize> = g
                .nodes
                .iter()
                .map(|l| {
                    *lemma_row.entry(l.clone()).or_insert_with(|| {
                        lemmas.push(l.clone());
                        lemmas.len() - 1
                    })
                })
                .collect();
            let edges: Vec<_> =
                g.edges.iter().map(|e| json!([e.relation, e.source, e.target, e.weight])).collect();
            let min: Vec<u8> = g.min_out_degree.iter().map(|&m| u8::from(m)).collect();
            serde_json::to_writer(
                &mut out,
                &json!({"id": p.id, "nodes": rows, "labels": g.nodes, "edges": edges, "min": min}),
            )?;
            out.write_all(b"\n")?;
            n += 1;
        }
    }
    out.flush()?;
    let refs: Vec<&str> = lemmas.iter().map(String::as_str).collect();
    let rows = embedder.embed_batch(&refs, &mut |_, _| {})?;
    let mut f = BufWriter::new(std::fs::File::create(out_dir.join("features.f32"))?);
    for x in rows {
        f.write_all(&x.to_le_bytes())?;
    }
    f.flush()?;
    std::fs::write(out_dir.join("lemmas.txt"), lemmas.join("\n") + "\n")?;
    eprintln!("{n} graphs, {} distinct lemmas, β = {beta}, dim {}", lemmas.len(), embedder.dim());
    Ok(())
}
