//! Embeds the web package (`cairn.js` + `cairn_bg.wasm`, what `npm run build:wasm` writes to
//! `pkg/`) in the native `cairn` binary, so `cairn index` writes a working site from any directory
//! with nothing else built.
//!
//! Writes `$OUT_DIR/site_assets.rs`, included by `src/bin/cairn/site_assets.rs`: either the paths
//! of the two files (`include_bytes!`) or the reason they are not embedded.
//!
//! `CAIRN_EMBED_WASM` decides (read at build time):
//! - unset (default): release builds (`cargo build --release`, `cargo install`) embed; debug
//!   builds (`cargo build`, `cargo test`, `cargo run`) do not, so they never wait for a wasm build
//!   (`cairn index` then reads `pkg/` of the source checkout, or `--pkg`).
//! - `1`: embed in any profile. `0`: never embed. `build`: build the package even when `pkg/`
//!   exists.
//!
//! When embedding: `pkg/` is used when it holds both files (a `cargo:warning` when it is older than
//! the Rust sources: rebuild it with `npm run build:wasm`); otherwise the package is built here:
//! `cargo build --lib --release --target wasm32-unknown-unknown` into a target folder of its own
//! under `$OUT_DIR`, then wasm-bindgen through `tools/wasm-embed` (the `wasm-bindgen-cli-support`
//! library at the exact `wasm-bindgen` version of `Cargo.lock`; no external CLI). No wasm-opt: the
//! wasm is larger than `npm run build:wasm`'s but behaves the same. A failure stops the build with
//! what to run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The two files of the web package `cairn index` writes next to the index.
const PKG_FILES: [&str; 2] = ["cairn.js", "cairn_bg.wasm"];
/// The two files of the keyword reader's package (`npm run build:reader` writes `pkg-reader/`).
const READER_FILES: [&str; 2] = ["cairn_reader.js", "cairn_reader_bg.wasm"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CAIRN_EMBED_WASM");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let generated = out_dir.join("site_assets.rs");
    // The wasm32 build is the package itself: nothing to embed there (and no recursion when the
    // nested build below runs this script for wasm32).
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        write_absent(&generated, "the wasm32 build embeds no web package");
        return;
    }
    let mode = std::env::var("CAIRN_EMBED_WASM").unwrap_or_default();
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    match mode.as_str() {
        "0" | "off" => {
            write_absent(&generated, "it was built with CAIRN_EMBED_WASM=0");
            return;
        }
        "" if !release => {
            write_absent(
                &generated,
                "it is a debug build (release builds and `cargo install` embed it; CAIRN_EMBED_WASM=1 embeds it in any build)",
            );
            return;
        }
        "" | "1" | "on" | "build" => {}
        other => fail(&format!("CAIRN_EMBED_WASM={other}: expected 0, 1 or build")),
    }
    let pkg = manifest.join("pkg");
    let pkg_complete = PKG_FILES.iter().all(|f| pkg.join(f).is_file());
    let dir = if pkg_complete && mode != "build" {
        for f in PKG_FILES {
            println!("cargo:rerun-if-changed={}", pkg.join(f).display());
        }
        watch_sources(&manifest);
        let built = mtime(&pkg.join("cairn_bg.wasm"));
        if let (Some(built), Some(newest)) = (built, newest_source(&manifest)) {
            if newest > built {
                println!(
                    "cargo:warning=embedding pkg/, which is older than the Rust sources: run `npm run build:wasm` (or build with CAIRN_EMBED_WASM=build) for a current web package"
                );
            }
        }
        pkg
    } else {
        watch_sources(&manifest);
        println!(
            "cargo:warning=building the wasm package to embed in `cairn` (no pkg/ beside the source; CAIRN_EMBED_WASM=0 skips this)"
        );
        build_package(&manifest, &out_dir)
    };
    let reader_dir = manifest.join("pkg-reader");
    let reader_complete = READER_FILES.iter().all(|f| reader_dir.join(f).is_file());
    let reader_dir = if reader_complete && mode != "build" {
        for f in READER_FILES {
            println!("cargo:rerun-if-changed={}", reader_dir.join(f).display());
        }
        reader_dir
    } else {
        println!(
            "cargo:warning=building the keyword reader's wasm package to embed in `cairn` (no pkg-reader/ beside the source)"
        );
        build_reader_package(&manifest, &out_dir)
    };
    let paths: Vec<String> =
        PKG_FILES.iter().map(|f| format!("{:?}", dir.join(f).display().to_string())).collect();
    let reader_paths: Vec<String> =
        READER_FILES.iter().map(|f| format!("{:?}", reader_dir.join(f).display().to_string())).collect();
    let code = format!(
        "/// The web package embedded at build time: `cairn.js`, `cairn_bg.wasm`.\n\
         pub const EMBEDDED: Result<(&[u8], &[u8]), &str> = Ok((include_bytes!({}), include_bytes!({})));\n\
         /// The keyword reader's package embedded at build time: `cairn_reader.js`, `cairn_reader_bg.wasm`.\n\
         pub const EMBEDDED_READER: Result<(&[u8], &[u8]), &str> = Ok((include_bytes!({}), include_bytes!({})));\n",
        paths[0], paths[1], reader_paths[0], reader_paths[1]
    );
    write_file(&generated, &code);
}

/// Write the generated module for a binary without the package; `why` completes "not embedded
/// because …".
fn write_absent(generated: &Path, why: &str) {
    let code = format!(
        "/// Why the web package is not embedded in this binary.\n\
         pub const EMBEDDED: Result<(&[u8], &[u8]), &str> = Err({why:?});\n\
         /// Why the keyword reader's package is not embedded in this binary.\n\
         pub const EMBEDDED_READER: Result<(&[u8], &[u8]), &str> = Err({why:?});\n"
    );
    write_file(generated, &code);
}

fn write_file(path: &Path, text: &str) {
    if let Err(e) = std::fs::write(path, text) {
        fail(&format!("{}: {e}", path.display()));
    }
}

/// Stop the build with `msg` (cargo prints the script's stderr).
fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

/// Re-run this script (and so re-embed or rebuild) when the Rust sources change.
fn watch_sources(manifest: &Path) {
    for p in ["src", "Cargo.toml", "Cargo.lock", "tools/wasm-embed/src", "tools/wasm-embed/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", manifest.join(p).display());
    }
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The newest modification time of the files the wasm package is built from.
fn newest_source(manifest: &Path) -> Option<SystemTime> {
    fn walk(p: &Path, newest: &mut Option<SystemTime>) {
        if p.is_dir() {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    walk(&e.path(), newest);
                }
            }
        } else if let Some(t) = mtime(p) {
            *newest = Some(newest.map_or(t, |n| n.max(t)));
        }
    }
    let mut newest = None;
    for p in ["src", "Cargo.toml", "Cargo.lock"] {
        walk(&manifest.join(p), &mut newest);
    }
    newest
}

/// The `version` of package `name` in the Cargo.lock at `lock`.
fn locked_version(lock: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(lock).ok()?;
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l.trim() == format!("name = \"{name}\"") {
            let v = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
            return Some(v.to_string());
        }
    }
    None
}

/// Build the web package into `$OUT_DIR/pkg` and return that folder.
fn build_package(manifest: &Path, out_dir: &Path) -> PathBuf {
    // as `npm run build:wasm`: without the text pipeline's resources, which the web files
    // carry beside the package (`text/`) for the graph methods
    build_wasm(manifest, out_dir, &["--no-default-features"], &[], "wasm-target", "cairn", "pkg", PKG_FILES)
}

/// Build the keyword reader's package into `$OUT_DIR/pkg-reader` (as `npm run build:reader`,
/// without its wasm-opt pass) and return that folder.
fn build_reader_package(manifest: &Path, out_dir: &Path) -> PathBuf {
    build_wasm(
        manifest,
        out_dir,
        &["--no-default-features", "--features", "reader"],
        &[("CARGO_PROFILE_RELEASE_OPT_LEVEL", "z"), ("CARGO_PROFILE_RELEASE_PANIC", "abort")],
        "wasm-reader-target",
        "cairn_reader",
        "pkg-reader",
        READER_FILES,
    )
}

/// Build the library for wasm32 with `features` and `env` into `$OUT_DIR/<target>`, run
/// wasm-bindgen (tools/wasm-embed) on it as `<name>.wasm` into `$OUT_DIR/<pkg>`, check that
/// `files` are there and return that folder.
#[allow(clippy::too_many_arguments)]
fn build_wasm(
    manifest: &Path,
    out_dir: &Path,
    features: &[&str],
    env: &[(&str, &str)],
    target: &str,
    name: &str,
    pkg: &str,
    files: [&str; 2],
) -> PathBuf {
    let tool = manifest.join("tools/wasm-embed");
    let lib = locked_version(&manifest.join("Cargo.lock"), "wasm-bindgen");
    let cli = locked_version(&tool.join("Cargo.lock"), "wasm-bindgen-cli-support");
    if lib.is_some() && lib != cli {
        fail(&format!(
            "Cargo.lock has wasm-bindgen {} but tools/wasm-embed has wasm-bindgen-cli-support {}: pin the same version in tools/wasm-embed/Cargo.toml (and run `cargo update` there), or build pkg/ with `npm run build:wasm`",
            lib.as_deref().unwrap_or("?"),
            cli.as_deref().unwrap_or("?")
        ));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let wasm_target = out_dir.join(target);
    let mut build = Command::new(&cargo);
    build
        .args(["build", "--lib", "--release", "--target", "wasm32-unknown-unknown"])
        .args(features)
        .arg("--manifest-path")
        .arg(manifest.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&wasm_target);
    scrub(&mut build);
    for (k, v) in env {
        build.env(k, v);
    }
    run(&mut build, "building the wasm32 library", true);
    let built = wasm_target.join("wasm32-unknown-unknown/release/cairn.wasm");
    let wasm = out_dir.join(format!("{name}.wasm"));
    if let Err(e) = std::fs::copy(&built, &wasm) {
        fail(&format!("{} → {}: {e}", built.display(), wasm.display()));
    }
    let pkg = out_dir.join(pkg);
    let mut bindgen = Command::new(&cargo);
    bindgen
        .args(["run", "--release", "--quiet", "--manifest-path"])
        .arg(tool.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(out_dir.join("tool-target"))
        .arg("--")
        .arg(&wasm)
        .arg(&pkg);
    run(scrub(&mut bindgen), "running wasm-bindgen (tools/wasm-embed)", false);
    for f in files {
        if !pkg.join(f).is_file() {
            fail(&format!("wasm-bindgen wrote no {f} in {}", pkg.display()));
        }
    }
    pkg
}

/// The nested cargo must not inherit the outer build's target, flags or target folder.
fn scrub(cmd: &mut Command) -> &mut Command {
    for v in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTFLAGS",
    ] {
        cmd.env_remove(v);
    }
    // Cargo reads this script's stdout for its directives: the nested cargo's output goes to stderr.
    cmd.env("CAIRN_EMBED_WASM", "0").stdout(std::io::stderr())
}

fn run(cmd: &mut Command, what: &str, wasm: bool) {
    let hint =
        if wasm { "is the wasm target installed? `rustup target add wasm32-unknown-unknown`. " } else { "" };
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!(
            "{what} for the embedded web package failed ({s}); {hint}Or build it with `npm run build:wasm` (pkg/ is then embedded), or skip embedding with CAIRN_EMBED_WASM=0 and pass `cairn index --pkg <folder>`"
        )),
        Err(e) => fail(&format!("{what}: could not run cargo ({e})")),
    }
}
