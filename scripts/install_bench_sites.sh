#!/usr/bin/env bash
# Installs the two real documentation sites that `npm run bench:site` measures, from Debian's
# packages (run as root; apt reaches Debian's archive):
#   python3-doc  the Python 3.11 documentation (Sphinx, ~530 pages), /usr/share/doc/python3.11/html
#   rust-doc     the Rust 1.63 documentation (rustdoc: the standard library's std/core/alloc, the
#                book, the reference; tens of thousands of pages), /usr/share/doc/rust-doc/html
# Prints the two sites' folders. Safe to run again (apt-get install leaves installed packages).
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "install_bench_sites.sh: run as root (apt-get install)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends python3-doc rust-doc
for d in /usr/share/doc/python3.11/html /usr/share/doc/rust-doc/html; do
  [ -d "$d" ] || { echo "install_bench_sites.sh: $d missing after the install" >&2; exit 1; }
  echo "$d"
done
