//! The engine's one error type. Every fallible public function returns [`Result`]; the wasm
//! module turns an [`Error`] into a JavaScript `Error` carrying the same message.

/// Everything that can go wrong in the engine, phrased so a user can act on it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A line of a JSONL file could not be used. `line` is 1-based.
    #[error("{source_name}, line {line}: {message}")]
    Jsonl {
        /// File name or other label of the input (for example `corpus.jsonl`).
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with that line.
        message: String,
    },
    /// A passage that cannot be indexed (for example a duplicate id).
    #[error("passage {id:?}: {message}")]
    Passage {
        /// The passage id as given.
        id: String,
        /// What is wrong with it.
        message: String,
    },
    /// A configuration value outside its valid range.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A retrieval method name that Cairn does not know.
    #[error("unknown method {name:?} (known methods: {known})")]
    UnknownMethod {
        /// The name as given.
        name: String,
        /// Comma-separated list of known method names.
        known: String,
    },
    /// A dense method was asked of an index without its embedder's passage vectors.
    #[error("method {method:?} needs the {embedder} embedder, which is not loaded")]
    MissingEmbedder {
        /// The method's name.
        method: String,
        /// The embedder slot's name.
        embedder: String,
    },
    /// A graph method (`hipporag`, `catrag`) was asked of an index without a knowledge graph.
    #[error("method {method:?} needs the knowledge graph, which is not built yet: build it first (Index::build_graph)")]
    MissingGraph {
        /// The method's name.
        method: String,
    },
    /// The index was queried before [`crate::Index::build`] or equivalent.
    #[error("the index is not built yet: add passages and build it first")]
    NotBuilt,
    /// A dataset folder is missing or incomplete.
    #[error("dataset {path}: {message}")]
    Dataset {
        /// The folder or file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A static site's folder that cannot be indexed ([`crate::site::read_site`]): it holds no
    /// page.
    #[error("{path}: {message}")]
    Site {
        /// The site's folder.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// Model data (a token table, a vocabulary, model weights) that cannot be used: truncated,
    /// corrupt, of another format version, or made for another vocabulary.
    #[error("{what}: {message}")]
    Model {
        /// Which model data (for example `static embedding table`).
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// Input to Personalized PageRank ([`crate::ppr`]) that cannot be used: CSR arrays of
    /// inconsistent lengths or with out-of-range targets, a negative or non-finite weight,
    /// multiplier or teleport entry, an overlay arc past the end of the graph.
    #[error("PPR input: {0}")]
    PprInput(String),
    /// The PPR teleport (reset) vector has no positive entry, so the walk has nowhere to start
    /// (no facts, no seeds). Not a bug: CatRAG falls back to dense ranking (docs/method/spec.md §3).
    #[error("the PPR teleport vector is all zero: no seed to start the walk from")]
    ZeroTeleport,
    /// Bytes given as an index file ([`crate::index::format`]) that do not start with its magic
    /// bytes: another kind of file.
    #[error("not a Cairn index file (it does not start with the bytes \"CAIRNIDX\")")]
    NotAnIndex,
    /// An index file of a format version this build cannot read (written by a newer Cairn).
    #[error("the index file has format version {found}; this Cairn reads version {supported} and older: update Cairn or rebuild the index")]
    IndexVersion {
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// An index file of an older format version that this build no longer reads (written by an
    /// older Cairn): building the index again with this version makes a file it reads.
    #[error("the index file has format version {found}, written by an older Cairn; this Cairn reads version {oldest} and newer: rebuild the index (cairn index …) with this version")]
    IndexOutdated {
        /// The version in the file.
        found: u32,
        /// The oldest version this build reads.
        oldest: u32,
    },
    /// An index file that ends early (an interrupted download or copy).
    #[error("the index file is truncated: {what} needs {needed} bytes, the file has {have}")]
    IndexTruncated {
        /// Bytes the file would need to hold `what`.
        needed: usize,
        /// Bytes it has.
        have: usize,
        /// What was being read (`the header`, `section graph`, …).
        what: String,
    },
    /// An index opened from a static site's keyword part (`index.cairn.gz`: passage ids and
    /// titles with BM25's postings) was asked for something that needs the passages' texts
    /// before they were read ([`crate::index::Index::attach_texts`]).
    #[error("the passages' texts are not loaded yet (this index was opened from its keyword part): {0} needs them; read the texts file first")]
    TextsNotLoaded(String),
    /// Two files of a static site's index that were not written together (the texts or the
    /// extras of another `cairn index` run): each is sound, they do not belong together.
    #[error("the index's files do not belong together: {0}; write them again with one `cairn index` run and publish them together")]
    IndexPartsMismatch(String),
    /// An index file whose bytes were damaged (a checksum mismatch) or that is inconsistent.
    #[error("the index file is corrupt: {0}")]
    IndexCorrupt(String),
    /// The user's LLM endpoint failed: HTTP status, timeout, connection, an answer that is not a
    /// chat completion, or cancellation ([`crate::llm`]).
    #[error("LLM endpoint: {0}")]
    Llm(String),
    /// An I/O failure, with the path it concerns.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
