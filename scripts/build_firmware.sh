#!/usr/bin/env bash
# Build the two reference firmwares (firmware/, docs/firmware.md): the copapy-firmware
# static library for each core (cargo, profile firmware) and the C start-up, board and
# runner code compiled and linked with zig cc (the PyPI ziglang package the stencils are
# built with). Output: target/firmware-boards/{mps2-an386,virt-rv32}.elf.
#
#   scripts/build_firmware.sh     (after scripts/setup.sh, which installs the rustup targets
#                                  thumbv7em-none-eabihf and riscv32imafc-unknown-none-elf and
#                                  the ziglang package into .venv)
# Run them: tests/deploy/test_firmware_boards.py, or by hand as docs/firmware.md shows.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
if ! "$python" -c "import ziglang" 2>/dev/null; then
  echo "build_firmware.sh: no zig cc: run scripts/setup.sh (or PYTHON=... with ziglang installed)" >&2
  exit 1
fi
out=target/firmware-boards
mkdir -p "$out"
cflags=(-Os -g -std=c11 -Wall -Wextra -Werror -ffreestanding -nostdlib -fno-stack-protector
        -ffunction-sections -fdata-sections -Icrates/copapy-firmware/include -Ifirmware/common)

build() {  # board rust-target zig-flags...
  local board=$1 rust_target=$2
  shift 2
  cargo build --profile firmware -q -p copapy-firmware --target "$rust_target"
  "$python" -m ziglang cc "$@" "${cflags[@]}" -T "firmware/$board/link.ld" -Wl,--gc-sections -Wl,--entry=reset \
    firmware/"$board"/*.[cS] firmware/common/*.c \
    "target/$rust_target/firmware/libcopapy_firmware.a" -o "$out/$board.elf"
  echo "$out/$board.elf"
}

# Cortex-M4F: Thumb-2 with the single-precision FPU, hard-float ABI (as thumbv7em-none-eabihf)
build mps2-an386 thumbv7em-none-eabihf -target thumb-freestanding-eabihf -mcpu=cortex_m4+vfp4d16sp
# RV32IMAFC: single-float ABI ilp32f (as riscv32imafc-unknown-none-elf), no linker relaxation
build virt-rv32 riscv32imafc-unknown-none-elf -target riscv32-freestanding-none \
  -mcpu=generic_rv32+m+a+f+c -mabi=ilp32f -mcmodel=medany -mno-relax
