#!/usr/bin/env bash
# A longer run of the property tests (tests/numerics/test_properties.py, tests/arrays/test_array_properties.py)
# with fresh random examples: HYPOTHESIS_PROFILE=fuzz runs 3000 examples per property (20 times
# the suite's count for the array properties) instead of the test suite's fixed ones.
# Usage: scripts/fuzz.sh [pytest args]; run it against a debug build
# (.venv/bin/maturin develop) to have integer overflow checked as well.
set -euo pipefail
cd "$(dirname "$0")/.."
seed="${SEED:-$RANDOM$RANDOM}"
echo "fuzz seed $seed (SEED=$seed scripts/fuzz.sh repeats this run)"
HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/numerics/test_properties.py tests/arrays/test_array_properties.py \
  --hypothesis-seed="$seed" --hypothesis-show-statistics "$@"
# The cargo-fuzz targets (fuzz/fuzz_targets: program files, frames, whole network
# sessions), FUZZ_SECONDS each, when cargo-fuzz and a nightly toolchain are installed.
if cargo +nightly fuzz --version >/dev/null 2>&1; then
  for t in program_decode leb128 frame_parser session_stream; do
    (cd fuzz && cargo +nightly fuzz run "$t" -- -max_total_time="${FUZZ_SECONDS:-60}")
  done
else
  echo "cargo-fuzz not installed (cargo install cargo-fuzz; rustup toolchain install nightly): skipped fuzz/"
fi
