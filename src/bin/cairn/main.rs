//! `cairn`: the native command-line interface — `eval`, `bench`, `query`, `graph`, `index` and
//! `methods`, one module per subcommand; `options` holds the flag groups they share.
//!
//! Every error is one line on stderr starting with `error:` and exits with status 2.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(cli::main());
}

#[cfg(not(target_arch = "wasm32"))]
mod bench;
#[cfg(not(target_arch = "wasm32"))]
mod common;
#[cfg(not(target_arch = "wasm32"))]
mod eval;
#[cfg(not(target_arch = "wasm32"))]
mod graph;
#[cfg(not(target_arch = "wasm32"))]
mod index;
#[cfg(not(target_arch = "wasm32"))]
mod methods;
#[cfg(not(target_arch = "wasm32"))]
mod options;
#[cfg(not(target_arch = "wasm32"))]
mod query;
#[cfg(not(target_arch = "wasm32"))]
mod site_assets;

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use clap::{Parser, Subcommand};

    use crate::bench::{bench, BenchArgs};
    use crate::eval::{eval, EvalArgs};
    use crate::graph::{graph, GraphArgs};
    use crate::index::{index_site, IndexArgs};
    use crate::methods::{methods, MethodsArgs};
    use crate::query::{query, QueryArgs};

    /// Multi-hop retrieval for RAG, natively: evaluate methods, benchmark indexing, query a corpus.
    #[derive(Parser)]
    #[command(name = "cairn", version, about)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Recall@2, Recall@5 and FCR@5 of a method on a dataset folder (docs/method/spec.md §5).
        Eval(EvalArgs),
        /// Indexing speed, query latency and memory on a dataset folder; one JSON object.
        Bench(BenchArgs),
        /// Search a corpus (a dataset folder or a .jsonl file) and print the top passages.
        Query(QueryArgs),
        /// Build the knowledge graph of a dataset folder and report its size, extraction
        /// statistics, build times, peak memory and the time to add 100 passages.
        Graph(GraphArgs),
        /// Index a static site (HTML and Markdown pages) or a JSONL corpus and write the index
        /// file with the wasm package, a JS loader and a drop-in search widget.
        Index(IndexArgs),
        /// List the retrieval methods of this build: name, label, family, what each needs and
        /// how it ranks (`--json`: as the JS API's `methods()`).
        Methods(MethodsArgs),
    }

    pub fn main() -> i32 {
        let cli = Cli::parse();
        let result = match cli.command {
            Command::Eval(a) => eval(a),
            Command::Bench(a) => bench(a),
            Command::Query(a) => query(a),
            Command::Graph(a) => graph(a),
            Command::Index(a) => index_site(a),
            Command::Methods(a) => methods(a),
        };
        match result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", e.replace('\n', " "));
                2
            }
        }
    }
}
