//! Every target copapy knows, in one table ([`TARGETS`]): its name and aliases, its
//! instruction set, the CPU features its code needs, and the emulators that run it.
//!
//! This is the one definition the compiler (which adds each target's stencils), the
//! runners (which map the CPU they detect to a target for the INFO reply), the firmware
//! and Python (`copapy._core.targets()`) all derive from; it is `no_std` so a firmware
//! runner can use it. Rows of one instruction set are ordered most capable first, so the
//! first row a CPU can run is the best target for it ([`TargetInfo::for_cpu`]). Adding a
//! target is one row here (with the flags its stencils are compiled with) and, for a new
//! instruction set, its module (README "Layout": the steps). The stencil build and the
//! scripts read the rows from `stencils/targets.json`, which a test keeps equal to this
//! table (`COPAPY_BLESS=1 cargo test -p copapy-compiler --test target_table` rewrites it).

use crate::{Arch, Features};

/// How a Linux runner built for a target is run on another machine with qemu-user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QemuUser {
    /// The qemu-user binary, e.g. `"qemu-arm"`.
    pub binary: &'static str,
    /// Its `-cpu` model, the oldest CPU the target is for (so the emulated CPU is honest
    /// about what it lacks), e.g. `"arm1176"`.
    pub cpu: &'static str,
}

/// One target: what `cp.Target(name)` compiles for.
#[derive(Debug, PartialEq, Eq)]
pub struct TargetInfo {
    /// Name as in `cp.Target("cortex-m4")`.
    pub name: &'static str,
    /// Other accepted names (Copapy's, e.g. `"arm64"`).
    pub aliases: &'static [&'static str],
    /// Instruction set.
    pub arch: Arch,
    /// CPU features the target's code uses (recorded in each program).
    pub features: Features,
    /// Machines it is for (documentation and messages).
    pub machines: &'static str,
    /// qemu-user emulation of a Linux runner for it; `None` for microcontrollers.
    pub qemu_user: Option<QemuUser>,
    /// unicorn's CPU model (the `UC_CPU_*` constant) for the in-process emulator;
    /// `None` means unicorn's default CPU for the instruction set.
    pub unicorn_cpu: Option<&'static str>,
    /// The `zig cc` flags that pick the target's code (`-target`, `-mcpu`, and any
    /// switch only it needs): `stencils/build.py` compiles its stencil object with them
    /// (reading them from `stencils/targets.json`, this table written out).
    pub cflags: &'static [&'static str],
}

/// The three RISC-V extensions copapy's RISC-V code uses.
const RV_MFC: Features = Features(Features::RV_M.0 | Features::RV_F.0 | Features::RV_C.0);

/// Every target, grouped by instruction set, most capable first within one.
pub static TARGETS: [TargetInfo; 7] = [
    TargetInfo {
        name: "x86_64",
        aliases: &["x86-64", "amd64"],
        arch: Arch::X86_64,
        features: Features::SSE2,
        machines: "PCs, industrial PCs",
        qemu_user: Some(QemuUser {
            binary: "qemu-x86_64",
            cpu: "qemu64",
        }),
        unicorn_cpu: None,
        cflags: &["-target", "x86_64-freestanding", "-mcpu=x86_64"],
    },
    TargetInfo {
        name: "aarch64",
        aliases: &["arm64"],
        arch: Arch::AArch64,
        features: Features::NEON,
        machines: "Raspberry Pi 4/5, Jetson, Cortex-A53/A72",
        qemu_user: Some(QemuUser {
            binary: "qemu-aarch64",
            cpu: "cortex-a53",
        }),
        unicorn_cpu: None,
        cflags: &["-target", "aarch64-freestanding", "-mcpu=generic"],
    },
    TargetInfo {
        name: "armv7",
        aliases: &[],
        arch: Arch::Arm,
        features: Features(Features::ARMV7.0 | Features::VFP3.0),
        machines: "Cortex-A7/A9 boards, ARM state, VFPv3",
        qemu_user: Some(QemuUser {
            binary: "qemu-arm",
            cpu: "cortex-a9",
        }),
        unicorn_cpu: Some("UC_CPU_ARM_CORTEX_A9"),
        cflags: &[
            "-target",
            "arm-freestanding-eabihf",
            "-mcpu=cortex_a9",
            // NEON flushes subnormals, so float code stays on VFP: the loop vectoriser
            // is switched off per float loop (CPM_FLOAT_LOOP), the SLP vectoriser (no
            // per-loop switch) for the whole object; integer loops still use NEON
            "-fno-slp-vectorize",
        ],
    },
    TargetInfo {
        name: "armv6",
        aliases: &["arm"],
        arch: Arch::Arm,
        features: Features(Features::ARMV6.0 | Features::VFP2.0),
        machines: "Raspberry Pi Zero/1 (ARM1176JZF-S, VFPv2)",
        qemu_user: Some(QemuUser {
            binary: "qemu-arm",
            cpu: "arm1176",
        }),
        unicorn_cpu: Some("UC_CPU_ARM_1176"),
        cflags: &["-target", "arm-freestanding-eabihf", "-mcpu=arm1176jzf_s"],
    },
    TargetInfo {
        name: "cortex-m4",
        aliases: &["cortex_m4"],
        arch: Arch::Thumb,
        features: Features(Features::ARMV7EM.0 | Features::FPV4_SP.0),
        machines: "STM32F4-class MCUs, Thumb-2, FPv4-SP",
        qemu_user: None,
        unicorn_cpu: Some("UC_CPU_ARM_CORTEX_M4"),
        cflags: &[
            "-target",
            "thumb-freestanding-eabihf",
            "-mcpu=cortex_m4+vfp4d16sp",
        ],
    },
    TargetInfo {
        name: "riscv64",
        aliases: &["rv64gc"],
        arch: Arch::RiscV64,
        features: RV_MFC,
        machines: "rv64gc Linux boards",
        qemu_user: Some(QemuUser {
            binary: "qemu-riscv64",
            cpu: "rv64",
        }),
        unicorn_cpu: None,
        cflags: &[
            "-target",
            "riscv64-freestanding",
            "-mcpu=baseline_rv64",
            "-mno-relax",
            "-mcmodel=medany",
        ],
    },
    TargetInfo {
        name: "riscv32",
        aliases: &["rv32imafc"],
        arch: Arch::RiscV32,
        features: RV_MFC,
        machines: "rv32imafc MCUs with a single-precision FPU",
        qemu_user: None,
        unicorn_cpu: None,
        cflags: &[
            "-target",
            "riscv32-freestanding",
            "-mcpu=generic_rv32+m+a+f+c",
            "-mno-relax",
            "-mcmodel=medany",
        ],
    },
];

impl TargetInfo {
    /// The target called `name` or one of its aliases.
    ///
    /// ```
    /// use copapy_program::targets::TargetInfo;
    /// assert_eq!(TargetInfo::find("arm64").unwrap().name, "aarch64");
    /// assert!(TargetInfo::find("x86").is_none());
    /// ```
    pub fn find(name: &str) -> Option<&'static TargetInfo> {
        TARGETS
            .iter()
            .find(|t| t.name == name || t.aliases.contains(&name))
    }

    /// The best target for a CPU of instruction set `arch` with the features `has`: the
    /// first row of that instruction set whose features the CPU has all of.
    ///
    /// ```
    /// use copapy_program::{targets::TargetInfo, Arch, Features};
    /// let v7 = Features::ARMV6.union(Features::ARMV7).union(Features::VFP2).union(Features::VFP3);
    /// assert_eq!(TargetInfo::for_cpu(Arch::Arm, v7).unwrap().name, "armv7");
    /// let v6 = Features::ARMV6.union(Features::VFP2);
    /// assert_eq!(TargetInfo::for_cpu(Arch::Arm, v6).unwrap().name, "armv6");
    /// assert!(TargetInfo::for_cpu(Arch::Arm, Features::ARMV6).is_none()); // no FPU
    /// ```
    pub fn for_cpu(arch: Arch, has: Features) -> Option<&'static TargetInfo> {
        TARGETS
            .iter()
            .find(|t| t.arch == arch && t.features.missing(has).is_empty())
    }

    /// The target a program of instruction set `arch` needing exactly `needs` was
    /// compiled for (programs record their target's features), if one is.
    pub fn for_program(arch: Arch, needs: Features) -> Option<&'static TargetInfo> {
        TARGETS
            .iter()
            .find(|t| t.arch == arch && t.features == needs)
    }

    /// The most widely runnable target of instruction set `arch` (its last row): what a
    /// runner that names only its instruction set (copapy-run before 0.2 answered INFO
    /// with e.g. `arm`) can be assumed to run.
    pub fn baseline(arch: Arch) -> Option<&'static TargetInfo> {
        TARGETS.iter().rev().find(|t| t.arch == arch)
    }

    /// The target a runner's INFO reply names: `"<target> <feature>,<feature>…"`, or an
    /// older runner's bare instruction set name (`"arm"`). See
    /// [`from_report`](TargetInfo::from_report).
    ///
    /// ```
    /// use copapy_program::{targets::TargetInfo, Features};
    /// let (t, f) = TargetInfo::from_info("armv7 armv6,armv7,vfp2,vfp3").unwrap();
    /// assert_eq!(t.name, "armv7");
    /// assert!(Features::ARMV7.union(Features::VFP3).missing(f).is_empty());
    /// assert_eq!(TargetInfo::from_info("arm").unwrap().0.name, "armv6");
    /// assert_eq!(TargetInfo::from_info("aarch64").unwrap().0.name, "aarch64");
    /// assert!(TargetInfo::from_info("mips").is_err());
    /// assert!(TargetInfo::from_info("armv7 vfp9").is_err());
    /// ```
    pub fn from_info(info: &str) -> Result<(&'static TargetInfo, Features), InfoError<'_>> {
        let (name, features) = info.trim().split_once(' ').unwrap_or((info.trim(), ""));
        TargetInfo::from_report(name, features)
    }

    /// The target for a runner that reports `name` (a target, an alias, or only its
    /// instruction set, which maps to [`baseline`](TargetInfo::baseline)) and its CPU's
    /// `features` (a comma-separated list; empty when the runner does not report them,
    /// then the named target's own). With features, the best target of that
    /// instruction set for them ([`for_cpu`](TargetInfo::for_cpu)), so the answer never
    /// needs a feature the CPU lacks; returns it and the CPU's features.
    pub fn from_report<'a>(
        name: &'a str,
        features: &'a str,
    ) -> Result<(&'static TargetInfo, Features), InfoError<'a>> {
        let named = TargetInfo::find(name)
            .or_else(|| {
                let arch = Arch::ALL.iter().find(|a| a.name() == name)?;
                TargetInfo::baseline(*arch)
            })
            .ok_or(InfoError::UnknownTarget(name))?;
        let features = features.trim();
        if features.is_empty() {
            return Ok((named, named.features));
        }
        let has = Features::parse_list(features).map_err(InfoError::UnknownFeature)?;
        let best = TargetInfo::for_cpu(named.arch, has).ok_or(InfoError::NoTarget {
            arch: named.arch,
            has,
        })?;
        Ok((best, has))
    }
}

/// Why a runner's INFO reply names no target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoError<'a> {
    /// The first word is neither a target nor an instruction set copapy knows.
    UnknownTarget(&'a str),
    /// A feature in the list is not one of [`Features::NAMED`].
    UnknownFeature(&'a str),
    /// The CPU lacks features every copapy target of its instruction set needs.
    NoTarget {
        /// The instruction set.
        arch: Arch,
        /// What the CPU has.
        has: Features,
    },
}

impl core::fmt::Display for InfoError<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            InfoError::UnknownTarget(name) => write!(
                f,
                "the runner reports target {name:?}, which this copapy does not know: \
                 update copapy (or the runner) so both know the same targets"
            ),
            InfoError::UnknownFeature(name) => write!(
                f,
                "the runner reports CPU feature {name:?}, which this copapy does not know: \
                 update copapy (or the runner) so both know the same features"
            ),
            InfoError::NoTarget { arch, has } => {
                write!(
                    f,
                    "the runner's CPU has {has}, which no copapy {} target runs on: ",
                    arch.name()
                )?;
                let mut sep = "";
                for t in TARGETS.iter().filter(|t| t.arch == *arch) {
                    write!(f, "{sep}{} needs {}", t.name, t.features)?;
                    sep = ", ";
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: [&str; 32] = [""; 32];
        let mut n = 0;
        for t in &TARGETS {
            for name in core::iter::once(&t.name).chain(t.aliases) {
                assert!(!all[..n].contains(name), "{name} is defined twice");
                all[n] = name;
                n += 1;
            }
        }
    }

    #[test]
    fn every_target_is_the_best_for_its_own_features() {
        for t in &TARGETS {
            assert!(core::ptr::eq(
                TargetInfo::for_cpu(t.arch, t.features).unwrap(),
                t
            ));
        }
    }

    #[test]
    fn rows_of_one_arch_are_contiguous() {
        for (i, t) in TARGETS.iter().enumerate() {
            if let Some(later) = TARGETS[i + 1..].iter().position(|u| u.arch == t.arch) {
                assert_eq!(later, 0, "{} is not next to its instruction set", t.name);
            }
        }
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn info_round_trips() {
        for t in &TARGETS {
            let line = alloc::format!("{} {}", t.name, t.features);
            let (u, f) = TargetInfo::from_info(&line).unwrap();
            assert!(core::ptr::eq(u, t), "{line}");
            assert_eq!(f, t.features);
        }
        assert_eq!(
            TargetInfo::from_info("riscv64 rv-c,rv-m,rv-f").unwrap().1,
            RV_MFC
        );
        assert_eq!(
            TargetInfo::from_info("riscv64 rv-c,rv-q"),
            Err(InfoError::UnknownFeature("rv-q"))
        );
        assert_eq!(TargetInfo::from_info(""), Err(InfoError::UnknownTarget("")));
    }
}
