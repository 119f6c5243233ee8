//! Print Cairn's WordPiece ids (all-MiniLM-L6-v2 vocabulary, no `[CLS]`/`[SEP]`) for each line of
//! standard input. Each input line is a JSON string; each output line is a JSON array of ids.
//! `tools/check_tokenizer.py` compares the output with Hugging Face `tokenizers`.
//!
//!     cargo run --release --example wordpiece_ids < texts.jsonl > ids.jsonl

use std::io::{BufRead, BufWriter, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let wp = cairn::embed::WordPiece::minilm()?;
    let stdin = std::io::stdin();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        let text: String = serde_json::from_str(&line).map_err(|e| format!("line {}: {e}", i + 1))?;
        serde_json::to_writer(&mut out, &wp.encode(&text))?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
