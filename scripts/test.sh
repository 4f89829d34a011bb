#!/usr/bin/env bash
# Set up, then run every check: formatting, lints, stencil reproducibility, Rust tests, Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== cargo fmt";     cargo fmt --all -- --check
echo "== cargo clippy";  cargo clippy --workspace --all-targets -q -- -D warnings
echo "== cargo test";    cargo test --workspace -q
echo "== stencils";      .venv/bin/python stencils/build.py --check
echo "== ruff";          .venv/bin/ruff check python tests benches examples stencils
echo "== mypy";          .venv/bin/mypy --strict examples
echo "== pytest";        .venv/bin/python -m pytest -q tests
