#!/usr/bin/env bash
# Create .venv, install the tools, build copapy (Rust extension, release mode) into it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup (https://rustup.rs) and run again" >&2
  exit 1
fi
# stencils/build.py disassembles the non-x86 objects with llvm-objdump (Debian: llvm)
if ! command -v llvm-objdump >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq llvm >/dev/null) || echo "note: could not install llvm (llvm-objdump)" >&2
fi
# the firmware runner core is built for Cortex-M4 in the test script
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -q thumbv7em-none-eabihf; then
  rustup target add thumbv7em-none-eabihf || echo "note: could not add the thumbv7em-none-eabihf target" >&2
fi
# scripts/figures.py (checked by the tests) also measures the firmware runner core on RV32
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -q riscv32imafc-unknown-none-elf; then
  rustup target add riscv32imafc-unknown-none-elf || echo "note: could not add the riscv32imafc-unknown-none-elf target" >&2
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r scripts/requirements-dev.txt
# the extension is abi3 now: an older per-version build would shadow it on import
rm -f python/copapy/_core.cpython-*.so
.venv/bin/maturin develop --release -q
