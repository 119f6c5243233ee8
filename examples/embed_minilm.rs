//! Embed texts with Cairn's transformer embedder (all-MiniLM-L6-v2, int8 ONNX, run by tract).
//!
//!     tools/fetch_models.sh
//!     cargo run --release --features minilm --example embed_minilm -- \
//!         [--model models/minilm-int8.onnx] [--format f32|json] [--batch 16] < texts.jsonl > vectors
//!
//! Standard input: JSONL, one text per line, either a JSON string or an object with `text` (and
//! optionally `title`, embedded as `title + " " + text`, so a Cairn corpus file works as is).
//! Standard output: the vectors in input order, either raw little-endian `f32`, row-major
//! `[n, 384]` (`--format f32`, the default), or one JSON array per line (`--format json`).
//! Standard error: model load time and throughput (passages per second, model load excluded).
//! `tools/check_tract.py` compares the vectors with onnxruntime's.

use std::io::{BufWriter, Read, Write};
use std::time::Instant;

use cairn::embed::minilm::{MiniLmEmbedder, DEFAULT_BATCH_SIZE};
use cairn::embed::Embedder;

fn usage() -> ! {
    eprintln!("usage: embed_minilm [--model PATH] [--format f32|json] [--batch N] < texts.jsonl");
    std::process::exit(2);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut model, mut json, mut batch) = ("models/minilm-int8.onnx".to_string(), false, DEFAULT_BATCH_SIZE);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--model", Some(v)) => model = v,
            ("--format", Some(v)) if v == "json" || v == "f32" => json = v == "json",
            ("--batch", Some(v)) => batch = v.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }

    let mut texts = Vec::new();
    let mut input = String::new();
    std::io::stdin().lock().read_to_string(&mut input)?;
    for (i, line) in input.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("stdin line {}: {e}", i + 1))?;
        let text = match &value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Object(o) => {
                let text = o
                    .get("text")
                    .and_then(|t| t.as_str())
                    .ok_or(format!("stdin line {}: no \"text\"", i + 1))?;
                match o.get("title").and_then(|t| t.as_str()).filter(|t| !t.is_empty()) {
                    Some(title) => format!("{title} {text}"),
                    None => text.to_string(),
                }
            }
            _ => return Err(format!("stdin line {}: expected a string or an object", i + 1).into()),
        };
        texts.push(text);
    }

    let bytes = std::fs::read(&model).map_err(|e| format!("{model}: {e} (run tools/fetch_models.sh)"))?;
    let t0 = Instant::now();
    let embedder = MiniLmEmbedder::from_onnx_bytes(&bytes)?.with_batch_size(batch);
    let load = t0.elapsed().as_secs_f64();

    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs.iter().map(|t| embedder.token_ids(t).len()).sum();
    let t1 = Instant::now();
    let vectors = embedder.embed_batch(&refs, &mut |_, _| {})?;
    let secs = t1.elapsed().as_secs_f64();
    eprintln!(
        "embed_minilm: model loaded in {load:.2} s; {} passages ({:.1} tokens each on average) in {secs:.2} s: \
         {:.1} passages/s, {:.0} tokens/s (batch {batch})",
        texts.len(),
        tokens as f64 / texts.len().max(1) as f64,
        texts.len() as f64 / secs,
        tokens as f64 / secs,
    );

    let mut out = BufWriter::new(std::io::stdout().lock());
    let dim = embedder.dim();
    if json {
        for row in vectors.chunks_exact(dim) {
            serde_json::to_writer(&mut out, row)?;
            out.write_all(b"\n")?;
        }
    } else {
        for x in &vectors {
            out.write_all(&x.to_le_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}
