//! A test graph for the PPR examples (`ppr_export`, `ppr_bench`), built from a corpus JSONL while
//! the real knowledge graph (`src/graph`) is written: a bipartite passage–word graph of realistic
//! size plus word–word co-occurrence arcs so the weights are not all 1.
//!
//! - nodes `0..P` are the passages in file order; nodes `P..` are the distinct capitalised words
//!   (first letter uppercase, ≥ 2 characters, not in a small list of sentence-initial function
//!   words) of "title text", in order of first appearance;
//! - context edge passage—word for every distinct word of the passage, weight 1 (two arcs);
//! - co-occurrence edge word—word for consecutive capitalised words of a passage (for example
//!   "Lothair" — "II"), weight +1 per occurrence over the corpus (two arcs); no self-loops;
//! - passages without a capitalised word are isolated (dangling) nodes.
//!
//! Arcs of a node are sorted by target, so the CSR arrays are a pure function of the corpus file.

use std::collections::HashMap;

/// CSR arrays plus what the examples need to build queries.
pub struct TestGraph {
    pub passages: usize,
    pub words: Vec<String>,
    pub offsets: Vec<u32>,
    pub targets: Vec<u32>,
    pub weights: Vec<f32>,
    /// For each word node (index `node − passages`): number of passages containing it.
    pub passage_count: Vec<u32>,
}

const STOP: &[&str] = &[
    "The", "A", "An", "He", "She", "It", "In", "On", "At", "His", "Her", "Its", "They", "Their", "This",
    "That", "These", "Those", "After", "Before", "As", "By", "For", "From", "Of", "To", "With", "And",
    "But", "Or", "During", "When", "While", "There", "Since", "Although", "However", "Following",
];

pub fn build(corpus_jsonl: &str) -> Result<TestGraph, Box<dyn std::error::Error>> {
    let mut docs = Vec::new();
    for (i, line) in corpus_jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        let title = v.get("title").and_then(|t| t.as_str()).unwrap_or("");
        let text = v.get("text").and_then(|t| t.as_str()).ok_or_else(|| format!("line {}: no text", i + 1))?;
        docs.push(format!("{title} {text}"));
    }
    let p = docs.len();
    let mut word_ids: HashMap<String, u32> = HashMap::new();
    let mut words: Vec<String> = Vec::new();
    // adjacency as maps node → weight, merged at the end
    let mut context: Vec<Vec<u32>> = Vec::with_capacity(p); // passage → distinct word ids
    let mut cooc: HashMap<(u32, u32), f32> = HashMap::new();
    for doc in &docs {
        let mut seq: Vec<u32> = Vec::new();
        for tok in doc.split(|c: char| !c.is_alphanumeric()) {
            let mut chars = tok.chars();
            let Some(first) = chars.next() else { continue };
            if !first.is_uppercase() || tok.chars().count() < 2 || STOP.contains(&tok) {
                continue;
            }
            let next = words.len() as u32;
            let id = *word_ids.entry(tok.to_string()).or_insert_with(|| {
                words.push(tok.to_string());
                next
            });
            seq.push(id);
        }
        for pair in seq.windows(2) {
            let (a, b) = (pair[0].min(pair[1]), pair[0].max(pair[1]));
            if a != b {
                *cooc.entry((a, b)).or_insert(0.0) += 1.0;
            }
        }
        seq.sort_unstable();
        seq.dedup();
        context.push(seq);
    }
    let n = p + words.len();
    let mut adj: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
    let mut passage_count = vec![0u32; words.len()];
    for (doc, ws) in context.iter().enumerate() {
        for &w in ws {
            let wn = (p + w as usize) as u32;
            adj[doc].push((wn, 1.0));
            adj[wn as usize].push((doc as u32, 1.0));
            passage_count[w as usize] += 1;
        }
    }
    for (&(a, b), &w) in &cooc {
        let (an, bn) = (p + a as usize, p + b as usize);
        adj[an].push((bn as u32, w));
        adj[bn].push((an as u32, w));
    }
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets = Vec::new();
    let mut weights = Vec::new();
    offsets.push(0u32);
    for row in &mut adj {
        row.sort_unstable_by_key(|e| e.0);
        for &(t, w) in row.iter() {
            targets.push(t);
            weights.push(w);
        }
        offsets.push(targets.len() as u32);
    }
    Ok(TestGraph { passages: p, words, offsets, targets, weights, passage_count })
}

/// Deterministic 64-bit LCG (no dependency on `rand`).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }
    pub fn below(&mut self, k: usize) -> usize {
        ((self.next_u32() as u64 * k as u64) >> 32) as usize
    }
    pub fn unit(&mut self) -> f64 {
        f64::from(self.next_u32()) / 4294967296.0
    }
}

/// A CatRAG-like query: 5–10 word (entity) seeds with weight 1/|passages containing the word|
/// (channel A's fact score ÷ passage count, with fact score 1), plus 0.05 × a min–max normalised
/// random "dense score" on every passage (METHOD.md §3). Seeds are drawn among words in 2–200
/// passages, like real entity mentions.
pub fn query(g: &TestGraph, rng: &mut Lcg) -> (Vec<f64>, Vec<u32>) {
    let n = g.offsets.len() - 1;
    let mut teleport = vec![0.0; n];
    let k = 5 + rng.below(6);
    let mut seeds = Vec::new();
    while seeds.len() < k {
        let w = rng.below(g.words.len());
        let c = g.passage_count[w];
        let node = (g.passages + w) as u32;
        if (2..=200).contains(&c) && !seeds.contains(&node) {
            seeds.push(node);
            teleport[node as usize] = 1.0 / f64::from(c);
        }
    }
    let dense: Vec<f64> = (0..g.passages).map(|_| rng.unit()).collect();
    let (lo, hi) = dense.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    for (i, x) in dense.iter().enumerate() {
        teleport[i] += 0.05 * (x - lo) / (hi - lo);
    }
    (teleport, seeds)
}

/// A CatRAG-like overlay around the seeds: on each seed's arcs, tiers {0, 0.25, 2.5, 5} on word
/// arcs and the key-fact boost 1 + β = 3.5 on some passage arcs; and one seed's arcs all zeroed
/// (it becomes dangling for the query). Returns `(arc, multiplier)` pairs.
pub fn overlay(g: &TestGraph, seeds: &[u32], rng: &mut Lcg) -> Vec<(usize, f32)> {
    let mut out = Vec::new();
    for (i, &s) in seeds.iter().enumerate() {
        let (lo, hi) = (g.offsets[s as usize] as usize, g.offsets[s as usize + 1] as usize);
        for a in lo..hi {
            if i == 0 {
                out.push((a, 0.0));
            } else if (g.targets[a] as usize) < g.passages {
                if rng.below(3) == 0 {
                    out.push((a, 3.5));
                }
            } else {
                out.push((a, [0.0, 0.25, 2.5, 5.0][rng.below(4)]));
            }
        }
    }
    out
}
