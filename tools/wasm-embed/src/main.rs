//! `cairn-wasm-embed <input.wasm> <out-dir>`: run wasm-bindgen (the `wasm-bindgen-cli-support`
//! library, no external CLI) on a wasm32 build of Cairn's library and write the web package named
//! after the input file (`cairn.wasm` → `cairn.js`, `cairn_bg.wasm` and `cairn.d.ts`), as
//! `wasm-pack build --target web --out-name cairn` does (without wasm-opt). Exit status 1 with the
//! reason on stderr on any failure.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [input, out] = args.as_slice() else {
        eprintln!("usage: cairn-wasm-embed <input.wasm> <out-dir>");
        return ExitCode::FAILURE;
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("{}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let Some(name) = input.file_stem().and_then(|s| s.to_str()) else {
        eprintln!("{}: not a file name", input.display());
        return ExitCode::FAILURE;
    };
    let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
    let result =
        bindgen.input_path(input).out_name(name).typescript(true).web(true).and_then(|b| b.generate(out));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wasm-bindgen on {}: {e:#}", input.display());
            ExitCode::FAILURE
        }
    }
}
