//! Time loading an index file natively, by phase: `cargo run --release --example index_load --
//! <index.cairn or index.cairn.gz> [runs]`. Prints one JSON object per run: total milliseconds,
//! and the milliseconds before the first and after the last progress report of each embedding
//! step (the static passage vectors, then the graph's entity names and fact texts).

use std::io::Read;
use std::rc::Rc;
use std::time::Instant;

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::index::{EmbedderSlot, Index};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: index_load <index file> [runs]")?;
    let runs: usize = args.get(2).map_or(Ok(3), |r| r.parse())?;
    let raw = std::fs::read(path)?;
    let t = Instant::now();
    let bytes = if path.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out)?;
        out
    } else {
        raw
    };
    let gunzip_ms = t.elapsed().as_secs_f64() * 1e3;
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm()?);
    for _ in 0..runs {
        let t = Instant::now();
        // (total of the step, ms at its first report, ms at its last)
        let mut steps: Vec<(usize, f64, f64)> = Vec::new();
        let (index, _) = Index::from_bytes(&bytes, &[(EmbedderSlot::Static, e.clone())], &mut |_, total| {
            let now = t.elapsed().as_secs_f64() * 1e3;
            match steps.last_mut() {
                Some(s) if s.0 == total => s.2 = now,
                _ => steps.push((total, now, now)),
            }
        })?;
        let total = t.elapsed().as_secs_f64() * 1e3;
        let steps: Vec<String> = steps
            .iter()
            .map(|(n, a, b)| format!("{{\"texts\":{n},\"from_ms\":{a:.1},\"to_ms\":{b:.1}}}"))
            .collect();
        println!(
            "{{\"gunzip_ms\":{gunzip_ms:.1},\"load_ms\":{total:.1},\"passages\":{},\"steps\":[{}]}}",
            index.corpus().len(),
            steps.join(",")
        );
    }
    Ok(())
}
