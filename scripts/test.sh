#!/usr/bin/env bash
# Set up, then run every check: formatting, lints, stencil reproducibility, Rust tests, Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Python keeps its compiled modules (and pytest its rewritten test modules) for this run,
# shared by the dozens of Python processes below, even where the environment says not to
# write them (PYTHONDONTWRITEBYTECODE): each process would compile them all again (pytest's
# collection alone took twice the CPU time)
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$logs/pycache"
# `stage NAME` starts a stage and prints how long the one before took, in seconds and in
# CPU seconds (its processes' user + system time: on a busy machine the steadier figure)
cpu_seconds() {  # sets $cpu; run in this shell (not in $(...)), whose children it counts
  times >"$logs/times"  # the second line: all the finished child processes' user and system time
  cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%d", s }' "$logs/times")
}
stage_name=setup stage_start=$SECONDS stage_cpu=0
stage() {
  cpu_seconds
  echo "   ($stage_name: $((SECONDS - stage_start)) s, $((cpu - stage_cpu)) s CPU)"
  stage_name=$1 stage_start=$SECONDS stage_cpu=$cpu
  echo "== $1"
}
echo "== setup"
scripts/setup.sh
# Two builds with target dirs of their own run alongside the stages below, whose builds in
# target/ often keep one core only (a crate's last codegen unit, LTO): the cross runners
# (target/cross; tests/deploy/test_cross_runners.py, qemu-user) and the fuzz targets
# (fuzz/target: they build; cargo test runs session_stream's harness). Waited for before pytest.
(
  start=$SECONDS
  scripts/cross_runners.sh >/dev/null
  cargo check -q --manifest-path fuzz/Cargo.toml --bins
  echo "built in $((SECONDS - start)) s"
) >"$logs/side-builds.log" 2>&1 &
side_builds=$!
trap 'kill "$side_builds" 2>/dev/null || true; rm -rf "$logs"' EXIT
# and the Copapy 0.0.7 reference (.venv-copapy-ref, for the compatibility tests: mostly
# downloads, so it waits on the network, not on a core)
benches/setup_reference.sh >"$logs/reference.log" 2>&1 &
reference=$!
trap 'kill "$side_builds" "$reference" 2>/dev/null || true; rm -rf "$logs"' EXIT
# and the Python-side checks, one after another (single-threaded, like the cargo stages'
# long tails): each one's time is in their log, printed when they are waited for. The
# stencil check builds an example in target/ (cargo waits for the build lock), so it is last.
(
  check() {
    local start=$SECONDS name=$1
    shift
    echo "== $name"
    "$@"
    echo "   ($name: $((SECONDS - start)) s)" >>"$logs/python-checks.times"
  }
  check "ruff"        .venv/bin/ruff check python tests benches examples stencils scripts
  check "mypy"        .venv/bin/mypy --strict python/copapy examples tests/typed_api_check.py
  check "stubtest"    .venv/bin/python -m mypy.stubtest copapy._core --allowlist scripts/stubtest-allowlist.txt
  check "op table"    .venv/bin/python stencils/gen_optable.py --check
  check "stencil ops" .venv/bin/python stencils/check_ops.py
  check "math ulp"    .venv/bin/python stencils/ulp_error.py --stride 4099 --pairs 200000
  check "stencils"    .venv/bin/python stencils/build.py --check
) >"$logs/python-checks.log" 2>&1 &
python_checks=$!
trap 'kill "$side_builds" "$reference" "$python_checks" 2>/dev/null || true; rm -rf "$logs"' EXIT
stage "cargo fmt";     cargo fmt --all -- --check
stage "cargo clippy";  cargo clippy --workspace --all-targets -q -- -D warnings
stage "cargo test";    cargo test --workspace -q
stage "cargo doc";     RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace -q
stage "no_std core";   cargo build -q -p copapy-program -p copapy-runner --no-default-features
stage "firmware core"; cargo build --profile firmware -q -p copapy-firmware --target thumbv7em-none-eabihf
stage "copapy-run";    cargo build --release -q -p copapy-run -p copapy-firmware  # tests/deploy/test_remote.py, test_firmware.py
stage "Python checks: ruff, mypy, stubtest, op table, stencil ops, math ulp, stencils"
wait "$python_checks" || { cat "$logs/python-checks.log"; exit 1; }
cat "$logs/python-checks.times"
stage "cross runners, fuzz targets"
wait "$side_builds" || { cat "$logs/side-builds.log"; exit 1; }
echo "   ($(tail -n 1 "$logs/side-builds.log"), alongside the stages above)"
wait "$reference" || { cat "$logs/reference.log"; exit 1; }
tail -n 1 "$logs/reference.log"
# pytest: natively in two processes (tests/targets, whose modules mostly walk every target
# themselves, and the rest), once for the once-tests (fresh installs, the figures check;
# COPAPY_TEST_ONCE) and again on every foreign architecture in the emulator: the same tests
# against the same NumPy references (tests/conftest.py, COPAPY_TEST_TARGET), leaving out the
# tests the native process recorded as target-independent. One job per core at a time, an
# emulated part as soon as its native part passed (scripts/pytest_jobs.py)
stage "pytest: native, installs and figures, every foreign target (emulated); $(nproc) at a time"
.venv/bin/python scripts/pytest_jobs.py "$logs" $(.venv/bin/python -c "import copapy as cp; from copapy import _targets; print(*(n for n in _targets.names() if n != cp.Target().arch))")
stage "all checks passed"
cpu_seconds
echo "   (total: $SECONDS s, $cpu s CPU)"
