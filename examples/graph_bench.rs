//! Knowledge-graph build benchmark (METHOD.md §1): nodes and edges by type, build time split
//! into embedding / synonym kNN / CSR, peak memory, and the time to add 100 passages to the
//! built graph.
//!
//!     cargo run --release --example graph_bench -- [CORPUS.jsonl] [--add N] [--synonym-weight W]
//!
//! Default corpus: `../shared/data/2wiki-corpus-6k/corpus.jsonl`; default N = 100.
//! For peak memory of the whole process also run it under `/usr/bin/time -v`; the example prints
//! its own high-water mark (`VmHWM`, Linux) after the one-shot build, before the incremental run.
//!
//! **Stand-in triples.** The triples here come from [`stand_in_triples`], not from Cairn's
//! rule-based OpenIE (`cairn::extract`): within each sentence, capitalised spans and numbers are
//! "entities"; each span gives `(title, "mentions", span)` and each pair of neighbouring spans
//! `(span, "co-occurs with", next span)`. That gives entity and triple counts of the same order
//! as the extractor's, so the figures measure the graph code's cost apart from extraction, not
//! graph quality. The build with the real extractor, step by step, is timed by
//! `cairn bench --method catrag` (`graph.graph_build`) and, in the page, by
//! `npm run bench:browser -- catrag` (`graphStepsMs`).
//!
//! Times are wall clock and, in brackets, this process's CPU time (user + system): the machine
//! may be shared, and CPU time is the steadier figure then.
//!
//! Embedder: the bundled static MiniLM embedder (`StaticEmbedder::minilm`, 256 dimensions,
//! compiled in from `assets/static-minilm.bin`; nothing to download).

use std::collections::HashSet;
use std::time::Instant;

use cairn::corpus::parse_jsonl;
use cairn::embed::StaticEmbedder;
use cairn::graph::{Graph, GraphBuilder, GraphConfig, Triple};
use cairn::Passage;

/// STAND-IN for the rule-based OpenIE extractor (not a real extractor; module docs).
fn stand_in_triples(index: u32, p: &Passage) -> Vec<Triple> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let text = p.text.as_str();
    let bytes = text.as_bytes();
    // Sentences: split after '.', '!' or '?' followed by a space (crude; stand-in).
    let mut sentences = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).map_or(true, |&n| n == b' ') {
            sentences.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        sentences.push((start, text.len()));
    }
    for (s, e) in sentences {
        let sentence = &text[s..e];
        let mut spans: Vec<String> = Vec::new();
        let mut cur: Vec<&str> = Vec::new();
        let flush = |cur: &mut Vec<&str>, spans: &mut Vec<String>| {
            if !cur.is_empty() {
                let span = cur.join(" ");
                if !spans.contains(&span) {
                    spans.push(span);
                }
                cur.clear();
            }
        };
        for (k, raw) in sentence.split_whitespace().enumerate() {
            let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
            let first = word.chars().next();
            let capital = first.is_some_and(char::is_uppercase);
            let number = !word.is_empty() && word.chars().all(|c| c.is_ascii_digit());
            // The sentence's first word is capitalised anyway: only a span if the next is too.
            let sentence_start_lower = k == 0 && capital && word.len() <= 3;
            if (capital && !sentence_start_lower) || number {
                cur.push(word);
            } else {
                flush(&mut cur, &mut spans);
            }
            if raw.ends_with([',', ';', ':', '(', ')']) {
                flush(&mut cur, &mut spans);
            }
        }
        flush(&mut cur, &mut spans);
        let span = (s as u32, e as u32);
        let triple = |subject: &str, relation: &str, object: &str| Triple {
            subject: subject.into(),
            relation: relation.into(),
            object: object.into(),
            passage: index,
            sentence: span,
        };
        for (i, x) in spans.iter().enumerate() {
            if *x != p.title {
                out.push(triple(&p.title, "mentions", x));
            }
            if let Some(y) = spans.get(i + 1) {
                out.push(triple(x, "co-occurs with", y));
            }
        }
    }
    out
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// CPU time of this process (user + system), in milliseconds (Linux; 0 elsewhere).
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) * 10.0 // clock ticks of 10 ms (USER_HZ = 100)
}

/// A stopwatch for wall clock and CPU time.
#[derive(Clone, Copy)]
struct Watch(Instant, f64);

impl Watch {
    fn start() -> Self {
        Watch(Instant::now(), cpu_ms())
    }
    fn ms(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1e3
    }
    fn show(&self) -> String {
        format!("{:.0} ms [cpu {:.0}]", self.ms(), cpu_ms() - self.1)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut path = "../shared/data/2wiki-corpus-6k/corpus.jsonl".to_string();
    let mut add = 100usize;
    let mut config = GraphConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--add" => add = args.next().and_then(|n| n.parse().ok()).unwrap_or(add),
            "--synonym-weight" => {
                config.synonym_weight = args.next().and_then(|n| n.parse().ok()).unwrap_or(1.0)
            }
            _ => path = a,
        }
    }
    let passages = parse_jsonl(&path, &std::fs::read_to_string(&path)?)?;
    let per_passage: Vec<Vec<Triple>> =
        passages.iter().enumerate().map(|(i, p)| stand_in_triples(i as u32, p)).collect();
    let triples: Vec<Triple> = per_passage.iter().flatten().cloned().collect();
    let distinct: HashSet<(&str, &str)> =
        passages.iter().map(|p| (p.title.as_str(), p.text.as_str())).collect();
    println!(
        "corpus: {} passages ({} distinct), {} STAND-IN triples ({:.1} per passage; capitalised-span co-occurrence, not OpenIE)",
        passages.len(),
        distinct.len(),
        triples.len(),
        triples.len() as f64 / passages.len().max(1) as f64
    );
    let t = Watch::start();
    let embedder = StaticEmbedder::minilm()?;
    println!("embedder: static MiniLM, 256 dims, loaded in {:.1} ms", t.ms());

    // One-shot build, step by step.
    let total = Watch::start();
    let t = Watch::start();
    let mut b = GraphBuilder::new(config.clone())?;
    let summary = b.add_passages(0, &passages, &triples)?;
    let t_add = t.show();
    let texts = b.pending_embeddings();
    let t = Watch::start();
    b.embed(&embedder, &mut |_, _| {})?;
    let t_embed = t.show();
    let t = Watch::start();
    let stats = b.link_synonyms(&mut |_, _| {})?;
    let t_knn = t.show();
    let t = Watch::start();
    let graph = b.finish()?;
    let t_csr = t.show();
    let t_total = total.show();
    let c = graph.counts();
    println!("add summary: {summary:?}");
    println!(
        "nodes: {} ({} entity, {} passage); facts: {}\nedges: relation {}, synonym {}, context {} ({} arcs)",
        c.nodes,
        c.entity_nodes,
        c.passage_nodes,
        c.facts,
        c.relation_edges,
        c.synonym_edges,
        c.context_edges,
        c.arcs
    );
    println!("build: {t_total}");
    println!("  nodes, facts, relation and context edges: {t_add}");
    println!("  embedding {texts} entity names and facts: {t_embed}");
    println!("  synonym kNN: {t_knn}");
    println!("  CSR: {t_csr}");
    println!(
        "kNN: {} eligible entities, {} pairs, {} full cosines ({:.2}% after the bound), {} ≥ threshold",
        stats.eligible,
        stats.pairs,
        stats.exact,
        100.0 * stats.exact as f64 / stats.pairs.max(1) as f64,
        stats.above_threshold
    );
    let vec_bytes = graph.entity_vectors().as_slice().len() * 4
        + graph.fact_vectors().heap_bytes()
        + graph.token_bags().heap_bytes();
    let csr_bytes = c.arcs * 9 + (c.nodes + 1) * 4;
    println!(
        "memory: vectors {:.1} MB (entities {} rows × 256 f32, or {} names as bags; facts {} rows × 256 i8, or {} as bags of {} tokens over {} distinct table rows shared by both), CSR {:.1} MB",
        vec_bytes as f64 / 1e6,
        graph.entity_vectors().len(),
        graph.token_bags().len(cairn::graph::BagSet::Entities),
        graph.fact_vectors().len(),
        graph.token_bags().len(cairn::graph::BagSet::Facts),
        graph.token_bags().token_count(cairn::graph::BagSet::Facts),
        graph.token_bags().distinct_tokens(),
        csr_bytes as f64 / 1e6
    );
    if let Some(mb) = peak_rss_mb() {
        println!(
            "peak RSS after the one-shot build (whole process, corpus and triples included): {mb:.0} MB"
        );
    }

    // Incremental: the first n − add passages, then add the last `add`.
    let add = add.min(passages.len());
    let cut = passages.len() - add;
    let base_triples: Vec<Triple> = per_passage[..cut].iter().flatten().cloned().collect();
    let new_triples: Vec<Triple> = per_passage[cut..].iter().flatten().cloned().collect();
    let mut b = GraphBuilder::new(config)?;
    b.add_passages(0, &passages[..cut], &base_triples)?;
    b.embed(&embedder, &mut |_, _| {})?;
    b.link_synonyms(&mut |_, _| {})?;
    let base: Graph = b.finish()?;
    let total = Watch::start();
    let t = Watch::start();
    let mut b = base.into_builder();
    let s = b.add_passages(cut as u32, &passages[cut..], &new_triples)?;
    let t_add = t.show();
    let t = Watch::start();
    b.embed(&embedder, &mut |_, _| {})?;
    let t_embed = t.show();
    let t = Watch::start();
    let st = b.link_synonyms(&mut |_, _| {})?;
    let t_knn = t.show();
    let t = Watch::start();
    let extended = b.finish()?;
    let t_csr = t.show();
    println!("add {add} passages to the {cut}-passage graph: {}", total.show());
    println!("  nodes, facts, edges: {t_add}");
    println!("  embedding {} new entities and {} new facts: {t_embed}", s.new_entities, s.new_facts);
    println!("  synonym kNN, new × all ({} pairs, {} full cosines): {t_knn}", st.pairs, st.exact);
    println!("  CSR rebuild: {t_csr}");
    let same = extended.csr().offsets == graph.csr().offsets
        && extended.csr().targets == graph.csr().targets
        && extended.csr().weights == graph.csr().weights
        && extended.facts() == graph.facts();
    println!("incremental graph identical to the one-shot build: {same}");
    Ok(())
}
