//! Applying patches: the one piece of the runner that interprets a program.

use core::fmt;

use copapy_program::format::check_patch;
use copapy_program::{Base, Encoding, FormatError, Patch, ValueKind};

use crate::fields::{write_field, FieldError};

/// Why a patch could not be applied. No bad input makes [`apply_patches`] panic;
/// it returns one of these instead and leaves the fields of later patches untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The patched field or the target lies outside its buffer: the program crate's
    /// own bounds check ([`check_patch`]), so a runner and a file validator never
    /// disagree about what is in range.
    OutOfBounds(FormatError),
    /// The value does not fit the patched field: a branch or an address out of the
    /// instruction's reach.
    OutOfReach {
        /// Index of the patch.
        index: usize,
        /// The field's encoding.
        encoding: Encoding,
        /// The value that does not fit (a distance or an address).
        value: i128,
    },
    /// The value is not a multiple of the field's scale (e.g. an odd branch distance).
    Misaligned {
        /// Index of the patch.
        index: usize,
        /// The field's encoding.
        encoding: Encoding,
        /// The misaligned value.
        value: i128,
    },
    /// The patch's encoding is for another instruction set than this runner's (it was
    /// built without the `foreign-encodings` feature).
    UnsupportedEncoding {
        /// Index of the patch.
        index: usize,
        /// The encoding.
        encoding: Encoding,
    },
    /// A buffer given to [`install`](crate::install) is smaller than the program's.
    BufferTooSmall {
        /// Which buffer.
        base: Base,
        /// Bytes the program needs.
        needed: usize,
        /// Bytes given.
        available: usize,
    },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PatchError::OutOfBounds(e) => e.fmt(f),
            PatchError::UnsupportedEncoding { index, encoding } => write!(
                f,
                "patch {index}: this runner has no {} field writer: the program is for \
                 another instruction set",
                encoding.name()
            ),
            PatchError::OutOfReach {
                index,
                encoding,
                value,
            } => write!(
                f,
                "patch {index}: value {value:#x} does not fit the {} field (target out of the \
                 instruction's reach: code and data must be placed together, and below 4 GiB \
                 for 32-bit targets)",
                encoding.name()
            ),
            PatchError::Misaligned {
                index,
                encoding,
                value,
            } => write!(
                f,
                "patch {index}: value {value:#x} is not aligned as the {} field requires",
                encoding.name()
            ),
            PatchError::BufferTooSmall {
                base,
                needed,
                available,
            } => write!(
                f,
                "the program needs {needed} {} bytes, the runner has room for {available}",
                base.name()
            ),
        }
    }
}

impl core::error::Error for PatchError {}

/// Writes the final address of every patch target into `code`.
///
/// `code` is the code buffer as it will execute, placed at address `code_addr`; the
/// data buffer is placed at `data_addr` and is `data_len` bytes long. For a patch
/// `p`, with `base_addr` the address of its base buffer:
///
/// `S = base_addr + p.target + p.addend` and `P = code_addr + p.offset`; the value is
/// S, S−P or the page distance as [`Encoding::kind`] says, written into the
/// instruction field by [`write_field`] (the table is on [`Encoding`]); a value that
/// does not fit its field is an error, never truncated.
///
/// Every field and target is bounds-checked; this never panics.
///
/// ```
/// use copapy_runner::{apply_patches, Base, Encoding, Patch};
/// // movss xmm0, [rip + disp32]; ret
/// let mut code = [0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, 0xC3];
/// let p = Patch { offset: 4, encoding: Encoding::Rel32, base: Base::Data, target: 8, addend: -4 };
/// apply_patches(&mut code, 0x1000, 0x2000, 16, &[p]).unwrap();
/// // 0x2000 + 8 - 4 - (0x1000 + 4) = 0x1000
/// assert_eq!(&code[4..8], &0x1000i32.to_le_bytes());
/// ```
pub fn apply_patches(
    code: &mut [u8],
    code_addr: u64,
    data_addr: u64,
    data_len: usize,
    patches: &[Patch],
) -> Result<(), PatchError> {
    apply_patch_iter(
        code,
        code_addr,
        data_addr,
        data_len,
        patches.iter().copied(),
    )
}

/// [`apply_patches`] for patches from an iterator, e.g. a
/// [`ProgramView`](copapy_program::ProgramView)'s, which decodes them from the file
/// without allocating.
pub fn apply_patch_iter(
    code: &mut [u8],
    code_addr: u64,
    data_addr: u64,
    data_len: usize,
    patches: impl IntoIterator<Item = Patch>,
) -> Result<(), PatchError> {
    let code_len = code.len();
    for (index, p) in patches.into_iter().enumerate() {
        check_patch(index, &p, code_len, data_len).map_err(PatchError::OutOfBounds)?;
        let start = p.offset as usize;
        let width = p.encoding.width();
        let field = code
            .get_mut(start..start + width)
            .ok_or(PatchError::OutOfBounds(FormatError::PatchFieldOutOfRange {
                index,
                offset: p.offset,
                width,
                code_len,
            }))?;
        let base_addr = match p.base {
            Base::Code => code_addr,
            Base::Data => data_addr,
        };
        let target = base_addr as i128 + p.target as i128 + p.addend as i128;
        let place = code_addr as i128 + p.offset as i128;
        let value = match p.encoding.kind() {
            ValueKind::Absolute => target,
            ValueKind::PcRelative => target - place,
            ValueKind::PageRelative => (target & !0xFFF) - (place & !0xFFF),
        };
        write_field(p.encoding, field, value).map_err(|e| match e {
            FieldError::OutOfReach => PatchError::OutOfReach {
                index,
                encoding: p.encoding,
                value,
            },
            FieldError::Misaligned => PatchError::Misaligned {
                index,
                encoding: p.encoding,
                value,
            },
            FieldError::Unsupported => PatchError::UnsupportedEncoding {
                index,
                encoding: p.encoding,
            },
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(offset: u32, base: Base, target: u32, addend: i32) -> Patch {
        Patch {
            offset,
            encoding: Encoding::Rel32,
            base,
            target,
            addend,
        }
    }

    #[test]
    fn rel32_math() {
        let mut code = [0u8; 16];
        let patches = [
            rel(4, Base::Data, 12, -4), // data access
            rel(9, Base::Code, 14, -4), // jump forward inside code
            rel(0, Base::Code, 0, 0),   // distance zero
        ];
        apply_patches(&mut code, 0x4000_0000, 0x4000_1000, 16, &patches).unwrap();
        let at = |o: usize| i32::from_le_bytes(code[o..o + 4].try_into().unwrap());
        assert_eq!(at(4), 0x1000 + 12 - 4 - 4);
        assert_eq!(at(9), 14 - 4 - 9);
        assert_eq!(at(0), 0);
    }

    #[test]
    fn rel32_backwards_is_negative() {
        let mut code = [0u8; 8];
        // data placed below code
        apply_patches(&mut code, 0x9000, 0x1000, 4, &[rel(2, Base::Data, 0, -4)]).unwrap();
        assert_eq!(
            i32::from_le_bytes(code[2..6].try_into().unwrap()),
            0x1000 - 4 - 0x9002
        );
    }

    #[test]
    fn rel32_out_of_reach() {
        let mut code = [0u8; 8];
        let e = apply_patches(
            &mut code,
            0x1000,
            0x1_0000_1000,
            4,
            &[rel(0, Base::Data, 0, 0)],
        )
        .unwrap_err();
        assert_eq!(
            e,
            PatchError::OutOfReach {
                index: 0,
                encoding: Encoding::Rel32,
                value: 0x1_0000_0000
            }
        );
        // exactly i32::MAX still fits, one more does not
        let d = 0x1000 + i32::MAX as u64;
        assert!(apply_patches(&mut code, 0x1000, d, 4, &[rel(0, Base::Data, 0, 0)]).is_ok());
        assert!(apply_patches(&mut code, 0x1000, d + 1, 4, &[rel(0, Base::Data, 0, 0)]).is_err());
    }

    #[test]
    fn abs64_math() {
        let mut code = [0u8; 10];
        let p = Patch {
            offset: 2,
            encoding: Encoding::Abs64,
            base: Base::Data,
            target: 8,
            addend: 3,
        };
        apply_patches(&mut code, 0x1000, 0x7fff_0000_0000, 16, &[p]).unwrap();
        assert_eq!(
            u64::from_le_bytes(code[2..10].try_into().unwrap()),
            0x7fff_0000_000b
        );
        let p = Patch {
            offset: 0,
            encoding: Encoding::Abs64,
            base: Base::Code,
            target: 0,
            addend: -1,
        };
        assert_eq!(
            apply_patches(&mut code, 0, 0, 0, &[p]),
            Err(PatchError::OutOfReach {
                index: 0,
                encoding: Encoding::Abs64,
                value: -1
            })
        );
    }

    #[test]
    fn bounds_are_checked_without_panicking() {
        let mut code = [0u8; 8];
        let e = apply_patches(&mut code, 0, 0, 4, &[rel(5, Base::Code, 0, 0)]).unwrap_err();
        assert_eq!(
            e,
            PatchError::OutOfBounds(FormatError::PatchFieldOutOfRange {
                index: 0,
                offset: 5,
                width: 4,
                code_len: 8
            })
        );
        let p = rel(u32::MAX, Base::Code, 0, 0);
        assert!(matches!(
            apply_patches(&mut code, 0, 0, 4, &[p]),
            Err(PatchError::OutOfBounds(
                FormatError::PatchFieldOutOfRange { .. }
            ))
        ));
        let p = Patch {
            offset: 1,
            encoding: Encoding::Abs64,
            base: Base::Code,
            target: 0,
            addend: 0,
        };
        assert!(matches!(
            apply_patches(&mut code, 0, 0, 4, &[p]),
            Err(PatchError::OutOfBounds(
                FormatError::PatchFieldOutOfRange { .. }
            ))
        ));
        let e = apply_patches(&mut code, 0, 0, 4, &[rel(0, Base::Data, 4, 0)]).unwrap_err();
        assert_eq!(
            e,
            PatchError::OutOfBounds(FormatError::PatchTargetOutOfRange {
                index: 0,
                base: Base::Data,
                target: 4,
                len: 4
            })
        );
        let e = apply_patches(
            &mut code,
            0,
            0,
            4,
            &[rel(0, Base::Data, 0, 0), rel(0, Base::Code, 8, 0)],
        )
        .unwrap_err();
        assert!(matches!(
            e,
            PatchError::OutOfBounds(FormatError::PatchTargetOutOfRange {
                index: 1,
                base: Base::Code,
                ..
            })
        ));
        let mut empty = [0u8; 0];
        assert!(apply_patches(
            &mut empty,
            u64::MAX,
            u64::MAX,
            usize::MAX,
            &[rel(0, Base::Data, 0, i32::MIN)]
        )
        .is_err());
    }

    #[test]
    fn extreme_addresses_do_not_overflow() {
        let mut code = [0u8; 4];
        let p = rel(0, Base::Data, 0, i32::MAX);
        assert!(apply_patches(&mut code, 0, u64::MAX, 1, &[p]).is_err());
        let p = Patch {
            offset: 0,
            encoding: Encoding::Rel32,
            base: Base::Code,
            target: 0,
            addend: i32::MIN,
        };
        assert!(apply_patches(&mut code, u64::MAX - 3, 0, 0, &[p]).is_ok());
    }
}
