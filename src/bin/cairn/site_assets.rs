//! The web files `cairn index` writes next to the index: the wasm package (`cairn.js`,
//! `cairn_bg.wasm`, and the same module stored gzip-compressed as `cairn_bg.wasm.gz`, which the
//! loader fetches and inflates so that a static host that does not compress serves it small), the
//! fetch helpers (`cairn-fetch.js`), the loader (`cairn-loader.js`), the widget's worker (`cairn-worker.js`) and the drop-in widget
//! (`cairn-search.js`).
//!
//! With the keyword reader's package (`cairn_reader.js` and its module stored gzip-compressed as
//! `cairn_reader_bg.wasm.gz`), the widget's keyword searches need neither the engine nor the whole
//! index: the reader fetches the shards of a sharded keyword index ([`cairn::index::shards`]).
//!
//! The loader and the widget are always compiled in. The wasm package comes from, in order:
//! `--pkg <folder>`; the copy embedded at build time (release builds and `cargo install`, see
//! build.rs); the source checkout's `pkg/` (`npm run build:wasm`), for debug builds of a checkout.
//! The reader's package likewise: the `--pkg` folder (when given: without the reader there, the
//! site has none), the embedded copy, the
//! checkout's `pkg-reader/` (`npm run build:reader`); without one the site is written without
//! the reader and its shards, and the widget's first result waits for the engine (the output
//! says so).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/site_assets.rs"));
}

/// The loader written by `cairn index`.
const SITE_LOADER: &str = include_str!("../../../assets/site/cairn-loader.js");
/// The drop-in search widget written by `cairn index`.
const SITE_WIDGET: &str = include_str!("../../../assets/site/cairn-search.js");
/// The widget's worker (the keyword reader, the engine and every search off the page's main thread).
const SITE_WORKER: &str = include_str!("../../../assets/site/cairn-worker.js");
/// The fetch helpers the loader and the worker share.
const SITE_FETCH: &str = include_str!("../../../assets/site/cairn-fetch.js");
/// The name of the gzip-compressed wasm module (the manifest's `wasm`).
pub const WASM_GZ: &str = "cairn_bg.wasm.gz";
/// The wasm package's files, in the order of `WebFiles::package`.
const PKG_FILES: [&str; 2] = ["cairn.js", "cairn_bg.wasm"];
/// The keyword reader package's files.
const READER_FILES: [&str; 2] = ["cairn_reader.js", "cairn_reader_bg.wasm"];
/// The name of the reader's gzip-compressed wasm module (the manifest's `keyword.wasm`).
pub const READER_WASM_GZ: &str = "cairn_reader_bg.wasm.gz";

/// Where the wasm package of a `WebFiles` came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--pkg <folder>`.
    Folder(PathBuf),
    /// Embedded in the binary at build time.
    Embedded,
}

impl std::fmt::Display for Source {
    /// `embedded`, or the folder's path.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Folder(dir) => write!(f, "{}", dir.display()),
            Source::Embedded => f.write_str("embedded"),
        }
    }
}

/// The web files to write, with where the wasm package came from.
pub struct WebFiles {
    /// `cairn.js` and `cairn_bg.wasm`.
    package: [Cow<'static, [u8]>; 2],
    /// `cairn_bg.wasm`, gzip-compressed (level 9).
    wasm_gz: Vec<u8>,
    /// Where `package` was read from.
    pub source: Source,
    /// The keyword reader: `cairn_reader.js` and its module gzip-compressed; or why there is none.
    pub reader: Result<(Cow<'static, [u8]>, Vec<u8>), String>,
}

impl WebFiles {
    /// Every file `cairn index` writes besides the index and the manifest: (file name, bytes).
    pub fn files(&self) -> Vec<(&'static str, &[u8])> {
        let mut out: Vec<(&'static str, &[u8])> = vec![
            (PKG_FILES[0], &self.package[0]),
            (PKG_FILES[1], &self.package[1]),
            (WASM_GZ, &self.wasm_gz),
            ("cairn-fetch.js", SITE_FETCH.as_bytes()),
            ("cairn-loader.js", SITE_LOADER.as_bytes()),
            ("cairn-worker.js", SITE_WORKER.as_bytes()),
            ("cairn-search.js", SITE_WIDGET.as_bytes()),
        ];
        if let Ok((js, wasm_gz)) = &self.reader {
            out.push((READER_FILES[0], js));
            out.push((READER_WASM_GZ, wasm_gz));
        }
        out
    }

    /// The files of the keyword reader, which a site without it must not keep from an earlier
    /// run.
    pub fn reader_files() -> [&'static str; 2] {
        [READER_FILES[0], READER_WASM_GZ]
    }

    /// The files of [`WebFiles`] with the package `[cairn.js, cairn_bg.wasm]`.
    ///
    /// Errors: the compression fails (writing to memory; not expected).
    fn new(
        package: [Cow<'static, [u8]>; 2],
        source: Source,
        reader: Result<[Cow<'static, [u8]>; 2], String>,
    ) -> Result<WebFiles, String> {
        let wasm_gz = gzip(&package[1], PKG_FILES[1])?;
        let reader = match reader {
            Ok([js, wasm]) => Ok((js, gzip(&wasm, READER_FILES[1])?)),
            Err(why) => Err(why),
        };
        Ok(WebFiles { package, wasm_gz, source, reader })
    }

    /// Size of `cairn_bg.wasm` in bytes.
    pub fn wasm_bytes(&self) -> usize {
        self.package[1].len()
    }
}

/// `data` gzip-compressed (level 9); errors name `what`.
fn gzip(data: &[u8], what: &str) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).map_err(|e| format!("gzip of {what}: {e}"))?;
    enc.finish().map_err(|e| format!("gzip of {what}: {e}"))
}

/// The keyword reader's package: from the `pkg` folder when one is given (none when it does not
/// hold it: the folder names the packages to use), else embedded, else the checkout's
/// `pkg-reader/`; else why there is none.
fn reader_package(pkg: Option<&Path>) -> Result<[Cow<'static, [u8]>; 2], String> {
    let from = |dir: &Path| -> Option<Result<[Cow<'static, [u8]>; 2], String>> {
        if !READER_FILES.iter().all(|f| dir.join(f).is_file()) {
            return None;
        }
        let read = |f: &str| std::fs::read(dir.join(f)).map(Cow::Owned).map_err(|e| format!("{}: {e}", dir.join(f).display()));
        Some(read(READER_FILES[0]).and_then(|js| Ok([js, read(READER_FILES[1])?])))
    };
    if let Some(dir) = pkg {
        return from(dir).unwrap_or_else(|| {
            Err(format!("no keyword reader package in {} (cairn_reader.js, cairn_reader_bg.wasm)", dir.display()))
        });
    }
    match generated::EMBEDDED_READER {
        Ok((js, wasm)) => Ok([Cow::Borrowed(js), Cow::Borrowed(wasm)]),
        Err(why) => {
            let checkout = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/pkg-reader"));
            from(checkout).unwrap_or_else(|| {
                Err(format!(
                    "no keyword reader package: not built in ({why}) and no {} (`npm run build:reader`)",
                    checkout.display()
                ))
            })
        }
    }
}

/// The web files, the wasm package taken from `pkg` when given, else from the binary, else from
/// the source checkout's `pkg/`.
///
/// Errors (one line, saying what to run): `pkg` lacks `cairn.js` or `cairn_bg.wasm` or cannot be
/// read; no `pkg` given, nothing embedded and no checkout `pkg/`.
pub fn web_files(pkg: Option<&Path>) -> Result<WebFiles, String> {
    if let Some(dir) = pkg {
        return read_folder(dir, reader_package(Some(dir)));
    }
    match generated::EMBEDDED {
        Ok((js, wasm)) => {
            WebFiles::new([Cow::Borrowed(js), Cow::Borrowed(wasm)], Source::Embedded, reader_package(None))
        }
        Err(why) => {
            let checkout = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/pkg"));
            if PKG_FILES.iter().all(|f| checkout.join(f).is_file()) {
                // the checkout's packages: pkg/ and pkg-reader/
                return read_folder(checkout, reader_package(None));
            }
            Err(format!(
                "this cairn binary has no wasm package built in ({why}) and there is no {}: pass \
                 --pkg <folder with cairn.js and cairn_bg.wasm> (`npm run build:wasm` writes pkg/), or \
                 install with `cargo install --path .`, which builds it in",
                checkout.display()
            ))
        }
    }
}

/// The wasm package in `dir`, with the keyword reader's package `reader`.
fn read_folder(dir: &Path, reader: Result<[Cow<'static, [u8]>; 2], String>) -> Result<WebFiles, String> {
    let read = |f: &str| -> Result<Cow<'static, [u8]>, String> {
        let path = dir.join(f);
        if !path.is_file() {
            return Err(format!(
                "{}: no {f} in the wasm package folder (build it with `npm run build:wasm`, or pass --pkg)",
                dir.display()
            ));
        }
        std::fs::read(&path).map(Cow::Owned).map_err(|e| format!("{}: {e}", path.display()))
    };
    WebFiles::new(
        [read(PKG_FILES[0])?, read(PKG_FILES[1])?],
        Source::Folder(dir.to_path_buf()),
        reader,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_folder_is_read_and_named_in_errors() {
        let dir = std::env::temp_dir().join(format!("cairn-site-assets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cairn.js"), b"export default 1;").unwrap();
        let err = web_files(Some(&dir)).err().unwrap();
        assert!(err.contains("no cairn_bg.wasm in the wasm package folder"), "{err}");
        std::fs::write(dir.join("cairn_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
        let web = web_files(Some(&dir)).unwrap();
        assert_eq!(web.source, Source::Folder(dir.clone()));
        assert_eq!(web.wasm_bytes(), 8);
        let names: Vec<&str> = web.files().iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["cairn.js", "cairn_bg.wasm", "cairn_bg.wasm.gz", "cairn-fetch.js", "cairn-loader.js", "cairn-worker.js", "cairn-search.js"]
        );
        // the folder names the packages: no reader in it, none in the site
        assert!(web.reader.as_ref().unwrap_err().contains("no keyword reader package in"));
        // a folder that holds the reader's package gives it
        std::fs::write(dir.join("cairn_reader.js"), b"export default 2;").unwrap();
        std::fs::write(dir.join("cairn_reader_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
        let with_reader = web_files(Some(&dir)).unwrap();
        let (js, gz) = with_reader.reader.as_ref().unwrap();
        assert_eq!((&js[..], gz.is_empty()), (&b"export default 2;"[..], false));
        assert_eq!(web.files()[0].1, b"export default 1;");
        // the compressed module inflates to the module
        let mut inflated = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(web.files()[2].1), &mut inflated).unwrap();
        assert_eq!(inflated, b"\0asm\x01\0\0\0");
        assert!(std::str::from_utf8(web.files()[3].1).unwrap().contains("export async function gunzip"));
        assert!(std::str::from_utf8(web.files()[4].1).unwrap().contains("export async function openIndex"));
        assert!(std::str::from_utf8(web.files()[5].1).unwrap().contains("openIndex("));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
