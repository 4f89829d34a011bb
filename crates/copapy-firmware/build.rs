//! Whether the library's RISC-V build target has the F extension.
//!
//! Stable Rust does not show `target_feature = "f"` to `cfg` (F decides the float ABI,
//! so it is not a stable target feature), so `Features::host()` cannot see it; the
//! target name's ISA string can (`riscv32imafc-unknown-none-elf`: I, M, A, F, C). A
//! firmware on another target, or with different hardware, sets the features itself
//! (`copapy_set_cpu_features`).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(copapy_riscv_f)");
    println!("cargo::rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let isa = target
        .strip_prefix("riscv32")
        .or_else(|| target.strip_prefix("riscv64"))
        .and_then(|rest| rest.split('-').next());
    if isa.is_some_and(|isa| isa.starts_with('g') || isa.contains('f')) {
        println!("cargo::rustc-cfg=copapy_riscv_f");
    }
}
