#!/usr/bin/env bash
# Set up, then run every check: formatting, lints, stencil reproducibility, Rust tests, Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== Copapy 0.0.7 reference (.venv-copapy-ref, for the compatibility tests)"
benches/setup_reference.sh
echo "== cargo fmt";     cargo fmt --all -- --check
echo "== cargo clippy";  cargo clippy --workspace --all-targets -q -- -D warnings
echo "== cargo test";    cargo test --workspace -q
echo "== cargo doc";     RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace -q
echo "== no_std core";   cargo build -q -p copapy-program -p copapy-runner --no-default-features
echo "== op table";      .venv/bin/python stencils/gen_optable.py --check
echo "== stencils";      .venv/bin/python stencils/build.py --check
echo "== stencil ops";   .venv/bin/python stencils/check_ops.py
echo "== math ulp";      .venv/bin/python stencils/ulp_error.py --stride 4099 --pairs 200000
echo "== ruff";          .venv/bin/ruff check python tests benches examples stencils scripts
echo "== mypy";          .venv/bin/mypy --strict python/copapy examples tests/typed_api_check.py
echo "== stubtest";      .venv/bin/python -m mypy.stubtest copapy._core --allowlist scripts/stubtest-allowlist.txt
echo "== firmware core"; cargo build --profile firmware -q -p copapy-firmware --target thumbv7em-none-eabihf
echo "== copapy-run";    cargo build --release -q -p copapy-run -p copapy-firmware  # tests/deploy/test_remote.py, test_firmware.py
echo "== fuzz targets";  cargo check -q --manifest-path fuzz/Cargo.toml --bins  # they build; cargo test runs session_stream's harness
echo "== cross runners"; scripts/cross_runners.sh >/dev/null  # tests/deploy/test_cross_runners.py (qemu-user)
echo "== pytest";        .venv/bin/python -m pytest -q tests
echo "== installs, figures"; COPAPY_TEST_ONCE=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/once
# The whole suite again on every foreign architecture, in the emulator: the same tests
# against the same NumPy references (tests/conftest.py, COPAPY_TEST_TARGET).
for target in $(.venv/bin/python -c "import copapy as cp; from copapy import _targets; print(*(n for n in _targets.names() if n != cp.Target().arch))"); do
  echo "== pytest on $target (emulated)"
  COPAPY_TEST_TARGET=$target .venv/bin/python -m pytest -q -p no:cacheprovider tests
done
