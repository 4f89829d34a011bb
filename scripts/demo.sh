#!/usr/bin/env bash
# Set up, then compile and run every example (the README's examples among them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for ex in examples/*.py; do
  echo "== $ex"
  .venv/bin/python "$ex"
done
