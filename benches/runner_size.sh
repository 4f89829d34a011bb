#!/usr/bin/env bash
# .text of the runner core as firmware links it: the copapy-firmware staticlib (C ABI +
# no_std core) linked with --gc-sections, keeping only copapy_load, copapy_run,
# copapy_symbol and copapy_error_message. Prints the section sizes and the largest
# functions, for thumbv7em-none-eabihf (Cortex-M4F) and x86_64.
set -euo pipefail
cd "$(dirname "$0")/.."
lld=$(find "$(rustc --print sysroot)" -name rust-lld -type f | head -1)
out=$(mktemp -d)
for target in thumbv7em-none-eabihf x86_64-unknown-linux-gnu; do
  cargo build --profile firmware -q -p copapy-firmware --target "$target"
  lib="target/$target/firmware/libcopapy_firmware.a"
  elf="$out/$target.elf"
  # no C library: undefined libc symbols of the host build are allowed, they are not ours
  "$lld" -flavor gnu --gc-sections --unresolved-symbols=ignore-all \
    -e copapy_load -u copapy_run -u copapy_symbol -u copapy_error_message -o "$elf" "$lib"
  echo "== $target"
  llvm-size -A "$elf" | grep -E '^\.(text|rodata)'
  echo "largest functions (bytes):"
  llvm-nm --size-sort -S -t d "$elf" | awk '$3 ~ /[Tt]/ {print "  " $2+0, $4}' | tail -8
done
