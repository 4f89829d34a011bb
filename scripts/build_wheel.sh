#!/usr/bin/env bash
# Builds the abi3 wheel (CPython >= 3.11) into dist/, from any checkout: no .venv needed.
# maturin (the version pinned in scripts/requirements-dev.txt) runs from a temporary venv;
# the wheel's copapy-run is the runner inside the extension module (docs/copapy-run.md).
# Leaves nothing behind but dist/copapy_rs-*.whl (and cargo's build cache in target/), also
# when it fails. Offline: PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR with a maturin wheel in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
maturin=$(grep -E '^maturin==' scripts/requirements-dev.txt)
python3 -m venv "$tmp/env"
"$tmp/env/bin/python" -m pip install -q "$maturin"
"$tmp/env/bin/maturin" build --release -q --compatibility linux --out "$tmp/dist"
mkdir -p dist
rm -f dist/copapy_rs-*.whl dist/copapy-*.whl  # also a wheel of the name before copapy-rs
mv "$tmp"/dist/copapy_rs-*.whl dist/
ls dist/copapy_rs-*.whl
