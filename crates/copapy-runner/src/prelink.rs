//! Pre-linking: a program patched on the host for fixed load addresses (a pre-linked
//! image, format version 10 with its pre-linked flag, [`copapy_program::placement`]), which a runner copies to
//! those addresses and runs without patching anything.

use std::vec::Vec;

use copapy_program::{FormatError, Placement, Program};

use crate::patch::{apply_patches, PatchError};

/// Why a program cannot be pre-linked for the addresses asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrelinkError {
    /// The program or the addresses are unfit (misaligned, overlapping, outside the
    /// architecture's address space, or the program is already pre-linked).
    Format(FormatError),
    /// A patch cannot reach its target from these addresses (e.g. code and data too far
    /// apart for a PC-relative field).
    Patch(PatchError),
    /// The program is already a pre-linked image, for other addresses: its patches are
    /// gone, so only the relocatable program can be linked again.
    AlreadyPrelinked(Placement),
}

impl core::fmt::Display for PrelinkError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PrelinkError::Format(e) => e.fmt(f),
            PrelinkError::Patch(e) => e.fmt(f),
            PrelinkError::AlreadyPrelinked(at) => write!(
                f,
                "the program is a pre-linked image for code at {:#x} and data at {:#x}, with \
                 no patches left to move it: pre-link the relocatable program (saved without \
                 code_base=/data_base=, or compiled again) for other addresses",
                at.code, at.data
            ),
        }
    }
}

impl std::error::Error for PrelinkError {}

/// `program` with every patch applied for code at `placement.code` and data at
/// `placement.data`: the same program as a pre-linked image, with no patches and the
/// placement recorded. The import table (data) is still filled in by the runner that
/// loads it, by name, as for any program.
pub fn prelink(program: &Program, placement: Placement) -> Result<Program, PrelinkError> {
    program.validate().map_err(PrelinkError::Format)?;
    if let Some(already) = program.placement {
        if already == placement {
            return Ok(program.clone());
        }
        return Err(PrelinkError::AlreadyPrelinked(already));
    }
    let mut linked = Program {
        patches: Vec::new(),
        placement: Some(placement),
        instructions: Some(
            program
                .instructions
                .unwrap_or(copapy_program::InstructionBounds::Unbounded),
        ),
        ..program.clone()
    };
    // placement checks (alignment, address space, overlap) before any patch is computed
    linked.validate().map_err(PrelinkError::Format)?;
    apply_patches(
        &mut linked.code,
        placement.code,
        placement.data,
        program.data.len(),
        &program.patches,
    )
    .map_err(PrelinkError::Patch)?;
    Ok(linked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use copapy_program::{Arch, Base, Encoding, Patch};
    use std::vec;

    #[test]
    fn prelinked_code_is_what_the_runner_would_have_patched() {
        let p = Program::new(
            Arch::X86_64,
            vec![0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, 0xC3],
            vec![0; 8],
            vec![Patch {
                offset: 4,
                encoding: Encoding::Rel32,
                base: Base::Data,
                target: 4,
                addend: -4,
            }],
            0,
        );
        let at = Placement {
            code: 0x10_0000,
            data: 0x10_1000,
        };
        let linked = prelink(&p, at).unwrap();
        assert!(linked.patches.is_empty());
        assert_eq!(linked.placement, Some(at));
        // 0x101000 + 4 - 4 - (0x100000 + 4)
        assert_eq!(&linked.code[4..8], &0x0FFCi32.to_le_bytes());
        let back = Program::decode(&linked.encode()).unwrap();
        assert_eq!(back, linked);
        assert_eq!(back.format_version(), 10);
        // idempotent at the same addresses, refused at others
        assert_eq!(prelink(&linked, at).unwrap(), linked);
        assert!(prelink(
            &linked,
            Placement {
                code: 0,
                data: 0x1000
            }
        )
        .is_err());
        // out of reach: data 4 GiB away from the code
        let far = Placement {
            code: 0x10_0000,
            data: 0x2_0000_0000,
        };
        assert!(matches!(prelink(&p, far), Err(PrelinkError::Patch(_))));
        // overlapping buffers
        let overlap = Placement {
            code: 0x10_0000,
            data: 0x10_0000,
        };
        assert!(matches!(prelink(&p, overlap), Err(PrelinkError::Format(_))));
    }
}
