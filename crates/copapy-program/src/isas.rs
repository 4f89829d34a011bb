//! What the tools around the compiler know of each instruction set, in one table
//! ([`ISAS`]): the relocations a stencil may contain, those of its tail jump and calls,
//! and the square root instruction (checked by `stencils/build.py`), its disassembler,
//! how unicorn and capstone name it, and the registers the in-process emulator
//! (`python/copapy/_emulator.py`) calls a program with, switches the FPU on by and
//! reads the calls of imported functions from.
//!
//! The compiler's own rules for an instruction set (how each relocation is patched) are
//! its module in `copapy-compiler/src/isa/`; a test there checks that it patches every
//! relocation a row lists, with the tail jump's encoding. The stencil build reads the
//! rows from `stencils/isas.json`, which the same test writes
//! (`COPAPY_BLESS=1 cargo test -p copapy-compiler --test target_table`), and Python
//! through `copapy._core.isas()`. A new instruction set is its `isa/` module and one
//! row here.

use crate::Arch;

/// How an emulator or disassembler library names an instruction set: its architecture
/// constant and the mode constants or-ed together (`UC_ARCH_ARM`, `UC_MODE_THUMB`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LibMode {
    /// The architecture constant, e.g. `"UC_ARCH_ARM"` or `"CS_ARCH_ARM"`.
    pub arch: &'static str,
    /// The mode constants, e.g. `["UC_MODE_THUMB", "UC_MODE_MCLASS"]`.
    pub modes: &'static [&'static str],
}

/// A register write that prepares an emulated CPU (switching its FPU on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterWrite {
    /// unicorn's register constant, e.g. `"UC_ARM_REG_FPEXC"`.
    pub register: &'static str,
    /// The bits to write.
    pub bits: u64,
    /// Or them into the register's value (true) instead of replacing it.
    pub keep: bool,
}

/// The C calling convention as the emulator's stubs for imported functions see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallAbi {
    /// Float argument registers, in order (unicorn's constants).
    pub float_args: &'static [&'static str],
    /// Integer and pointer argument registers, in order.
    pub int_args: &'static [&'static str],
    /// The float result register.
    pub float_result: &'static str,
    /// The integer result register.
    pub int_result: &'static str,
    /// The bytes of a return instruction (little-endian).
    pub return_insn: &'static [u8],
    /// Singles live NaN-boxed in 64-bit float registers (RISC-V D).
    pub nan_boxed: bool,
}

/// How unicorn runs an instruction set: its names, the registers a call of the entry
/// uses, what switches the FPU on, and how an imported function is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unicorn {
    /// Architecture and mode constants.
    pub mode: LibMode,
    /// The module of its register constants, e.g. `"arm_const"`.
    pub consts: &'static str,
    /// The program counter register.
    pub pc: &'static str,
    /// The stack pointer register.
    pub sp: &'static str,
    /// The register that takes the return address of a call; `None` where the call
    /// pushes it on the stack (8 bytes, x86_64).
    pub return_address: Option<&'static str>,
    /// The writes that switch the FPU on, in order.
    pub fpu: &'static [RegisterWrite],
    /// How a program calls an imported function.
    pub call: CallAbi,
}

/// One instruction set as the tools outside the compiler see it.
#[derive(Debug, PartialEq, Eq)]
pub struct IsaInfo {
    /// The instruction set.
    pub arch: Arch,
    /// Every ELF relocation type a stencil object may contain, as `llvm-objdump` names
    /// them (a test checks that the compiler's `isa/` module patches each).
    pub relocs: &'static [&'static str],
    /// ELF relocation of the tail jump to `cp_next` that ends every stencil.
    pub tail_reloc: &'static str,
    /// ELF relocations of calls (a stencil may call only `cpm_*` helpers).
    pub call_relocs: &'static [&'static str],
    /// The instruction `__builtin_sqrtf` must compile to (the hardware square root).
    pub sqrt_insn: &'static str,
    /// The disassembler that reads its objects (`objdump` or `llvm-objdump`).
    pub objdump: &'static str,
    /// How unicorn runs it.
    pub unicorn: Unicorn,
    /// How capstone disassembles it.
    pub capstone: LibMode,
}

const LLVM: &str = "llvm-objdump";

/// ARM's coprocessor access register: full access to CP10 and CP11 (the FPU).
const CPACR_CP10_CP11: RegisterWrite = RegisterWrite {
    register: "UC_ARM_REG_C1_C0_2",
    bits: 0xF << 20,
    keep: true,
};

/// The AAPCS hard-float convention of ARM and Thumb code (Thumb returns otherwise).
const ARM_CALL: CallAbi = CallAbi {
    float_args: &[
        "UC_ARM_REG_S0",
        "UC_ARM_REG_S1",
        "UC_ARM_REG_S2",
        "UC_ARM_REG_S3",
    ],
    int_args: &[
        "UC_ARM_REG_R0",
        "UC_ARM_REG_R1",
        "UC_ARM_REG_R2",
        "UC_ARM_REG_R3",
    ],
    float_result: "UC_ARM_REG_S0",
    int_result: "UC_ARM_REG_R0",
    return_insn: &[0x1E, 0xFF, 0x2F, 0xE1], // bx lr
    nan_boxed: false,
};

/// The RISC-V rows differ only in their emulator modes.
const fn riscv(arch: Arch, uc: &'static [&'static str], cs: &'static [&'static str]) -> IsaInfo {
    IsaInfo {
        arch,
        relocs: &[
            "R_RISCV_CALL_PLT",
            "R_RISCV_PCREL_HI20",
            "R_RISCV_PCREL_LO12_I",
            "R_RISCV_PCREL_LO12_S",
        ],
        tail_reloc: "R_RISCV_CALL_PLT",
        call_relocs: &["R_RISCV_CALL_PLT"],
        sqrt_insn: "fsqrt.s",
        objdump: LLVM,
        unicorn: Unicorn {
            mode: LibMode {
                arch: "UC_ARCH_RISCV",
                modes: uc,
            },
            consts: "riscv_const",
            pc: "UC_RISCV_REG_PC",
            sp: "UC_RISCV_REG_SP",
            return_address: Some("UC_RISCV_REG_RA"),
            // mstatus.FS = initial: the F extension on
            fpu: &[RegisterWrite {
                register: "UC_RISCV_REG_MSTATUS",
                bits: 1 << 13,
                keep: true,
            }],
            call: CallAbi {
                float_args: &[
                    "UC_RISCV_REG_F10",
                    "UC_RISCV_REG_F11",
                    "UC_RISCV_REG_F12",
                    "UC_RISCV_REG_F13",
                ],
                int_args: &[
                    "UC_RISCV_REG_X10",
                    "UC_RISCV_REG_X11",
                    "UC_RISCV_REG_X12",
                    "UC_RISCV_REG_X13",
                ],
                float_result: "UC_RISCV_REG_F10",
                int_result: "UC_RISCV_REG_X10",
                return_insn: &[0x67, 0x80, 0x00, 0x00], // jalr x0, 0(ra)
                nan_boxed: true,
            },
        },
        capstone: LibMode {
            arch: "CS_ARCH_RISCV",
            modes: cs,
        },
    }
}

impl IsaInfo {
    /// The row of instruction set `arch` (every [`Arch`] has one).
    pub fn of(arch: Arch) -> &'static IsaInfo {
        ISAS.iter()
            .find(|i| i.arch == arch)
            .expect("ISAS has a row for every Arch (tested)")
    }
}

/// Every instruction set, in the order of [`Arch::ALL`].
pub static ISAS: [IsaInfo; 6] = [
    IsaInfo {
        arch: Arch::X86_64,
        relocs: &["R_X86_64_PLT32", "R_X86_64_PC32"],
        tail_reloc: "R_X86_64_PLT32",
        call_relocs: &["R_X86_64_PLT32"],
        sqrt_insn: "sqrtss",
        objdump: "objdump",
        unicorn: Unicorn {
            mode: LibMode {
                arch: "UC_ARCH_X86",
                modes: &["UC_MODE_64"],
            },
            consts: "x86_const",
            pc: "UC_X86_REG_RIP",
            sp: "UC_X86_REG_RSP",
            return_address: None,
            fpu: &[],
            call: CallAbi {
                float_args: &[
                    "UC_X86_REG_XMM0",
                    "UC_X86_REG_XMM1",
                    "UC_X86_REG_XMM2",
                    "UC_X86_REG_XMM3",
                ],
                int_args: &[
                    "UC_X86_REG_RDI",
                    "UC_X86_REG_RSI",
                    "UC_X86_REG_RDX",
                    "UC_X86_REG_RCX",
                ],
                float_result: "UC_X86_REG_XMM0",
                int_result: "UC_X86_REG_RAX",
                return_insn: &[0xC3], // ret
                nan_boxed: false,
            },
        },
        capstone: LibMode {
            arch: "CS_ARCH_X86",
            modes: &["CS_MODE_64"],
        },
    },
    IsaInfo {
        arch: Arch::AArch64,
        relocs: &[
            "R_AARCH64_JUMP26",
            "R_AARCH64_CALL26",
            "R_AARCH64_ADR_PREL_PG_HI21",
            "R_AARCH64_ADD_ABS_LO12_NC",
            "R_AARCH64_LDST8_ABS_LO12_NC",
            "R_AARCH64_LDST16_ABS_LO12_NC",
            "R_AARCH64_LDST32_ABS_LO12_NC",
            "R_AARCH64_LDST64_ABS_LO12_NC",
            "R_AARCH64_LDST128_ABS_LO12_NC",
        ],
        tail_reloc: "R_AARCH64_JUMP26",
        call_relocs: &["R_AARCH64_CALL26"],
        sqrt_insn: "fsqrt",
        objdump: LLVM,
        unicorn: Unicorn {
            mode: LibMode {
                arch: "UC_ARCH_ARM64",
                modes: &["UC_MODE_ARM"],
            },
            consts: "arm64_const",
            pc: "UC_ARM64_REG_PC",
            sp: "UC_ARM64_REG_SP",
            return_address: Some("UC_ARM64_REG_X30"),
            // CPACR_EL1.FPEN: no trap on FP/SIMD instructions
            fpu: &[RegisterWrite {
                register: "UC_ARM64_REG_CPACR_EL1",
                bits: 3 << 20,
                keep: false,
            }],
            call: CallAbi {
                float_args: &[
                    "UC_ARM64_REG_S0",
                    "UC_ARM64_REG_S1",
                    "UC_ARM64_REG_S2",
                    "UC_ARM64_REG_S3",
                ],
                int_args: &[
                    "UC_ARM64_REG_X0",
                    "UC_ARM64_REG_X1",
                    "UC_ARM64_REG_X2",
                    "UC_ARM64_REG_X3",
                ],
                float_result: "UC_ARM64_REG_S0",
                int_result: "UC_ARM64_REG_X0",
                return_insn: &[0xC0, 0x03, 0x5F, 0xD6], // ret
                nan_boxed: false,
            },
        },
        capstone: LibMode {
            arch: "CS_ARCH_ARM64",
            modes: &["CS_MODE_ARM"],
        },
    },
    IsaInfo {
        arch: Arch::Arm,
        relocs: &[
            "R_ARM_JUMP24",
            "R_ARM_CALL",
            "R_ARM_MOVW_ABS_NC",
            "R_ARM_MOVT_ABS",
            "R_ARM_ABS32",
        ],
        tail_reloc: "R_ARM_JUMP24",
        call_relocs: &["R_ARM_CALL"],
        sqrt_insn: "vsqrt.f32",
        objdump: LLVM,
        unicorn: Unicorn {
            mode: LibMode {
                arch: "UC_ARCH_ARM",
                modes: &["UC_MODE_ARM"],
            },
            consts: "arm_const",
            pc: "UC_ARM_REG_PC",
            sp: "UC_ARM_REG_SP",
            return_address: Some("UC_ARM_REG_LR"),
            // CPACR: full access to CP10/11; FPEXC.EN
            fpu: &[
                CPACR_CP10_CP11,
                RegisterWrite {
                    register: "UC_ARM_REG_FPEXC",
                    bits: 0x4000_0000,
                    keep: false,
                },
            ],
            call: ARM_CALL,
        },
        capstone: LibMode {
            arch: "CS_ARCH_ARM",
            modes: &["CS_MODE_ARM"],
        },
    },
    IsaInfo {
        arch: Arch::Thumb,
        relocs: &[
            "R_ARM_THM_JUMP24",
            "R_ARM_THM_CALL",
            "R_ARM_THM_MOVW_ABS_NC",
            "R_ARM_THM_MOVT_ABS",
            "R_ARM_ABS32",
        ],
        tail_reloc: "R_ARM_THM_JUMP24",
        call_relocs: &["R_ARM_THM_CALL"],
        sqrt_insn: "vsqrt.f32",
        objdump: LLVM,
        unicorn: Unicorn {
            mode: LibMode {
                arch: "UC_ARCH_ARM",
                modes: &["UC_MODE_THUMB", "UC_MODE_MCLASS"],
            },
            consts: "arm_const",
            pc: "UC_ARM_REG_PC",
            sp: "UC_ARM_REG_SP",
            // bit 0 of the return address is set (Thumb state)
            return_address: Some("UC_ARM_REG_LR"),
            // Cortex-M: CPACR (memory mapped in the SCB), full access to CP10/11
            fpu: &[CPACR_CP10_CP11],
            call: CallAbi {
                return_insn: &[0x70, 0x47], // bx lr (Thumb)
                ..ARM_CALL
            },
        },
        capstone: LibMode {
            arch: "CS_ARCH_ARM",
            modes: &["CS_MODE_THUMB", "CS_MODE_MCLASS"],
        },
    },
    riscv(
        Arch::RiscV64,
        &["UC_MODE_RISCV64"],
        &["CS_MODE_RISCV64", "CS_MODE_RISCVC"],
    ),
    riscv(
        Arch::RiscV32,
        &["UC_MODE_RISCV32"],
        &["CS_MODE_RISCV32", "CS_MODE_RISCVC"],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_arch_in_order() {
        for (row, arch) in ISAS.iter().zip(Arch::ALL) {
            assert_eq!(row.arch, arch);
            assert_eq!(IsaInfo::of(arch).arch, arch);
        }
    }
}
