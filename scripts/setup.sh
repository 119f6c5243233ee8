#!/usr/bin/env bash
# Idempotent set-up for a fresh machine of the project's kind (Debian + rustup + Node 20):
# the wasm32 target, wasm-bindgen-cli at the version Cargo.lock pins, wasm-pack, Debian's
# Chromium and ChromeDriver, and the npm packages. Quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The wasm-bindgen CLI must equal the wasm-bindgen crate version in Cargo.lock exactly.
[ -f Cargo.lock ] || cargo generate-lockfile
wb_version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
if [ -z "$wb_version" ]; then
  echo "setup: cannot find the wasm-bindgen version in Cargo.lock" >&2; exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $wb_version" ]; then
  log "installing wasm-bindgen-cli $wb_version"
  # Not --locked: its lock file names a webpki-roots release the registry mirror may lack.
  cargo install wasm-bindgen-cli --version "$wb_version" --force
fi

wasm_pack_version=0.15.1
if [ "$(wasm-pack --version 2>/dev/null || true)" != "wasm-pack $wasm_pack_version" ]; then
  log "installing wasm-pack $wasm_pack_version"
  cargo install wasm-pack --version "$wasm_pack_version" --locked --force
fi

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  log "installing Debian's chromium and chromium-driver"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# npm ci only when package-lock.json changed since the last install.
stamp=node_modules/.cairn-setup-stamp
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi
log "ready"
