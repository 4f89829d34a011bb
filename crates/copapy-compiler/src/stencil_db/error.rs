//! Why a stencil object is rejected: every message names the relocation, symbol and
//! stencil, since a silently skipped relocation would be wrong machine code.

use std::fmt;

use copapy_program::Arch;

use crate::isa::reloc_name;

/// Why a stencil object was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StencilError {
    /// The bytes are not a readable ELF object.
    Elf(String),
    /// The ELF file is not a relocatable object (`.o`).
    NotRelocatable,
    /// The object is for an architecture copapy does not support.
    UnsupportedArch(String),
    /// A relocation type this module does not handle.
    UnsupportedRelocation {
        /// Architecture of the object.
        arch: Arch,
        /// Raw ELF relocation type.
        r_type: u32,
        /// Symbol (or section) the relocation refers to.
        symbol: String,
        /// Where the relocation is, e.g. "stencil st_x".
        owner: String,
        /// Offset of the relocation in its section.
        offset: u64,
    },
    /// An undefined symbol that is not a hole.
    UnknownSymbol {
        /// The symbol.
        symbol: String,
        /// Where the relocation is.
        owner: String,
    },
    /// A relocation the ABI forbids (e.g. a helper using `cp_mf`, a stencil calling a stencil).
    BadTarget {
        /// The symbol.
        symbol: String,
        /// Where the relocation is.
        owner: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A relocation addend or offset does not fit 32 bits or lies outside its section.
    RelocationOutOfRange {
        /// Where the relocation is.
        owner: String,
        /// Offset of the relocation.
        offset: u64,
    },
    /// Two functions share a section: the object was built without `-ffunction-sections`.
    SharedSection {
        /// Section name.
        section: String,
        /// The two functions.
        functions: (String, String),
    },
    /// Two stencils have the same name.
    Duplicate(String),
    /// A stencil (other than `st_return`) does not end with its tail jump to `cp_next`.
    NoTailJump {
        /// The stencil.
        stencil: String,
    },
}

impl fmt::Display for StencilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StencilError::Elf(e) => write!(f, "not a valid ELF object: {e}"),
            StencilError::NotRelocatable => {
                f.write_str("not a relocatable ELF object: stencils must be compiled with -c")
            }
            StencilError::UnsupportedArch(a) => {
                write!(f, "stencil object is for {a}, which copapy does not support")
            }
            StencilError::UnsupportedRelocation { arch, r_type, symbol, owner, offset } => write!(
                f,
                "unsupported relocation {} against '{symbol}' at offset {offset:#x} in {owner}",
                reloc_name(*arch, *r_type)
            ),
            StencilError::UnknownSymbol { symbol, owner } => write!(
                f,
                "{owner} refers to undefined symbol '{symbol}': only cp_next, cp_mf, cp_mi, cp_mf2, cp_mi2, cp_head, cp_a0..cp_a3 and cp_n may be \
                 undefined; helpers must be compiled into the stencil object"
            ),
            StencilError::BadTarget { symbol, owner, reason } => {
                write!(f, "{owner} refers to '{symbol}': {reason}")
            }
            StencilError::RelocationOutOfRange { owner, offset } => write!(
                f,
                "relocation at offset {offset:#x} in {owner} lies outside the section or has an addend beyond 32 bits"
            ),
            StencilError::SharedSection { section, functions } => write!(
                f,
                "functions {} and {} share section {section}: compile stencils with -ffunction-sections",
                functions.0, functions.1
            ),
            StencilError::Duplicate(name) => write!(f, "stencil {name} is defined twice"),
            StencilError::NoTailJump { stencil } => write!(
                f,
                "stencil {stencil} does not end with its tail jump to cp_next (an unconditional \
                 jump as the last instruction, followed by nothing but literal data): control \
                 would run off its end; end every stencil with a musttail call of cp_next"
            ),
        }
    }
}

impl std::error::Error for StencilError {}
