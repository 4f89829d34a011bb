//! Pre-linked images (format version [`PRELINKED_VERSION`]): a program whose code and
//! data are already patched for fixed load addresses.
//!
//! A firmware that always loads its program into the same buffers needs no patching at
//! all: `Target.save(path, code_base=…, data_base=…)` applies every patch on the host and
//! writes a file whose patch section is replaced by the [`PLACEMENT_BYTES`]-byte
//! placement section: `code_base: u64, data_base: u64`, the addresses the code and data
//! were linked for. A runner copies such an image to exactly those addresses (or runs it
//! there) after the same checks as any file, and refuses it
//! ([`FormatError::WrongPlacement`]) when its buffers are elsewhere. The header's patch
//! count is 0; the instruction-bounds section is always present, so version 6 has the
//! sections of version 5 with the placement in the patches' place.

use crate::format::{u32_at, Section};
use crate::{Arch, FormatError};

/// The format version of a pre-linked image (defined with the other versions).
pub use crate::format::PRELINKED_VERSION;

/// Size of the placement section.
pub const PLACEMENT_BYTES: usize = 16;

/// The addresses a pre-linked image's code and data were patched for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    /// Address of the first code byte.
    pub code: u64,
    /// Address of the first data byte.
    pub data: u64,
}

/// What is wrong with a placement (a byte, so [`FormatError`] stays small).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementProblem {
    /// A base is not aligned as the program's alignment field says.
    Misaligned(Section),
    /// Code or data would run past the end of the architecture's address space.
    OutsideAddressSpace(Section),
    /// The code and data ranges share bytes.
    Overlap,
    /// The header announces patches, which a pre-linked image never has.
    HasPatches,
}

impl PlacementProblem {
    /// What the message says.
    pub const fn describe(self) -> &'static str {
        match self {
            PlacementProblem::Misaligned(Section::Code) => {
                "has a code address not aligned as the program requires"
            }
            PlacementProblem::Misaligned(_) => {
                "has a data address not aligned as the program requires"
            }
            PlacementProblem::OutsideAddressSpace(Section::Code) => {
                "puts code past the end of the address space"
            }
            PlacementProblem::OutsideAddressSpace(_) => {
                "puts data past the end of the address space"
            }
            PlacementProblem::Overlap => "puts code and data on the same bytes",
            PlacementProblem::HasPatches => "comes with patches",
        }
    }
}

impl Placement {
    /// The section's bytes.
    pub fn to_bytes(self) -> [u8; PLACEMENT_BYTES] {
        let mut out = [0; PLACEMENT_BYTES];
        for (o, b) in out.iter_mut().zip(
            self.code
                .to_le_bytes()
                .into_iter()
                .chain(self.data.to_le_bytes()),
        ) {
            *o = b;
        }
        out
    }

    /// Reads the section (callers check its length; missing bytes read as 0).
    pub fn from_bytes(bytes: &[u8]) -> Placement {
        Placement {
            code: u32_at(bytes, 0) as u64 | (u32_at(bytes, 4) as u64) << 32,
            data: u32_at(bytes, 8) as u64 | (u32_at(bytes, 12) as u64) << 32,
        }
    }

    /// Checks the placement against the program it places: each base aligned as its
    /// alignment field says, both ranges inside the address space of `arch` (4 GiB for
    /// the 32-bit ones), code and data disjoint.
    pub fn check(
        self,
        arch: Arch,
        (code_len, code_align): (usize, u32),
        (data_len, data_align): (usize, u32),
    ) -> Result<(), FormatError> {
        // 32-bit targets end at 4 GiB; for the others only a u64 overflow is out of range
        let narrow = matches!(arch, Arch::Arm | Arch::Thumb | Arch::RiscV32);
        let bad = |problem| Err(FormatError::BadPlacement { problem });
        let ranges = [
            (Section::Code, self.code, code_len, code_align),
            (Section::Data, self.data, data_len, data_align),
        ];
        for (section, base, len, align) in ranges {
            // alignments are powers of two (checked before): a mask, no division
            if base & (u64::from(align).wrapping_sub(1)) != 0 {
                return bad(PlacementProblem::Misaligned(section));
            }
            match base.checked_add(len as u64) {
                Some(end) if !narrow || end <= 1 << 32 => {}
                _ => return bad(PlacementProblem::OutsideAddressSpace(section)),
            }
        }
        let (code_end, data_end) = (self.code + code_len as u64, self.data + data_len as u64);
        if self.code < data_end && self.data < code_end {
            return bad(PlacementProblem::Overlap);
        }
        Ok(())
    }

    /// Refuses buffers at other addresses than the image was linked for.
    pub fn check_buffers(self, code_addr: u64, data_addr: u64) -> Result<(), FormatError> {
        let (section, expected, actual) = if self.code != code_addr {
            (Section::Code, self.code, code_addr)
        } else if self.data != data_addr {
            (Section::Data, self.data, data_addr)
        } else {
            return Ok(());
        };
        Err(FormatError::WrongPlacement {
            section,
            expected,
            actual,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_checks() {
        let p = Placement {
            code: 0x2000_0000,
            data: 0x2002_0000,
        };
        assert_eq!(Placement::from_bytes(&p.to_bytes()), p);
        assert!(p.check(Arch::Thumb, (0x2_0000, 16), (64, 8)).is_ok());
        let e = |problem| Err(FormatError::BadPlacement { problem });
        assert_eq!(
            p.check(Arch::Thumb, (0x2_0001, 16), (64, 8)),
            e(PlacementProblem::Overlap)
        );
        assert_eq!(
            p.check(Arch::Thumb, (16, 1 << 30), (64, 8)),
            e(PlacementProblem::Misaligned(Section::Code))
        );
        let high = Placement {
            code: 0xFFFF_FF00,
            data: 0,
        };
        assert_eq!(
            high.check(Arch::RiscV32, (0x101, 4), (4, 4)),
            e(PlacementProblem::OutsideAddressSpace(Section::Code))
        );
        assert!(high.check(Arch::RiscV64, (0x101, 4), (4, 4)).is_ok());
        assert!(p.check_buffers(0x2000_0000, 0x2002_0000).is_ok());
        assert_eq!(
            p.check_buffers(0x2000_0000, 0x2002_0040),
            Err(FormatError::WrongPlacement {
                section: Section::Data,
                expected: 0x2002_0000,
                actual: 0x2002_0040
            })
        );
    }
}
