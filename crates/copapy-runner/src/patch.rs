//! Applying patches: the one piece of the runner that interprets a program.

use core::fmt;

use copapy_program::{Base, Encoding, Patch, ValueKind};

use crate::fields::{write_field, FieldError};

/// Why a patch could not be applied. No bad input makes [`apply_patches`] panic;
/// it returns one of these instead and leaves the fields of later patches untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The patched field does not lie inside the code.
    FieldOutOfRange {
        /// Index of the patch.
        index: usize,
        /// Code offset of the field.
        offset: u32,
        /// Field width.
        width: usize,
        /// Code size.
        code_len: usize,
    },
    /// The target is outside its base buffer.
    TargetOutOfRange {
        /// Index of the patch.
        index: usize,
        /// Buffer of the target.
        base: Base,
        /// Target offset.
        target: u32,
        /// Size of that buffer.
        len: usize,
    },
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
    /// A buffer given to [`install`] is smaller than the program's.
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
            PatchError::FieldOutOfRange { index, offset, width, code_len } => write!(
                f,
                "patch {index} out of range: its {width}-byte field at code offset {offset} \
                 extends past the end of the {code_len} code bytes"
            ),
            PatchError::TargetOutOfRange { index, base, target, len } => write!(
                f,
                "patch {index} out of range: target {} offset {target} is outside the {len}-byte buffer",
                base.name()
            ),
            PatchError::OutOfReach { index, encoding, value } => write!(
                f,
                "patch {index}: value {value:#x} does not fit the {} field (target out of the \
                 instruction's reach: code and data must be placed together, and below 4 GiB \
                 for 32-bit targets)",
                encoding.name()
            ),
            PatchError::Misaligned { index, encoding, value } => write!(
                f,
                "patch {index}: value {value:#x} is not aligned as the {} field requires",
                encoding.name()
            ),
            PatchError::BufferTooSmall { base, needed, available } => write!(
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
        let width = p.encoding.width();
        let start = p.offset as usize;
        let field = start
            .checked_add(width)
            .and_then(|end| code.get_mut(start..end))
            .ok_or(PatchError::FieldOutOfRange {
                index,
                offset: p.offset,
                width,
                code_len,
            })?;
        let (base_addr, len) = match p.base {
            Base::Code => (code_addr, code_len),
            Base::Data => (data_addr, data_len),
        };
        if p.target as usize >= len {
            return Err(PatchError::TargetOutOfRange {
                index,
                base: p.base,
                target: p.target,
                len,
            });
        }
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
        })?;
    }
    Ok(())
}

/// Copies a parsed program into caller-provided memory and patches it for the
/// addresses of those buffers: the whole runner for a `no_std` target whose code
/// and data memory are static arrays (e.g. firmware running from RAM).
///
/// `code` must be at least `view.code.len()` bytes and `data` at least
/// `view.data.len()`; the tails beyond are left as they are. The caller then makes
/// `code` executable if its platform needs that (and flushes the instruction cache
/// on non-x86 targets), and calls `code[view.entry..]` with the
/// `extern "C" fn(f32, f32, i32, i32)` signature. Check [`ProgramView::check_arch`]
/// first.
///
/// [`ProgramView::check_arch`]: copapy_program::ProgramView::check_arch
pub fn install(
    view: &copapy_program::ProgramView<'_>,
    code: &mut [u8],
    data: &mut [u8],
) -> Result<(), PatchError> {
    if code.len() < view.code.len() {
        return Err(PatchError::BufferTooSmall {
            base: Base::Code,
            needed: view.code.len(),
            available: code.len(),
        });
    }
    if data.len() < view.data.len() {
        return Err(PatchError::BufferTooSmall {
            base: Base::Data,
            needed: view.data.len(),
            available: data.len(),
        });
    }
    let code = &mut code[..view.code.len()];
    let data = &mut data[..view.data.len()];
    code.copy_from_slice(view.code);
    data.copy_from_slice(view.data);
    let (code_addr, data_addr) = (code.as_ptr() as u64, data.as_ptr() as u64);
    apply_patch_iter(code, code_addr, data_addr, data.len(), view.patches())
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
            PatchError::FieldOutOfRange {
                index: 0,
                offset: 5,
                width: 4,
                code_len: 8
            }
        );
        let p = rel(u32::MAX, Base::Code, 0, 0);
        assert!(matches!(
            apply_patches(&mut code, 0, 0, 4, &[p]),
            Err(PatchError::FieldOutOfRange { .. })
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
            Err(PatchError::FieldOutOfRange { .. })
        ));
        let e = apply_patches(&mut code, 0, 0, 4, &[rel(0, Base::Data, 4, 0)]).unwrap_err();
        assert_eq!(
            e,
            PatchError::TargetOutOfRange {
                index: 0,
                base: Base::Data,
                target: 4,
                len: 4
            }
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
            PatchError::TargetOutOfRange {
                index: 1,
                base: Base::Code,
                ..
            }
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
    fn install_into_static_buffers() {
        let mut code = [0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, 0xC3];
        let p = rel(4, Base::Data, 4, -4);
        // A tiny hand-made file: header fields as in copapy_program::format.
        let mut file = [0u8; 36 + 9 + 8 + 16];
        file[..4].copy_from_slice(b"CPPY");
        file[4] = 1; // version
        file[6] = 1; // x86_64
        file[8] = 9; // code bytes
        file[12] = 8; // data bytes
        file[16] = 1; // one patch
        file[36..45].copy_from_slice(&code);
        file[45..53].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        file[53..57].copy_from_slice(&p.offset.to_le_bytes());
        file[57] = p.encoding as u8;
        file[58] = p.base as u8;
        file[61..65].copy_from_slice(&p.target.to_le_bytes());
        file[65..69].copy_from_slice(&p.addend.to_le_bytes());
        let mut crc = copapy_program::format::Crc32::new();
        crc.update(&file[..32]);
        crc.update(&file[36..]);
        let c = crc.finish().to_le_bytes();
        file[32..36].copy_from_slice(&c);
        let view = copapy_program::ProgramView::parse(&file).unwrap();

        let mut code_mem = [0u8; 16];
        let mut data_mem = [0u8; 8];
        install(&view, &mut code_mem, &mut data_mem).unwrap();
        assert_eq!(data_mem, [1, 2, 3, 4, 5, 6, 7, 8]);
        let disp = i32::from_le_bytes(code_mem[4..8].try_into().unwrap()) as i64;
        let field_end = code_mem.as_ptr() as i64 + 8;
        assert_eq!(field_end + disp, data_mem.as_ptr() as i64 + 4);
        code[4..8].copy_from_slice(&code_mem[4..8]);
        assert_eq!(code_mem[..9], code);

        let mut small = [0u8; 4];
        assert_eq!(
            install(&view, &mut code_mem, &mut small),
            Err(PatchError::BufferTooSmall {
                base: Base::Data,
                needed: 8,
                available: 4
            })
        );
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
