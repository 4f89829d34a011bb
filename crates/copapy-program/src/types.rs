//! Plain data types shared by the compiler (which produces them) and the runner (which consumes them).

/// Instruction set a program was compiled for. A runner refuses a program for another one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Arch {
    X86_64 = 1,
    AArch64 = 2,
    Arm = 3,
    Thumb = 4,
    RiscV64 = 5,
    RiscV32 = 6,
}

impl Arch {
    /// The architecture this crate was compiled for, if copapy supports it (what a
    /// runner built from it executes). Bare-metal 32-bit ARM is Cortex-M, which runs
    /// Thumb code only.
    pub const fn host() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::AArch64)
        } else if cfg!(all(target_arch = "arm", target_os = "none")) {
            Some(Arch::Thumb)
        } else if cfg!(target_arch = "arm") {
            Some(Arch::Arm)
        } else if cfg!(target_arch = "riscv32") {
            Some(Arch::RiscV32)
        } else if cfg!(target_arch = "riscv64") {
            Some(Arch::RiscV64)
        } else {
            None
        }
    }

    /// Every instruction set, in numeric order.
    pub const ALL: [Arch; 6] = [
        Arch::X86_64,
        Arch::AArch64,
        Arch::Arm,
        Arch::Thumb,
        Arch::RiscV64,
        Arch::RiscV32,
    ];

    /// Decodes the `arch` byte of a program header.
    pub const fn from_u8(v: u8) -> Option<Arch> {
        match v {
            1 => Some(Arch::X86_64),
            2 => Some(Arch::AArch64),
            3 => Some(Arch::Arm),
            4 => Some(Arch::Thumb),
            5 => Some(Arch::RiscV64),
            6 => Some(Arch::RiscV32),
            _ => None,
        }
    }

    /// Lower-case name as in Rust's `target_arch` (used in error messages).
    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::AArch64 => "aarch64",
            Arch::Arm => "arm",
            Arch::Thumb => "thumb",
            Arch::RiscV64 => "riscv64",
            Arch::RiscV32 => "riscv32",
        }
    }
}

/// CPU features a program needs, as a bit set (the "feature level" in its header).
///
/// A runner refuses a program that needs a feature it does not have
/// ([`Features::missing`]). Bits only say what the *stencils* use: e.g. the `armv7`
/// target needs ARMv7 and VFPv3 but no integer divide instruction, so it runs on a
/// Cortex-A9.
///
/// ```
/// use copapy_program::Features;
/// let needs = Features::ARMV7.union(Features::VFP3);
/// let has = Features::ARMV6.union(Features::VFP2);
/// assert_eq!(needs.missing(has), Features::ARMV7.union(Features::VFP3));
/// assert!(needs.missing(needs.union(Features::NEON)).is_empty());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Features(pub u32);

impl Features {
    /// x86_64 SSE2 (every x86_64 CPU).
    pub const SSE2: Features = Features(1 << 0);
    /// AArch64 floating point and Advanced SIMD (every Cortex-A53 and later).
    pub const NEON: Features = Features(1 << 1);
    /// ARMv6 instructions in ARM state.
    pub const ARMV6: Features = Features(1 << 2);
    /// ARMv7 instructions (MOVW/MOVT) in ARM state.
    pub const ARMV7: Features = Features(1 << 3);
    /// VFPv2 single precision (ARM1176JZF-S).
    pub const VFP2: Features = Features(1 << 4);
    /// VFPv3 (Cortex-A7, A9; VFPv3-D16 suffices).
    pub const VFP3: Features = Features(1 << 5);
    /// ARMv7E-M Thumb-2 with hardware divide (Cortex-M4, M7).
    pub const ARMV7EM: Features = Features(1 << 6);
    /// FPv4-SP single-precision FPU (Cortex-M4F).
    pub const FPV4_SP: Features = Features(1 << 7);
    /// RISC-V M (multiply and divide).
    pub const RV_M: Features = Features(1 << 8);
    /// RISC-V F (single-precision floating point).
    pub const RV_F: Features = Features(1 << 9);
    /// RISC-V C (compressed instructions).
    pub const RV_C: Features = Features(1 << 10);

    /// Every named feature with its name, in bit order.
    pub const NAMED: [(Features, &'static str); 11] = [
        (Features::SSE2, "sse2"),
        (Features::NEON, "neon"),
        (Features::ARMV6, "armv6"),
        (Features::ARMV7, "armv7"),
        (Features::VFP2, "vfp2"),
        (Features::VFP3, "vfp3"),
        (Features::ARMV7EM, "armv7e-m"),
        (Features::FPV4_SP, "fpv4-sp"),
        (Features::RV_M, "rv-m"),
        (Features::RV_F, "rv-f"),
        (Features::RV_C, "rv-c"),
    ];

    /// The features every CPU of the build target's baseline has (what a runner built
    /// for it can promise): SSE2 on x86_64, NEON on AArch64, ARMv7E-M with FPv4-SP for
    /// bare-metal hard-float Thumb; M, F and C on bare-metal RISC-V 32 as compiled for;
    /// none known elsewhere.
    pub const fn host() -> Features {
        if cfg!(target_arch = "x86_64") {
            Features::SSE2
        } else if cfg!(target_arch = "aarch64") {
            Features::NEON
        } else if cfg!(all(
            target_arch = "arm",
            target_os = "none",
            target_abi = "eabihf"
        )) {
            Features(Features::ARMV7EM.0 | Features::FPV4_SP.0)
        } else if cfg!(all(target_arch = "riscv32", target_os = "none")) {
            // bare metal: the extensions the library was compiled for (stable Rust
            // hides F from cfg: copapy-firmware adds it from its target name; firmware
            // can override the set at run time: copapy_set_cpu_features)
            Features(
                (Features::RV_M.0 * cfg!(target_feature = "m") as u32)
                    | (Features::RV_F.0 * cfg!(target_feature = "f") as u32)
                    | (Features::RV_C.0 * cfg!(target_feature = "c") as u32),
            )
        } else {
            Features(0)
        }
    }

    /// Both sets.
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// The features of `self` that `has` lacks.
    pub const fn missing(self, has: Features) -> Features {
        Features(self.0 & !has.0)
    }

    /// Whether no feature is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The feature called `name` (as in [`NAMED`](Features::NAMED)).
    pub fn from_name(name: &str) -> Option<Features> {
        Features::NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
    }

    /// The features of a comma-separated list of names (`"armv6,vfp2"`; empty or `-`
    /// for none), or the first name that is not a feature.
    ///
    /// ```
    /// use copapy_program::Features;
    /// assert_eq!(Features::parse_list("vfp2,armv6"), Ok(Features::ARMV6.union(Features::VFP2)));
    /// assert_eq!(Features::parse_list("-"), Ok(Features(0)));
    /// assert_eq!(Features::parse_list("neon,sse9"), Err("sse9"));
    /// ```
    pub fn parse_list(list: &str) -> Result<Features, &str> {
        if list.is_empty() || list == "-" {
            return Ok(Features(0));
        }
        list.split(',').try_fold(Features(0), |acc, name| {
            Features::from_name(name).map(|f| acc.union(f)).ok_or(name)
        })
    }
}

/// The comma-separated names of the set features in bit order (`-` for none; a bit
/// without a name as hex), the form [`Features::parse_list`] reads.
impl core::fmt::Display for Features {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        let mut rest = self.0;
        let mut sep = "";
        for (feature, name) in Features::NAMED {
            if self.0 & feature.0 != 0 {
                write!(f, "{sep}{name}")?;
                rest &= !feature.0;
                sep = ",";
            }
        }
        if rest != 0 {
            write!(f, "{sep}{rest:#x}")?;
        }
        Ok(())
    }
}

/// Which buffer a patch target lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Base {
    /// The code buffer (stencils, helper functions, read-only constants).
    Code = 0,
    /// The data buffer (variables, constants, intermediate values).
    Data = 1,
}

impl Base {
    /// Decodes the `base` byte of a patch record.
    pub const fn from_u8(v: u8) -> Option<Base> {
        match v {
            0 => Some(Base::Code),
            1 => Some(Base::Data),
            _ => None,
        }
    }

    /// `"code"` or `"data"` (used in error messages).
    pub const fn name(self) -> &'static str {
        match self {
            Base::Code => "code",
            Base::Data => "data",
        }
    }
}

/// How a patch value is written into the instruction bytes: one instruction field
/// of one instruction set each.
///
/// The host compiler interprets the ELF relocations (implicit ARM addends, paired
/// relocations, tail calls) and reduces each to one of these; the runner only
/// computes a value and writes it into the field, keeping every other bit of the
/// instruction. `S` is the target address (`base + target`), `A` the patch addend,
/// `P` the address of the field; all little-endian.
///
/// | encoding | value | field | ELF relocations |
/// | --- | --- | --- | --- |
/// | `Rel32` | S+A−P | whole `i32` | `R_X86_64_PC32`, `PLT32` |
/// | `Abs64` | S+A | whole `u64` | `R_X86_64_64` |
/// | `Abs32` | S+A | whole `u32` | `R_ARM_ABS32` (literal pools) |
/// | `A64Branch26` | (S+A−P)/4 | `B`/`BL` imm26, bits 0–25 | `R_AARCH64_JUMP26`, `CALL26` |
/// | `A64AdrPage21` | (Page(S+A)−Page(P))/4096 | `ADRP` immlo 29–30, immhi 5–23 | `ADR_PREL_PG_HI21` |
/// | `A64Lo12Scale0`..`Scale4` | ((S+A) & 0xfff) >> n | `ADD`/`LDR`/`STR` imm12, bits 10–21 | `ADD_ABS_LO12_NC`, `LDST{8,16,32,64,128}_ABS_LO12_NC` |
/// | `ArmBranch24` | (S+A−P)/4 | `B`/`BL` imm24, bits 0–23 | `R_ARM_JUMP24`, `CALL` |
/// | `ArmMovwAbs`, `ArmMovtAbs` | (S+A) & 0xffff, (S+A) >> 16 | imm4:imm12 (16–19, 0–11) | `R_ARM_MOVW_ABS_NC`, `MOVT_ABS` |
/// | `ThumbBranch24` | (S+A−P)/2 | `B.W`/`BL` S:J1:J2:imm10:imm11 | `R_ARM_THM_JUMP24`, `THM_CALL` |
/// | `ThumbMovwAbs`, `ThumbMovtAbs` | as ARM | imm4:i:imm3:imm8 | `R_ARM_THM_MOVW_ABS_NC`, `THM_MOVT_ABS` |
/// | `RvHi20` | (S+A−P+0x800) >> 12 | `AUIPC` imm20, bits 12–31 | `R_RISCV_PCREL_HI20` |
/// | `RvLo12I`, `RvLo12S` | low 12 bits of S+A−P, signed | I-type 20–31 / S-type 7–11, 25–31 | `PCREL_LO12_I`, `_S` |
/// | `RvCall` | S+A−P | `AUIPC`+`JALR` pair (8 bytes) | `R_RISCV_CALL_PLT` |
///
/// A RISC-V `PCREL_LO12` relocation refers to the `AUIPC` of its pair, not to the
/// target: the host gives its patch the pair's target and an addend of `A + (P_lo −
/// P_hi)`, so the runner computes the same S+A−P as for the `AUIPC` without pairing.
/// A value that does not fit its field, or is not a multiple of the field's scale, is
/// an error in the runner, never truncated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[allow(missing_docs)] // the table above documents each variant
pub enum Encoding {
    Rel32 = 1,
    Abs64 = 2,
    Abs32 = 3,
    A64Branch26 = 4,
    A64AdrPage21 = 5,
    A64Lo12Scale0 = 6,
    A64Lo12Scale1 = 7,
    A64Lo12Scale2 = 8,
    A64Lo12Scale3 = 9,
    A64Lo12Scale4 = 10,
    ArmBranch24 = 11,
    ArmMovwAbs = 12,
    ArmMovtAbs = 13,
    ThumbBranch24 = 14,
    ThumbMovwAbs = 15,
    ThumbMovtAbs = 16,
    RvHi20 = 17,
    RvLo12I = 18,
    RvLo12S = 19,
    RvCall = 20,
}

/// What the value of an [`Encoding`] is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// The target address, S+A.
    Absolute,
    /// The distance from the field, S+A−P.
    PcRelative,
    /// The distance between 4 KiB pages, Page(S+A)−Page(P) (AArch64 `ADRP`).
    PageRelative,
}

impl Encoding {
    /// Every encoding, in numeric order.
    pub const ALL: [Encoding; 20] = [
        Encoding::Rel32,
        Encoding::Abs64,
        Encoding::Abs32,
        Encoding::A64Branch26,
        Encoding::A64AdrPage21,
        Encoding::A64Lo12Scale0,
        Encoding::A64Lo12Scale1,
        Encoding::A64Lo12Scale2,
        Encoding::A64Lo12Scale3,
        Encoding::A64Lo12Scale4,
        Encoding::ArmBranch24,
        Encoding::ArmMovwAbs,
        Encoding::ArmMovtAbs,
        Encoding::ThumbBranch24,
        Encoding::ThumbMovwAbs,
        Encoding::ThumbMovtAbs,
        Encoding::RvHi20,
        Encoding::RvLo12I,
        Encoding::RvLo12S,
        Encoding::RvCall,
    ];

    /// Number of code bytes the patched field occupies.
    pub const fn width(self) -> usize {
        match self {
            Encoding::Abs64 | Encoding::RvCall => 8,
            _ => 4,
        }
    }

    /// What the value written into the field is computed from.
    pub const fn kind(self) -> ValueKind {
        match self {
            Encoding::Abs64
            | Encoding::Abs32
            | Encoding::A64Lo12Scale0
            | Encoding::A64Lo12Scale1
            | Encoding::A64Lo12Scale2
            | Encoding::A64Lo12Scale3
            | Encoding::A64Lo12Scale4
            | Encoding::ArmMovwAbs
            | Encoding::ArmMovtAbs
            | Encoding::ThumbMovwAbs
            | Encoding::ThumbMovtAbs => ValueKind::Absolute,
            Encoding::A64AdrPage21 => ValueKind::PageRelative,
            Encoding::Rel32
            | Encoding::A64Branch26
            | Encoding::ArmBranch24
            | Encoding::ThumbBranch24
            | Encoding::RvHi20
            | Encoding::RvLo12I
            | Encoding::RvLo12S
            | Encoding::RvCall => ValueKind::PcRelative,
        }
    }

    /// Decodes the `encoding` byte of a patch record.
    pub const fn from_u8(v: u8) -> Option<Encoding> {
        if v >= 1 && v as usize <= Encoding::ALL.len() {
            Some(Encoding::ALL[v as usize - 1])
        } else {
            None
        }
    }

    /// Name used in messages and golden files, e.g. `"ThumbBranch24"`.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Rel32 => "Rel32",
            Encoding::Abs64 => "Abs64",
            Encoding::Abs32 => "Abs32",
            Encoding::A64Branch26 => "A64Branch26",
            Encoding::A64AdrPage21 => "A64AdrPage21",
            Encoding::A64Lo12Scale0 => "A64Lo12Scale0",
            Encoding::A64Lo12Scale1 => "A64Lo12Scale1",
            Encoding::A64Lo12Scale2 => "A64Lo12Scale2",
            Encoding::A64Lo12Scale3 => "A64Lo12Scale3",
            Encoding::A64Lo12Scale4 => "A64Lo12Scale4",
            Encoding::ArmBranch24 => "ArmBranch24",
            Encoding::ArmMovwAbs => "ArmMovwAbs",
            Encoding::ArmMovtAbs => "ArmMovtAbs",
            Encoding::ThumbBranch24 => "ThumbBranch24",
            Encoding::ThumbMovwAbs => "ThumbMovwAbs",
            Encoding::ThumbMovtAbs => "ThumbMovtAbs",
            Encoding::RvHi20 => "RvHi20",
            Encoding::RvLo12I => "RvLo12I",
            Encoding::RvLo12S => "RvLo12S",
            Encoding::RvCall => "RvCall",
        }
    }
}

/// One relocation, resolved by the host to "put the address of `base + target` into the code at `offset`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Patch {
    /// Byte offset of the patched field in the code buffer.
    pub offset: u32,
    /// How the resolved address is written into the field.
    pub encoding: Encoding,
    /// Buffer the target lies in.
    pub base: Base,
    /// Byte offset of the target inside its base buffer.
    pub target: u32,
    /// Constant added to the target address (for PC-relative x86_64 fields usually -4).
    pub addend: i32,
}

/// Scalar type of a variable in data memory. All types occupy 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ScalarType {
    /// IEEE 754 binary32.
    Float = 0,
    /// Two's complement 32-bit integer.
    Int = 1,
    /// 32-bit integer holding 0 or 1.
    Bool = 2,
}

impl ScalarType {
    /// Size of a variable of this type in data memory.
    pub const BYTES: usize = 4;

    /// Decodes the type byte of a symbol record.
    pub const fn from_u8(v: u8) -> Option<ScalarType> {
        match v {
            0 => Some(ScalarType::Float),
            1 => Some(ScalarType::Int),
            2 => Some(ScalarType::Bool),
            _ => None,
        }
    }

    /// Python-facing name of the type.
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Float => "float",
            ScalarType::Int => "int",
            ScalarType::Bool => "bool",
        }
    }
}

/// Element type of a symbol: how a user reads and writes each element in data memory.
///
/// The first three are the [`ScalarType`]s programs compute with (4 bytes each); a
/// byte element is storage only (a `'byte'` array, one byte per element, 0..=255),
/// which operations read widened to `Int`. Byte symbols need format version 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ElementType {
    /// IEEE 754 binary32.
    Float = 0,
    /// Two's complement 32-bit integer.
    Int = 1,
    /// 32-bit integer holding 0 or 1.
    Bool = 2,
    /// One unsigned byte, 0..=255.
    Byte = 3,
}

impl ElementType {
    /// Decodes the type byte of a symbol record.
    pub const fn from_u8(v: u8) -> Option<ElementType> {
        match v {
            0 => Some(ElementType::Float),
            1 => Some(ElementType::Int),
            2 => Some(ElementType::Bool),
            3 => Some(ElementType::Byte),
            _ => None,
        }
    }

    /// Bytes one element occupies in data memory (and its alignment there).
    pub const fn size(self) -> usize {
        match self {
            ElementType::Byte => 1,
            _ => ScalarType::BYTES,
        }
    }

    /// The scalar type operations read an element as (a byte widens to `Int`).
    pub const fn scalar(self) -> ScalarType {
        match self {
            ElementType::Float => ScalarType::Float,
            ElementType::Int | ElementType::Byte => ScalarType::Int,
            ElementType::Bool => ScalarType::Bool,
        }
    }

    /// Python-facing name of the type (`"byte"` for bytes, else the scalar's name).
    pub const fn name(self) -> &'static str {
        match self {
            ElementType::Byte => "byte",
            t => t.scalar().name(),
        }
    }
}

impl From<ScalarType> for ElementType {
    fn from(t: ScalarType) -> ElementType {
        match t {
            ScalarType::Float => ElementType::Float,
            ScalarType::Int => ElementType::Int,
            ScalarType::Bool => ElementType::Bool,
        }
    }
}

/// What a program does with a variable in its symbol table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Role {
    /// Written by the user between runs, read by the program.
    Input = 0,
    /// Computed by the program on every run; reading it before a run gives its initial value.
    Output = 1,
    /// Read by the program and overwritten with its next value at the end of every run
    /// (`Target.compile(..., updates={x: ...})`); the user may also write it.
    State = 2,
}

impl Role {
    /// Decodes the role byte of a symbol record.
    pub const fn from_u8(v: u8) -> Option<Role> {
        match v {
            0 => Some(Role::Input),
            1 => Some(Role::Output),
            2 => Some(Role::State),
            _ => None,
        }
    }

    /// `"input"`, `"output"` or `"state"`.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::State => "state",
        }
    }

    /// Whether users may write the variable between runs.
    pub const fn writable(self) -> bool {
        !matches!(self, Role::Output)
    }
}

/// CPU feature bits (the `features` field of a program) for a runner
/// that knows none: a program needing any feature is refused by such a runner.
pub const NO_FEATURES: u32 = 0;
