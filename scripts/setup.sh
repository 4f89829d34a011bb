#!/usr/bin/env bash
# Create .venv, install the tools, build copapy (Rust extension, release mode) into it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup (https://rustup.rs) and run again" >&2
  exit 1
fi
# Debian packages are installed as root, or through sudo by anyone else
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
apt_install() {  # Debian packages; a note saying what is missing if that fails
  [ $# -gt 0 ] || return 0
  if command -v apt-get >/dev/null 2>&1 \
      && "${as_root[@]}" apt-get update -qq && "${as_root[@]}" apt-get install -y -qq "$@" >/dev/null; then
    return 0
  fi
  echo "note: could not install the Debian packages $*; the checks that use them will fail" >&2
}
# What scripts/test.sh uses besides Rust and Python (README "Prerequisites"): gcc links
# cargo's host builds and tests/deploy/test_firmware.py's C program; llvm gives llvm-objdump,
# llvm-nm and llvm-size (stencils/build.py, scripts/figures.py); python3-venv makes the
# venvs (this one, tests/once/, the wheel check); git lists the files tests/once/ copies.
debian=()
command -v gcc >/dev/null 2>&1 || debian+=(gcc libc6-dev)
command -v llvm-objdump >/dev/null 2>&1 || debian+=(llvm)
python3 -c "import ensurepip" >/dev/null 2>&1 || debian+=(python3-venv)
command -v git >/dev/null 2>&1 || debian+=(git)
apt_install "${debian[@]}"
# cargo fmt and cargo clippy: in rustup's default profile, not in its minimal one
if command -v rustup >/dev/null 2>&1; then
  for component in rustfmt clippy; do
    rustup component list --installed | grep "^$component" >/dev/null \
      || rustup component add "$component" || echo "note: could not add the $component component" >&2
  done
fi
# the firmware runner core is built for Cortex-M4 and RV32IMAFC (scripts/build_firmware.sh)
for target in thumbv7em-none-eabihf riscv32imafc-unknown-none-elf; do
  if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -q "$target"; then
    rustup target add "$target" || echo "note: could not add the $target target" >&2
  fi
done
# the reference firmwares run under QEMU (tests/deploy/test_firmware_boards.py); where a newer
# qemu-utils is installed, Debian 12's qemu-system-* only installs alongside its own 7.2
if ! { command -v qemu-system-arm && command -v qemu-system-riscv32; } >/dev/null 2>&1 \
    && command -v apt-get >/dev/null 2>&1; then
  ("${as_root[@]}" apt-get update -qq && { "${as_root[@]}" apt-get install -y -qq qemu-system-arm qemu-system-misc >/dev/null 2>&1 \
    || "${as_root[@]}" apt-get install -y -qq --allow-downgrades qemu-system-arm qemu-system-misc 'qemu-utils=1:7.2*' >/dev/null; }) \
    || echo "note: could not install qemu-system-arm and qemu-system-misc" >&2
fi
# scripts/figures.py (checked by the tests) also measures the firmware runner core on RV32
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -q riscv32imafc-unknown-none-elf; then
  rustup target add riscv32imafc-unknown-none-elf || echo "note: could not add the riscv32imafc-unknown-none-elf target" >&2
fi
# copapy-run cross-built for the Linux boards runs under qemu-user in the tests
# (scripts/cross_runners.sh, tests/deploy/test_cross_runners.py); the cross gcc links it where
# rustup offers no musl std (cross_runners.sh adds the rustup targets itself)
if command -v apt-get >/dev/null 2>&1; then
  cross=()
  command -v qemu-arm >/dev/null 2>&1 || cross+=(qemu-user)
  command -v arm-linux-gnueabihf-gcc >/dev/null 2>&1 || cross+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
  command -v riscv64-linux-gnu-gcc >/dev/null 2>&1 || cross+=(gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)
  if [ ${#cross[@]} -gt 0 ]; then
    apt_install "${cross[@]}"
  fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r scripts/requirements-dev.txt
# this project's installs were named copapy before copapy-rs (pyproject.toml): drop that
# record, so the venv holds one distribution of the package (the original Copapy never
# belongs here: benches/setup_reference.sh keeps it in .venv-copapy-ref)
.venv/bin/python -m pip uninstall -q -y copapy >/dev/null 2>&1 || true
# the extension is abi3 now: an older per-version build would shadow it on import
rm -f python/copapy/_core.cpython-*.so
.venv/bin/maturin develop --release -q
