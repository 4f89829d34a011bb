#!/usr/bin/env bash
# Builds the abi3 wheel (CPython >= 3.11) into dist/, with the copapy-run binary inside
# (copapy/_bin/copapy-run, started by the copapy-run console script).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p copapy-run
mkdir -p python/copapy/_bin
cp target/release/copapy-run python/copapy/_bin/copapy-run
rm -rf dist
.venv/bin/maturin build --release -q --compatibility linux --out dist
rm -rf python/copapy/_bin
ls dist/*.whl
