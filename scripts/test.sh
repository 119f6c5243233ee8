#!/usr/bin/env bash
# `npm test`: set-up, then every test layer, as one command.
#
# The transformer package (`npm run build:wasm-minilm`: tract's crates in release, then wasm-opt
# -O3 over a 20 MB wasm) is needed only by the last steps (the page build and the e2e tests), and
# most of its time keeps one core busy while the other waits (the codegen of tract-core, then
# Binaryen's wasm-opt, which is single-threaded). So it is built in the background from the start,
# beside the cargo and wasm test layers, into its own target folder (target/wasm-minilm); its
# output goes to target/test-build-wasm-minilm.log and is printed if it fails. `npm run build`
# then finds it built (cargo has nothing to do and scripts/wasm_opt.mjs finds its output cached).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
mkdir -p target
log=target/test-build-wasm-minilm.log
# In a process group of its own (job control on for this one start), so that if a test layer
# fails first, the build stops with everything it started (cargo, rustc, wasm-opt).
set -m
npm run build:wasm-minilm >"$log" 2>&1 &
minilm_build=$!
set +m
trap 'kill -- -"$minilm_build" 2>/dev/null || true' EXIT

npm run test:layers
npm run test:scripts
npm run test:rust
npm run test:minilm
npm run test:wasm-node
npm run test:wasm-browser

echo "== waiting for the transformer package (npm run build:wasm-minilm, log: $log)"
if ! wait "$minilm_build"; then
  tail -n 80 "$log" >&2
  echo "test: npm run build:wasm-minilm failed (full log: $log)" >&2
  exit 1
fi
trap - EXIT
tail -n 3 "$log"

npm run build
npm run test:installed-cli
npm run test:e2e
