//! Repeats one graph method's queries over a built index, for a profiler: builds the index of a
//! dataset folder once (BM25, the static embedder, the knowledge graph), then runs its questions
//! `--rounds` times through `Index::search` and prints the mean wall time per
//! query. Run it under `perf record` to see where a query's time goes without the build's.
//!
//!     cargo run --release --example query_profile -- ../shared/data/musique-scale [--method catrag] [--rounds 20] [--highlights]
//!
//! `--highlights` also marks the query terms in every hit's title and text, as the page does
//! for each result, and prints that part's time.

use std::rc::Rc;
use std::time::Instant;

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::engine::Engine;
use cairn::eval::Dataset;
use cairn::index::{EmbedderSlot, IndexConfig, Method};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let folder =
        args.first().cloned().ok_or("usage: query_profile DATASET_FOLDER [--method M] [--rounds N]")?;
    let method: Method = opt("--method").unwrap_or_else(|| "catrag".into()).parse()?;
    let rounds: usize = opt("--rounds").map_or(Ok(20), |r| r.parse())?;
    let dataset = Dataset::load(std::path::Path::new(&folder))?;
    let queries: Vec<String> = dataset.questions.iter().map(|q| q.question.clone()).collect();
    let mut engine = Engine::with_corpus(IndexConfig::default(), dataset.corpus)?;
    let embedder: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm()?);
    engine.set_embedder(EmbedderSlot::Static, embedder, &mut |_, _, _| {})?;
    engine.build(&mut |_, _, _| {})?;
    engine.build_graph(&mut |_, _, _| {})?;
    let index = engine.into_index()?;
    let highlights = args.iter().any(|a| a == "--highlights");
    let t = Instant::now();
    let mut marking = std::time::Duration::ZERO;
    for _ in 0..rounds {
        for q in &queries {
            let found = index.searcher().search(q, 10, method)?;
            if highlights {
                // What the page adds per query: the query terms marked in every hit's title and text.
                let h = Instant::now();
                let terms = index.searcher().query_terms(q);
                for hit in &found {
                    if let Some(p) = index.corpus().get(hit.passage) {
                        std::hint::black_box(index.searcher().highlights(&terms, &p.text));
                        std::hint::black_box(index.searcher().highlights(&terms, &p.title));
                    }
                }
                marking += h.elapsed();
            }
            std::hint::black_box(found);
        }
    }
    let n = (rounds * queries.len()).max(1);
    println!("{n} queries, {:.3} ms per query", t.elapsed().as_secs_f64() * 1e3 / n as f64);
    if highlights {
        println!("of which highlighting {:.3} ms per query", marking.as_secs_f64() * 1e3 / n as f64);
    }
    Ok(())
}
