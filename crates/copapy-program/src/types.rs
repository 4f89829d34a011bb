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
    /// The architecture this crate was compiled for, if copapy supports it.
    pub const fn host() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::AArch64)
        } else if cfg!(target_arch = "riscv64") {
            Some(Arch::RiscV64)
        } else {
            None
        }
    }

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

/// How a patch value is written into the instruction bytes.
///
/// The set is kept small on purpose: each one is a few lines in the runner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Encoding {
    /// x86_64 `R_X86_64_PC32` / `PLT32`: little-endian `i32` = target + addend - place.
    /// Out of range (more than ±2 GiB) is an error.
    Rel32 = 1,
    /// 64-bit absolute address, little-endian: target + addend.
    Abs64 = 2,
}

impl Encoding {
    /// Number of code bytes the patched field occupies.
    pub const fn width(self) -> usize {
        match self {
            Encoding::Rel32 => 4,
            Encoding::Abs64 => 8,
        }
    }

    /// Decodes the `encoding` byte of a patch record.
    pub const fn from_u8(v: u8) -> Option<Encoding> {
        match v {
            1 => Some(Encoding::Rel32),
            2 => Some(Encoding::Abs64),
            _ => None,
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
