//! What this machine's CPU has, as copapy [`Features`], asked at run time.
//!
//! A runner binary is built for an instruction set, not for one CPU: the same
//! `armv7-unknown-linux-gnueabihf` build runs on a Cortex-A7 and an A9, and nothing
//! known at compile time says whether an ARM CPU has VFPv3. On Linux the kernel says so
//! in the auxiliary vector (`AT_HWCAP`, `AT_HWCAP2`, and `AT_PLATFORM` for the ARM
//! architecture level); `/proc/cpuinfo` is read only when the auxiliary vector is empty
//! (under qemu-user it describes the host, not the emulated CPU). Elsewhere the runner
//! promises what every CPU of its build target has ([`Features::host`]); a bare-metal
//! firmware, which has no kernel to ask, uses that or its own override (this module
//! needs `std`).
//!
//! [`from_kernel`] is the mapping alone, so it is tested with the values real CPUs
//! report on every architecture, whatever machine the tests run on.

use std::sync::OnceLock;

use copapy_program::targets::TargetInfo;
use copapy_program::{Arch, Features};

/// What the kernel tells a process about its CPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelCpu<'a> {
    /// `getauxval(AT_HWCAP)`.
    pub hwcap: u64,
    /// `getauxval(AT_HWCAP2)`.
    pub hwcap2: u64,
    /// The `AT_PLATFORM` string (ARM: `"v6l"`, `"v7l"`, `"v8l"`).
    pub platform: Option<&'a str>,
    /// The text of `/proc/cpuinfo`, when the auxiliary vector had no `AT_HWCAP`.
    pub cpuinfo: Option<&'a str>,
}

// Linux `arch/arm/include/uapi/asm/hwcap.h`.
const ARM_HWCAP_VFP: u64 = 1 << 6;
const ARM_HWCAP_NEON: u64 = 1 << 12;
const ARM_HWCAP_VFPV3: u64 = 1 << 13;
const ARM_HWCAP_VFPV3D16: u64 = 1 << 14;
const ARM_HWCAP_TLS: u64 = 1 << 15;
const ARM_HWCAP_VFPV4: u64 = 1 << 16;
const ARM_HWCAP_IDIVA: u64 = 1 << 17;
const ARM_HWCAP_LPAE: u64 = 1 << 20;
// Linux `arch/arm64/include/uapi/asm/hwcap.h`.
const A64_HWCAP_FP: u64 = 1 << 0;
const A64_HWCAP_ASIMD: u64 = 1 << 1;

/// The RISC-V `AT_HWCAP` bit of a single-letter extension (bit 0 is `A`).
const fn rv_letter(letter: u8) -> u64 {
    1 << (letter - b'A')
}

/// The features a CPU of instruction set `arch` has, by what its kernel reports.
///
/// ```
/// use copapy_runner::cpu::{from_kernel, KernelCpu};
/// use copapy_program::{Arch, Features};
/// // a Raspberry Pi 1 (ARM1176JZF-S): swp half thumb fastmult vfp edsp java tls
/// let pi1 = KernelCpu { hwcap: 0x81d7, platform: Some("v6l"), ..KernelCpu::default() };
/// assert_eq!(from_kernel(Arch::Arm, &pi1), Features::ARMV6.union(Features::VFP2));
/// ```
pub fn from_kernel(arch: Arch, cpu: &KernelCpu<'_>) -> Features {
    if cpu.hwcap == 0 && cpu.platform.is_none() {
        if let Some(text) = cpu.cpuinfo {
            return from_cpuinfo(arch, text);
        }
    }
    match arch {
        Arch::X86_64 => Features::SSE2, // part of the x86_64 architecture
        Arch::AArch64 => {
            if cpu.hwcap & (A64_HWCAP_FP | A64_HWCAP_ASIMD) == A64_HWCAP_FP | A64_HWCAP_ASIMD {
                Features::NEON
            } else {
                Features(0)
            }
        }
        Arch::Arm => arm_from_hwcap(cpu.hwcap).union(arm_level(
            cpu.platform.and_then(platform_level).unwrap_or(0),
        )),
        Arch::RiscV64 | Arch::RiscV32 => riscv_from_letters(|l| cpu.hwcap & rv_letter(l) != 0),
        // Cortex-M has no Linux; a firmware knows what it was built for.
        Arch::Thumb => Features(0),
    }
}

/// ARM features from `AT_HWCAP`, including the architecture level some bits imply:
/// VFPv3, VFPv4, NEON, hardware divide and LPAE exist from ARMv7 on, TLS from ARMv6K.
fn arm_from_hwcap(hwcap: u64) -> Features {
    let mut f = Features(0);
    let vfp3 = ARM_HWCAP_VFPV3 | ARM_HWCAP_VFPV3D16 | ARM_HWCAP_VFPV4;
    if hwcap & (ARM_HWCAP_VFP | vfp3) != 0 {
        f = f.union(Features::VFP2);
    }
    if hwcap & vfp3 != 0 {
        f = f.union(Features::VFP3);
    }
    if hwcap & (vfp3 | ARM_HWCAP_NEON | ARM_HWCAP_IDIVA | ARM_HWCAP_LPAE) != 0 {
        f = f.union(arm_level(7));
    } else if hwcap & ARM_HWCAP_TLS != 0 {
        f = f.union(arm_level(6));
    }
    f
}

/// The features of ARM architecture `level` (ARMv7 runs ARMv6 code).
fn arm_level(level: u32) -> Features {
    match level {
        7.. => Features::ARMV6.union(Features::ARMV7),
        6 => Features::ARMV6,
        _ => Features(0),
    }
}

/// The number in an ARM `AT_PLATFORM` string: `"v7l"` is 7.
fn platform_level(platform: &str) -> Option<u32> {
    let digits: &str = platform.strip_prefix('v')?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// RISC-V M, F, C from a test of single-letter extensions.
fn riscv_from_letters(has: impl Fn(u8) -> bool) -> Features {
    let mut f = Features(0);
    for (letter, feature) in [
        (b'M', Features::RV_M),
        (b'F', Features::RV_F),
        (b'C', Features::RV_C),
    ] {
        if has(letter) {
            f = f.union(feature);
        }
    }
    f
}

/// The value of the first `key : value` line of `/proc/cpuinfo` with this key.
fn cpuinfo_field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// Features from `/proc/cpuinfo`, for kernels whose auxiliary vector says nothing.
fn from_cpuinfo(arch: Arch, text: &str) -> Features {
    let flags = || {
        cpuinfo_field(text, "Features")
            .unwrap_or("")
            .split_whitespace()
    };
    match arch {
        Arch::X86_64 => Features::SSE2,
        Arch::AArch64 => {
            let mut has = (false, false);
            for w in flags() {
                has.0 |= w == "fp";
                has.1 |= w == "asimd";
            }
            if has.0 && has.1 {
                Features::NEON
            } else {
                Features(0)
            }
        }
        Arch::Arm => {
            let mut hwcap = 0;
            for w in flags() {
                hwcap |= match w {
                    "vfp" => ARM_HWCAP_VFP,
                    "vfpv3" => ARM_HWCAP_VFPV3,
                    "vfpv3d16" => ARM_HWCAP_VFPV3D16,
                    "vfpv4" => ARM_HWCAP_VFPV4,
                    "neon" => ARM_HWCAP_NEON,
                    "tls" => ARM_HWCAP_TLS,
                    "idiva" => ARM_HWCAP_IDIVA,
                    "lpae" => ARM_HWCAP_LPAE,
                    _ => 0,
                };
            }
            // "model name : ARMv6-compatible processor rev 7 (v6l)" carries the
            // platform string; "CPU architecture: 7" is printed for ARM1176 too (it
            // counts the CPUID scheme), so it is only the last resort
            let platform = ["model name", "Processor"]
                .iter()
                .filter_map(|k| cpuinfo_field(text, k))
                .find_map(|v| v.rsplit_once('(')?.1.strip_suffix(')'))
                .and_then(platform_level);
            let level = platform
                .or_else(|| cpuinfo_field(text, "CPU architecture")?.parse().ok())
                .unwrap_or(0);
            arm_from_hwcap(hwcap).union(arm_level(level))
        }
        Arch::RiscV64 | Arch::RiscV32 => {
            // "isa : rv64imafdc_zicsr…": the single letters before the first '_'
            let isa = cpuinfo_field(text, "isa").unwrap_or("");
            let letters = isa
                .strip_prefix("rv64")
                .or_else(|| isa.strip_prefix("rv32"))
                .unwrap_or("");
            let letters = letters.split('_').next().unwrap_or("");
            riscv_from_letters(|l| letters.contains(l.to_ascii_lowercase() as char))
        }
        Arch::Thumb => Features(0),
    }
}

#[cfg(target_os = "linux")]
fn ask_kernel() -> Features {
    let Some(arch) = Arch::host() else {
        return Features(0);
    };
    // SAFETY: getauxval only reads the auxiliary vector; it returns 0 for a missing key.
    let (hwcap, hwcap2, platform) = unsafe {
        (
            libc::getauxval(libc::AT_HWCAP),
            libc::getauxval(libc::AT_HWCAP2),
            libc::getauxval(libc::AT_PLATFORM),
        )
    };
    let platform = (platform != 0).then(|| {
        // SAFETY: AT_PLATFORM is the address of a NUL-terminated string the kernel put
        // on the initial stack; it lives as long as the process.
        unsafe { std::ffi::CStr::from_ptr(platform as usize as *const libc::c_char) }
    });
    let platform = platform.and_then(|p| p.to_str().ok());
    let cpuinfo = if hwcap == 0 {
        std::fs::read_to_string("/proc/cpuinfo").ok()
    } else {
        None
    };
    #[allow(clippy::useless_conversion)] // c_ulong is u32 on 32-bit targets
    let cpu = KernelCpu {
        hwcap: u64::from(hwcap),
        hwcap2: u64::from(hwcap2),
        platform,
        cpuinfo: cpuinfo.as_deref(),
    };
    from_kernel(arch, &cpu).union(Features::host())
}

#[cfg(not(target_os = "linux"))]
fn ask_kernel() -> Features {
    Features::host()
}

/// The features of the CPU this process runs on (asked once, then remembered).
pub fn features() -> Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    *FEATURES.get_or_init(ask_kernel)
}

/// The best target for this CPU (e.g. `armv6` on a Raspberry Pi Zero, `armv7` on a
/// Cortex-A7), if copapy has one for it.
pub fn target() -> Option<&'static TargetInfo> {
    TargetInfo::for_cpu(Arch::host()?, features())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hw(hwcap: u64, platform: &str) -> KernelCpu<'_> {
        KernelCpu {
            hwcap,
            platform: Some(platform),
            ..KernelCpu::default()
        }
    }

    const V6_VFP2: Features = Features(Features::ARMV6.0 | Features::VFP2.0);
    const V7_VFP3: Features =
        Features(Features::ARMV6.0 | Features::ARMV7.0 | Features::VFP2.0 | Features::VFP3.0);

    #[test]
    fn arm_cpus_as_their_kernels_report_them() {
        // Raspberry Pi 1 / Zero, ARM1176JZF-S: swp half thumb fastmult vfp edsp java tls
        assert_eq!(from_kernel(Arch::Arm, &hw(0x81d7, "v6l")), V6_VFP2);
        // Cortex-A9 (qemu-arm -cpu cortex-a9): … vfp edsp thumbee neon vfpv3 tls vfpd32
        assert_eq!(from_kernel(Arch::Arm, &hw(0x0008_b8d7, "v7l")), V7_VFP3);
        // Cortex-A7 (Raspberry Pi 2): … vfpv4 idiva idivt vfpd32 lpae evtstrm
        assert_eq!(from_kernel(Arch::Arm, &hw(0x003f_b0d6, "v7l")), V7_VFP3);
        // Cortex-A72 in 32-bit state (Raspberry Pi 4 with a 32-bit OS)
        assert_eq!(from_kernel(Arch::Arm, &hw(0x003f_b0d6, "v8l")), V7_VFP3);
        // an ARMv7 kernel without AT_PLATFORM: the VFPv3 bit implies ARMv7
        let no_platform = KernelCpu {
            hwcap: 0x0008_b8d7,
            ..KernelCpu::default()
        };
        assert_eq!(from_kernel(Arch::Arm, &no_platform), V7_VFP3);
        // an ARMv6 CPU without an FPU can run no copapy ARM program
        assert_eq!(from_kernel(Arch::Arm, &hw(0x8097, "v6l")), Features::ARMV6);
        // an ARMv5 platform string adds no level
        assert_eq!(
            from_kernel(Arch::Arm, &hw(ARM_HWCAP_VFP, "v5l")),
            Features::VFP2
        );
    }

    #[test]
    fn other_architectures() {
        assert_eq!(
            from_kernel(Arch::AArch64, &hw(0xff, "aarch64")),
            Features::NEON
        );
        assert_eq!(
            from_kernel(Arch::AArch64, &hw(A64_HWCAP_FP, "aarch64")),
            Features(0)
        );
        let rv64gc = rv_letter(b'I')
            | rv_letter(b'M')
            | rv_letter(b'A')
            | rv_letter(b'F')
            | rv_letter(b'D')
            | rv_letter(b'C');
        let mfc = Features(Features::RV_M.0 | Features::RV_F.0 | Features::RV_C.0);
        assert_eq!(from_kernel(Arch::RiscV64, &hw(rv64gc, "")), mfc);
        assert_eq!(
            from_kernel(Arch::RiscV64, &hw(rv64gc & !rv_letter(b'F'), "")),
            Features(Features::RV_M.0 | Features::RV_C.0)
        );
        assert_eq!(from_kernel(Arch::X86_64, &hw(0, "x86_64")), Features::SSE2);
    }

    #[test]
    fn cpuinfo_when_the_auxiliary_vector_is_empty() {
        let pi2 = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 5 (v7l)\n\
                   Features\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt \
                   vfpd32 lpae evtstrm\nCPU architecture: 7\n";
        let cpu = KernelCpu {
            cpuinfo: Some(pi2),
            ..KernelCpu::default()
        };
        assert_eq!(from_kernel(Arch::Arm, &cpu), V7_VFP3);
        // ARM1176 kernels print "CPU architecture: 7" (the CPUID scheme): the
        // model name's platform string decides
        let pi1 = "model name\t: ARMv6-compatible processor rev 7 (v6l)\n\
                   Features\t: half thumb fastmult vfp edsp java tls\nCPU architecture: 7\n";
        let cpu = KernelCpu {
            cpuinfo: Some(pi1),
            ..KernelCpu::default()
        };
        assert_eq!(from_kernel(Arch::Arm, &cpu), V6_VFP2);
        let rv = "processor\t: 0\nisa\t\t: rv64imafdc_zicsr_zifencei\n";
        let cpu = KernelCpu {
            cpuinfo: Some(rv),
            ..KernelCpu::default()
        };
        assert_eq!(
            from_kernel(Arch::RiscV64, &cpu),
            Features(Features::RV_M.0 | Features::RV_F.0 | Features::RV_C.0)
        );
        let a64 = "Features\t: fp asimd evtstrm crc32 cpuid\n";
        let cpu = KernelCpu {
            cpuinfo: Some(a64),
            ..KernelCpu::default()
        };
        assert_eq!(from_kernel(Arch::AArch64, &cpu), Features::NEON);
    }

    /// Every combination of the ARM bits the mapping reads, on every platform string:
    /// the features are closed under implication (ARMv7 runs ARMv6 code, VFPv3 is a
    /// superset of VFPv2 and exists only from ARMv7 on), the platform's level is never
    /// lost, and the target chosen for the CPU needs nothing it lacks.
    #[test]
    fn arm_features_are_consistent_for_every_hwcap() {
        let bits = [
            ARM_HWCAP_VFP,
            ARM_HWCAP_NEON,
            ARM_HWCAP_VFPV3,
            ARM_HWCAP_VFPV3D16,
            ARM_HWCAP_TLS,
            ARM_HWCAP_VFPV4,
            ARM_HWCAP_IDIVA,
            ARM_HWCAP_LPAE,
        ];
        let implies = |f: Features, a: Features, b: Features| a.missing(f).is_empty().then_some(b);
        for mask in 0u32..1 << bits.len() {
            let hwcap = (0..bits.len())
                .filter(|i| mask & (1 << i) != 0)
                .fold(0x7, |h, i| h | bits[i]); // swp half thumb: every ARM Linux CPU
            for platform in [
                None,
                Some("v5l"),
                Some("v6l"),
                Some("v7l"),
                Some("v8l"),
                Some("x"),
            ] {
                let cpu = KernelCpu {
                    hwcap,
                    platform,
                    ..KernelCpu::default()
                };
                let f = from_kernel(Arch::Arm, &cpu);
                for (a, b) in [
                    (Features::ARMV7, Features::ARMV6),
                    (Features::VFP3, Features::VFP2),
                    (Features::VFP3, Features::ARMV7),
                ] {
                    if let Some(b) = implies(f, a, b) {
                        assert!(b.missing(f).is_empty(), "{hwcap:#x} {platform:?}: {f}");
                    }
                }
                let level = platform.and_then(platform_level).unwrap_or(0);
                assert!(arm_level(level).missing(f).is_empty(), "{platform:?}: {f}");
                if let Some(t) = TargetInfo::for_cpu(Arch::Arm, f) {
                    assert!(t.features.missing(f).is_empty());
                }
            }
        }
    }

    /// Every subset of the RISC-V letters that matter, with other letters set or not.
    #[test]
    fn riscv_features_follow_their_letters() {
        let letters = *b"IMAFDC";
        for mask in 0u32..1 << letters.len() {
            let has = |l: u8| mask & (1 << letters.iter().position(|&x| x == l).unwrap()) != 0;
            let hwcap = letters
                .iter()
                .filter(|&&l| has(l))
                .fold(0, |h, &l| h | rv_letter(l));
            for extra in [0, rv_letter(b'V') | rv_letter(b'Z')] {
                let f = from_kernel(Arch::RiscV64, &hw(hwcap | extra, "riscv"));
                assert_eq!(f.0 & Features::RV_M.0 != 0, has(b'M'));
                assert_eq!(f.0 & Features::RV_F.0 != 0, has(b'F'));
                assert_eq!(f.0 & Features::RV_C.0 != 0, has(b'C'));
            }
        }
    }

    #[test]
    fn this_machine_has_its_baseline() {
        assert!(Features::host().missing(features()).is_empty());
        if Arch::host().is_some() {
            let t = target().expect("a target for this CPU");
            assert!(t.features.missing(features()).is_empty());
        }
    }
}
