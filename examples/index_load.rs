//! Time loading an index natively, by phase: `cargo run --release --example index_load --
//! <index.cairn[.gz] or the folder `cairn index` wrote> [runs]`. With a folder it opens its
//! `index.cairn.gz` (the base: ids, titles, BM25's postings), then reads its `texts.cairn.gz`
//! and its `extras.cairn.gz` (passage vectors, graph), as the site loader does. Prints one JSON
//! object per run: gunzip, base load, texts load and extras load in milliseconds, and the phases the loader timed ([`cairn::index::LoadNotes::phases_ms`]).

use std::io::Read;
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::index::{EmbedderSlot, Index};

fn read(path: &Path) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let raw = std::fs::read(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out)?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = Path::new(args.get(1).ok_or("usage: index_load <index file or folder> [runs]")?);
    let runs: usize = args.get(2).map_or(Ok(3), |r| r.parse())?;
    let t = Instant::now();
    let (base, texts, extras) = if path.is_dir() {
        let x = path.join("extras.cairn.gz");
        let extras = if x.exists() { Some(read(&x)?) } else { None };
        (read(&path.join("index.cairn.gz"))?, Some(read(&path.join("texts.cairn.gz"))?), extras)
    } else {
        (read(path)?, None, None)
    };
    let gunzip_ms = t.elapsed().as_secs_f64() * 1e3;
    let e: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm()?);
    let slots = [(EmbedderSlot::Static, e.clone())];
    for _ in 0..runs {
        let t = Instant::now();
        let (mut index, notes) = Index::from_bytes(&base, &slots, &mut |_, _| {})?;
        let base_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut phases = notes.phases_ms.clone();
        let t = Instant::now();
        if let Some(x) = &texts {
            index.attach_texts(x)?;
        }
        let texts_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        if let Some(x) = &extras {
            phases.extend(index.attach_extras(x, &slots, &mut |_, _| {})?.phases_ms);
        }
        let extras_ms = t.elapsed().as_secs_f64() * 1e3;
        let phases: Vec<String> = phases.iter().map(|(k, v)| format!("\"{k}\":{v:.1}")).collect();
        println!(
            "{{\"gunzip_ms\":{gunzip_ms:.1},\"base_ms\":{base_ms:.1},\"texts_ms\":{texts_ms:.1},\"extras_ms\":{extras_ms:.1},\"passages\":{},\"phases_ms\":{{{}}}}}",
            index.corpus().len(),
            phases.join(",")
        );
    }
    Ok(())
}
