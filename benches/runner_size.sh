#!/usr/bin/env bash
# .text of the runner core as firmware links it: the copapy-firmware staticlib linked with
# --gc-sections, keeping only copapy_load and copapy_run (validate, copy, patch, call),
# then also copapy_symbol and copapy_error_message (lookup by name, messages).
#
# "total" is everything the linker keeps, core library included; "copapy code" counts only
# functions of copapy-program, copapy-runner and copapy-firmware. On x86_64 the host build
# links std (for its panic handler), so only the copapy-code figure is meaningful there.
# With nightly and rust-src installed it also measures a build whose panics abort without
# formatting (-Cpanic=immediate-abort, core rebuilt), which drops core's formatting code.
set -euo pipefail
cd "$(dirname "$0")/.."
lld=$(find "$(rustc --print sysroot)" -name rust-lld -type f | head -1)
out=$(mktemp -d)

measure() {  # label lib
  for keep in "-u copapy_run" "-u copapy_run -u copapy_symbol -u copapy_error_message"; do
    # shellcheck disable=SC2086
    "$lld" -flavor gnu --gc-sections --unresolved-symbols=ignore-all -e copapy_load $keep \
      -o "$out/x.elf" "$2"
    total=$(llvm-size -A "$out/x.elf" | awk '$1 == ".text" {print $2}')
    # once per address: a folded function keeps the symbols of every instance
    ours=$(llvm-nm -S -t d "$out/x.elf" | awk '$3 ~ /[Tt]/ && ($4 ~ /copapy/) && $2 > 0 && !seen[$1]++ {s += $2} END {print s + 0}')
    case "$keep" in *symbol*) what="load+run+symbol+messages";; *) what="load+run";; esac
    printf '%-44s %-26s .text total %6d B, copapy code %6d B\n' "$1" "$what" "$total" "$ours"
  done
}

for target in thumbv7em-none-eabihf x86_64-unknown-linux-gnu; do
  cargo build --profile firmware -q -p copapy-firmware --target "$target"
  measure "$target (stable, opt-level z)" "target/$target/firmware/libcopapy_firmware.a"
done
if rustup component list --toolchain nightly --installed 2>/dev/null | grep -q rust-src; then
  RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort" cargo +nightly build --profile firmware -q \
    -p copapy-firmware --target thumbv7em-none-eabihf -Z build-std=core,compiler_builtins \
    --target-dir target/min
  measure "thumbv7em-none-eabihf (nightly, immediate-abort)" \
    target/min/thumbv7em-none-eabihf/firmware/libcopapy_firmware.a
fi
