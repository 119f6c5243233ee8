#!/usr/bin/env bash
# The installed CLI on its own: `cargo install --path . --root <tmp>`, then, from a temporary
# folder outside the checkout, `<tmp>/bin/cairn index site/ --out site/cairn/` on a small site
# written here. Checks the files written, that the wasm package came from the binary itself, and
# that the written index answers queries when loaded through the written cairn.js (Node).
#
# The release build is kept in target/install (CAIRN_INSTALL_TARGET_DIR overrides) so a second
# run only rebuilds what changed. Without pkg/ beside the source, the install also builds the wasm
# package (build.rs). CAIRN_INSTALL_DEBUG=1 installs a debug build with the package embedded
# (`--debug`, CAIRN_EMBED_WASM=1) into target/ instead: it reuses `cargo test`'s build, for CI.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
unset CAIRN_EMBED_WASM
install=(cargo install --quiet --locked --path "$repo" --root "$tmp/root")
if [ "${CAIRN_INSTALL_DEBUG:-0}" = 1 ]; then
  export CAIRN_EMBED_WASM=1
  install+=(--debug --target-dir "${CAIRN_INSTALL_TARGET_DIR:-$repo/target}")
else
  install+=(--target-dir "${CAIRN_INSTALL_TARGET_DIR:-$repo/target/install}")
fi

echo "== ${install[*]}"
"${install[@]}"

work="$tmp/elsewhere"
mkdir -p "$work/site/people" "$work/site/notes"
cat > "$work/site/index.html" <<'HTML'
<!doctype html><html><head><title>Home</title></head><body>
<nav>Home | People | Notes</nav>
<main><h1>Home</h1><p>A small site about Carolingian kings and their marriages.</p></main>
</body></html>
HTML
cat > "$work/site/people/lothair.html" <<'HTML'
<!doctype html><html><head><title>Lothair II</title></head><body>
<main><h1>Lothair II</h1><p>Lothair II was king of Lotharingia. He married Teutberga in 855 and
spent years trying to have the marriage annulled so he could marry Waldrada.</p></main>
</body></html>
HTML
cat > "$work/site/notes/rush.md" <<'MD'
# Neil Peart

Neil Peart was the drummer and lyricist of the Canadian rock band Rush.
MD

cd "$work"
echo "== (in $work) cairn index site/ --out site/cairn/ --dense"
"$tmp/root/bin/cairn" index site/ --out site/cairn/ --dense > report.json
cat report.json

fail() { echo "FAIL: $*" >&2; exit 1; }
for f in index.cairn.gz cairn.js cairn_bg.wasm cairn-loader.js cairn-search.js manifest.json static-minilm.bin minilm-vocab.txt; do
  [ -s "site/cairn/$f" ] || fail "site/cairn/$f missing or empty"
done
node -e '
  const r = JSON.parse(require("fs").readFileSync("report.json", "utf8"));
  const fs = require("fs");
  if (r.wasm_package !== "embedded") throw new Error(`wasm package from ${r.wasm_package}, expected the embedded one`);
  if (r.pages !== 3) throw new Error(`pages ${r.pages}, expected 3`);
  if (r.wasm_bytes !== fs.statSync("site/cairn/cairn_bg.wasm").size) throw new Error("wasm_bytes differs from the written file");
  const m = JSON.parse(fs.readFileSync("site/cairn/manifest.json", "utf8"));
  if (m.index_gz_bytes !== fs.statSync("site/cairn/index.cairn.gz").size) throw new Error("manifest index_gz_bytes differs from the file");
  console.log(`files ok: ${r.passages} passages, wasm ${r.wasm_bytes} bytes (embedded)`);
'

echo "== the written index, loaded through the written cairn.js"
node "$repo/scripts/check_site_index.mjs" site/cairn bm25 "who did Lothair II marry" "drummer of Rush" > bm25.jsonl
node "$repo/scripts/check_site_index.mjs" site/cairn dense "Carolingian kings" > dense.jsonl
cat bm25.jsonl dense.jsonl
node -e '
  const lines = require("fs").readFileSync("bm25.jsonl", "utf8").trim().split("\n").map(JSON.parse)
    .concat(require("fs").readFileSync("dense.jsonl", "utf8").trim().split("\n").map(JSON.parse));
  // The page links `cairn index` gives: Markdown pages are served as .html, index.html as its folder.
  const want = [/^\/people\/lothair\.html(#|$)/, /^\/notes\/rush\.html(#|$)/, /^\/(#|$)/];
  lines.forEach((l, i) => {
    const top = l.links[0] || "";
    if (!want[i].test(top)) throw new Error(`${l.method} "${l.query}": top hit ${top}, expected ${want[i]}`);
  });
  console.log("queries ok");
'
echo "PASS installed cli"
