//! The targets copapy compiles for: one row per target in [`TARGETS`].
//!
//! A row names the target as Python's `cp.Target(...)` spells it, the instruction set
//! ([`Arch`], which picks the relocation rules in [`crate::isa`]), the CPU features its
//! stencils need, and the stencil object built for it by `stencils/build.py` (whose
//! `TARGETS` table has the matching compiler flags). Adding a target is one row here
//! and one there.

use std::sync::OnceLock;

use copapy_program::{Arch, Features};

use crate::select::StencilTable;
use crate::stencil_db::StencilDb;

/// One target: a name, an instruction set, CPU features and its stencils.
#[derive(Debug)]
pub struct Target {
    /// Name as in `cp.Target("cortex-m4")`.
    pub name: &'static str,
    /// Other accepted names (Copapy's, e.g. `"arm64"`).
    pub aliases: &'static [&'static str],
    /// Instruction set.
    pub arch: Arch,
    /// CPU features the stencils use.
    pub features: Features,
    /// Machines it is for (documentation and messages).
    pub machines: &'static str,
    /// The ELF stencil object.
    pub stencils: &'static [u8],
}

const fn f(a: Features, b: Features) -> Features {
    a.union(b)
}

macro_rules! stencils {
    ($file:literal) => {
        include_bytes!(concat!("../../../stencils/", $file))
    };
}

/// Every target, the host's first among equals.
pub static TARGETS: [Target; 7] = [
    Target {
        name: "x86_64",
        aliases: &["x86-64", "amd64"],
        arch: Arch::X86_64,
        features: Features::SSE2,
        machines: "PCs, industrial PCs",
        stencils: stencils!("x86_64.o"),
    },
    Target {
        name: "aarch64",
        aliases: &["arm64"],
        arch: Arch::AArch64,
        features: Features::NEON,
        machines: "Raspberry Pi 4/5, Jetson, Cortex-A53/A72",
        stencils: stencils!("aarch64.o"),
    },
    Target {
        name: "armv7",
        aliases: &[],
        arch: Arch::Arm,
        features: f(Features::ARMV7, Features::VFP3),
        machines: "Cortex-A7/A9 boards, ARM state, VFPv3",
        stencils: stencils!("armv7.o"),
    },
    Target {
        name: "armv6",
        aliases: &[],
        arch: Arch::Arm,
        features: f(Features::ARMV6, Features::VFP2),
        machines: "Raspberry Pi Zero/1 (ARM1176JZF-S, VFPv2)",
        stencils: stencils!("armv6.o"),
    },
    Target {
        name: "cortex-m4",
        aliases: &["cortex_m4"],
        arch: Arch::Thumb,
        features: f(Features::ARMV7EM, Features::FPV4_SP),
        machines: "STM32F4-class MCUs, Thumb-2, FPv4-SP",
        stencils: stencils!("cortex-m4.o"),
    },
    Target {
        name: "riscv64",
        aliases: &["rv64gc"],
        arch: Arch::RiscV64,
        features: f(Features::RV_M, f(Features::RV_F, Features::RV_C)),
        machines: "rv64gc Linux boards",
        stencils: stencils!("riscv64.o"),
    },
    Target {
        name: "riscv32",
        aliases: &["rv32imafc"],
        arch: Arch::RiscV32,
        features: f(Features::RV_M, f(Features::RV_F, Features::RV_C)),
        machines: "rv32imafc MCUs with a single-precision FPU",
        stencils: stencils!("riscv32.o"),
    },
];

/// A target's parsed stencils and its selection table.
pub struct Backend {
    /// The stencils.
    pub db: StencilDb,
    /// Stencil ids by operation and operand places.
    pub table: StencilTable,
}

impl Target {
    /// The target called `name` (or one of its aliases).
    ///
    /// ```
    /// let t = copapy_compiler::targets::Target::find("arm64").unwrap();
    /// assert_eq!(t.name, "aarch64");
    /// assert!(copapy_compiler::targets::Target::find("x86").is_err());
    /// ```
    pub fn find(name: &str) -> Result<&'static Target, String> {
        TARGETS
            .iter()
            .find(|t| t.name == name || t.aliases.contains(&name))
            .ok_or_else(|| {
                let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
                format!(
                    "unknown target '{name}': copapy compiles for {} (or 'native' for this machine)",
                    names.join(", ")
                )
            })
    }

    /// The target of the machine this code runs on, if copapy supports it.
    pub fn host() -> Option<&'static Target> {
        let arch = Arch::host()?;
        TARGETS.iter().find(|t| t.arch == arch)
    }

    /// The parsed stencils, read on first use and kept for the process.
    pub fn backend(&'static self) -> Result<&'static Backend, String> {
        static BACKENDS: [OnceLock<Result<Backend, String>>; 7] = [const { OnceLock::new() }; 7];
        let index = TARGETS
            .iter()
            .position(|t| std::ptr::eq(t, self))
            .expect("targets are only made by this table");
        BACKENDS[index]
            .get_or_init(|| {
                let db = StencilDb::parse(self.stencils)
                    .map_err(|e| format!("the {} stencil object is invalid: {e}", self.name))?;
                let table = StencilTable::new(&db);
                Ok(Backend { db, table })
            })
            .as_ref()
            .map_err(String::clone)
    }
}
