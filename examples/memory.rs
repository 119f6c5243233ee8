//! Where the bytes go when a corpus is indexed and its knowledge graph built, as the page does
//! it (`Engine`: BM25, static passage vectors, OpenIE, entity and fact vectors, synonym kNN,
//! CSR, per-graph search structures), natively with a counting allocator:
//!
//! - per phase: the heap in use at its end and the heap's peak during it (MB, 10⁶ bytes);
//! - at the end: [`cairn::index::Index::memory_breakdown`], the bytes each structure holds.
//!
//! The page's wasm linear memory never shrinks, so the largest phase peak (plus the allocator's
//! fragmentation) is what the page keeps.
//!
//! ```text
//! cargo run --release --example memory -- ../shared/data/2wiki-corpus-6k
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn::embed::{Embedder, StaticEmbedder};
use cairn::engine::{Engine, Phase};
use cairn::eval::Dataset;
use cairn::index::{EmbedderSlot, IndexConfig};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = IN_USE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the same arguments; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // While a block moves, both copies exist (wasm's allocator copies): count the new
            // block before the old one is released.
            grew(new_size);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mb(bytes: usize) -> f64 {
    (bytes as f64 / 1e6 * 10.0).round() / 10.0
}

/// Prints the heap in use and the peak since the last call, then starts a new peak.
fn phase_end(name: &str, rows: &mut Vec<serde_json::Value>) {
    let now = IN_USE.load(Ordering::Relaxed);
    let peak = PEAK.swap(now, Ordering::Relaxed);
    rows.push(serde_json::json!({ "phase": name, "in_use_mb": mb(now), "peak_mb": mb(peak) }));
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "../shared/data/2wiki-corpus-6k".into());
    let mut phases = Vec::new();
    phase_end("start", &mut phases);
    let embedder: Rc<dyn Embedder> = Rc::new(StaticEmbedder::minilm()?);
    phase_end("static embedder", &mut phases);
    let dataset = Dataset::load(std::path::Path::new(&dir))?;
    phase_end("corpus loaded", &mut phases);
    let mut engine = Engine::with_corpus(IndexConfig::default(), dataset.corpus)?;
    engine.set_embedder(EmbedderSlot::Static, embedder, &mut |_, _, _| {})?;
    // Phase boundaries from the progress reports: a phase ends when the next one reports.
    let rows = std::cell::RefCell::new(std::mem::take(&mut phases));
    let current = std::cell::Cell::new(None::<Phase>);
    {
        let mut on_progress = |p: Phase, _: usize, _: usize| {
            if current.get() != Some(p) {
                if let Some(c) = current.get() {
                    phase_end(c.name(), &mut rows.borrow_mut());
                }
                current.set(Some(p));
            }
        };
        engine.build(&mut on_progress)?;
        engine.build_graph(&mut on_progress)?;
    }
    let mut phases = rows.into_inner();
    if let Some(c) = current.get() {
        phase_end(&format!("{} and the rest of the build (CSR, search structures)", c.name()), &mut phases);
    }
    let index = engine.into_index()?;
    let hits = index.searcher().search("Who directed the film?", 10, cairn::index::Method::Catrag)?;
    std::hint::black_box(hits);
    phase_end("one catrag search", &mut phases);
    let parts = index.memory_breakdown();
    let total: usize = parts.iter().map(|(_, b)| b).sum();
    let out = serde_json::json!({
        "data": dir,
        "phases": phases,
        "heap_in_use_mb": mb(IN_USE.load(Ordering::Relaxed)),
        "structures_mb": parts.iter().map(|(n, b)| serde_json::json!([n, mb(*b)])).collect::<Vec<_>>(),
        "structures_total_mb": mb(total),
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
