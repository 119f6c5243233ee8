//! The method table: one [`MethodRow`] per retrieval method (its name, words, family, the stage
//! that ranks and the optional rerank), from which everything else about a method is read —
//! [`Method::needs`], [`Method::info`] (the wasm module's `methods()`), the parser and the
//! CLI's `--method` help ([`Method::help_list`]), `cairn methods --json` (read by
//! `tools/eval_table.py` and the page's end-to-end test).
//!
//! Adding a method is one row in [`BUILT_IN`], plus the code of its stage when it needs a new
//! [`Stage`] (`crate::search` dispatches on the stage, never on the method). The test row
//! `test-bm25` (built with `cfg(test)` or the `test-method` feature) shows that a row alone
//! reaches the parser, `methods()`, the CLI and the search.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::cage::CageConfig;
use crate::catrag::GraphMethod;
use crate::error::{Error, Result};
use crate::index::RRF_K;

/// The embedders a method can need; an [`crate::index::Index`] holds passage vectors for each
/// one attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedderSlot {
    /// The static embedder (methods `dense`, `hybrid`).
    Static,
    /// The MiniLM transformer (method `dense-minilm`).
    Minilm,
}

impl EmbedderSlot {
    /// Every slot.
    pub const ALL: [EmbedderSlot; 2] = [EmbedderSlot::Static, EmbedderSlot::Minilm];

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The slot's name (`static`, `minilm`).
    pub fn name(self) -> &'static str {
        match self {
            EmbedderSlot::Static => "static",
            EmbedderSlot::Minilm => "minilm",
        }
    }
}

/// How a method ranks before any rerank: the stage code a row names. `crate::search` runs a
/// method by its stage, so a new method over an existing stage needs no search code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Okapi BM25 over the query's term groups (typo and prefix expansion;
    /// [`crate::index::Bm25`]).
    Bm25,
    /// Cosine of the query with every passage under one embedder's vectors
    /// ([`crate::index::DenseField`]).
    Dense(EmbedderSlot),
    /// Reciprocal-rank fusion (k = [`RRF_K`]) of BM25 and the static embedder's dense ranking,
    /// each to depth [`crate::index::RRF_DEPTH`] ([`crate::index::reciprocal_rank_fusion`]).
    Hybrid,
    /// Personalized PageRank over the knowledge graph ([`crate::catrag`]): HippoRAG 2's static
    /// walk or CatRAG's query-aware one.
    Graph(GraphMethod),
}

/// A rerank of a first stage's top candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rerank {
    /// CAGE (docs/method/spec.md §4): the first stage's top [`CageConfig::candidates`] reranked
    /// by the coherence of their stored graph embeddings, fused with relevance.
    Cage,
}

/// A method's family, as a menu groups methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Word matching (`bm25`).
    Lexical,
    /// Vector similarity (`dense`, `dense-minilm`).
    Dense,
    /// A fusion of lexical and dense (`hybrid`).
    Hybrid,
    /// A walk of the knowledge graph (`hipporag`, `catrag`).
    Graph,
    /// A CAGE rerank of another method (`cage`, `bm25+cage`, `catrag+cage`).
    Cage,
}

impl Family {
    /// Every family, in menu order.
    pub const ALL: [Family; 5] = [Family::Lexical, Family::Dense, Family::Hybrid, Family::Graph, Family::Cage];

    /// The family's name (`lexical`, `dense`, `hybrid`, `graph`, `cage`).
    pub fn name(self) -> &'static str {
        match self {
            Family::Lexical => "lexical",
            Family::Dense => "dense",
            Family::Hybrid => "hybrid",
            Family::Graph => "graph",
            Family::Cage => "cage",
        }
    }
}

/// One row of the method table. Texts may hold `{n}` (CAGE's default depth,
/// [`CageConfig::candidates`]) and `{rrf_k}` ([`RRF_K`]), filled in by [`Method::info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodRow {
    /// The name [`Method::from_str`] accepts and [`Method::name`] prints (`catrag`).
    pub name: &'static str,
    /// The short name of a results line (`CatRAG`).
    pub short: &'static str,
    /// The label of a method menu (`CatRAG (query-aware PPR on the knowledge graph)`).
    pub label: &'static str,
    /// The family a menu groups it in.
    pub family: Family,
    /// How it ranks first.
    pub stage: Stage,
    /// What reranks the stage's top candidates, if anything. A row with a rerank has as its
    /// first stage the row of the same stage without one ([`Method::cage_first_stage`]).
    pub rerank: Option<Rerank>,
    /// One sentence on how it ranks.
    pub description: &'static str,
    /// What its score is.
    pub score: &'static str,
}

/// The fused score's caption, shared by the CAGE rows.
const CAGE_SCORE: &str =
    "CAGE fused score: α · first-stage score (min–max) + (1 − α) · min–max(coherence) over the {n} candidates";

/// The methods every build knows, in menu order (the order of `methods()` and of
/// [`Method::all`]).
pub const BUILT_IN: &[MethodRow] = &[
    MethodRow {
        name: "bm25",
        short: "BM25",
        label: "BM25",
        family: Family::Lexical,
        stage: Stage::Bm25,
        rerank: None,
        description: "Okapi BM25 over title and text: passages that share the query's words, rare words weighing most.",
        score: "BM25 score",
    },
    MethodRow {
        name: "dense",
        short: "dense",
        label: "Dense (static MiniLM)",
        family: Family::Dense,
        stage: Stage::Dense(EmbedderSlot::Static),
        rerank: None,
        description: "Cosine similarity of static-embedder vectors (distilled from all-MiniLM-L6-v2): passages close in meaning, shared words or not.",
        score: "Cosine similarity",
    },
    MethodRow {
        name: "dense-minilm",
        short: "dense MiniLM",
        label: "Dense (MiniLM transformer)",
        family: Family::Dense,
        stage: Stage::Dense(EmbedderSlot::Minilm),
        rerank: None,
        description: "Cosine similarity of all-MiniLM-L6-v2 vectors (the transformer itself).",
        score: "Cosine similarity (MiniLM)",
    },
    MethodRow {
        name: "hybrid",
        short: "hybrid",
        label: "Hybrid (BM25 + dense, RRF)",
        family: Family::Hybrid,
        stage: Stage::Hybrid,
        rerank: None,
        description: "Reciprocal-rank fusion (k = {rrf_k}) of BM25 and dense.",
        score: "RRF score (reciprocal-rank fusion of BM25 and dense)",
    },
    MethodRow {
        name: "hipporag",
        short: "HippoRAG 2",
        label: "HippoRAG 2 (static PPR on the knowledge graph)",
        family: Family::Graph,
        stage: Stage::Graph(GraphMethod::HippoRag),
        rerank: None,
        description: "HippoRAG 2: static Personalized PageRank over the knowledge graph from the query's fact seeds.",
        score: "Personalized PageRank mass",
    },
    MethodRow {
        name: "catrag",
        short: "CatRAG",
        label: "CatRAG (query-aware PPR on the knowledge graph)",
        family: Family::Graph,
        stage: Stage::Graph(GraphMethod::CatRag),
        rerank: None,
        description: "CatRAG: HippoRAG 2 with symbolic anchoring, key-fact boost, coarse pruning and query-aware edge tiering.",
        score: "Personalized PageRank mass (query-aware)",
    },
    MethodRow {
        name: "cage",
        short: "CAGE",
        label: "CAGE (dense top {n}, reranked by passage-graph coherence)",
        family: Family::Cage,
        stage: Stage::Dense(EmbedderSlot::Static),
        rerank: Some(Rerank::Cage),
        description: "CAGE: dense's top {n} reranked by the coherence of their passage graphs (R-GCN embeddings), fused with relevance.",
        score: CAGE_SCORE,
    },
    MethodRow {
        name: "bm25+cage",
        short: "BM25 + CAGE",
        label: "BM25 + CAGE (BM25 top {n}, reranked by coherence)",
        family: Family::Cage,
        stage: Stage::Bm25,
        rerank: Some(Rerank::Cage),
        description: "CAGE: BM25's top {n} reranked by the coherence of their passage graphs (R-GCN embeddings), fused with relevance.",
        score: CAGE_SCORE,
    },
    MethodRow {
        name: "catrag+cage",
        short: "CatRAG + CAGE",
        label: "CatRAG + CAGE (CatRAG top {n}, reranked by coherence)",
        family: Family::Cage,
        stage: Stage::Graph(GraphMethod::CatRag),
        rerank: Some(Rerank::Cage),
        description: "CAGE: CatRAG's top {n} reranked by the coherence of their passage graphs (R-GCN embeddings), fused with relevance.",
        score: CAGE_SCORE,
    },
];

/// Rows that exist only in test builds (`cfg(test)` or the `test-method` feature): a method
/// whose row is all there is to it, so that a test can see it reach every list.
#[cfg(any(test, feature = "test-method"))]
pub const TEST_ROWS: &[MethodRow] = &[MethodRow {
    name: "test-bm25",
    short: "test BM25",
    label: "Test BM25 (the bm25 stage under another name)",
    family: Family::Lexical,
    stage: Stage::Bm25,
    rerank: None,
    description: "A test row: BM25's ranking under a name of its own, added by its table row alone.",
    score: "BM25 score",
}];

/// Rows that exist only in test builds (none in this build).
#[cfg(not(any(test, feature = "test-method")))]
pub const TEST_ROWS: &[MethodRow] = &[];

/// A retrieval method: a row of the method table ([`BUILT_IN`]). Parse one from its name with
/// [`str::parse`]; [`Method::all`] lists them. The constants (`Method::Catrag`) name the rows code
/// refers to; a misspelt name in one fails the build.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Method(u8);

/// The row at table position `i` (the built-in rows, then the test rows).
const fn row_at(i: usize) -> &'static MethodRow {
    if i < BUILT_IN.len() {
        &BUILT_IN[i]
    } else {
        &TEST_ROWS[i - BUILT_IN.len()]
    }
}

/// Whether two names are equal, byte for byte (a `const fn`).
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[allow(non_upper_case_globals)]
impl Method {
    /// `bm25`.
    pub const Bm25: Method = Method::named("bm25");
    /// `dense`.
    pub const Dense: Method = Method::named("dense");
    /// `dense-minilm`.
    pub const DenseMinilm: Method = Method::named("dense-minilm");
    /// `hybrid`.
    pub const Hybrid: Method = Method::named("hybrid");
    /// `hipporag`.
    pub const Hipporag: Method = Method::named("hipporag");
    /// `catrag`.
    pub const Catrag: Method = Method::named("catrag");
    /// `cage`.
    pub const Cage: Method = Method::named("cage");
    /// `bm25+cage`.
    pub const Bm25Cage: Method = Method::named("bm25+cage");
    /// `catrag+cage`.
    pub const CatragCage: Method = Method::named("catrag+cage");

    /// How many methods this build knows.
    pub const COUNT: usize = BUILT_IN.len() + TEST_ROWS.len();

    /// The method of the table row named `name`; a name that is not in the table fails the
    /// build when used in a constant (a panic during constant evaluation).
    const fn named(name: &str) -> Method {
        let mut i = 0;
        while i < Method::COUNT {
            if same_name(row_at(i).name, name) {
                return Method(i as u8);
            }
            i += 1;
        }
        panic!("no method of that name in the method table")
    }

    /// Every method, in table order.
    pub const ALL: [Method; Method::COUNT] = {
        let mut all = [Method(0); Method::COUNT];
        let mut i = 0;
        while i < Method::COUNT {
            all[i] = Method(i as u8);
            i += 1;
        }
        all
    };

    /// Every method's name, in table order, as accepted by `FromStr` and printed by `Display`.
    pub const NAMES: [&'static str; Method::COUNT] = {
        let mut names = [""; Method::COUNT];
        let mut i = 0;
        while i < Method::COUNT {
            names[i] = row_at(i).name;
            i += 1;
        }
        names
    };

    /// Every method, in table order.
    pub fn all() -> impl Iterator<Item = Method> {
        Method::ALL.into_iter()
    }

    /// Every method's name, in table order (as [`Method::NAMES`]).
    pub fn names() -> Vec<&'static str> {
        Method::NAMES.to_vec()
    }

    /// The names joined for a help text or an error (`bm25, dense, …, catrag+cage`).
    pub fn help_list() -> String {
        Method::names().join(", ")
    }

    /// Whether the method is one of [`BUILT_IN`] (not a test row).
    pub fn is_built_in(self) -> bool {
        (self.0 as usize) < BUILT_IN.len()
    }

    /// The method's row of the table.
    pub fn row(self) -> &'static MethodRow {
        row_at(self.0 as usize)
    }

    /// The method's name.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The stage that ranks first.
    pub fn stage(self) -> Stage {
        self.row().stage
    }

    /// The rerank of the stage's top candidates, if any.
    pub fn rerank(self) -> Option<Rerank> {
        self.row().rerank
    }

    /// Whether the method ranks by meaning alone, so that a query sharing no word with any
    /// passage (a paraphrase) still has answers: those whose stage is dense (`dense`,
    /// `dense-minilm` and `cage`, which reranks `dense`). The "nothing matches" rule
    /// ([`crate::search::Searcher::nothing_matches`]) does not apply to them; every other method
    /// answers a query none of whose terms occurs in the corpus with no hit.
    pub fn ranks_by_meaning_alone(self) -> bool {
        matches!(self.stage(), Stage::Dense(_))
    }

    /// Whether the search checks "nothing matches" before running the method (and then returns
    /// no hit without running it): every method but those that rank by meaning alone, those whose
    /// stage checks it itself (a graph walk, which keeps a retrieval that says why) and plain
    /// BM25 (which finds nothing by itself then).
    pub fn gated(self) -> bool {
        !self.ranks_by_meaning_alone()
            && self.graph_method().is_none()
            && !(self.stage() == Stage::Bm25 && self.rerank().is_none())
    }

    /// For a method with a rerank, the first stage whose top N it reranks: the row of the same
    /// stage without a rerank (`cage` → `dense`, `bm25+cage` → `bm25`, `catrag+cage` →
    /// `catrag`); `None` for the others.
    pub fn cage_first_stage(self) -> Option<Method> {
        self.rerank()?;
        let stage = self.stage();
        Method::all().find(|m| m.stage() == stage && m.rerank().is_none())
    }

    /// The embedder whose passage vectors the method needs, if any: a dense stage's own; the
    /// static embedder for `hybrid`, the graph methods (their dense passage weights) and CAGE
    /// (its relevance term); none for BM25.
    pub fn embedder(self) -> Option<EmbedderSlot> {
        match (self.stage(), self.rerank()) {
            (Stage::Dense(slot), None) => Some(slot),
            (Stage::Bm25, None) => None,
            _ => Some(EmbedderSlot::Static),
        }
    }

    /// The graph method this is, if it walks the knowledge graph (then it also needs
    /// [`crate::index::Index::build_graph`]); `catrag+cage` walks it as its first stage.
    pub fn graph_method(self) -> Option<GraphMethod> {
        match self.stage() {
            Stage::Graph(gm) => Some(gm),
            _ => None,
        }
    }

    /// The method's family.
    pub fn family(self) -> &'static str {
        self.row().family.name()
    }

    /// The method's short name, as a results line shows it (`CatRAG`, `BM25 + CAGE`).
    pub fn short_label(self) -> &'static str {
        self.row().short
    }

    /// The method's menu label, with the default CAGE depth ([`CageConfig::candidates`]).
    pub fn label(self) -> String {
        fill(self.row().label)
    }

    /// Whether it completes the query's last word as a prefix ([`crate::index::QueryOptions::prefix`]):
    /// the methods whose own ranking reads BM25's term groups (`bm25`, `hybrid`); a rerank runs
    /// its first stage without completion.
    pub fn prefix(self) -> bool {
        self.rerank().is_none() && matches!(self.stage(), Stage::Bm25 | Stage::Hybrid)
    }

    /// What the method needs before it can run.
    pub fn needs(self) -> MethodNeeds {
        MethodNeeds {
            graph: self.graph_method().is_some(),
            embedder: self.embedder(),
            cage: self.rerank() == Some(Rerank::Cage),
            llm: self.graph_method() == Some(GraphMethod::CatRag),
        }
    }

    /// The method's names, words and needs, with the default configuration's figures.
    pub fn info(self) -> MethodInfo {
        let row = self.row();
        let first = self.cage_first_stage();
        MethodInfo {
            name: row.name,
            label: self.label(),
            short: row.short,
            family: self.family(),
            needs: self.needs(),
            description: fill(row.description),
            score: fill(row.score),
            prefix: self.prefix(),
            first_stage: first.map(Method::name),
            candidates: first.map(|_| CageConfig::default().candidates),
        }
    }

    /// Every method's [`MethodInfo`], in table order: what the wasm module's `methods()` and
    /// `cairn methods --json` serialise.
    pub fn infos() -> Vec<MethodInfo> {
        Method::all().map(Method::info).collect()
    }
}

/// A row's text with `{n}` and `{rrf_k}` filled in from the default configuration.
fn fill(text: &str) -> String {
    text.replace("{n}", &CageConfig::default().candidates.to_string()).replace("{rrf_k}", &RRF_K.to_string())
}

/// What a method needs before it can run, as [`Method::needs`] reports it (and `methods()` in
/// the wasm module, for the page's "needs the graph / needs the model" logic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MethodNeeds {
    /// It walks the knowledge graph: [`crate::index::Index::build_graph`] first.
    pub graph: bool,
    /// The embedder whose passage vectors it needs ([`Method::embedder`]); `None`: none.
    pub embedder: Option<EmbedderSlot>,
    /// It reranks with CAGE: every passage's graph embedding first
    /// ([`crate::index::Index::attach_cage`]).
    pub cage: bool,
    /// It can rate its query's edges with the user's LLM endpoint when one is configured
    /// (CatRAG's edge tiering, docs/method/spec.md §3); never required: without one it tiers
    /// offline.
    pub llm: bool,
}

/// One method as a user interface lists it ([`Method::info`]): names, words and needs, so that
/// no front end restates them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodInfo {
    /// The name `FromStr` accepts (`catrag`).
    pub name: &'static str,
    /// The label of a method menu (`CatRAG (query-aware PPR on the knowledge graph)`).
    pub label: String,
    /// The short name of a results line (`CatRAG`).
    pub short: &'static str,
    /// The method's family ([`Family::name`]).
    pub family: &'static str,
    /// What it needs before it can run.
    pub needs: MethodNeeds,
    /// One sentence on how it ranks.
    pub description: String,
    /// What its score is (`Personalized PageRank mass (query-aware)`).
    pub score: String,
    /// It completes the query's last word as a prefix ([`Method::prefix`]): `bm25` and `hybrid`
    /// (its BM25 side), the methods a page can search with as the user types.
    pub prefix: bool,
    /// For the CAGE methods, the first stage whose top [`Self::candidates`] they rerank.
    pub first_stage: Option<&'static str>,
    /// For the CAGE methods, how many first-stage candidates they rerank (the default
    /// [`CageConfig::candidates`], 20).
    pub candidates: Option<usize>,
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Method({:?})", self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// The method named `s` (trimmed, any case).
    ///
    /// # Errors
    /// [`Error::UnknownMethod`] with every name this build knows.
    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.trim().to_ascii_lowercase();
        Method::all()
            .find(|m| m.name() == wanted)
            .ok_or_else(|| Error::UnknownMethod { name: s.to_string(), known: Method::help_list() })
    }
}

impl Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_info_lists_needs_and_words_for_every_method() {
        let infos: Vec<MethodInfo> = Method::all().filter(|m| m.is_built_in()).map(Method::info).collect();
        let names: Vec<&str> = infos.iter().map(|i| i.name).collect();
        assert_eq!(
            names,
            ["bm25", "dense", "dense-minilm", "hybrid", "hipporag", "catrag", "cage", "bm25+cage", "catrag+cage"]
        );
        let catrag_cage = &infos[8];
        assert_eq!(catrag_cage.label, "CatRAG + CAGE (CatRAG top 20, reranked by coherence)");
        assert_eq!(catrag_cage.family, "cage");
        assert_eq!(
            catrag_cage.needs,
            MethodNeeds { graph: true, embedder: Some(EmbedderSlot::Static), cage: true, llm: true }
        );
        assert_eq!((catrag_cage.first_stage, catrag_cage.candidates), (Some("catrag"), Some(20)));
        assert_eq!(infos[0].needs, MethodNeeds { graph: false, embedder: None, cage: false, llm: false });
        assert_eq!(infos[2].needs.embedder, Some(EmbedderSlot::Minilm));
        assert_eq!(infos[3].description, "Reciprocal-rank fusion (k = 60) of BM25 and dense.");
        assert_eq!(
            infos[6].description,
            "CAGE: dense's top 20 reranked by the coherence of their passage graphs (R-GCN embeddings), fused with relevance."
        );
        assert_eq!(
            infos[7].score,
            "CAGE fused score: α · first-stage score (min–max) + (1 − α) · min–max(coherence) over the 20 candidates"
        );
        let families: Vec<&str> = infos.iter().map(|i| i.family).collect();
        assert_eq!(families, ["lexical", "dense", "dense", "hybrid", "graph", "graph", "cage", "cage", "cage"]);
        let llm: Vec<&str> = infos.iter().filter(|i| i.needs.llm).map(|i| i.name).collect();
        assert_eq!(llm, ["catrag", "catrag+cage"]);
        let graph: Vec<&str> = infos.iter().filter(|i| i.needs.graph).map(|i| i.name).collect();
        assert_eq!(graph, ["hipporag", "catrag", "catrag+cage"]);
        let prefix: Vec<&str> = infos.iter().filter(|i| i.prefix).map(|i| i.name).collect();
        assert_eq!(prefix, ["bm25", "hybrid"]);
        let first: Vec<Option<&str>> = infos.iter().map(|i| i.first_stage).collect();
        assert_eq!(first[6..], [Some("dense"), Some("bm25"), Some("catrag")]);
        assert!(first[..6].iter().all(Option::is_none));
    }

    /// The predicates the search reads, as they were written per method before the table:
    /// meaning alone (dense, dense-minilm, cage); gated (hybrid, bm25+cage); the embedders.
    #[test]
    fn derived_predicates_match_the_methods_semantics() {
        let meaning: Vec<&str> = Method::all().filter(|m| m.ranks_by_meaning_alone()).map(Method::name).collect();
        assert_eq!(meaning, ["dense", "dense-minilm", "cage"]);
        let gated: Vec<&str> = Method::all().filter(|m| m.gated()).map(Method::name).collect();
        assert_eq!(gated, ["hybrid", "bm25+cage"]);
        let embedders: Vec<Option<&str>> =
            Method::all().take(9).map(|m| m.embedder().map(EmbedderSlot::name)).collect();
        let s = Some("static");
        assert_eq!(embedders, [None, s, Some("minilm"), s, s, s, s, s, s]);
        assert_eq!(Method::CatragCage.graph_method(), Some(GraphMethod::CatRag));
        assert_eq!(Method::Hipporag.graph_method(), Some(GraphMethod::HippoRag));
        assert_eq!(Method::Cage.cage_first_stage(), Some(Method::Dense));
        assert_eq!(format!("{:?}", Method::Bm25Cage), "Method(\"bm25+cage\")");
    }

    #[test]
    fn names_parse_back_and_serde_uses_them() {
        for m in Method::all() {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(m.name().to_uppercase().parse::<Method>().unwrap(), m);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<Method>(&format!("\"{}\"", m.name())).unwrap(), m);
        }
        let err = "bm26".parse::<Method>().unwrap_err().to_string();
        assert!(err.contains("bm25, dense, dense-minilm, hybrid, hipporag, catrag, cage, bm25+cage, catrag+cage"), "{err}");
        assert!(serde_json::from_str::<Method>("\"pagerank\"").is_err());
        let names = Method::names();
        let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "method names are unique");
    }

    /// A row alone makes a method: the test row `test-bm25` (only in test builds) is parsed,
    /// listed by `methods()`'s infos and the help list, and searched through the BM25 stage with
    /// BM25's exact hits, with no code that names it.
    #[test]
    fn a_test_row_alone_reaches_every_list_and_the_search() {
        let m: Method = "test-bm25".parse().unwrap();
        assert_eq!(m.row(), &TEST_ROWS[0]);
        assert!(Method::names().contains(&"test-bm25"));
        assert!(Method::help_list().ends_with("catrag+cage, test-bm25"));
        let info = Method::infos().into_iter().find(|i| i.name == "test-bm25").unwrap();
        assert_eq!(info.family, "lexical");
        assert_eq!(info.needs, MethodNeeds { graph: false, embedder: None, cage: false, llm: false });
        assert!(info.prefix && info.first_stage.is_none());
        let mut corpus = crate::corpus::Corpus::new();
        for (id, title, text) in [
            ("a", "River", "The river runs past the mountain."),
            ("b", "Mountain", "A mountain of granite."),
            ("c", "Sea", "Salt water and waves."),
        ] {
            let p = crate::corpus::Passage { id: id.into(), title: title.into(), text: text.into() };
            corpus.add(p).unwrap();
        }
        let index = crate::index::Index::build(corpus, &crate::index::IndexConfig::default()).unwrap();
        let want = index.searcher().search("mountain river", 3, Method::Bm25).unwrap();
        assert_eq!(want.len(), 2);
        assert_eq!(index.searcher().search("mountain river", 3, m).unwrap(), want);
        assert!(index.supports(m));
    }
    /// The TypeScript type of `methods()` (in the wasm module, not compiled natively) names the
    /// families as a union: it must list exactly the table's.
    #[test]
    fn the_typescript_family_union_lists_every_family() {
        let wasm = include_str!("../wasm.rs");
        let line = wasm.lines().find(|l| l.trim_start().starts_with("family: '")).unwrap();
        let listed: Vec<&str> = line.split('\'').skip(1).step_by(2).collect();
        let families: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(listed, families, "src/wasm.rs's MethodInfo type: {line}");
        for m in Method::all() {
            assert!(Family::ALL.iter().any(|f| f.name() == m.family()));
        }
    }
    /// README's table of methods ("What works today") has a row for every built-in method: a
    /// method added as a row of the table is not done until a person can read about it there.
    #[test]
    fn the_readme_table_has_every_method() {
        let readme = include_str!("../../README.md");
        let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
        for m in Method::all().filter(|m| m.is_built_in()) {
            let cell = format!("`{}`", m.name());
            assert!(
                rows.iter().any(|r| r.split('|').nth(1).is_some_and(|c| c.contains(&cell))),
                "README.md's method table has no row for {cell}"
            );
        }
    }
}
