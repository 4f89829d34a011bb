//! Instruction fields: writing a computed value into the bits of one instruction.
//!
//! One function per [`Encoding`], each a few lines, each keeping every bit of the
//! instruction outside its field (the opcode, registers, condition, the `BL`/`B.W`
//! distinction). The value is computed by the caller ([`apply_patch_iter`]) as the
//! encoding's [`ValueKind`] says; these functions only range-check it and place it.
//! The table of encodings is on [`Encoding`].
//!
//! [`apply_patch_iter`]: crate::apply_patch_iter
//! [`ValueKind`]: copapy_program::ValueKind

use copapy_program::Encoding;

/// Why a value cannot be written into a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldError {
    /// The value does not fit the field (a branch or address too far away).
    OutOfReach,
    /// The value is not a multiple of the field's scale (e.g. a branch to an odd address).
    Misaligned,
    /// The encoding belongs to another instruction set, whose field writers this runner
    /// was built without (see the `foreign-encodings` feature).
    Unsupported,
}

/// Whether this build writes `encoding`: every encoding with `foreign-encodings`,
/// otherwise only those of the instruction set it runs on (smaller firmware).
pub const fn supported(encoding: Encoding) -> bool {
    if cfg!(feature = "foreign-encodings") {
        return true;
    }
    match encoding {
        Encoding::Rel32 | Encoding::Abs64 => cfg!(target_arch = "x86_64"),
        Encoding::Abs32
        | Encoding::ArmBranch24
        | Encoding::ArmMovwAbs
        | Encoding::ArmMovtAbs
        | Encoding::ThumbBranch24
        | Encoding::ThumbMovwAbs
        | Encoding::ThumbMovtAbs => cfg!(target_arch = "arm"),
        Encoding::A64Branch26
        | Encoding::A64AdrPage21
        | Encoding::A64Lo12Scale0
        | Encoding::A64Lo12Scale1
        | Encoding::A64Lo12Scale2
        | Encoding::A64Lo12Scale3
        | Encoding::A64Lo12Scale4 => cfg!(target_arch = "aarch64"),
        Encoding::RvHi20 | Encoding::RvLo12I | Encoding::RvLo12S | Encoding::RvCall => {
            cfg!(any(target_arch = "riscv32", target_arch = "riscv64"))
        }
    }
}

// Field accessors never panic (the patch loop has checked the field's width; outside
// it they read 0 and write nothing), so no panic path, and no `core::fmt`, reaches
// firmware.

fn read<const N: usize>(field: &[u8], at: usize) -> [u8; N] {
    field
        .get(at..at.wrapping_add(N))
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .unwrap_or([0; N])
}

fn write<const N: usize>(field: &mut [u8], at: usize, bytes: [u8; N]) {
    if let Some(dst) = field.get_mut(at..at.wrapping_add(N)) {
        for (d, b) in dst.iter_mut().zip(bytes) {
            *d = b;
        }
    }
}

fn read32(field: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(read(field, at))
}

fn write32(field: &mut [u8], at: usize, v: u32) {
    write(field, at, v.to_le_bytes());
}

fn read16(field: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(read(field, at))
}

fn write16(field: &mut [u8], at: usize, v: u16) {
    write(field, at, v.to_le_bytes());
}

/// `value / 2^scale` if it is a multiple of `2^scale` and the quotient fits in a
/// signed field of `bits` (< 32) bits.
fn signed_scaled(value: i128, scale: u32, bits: u32) -> Result<u32, FieldError> {
    if value & ((1 << scale) - 1) != 0 {
        return Err(FieldError::Misaligned);
    }
    let q = value >> scale;
    let half = 1i128 << (bits - 1);
    if q < -half || q >= half {
        return Err(FieldError::OutOfReach);
    }
    Ok((q as u32) & ((1u32 << bits) - 1))
}

/// An absolute address that a 32-bit field (or a MOVW/MOVT pair) must hold.
fn address32(value: i128) -> Result<u32, FieldError> {
    u32::try_from(value).map_err(|_| FieldError::OutOfReach)
}

/// The (hi20, lo12) split of a RISC-V PC-relative value: `hi << 12` plus the
/// sign-extended `lo` is `value`.
///
/// The reach is that of a signed 20-bit `hi` plus a signed 12-bit `lo`,
/// `[-2^31 - 2^11, 2^31 - 2^11)` (as lld checks it), not the `i32` range: the
/// farthest 2 KiB backwards need `hi = -2^19` and a negative `lo`.
fn riscv_split(value: i128) -> Result<(u32, u32), FieldError> {
    let hi = value.checked_add(0x800).ok_or(FieldError::OutOfReach)? >> 12;
    if !(-(1 << 19)..1 << 19).contains(&hi) {
        return Err(FieldError::OutOfReach);
    }
    let lo = value - (hi << 12);
    Ok(((hi as u32) & 0xF_FFFF, (lo as u32) & 0xFFF))
}

fn arm_movw_movt(insn: u32, imm16: u32) -> u32 {
    (insn & 0xFFF0_F000) | ((imm16 & 0xF000) << 4) | (imm16 & 0x0FFF)
}

fn thumb_movw_movt(field: &mut [u8], imm16: u32) {
    let hw1 = read16(field, 0) & 0xFBF0;
    let hw2 = read16(field, 2) & 0x8F00;
    let i = ((imm16 >> 11) & 1) as u16;
    write16(field, 0, hw1 | (i << 10) | (imm16 >> 12) as u16);
    write16(
        field,
        2,
        hw2 | ((((imm16 >> 8) & 7) as u16) << 12) | (imm16 & 0xFF) as u16,
    );
}

fn thumb_branch(field: &mut [u8], value: i128) -> Result<(), FieldError> {
    let imm = signed_scaled(value, 1, 24)?; // S:I1:I2:imm10:imm11
    let s = (imm >> 23) & 1;
    let j1 = !((imm >> 22) ^ s) & 1;
    let j2 = !((imm >> 21) ^ s) & 1;
    let hw1 = (read16(field, 0) & 0xF800) | ((s << 10) | ((imm >> 11) & 0x3FF)) as u16;
    let hw2 = (read16(field, 2) & 0xD000) | ((j1 << 13) | (j2 << 11) | (imm & 0x7FF)) as u16;
    write16(field, 0, hw1);
    write16(field, 2, hw2);
    Ok(())
}

/// Writes `value` into `field` (exactly [`Encoding::width`] bytes) as `encoding` says.
///
/// ```
/// use copapy_program::Encoding;
/// use copapy_runner::fields::write_field;
/// // AArch64 `b .` (0x14000000) to a target 8 bytes ahead becomes `b .+8`.
/// let mut insn = 0x1400_0000u32.to_le_bytes();
/// write_field(Encoding::A64Branch26, &mut insn, 8).unwrap();
/// assert_eq!(u32::from_le_bytes(insn), 0x1400_0002);
/// ```
pub fn write_field(encoding: Encoding, field: &mut [u8], value: i128) -> Result<(), FieldError> {
    debug_assert_eq!(field.len(), encoding.width());
    if !supported(encoding) {
        return Err(FieldError::Unsupported);
    }
    match encoding {
        Encoding::Rel32 => {
            let v = i32::try_from(value).map_err(|_| FieldError::OutOfReach)?;
            write(field, 0, v.to_le_bytes());
        }
        Encoding::Abs64 => {
            let v = u64::try_from(value).map_err(|_| FieldError::OutOfReach)?;
            write(field, 0, v.to_le_bytes());
        }
        Encoding::Abs32 => write32(field, 0, address32(value)?),
        Encoding::A64Branch26 => {
            let imm = signed_scaled(value, 2, 26)?;
            write32(field, 0, (read32(field, 0) & 0xFC00_0000) | imm);
        }
        Encoding::A64AdrPage21 => {
            let imm = signed_scaled(value, 12, 21)?;
            let insn = read32(field, 0) & 0x9F00_001F;
            write32(field, 0, insn | ((imm & 3) << 29) | ((imm >> 2) << 5));
        }
        Encoding::A64Lo12Scale0
        | Encoding::A64Lo12Scale1
        | Encoding::A64Lo12Scale2
        | Encoding::A64Lo12Scale3
        | Encoding::A64Lo12Scale4 => {
            let scale = encoding as u32 - Encoding::A64Lo12Scale0 as u32;
            let lo = (value & 0xFFF) as u32;
            if lo & ((1 << scale) - 1) != 0 {
                return Err(FieldError::Misaligned);
            }
            let insn = read32(field, 0) & 0xFFC0_03FF;
            write32(field, 0, insn | ((lo >> scale) << 10));
        }
        Encoding::ArmBranch24 => {
            let imm = signed_scaled(value, 2, 24)?;
            write32(field, 0, (read32(field, 0) & 0xFF00_0000) | imm);
        }
        Encoding::ArmMovwAbs => {
            let v = address32(value)? & 0xFFFF;
            write32(field, 0, arm_movw_movt(read32(field, 0), v));
        }
        Encoding::ArmMovtAbs => {
            let v = address32(value)? >> 16;
            write32(field, 0, arm_movw_movt(read32(field, 0), v));
        }
        Encoding::ThumbBranch24 => thumb_branch(field, value)?,
        Encoding::ThumbMovwAbs => thumb_movw_movt(field, address32(value)? & 0xFFFF),
        Encoding::ThumbMovtAbs => thumb_movw_movt(field, address32(value)? >> 16),
        Encoding::RvHi20 => {
            let (hi, _) = riscv_split(value)?;
            write32(field, 0, (read32(field, 0) & 0xFFF) | (hi << 12));
        }
        Encoding::RvLo12I => {
            let (_, lo) = riscv_split(value)?;
            write32(field, 0, (read32(field, 0) & 0x000F_FFFF) | (lo << 20));
        }
        Encoding::RvLo12S => {
            let (_, lo) = riscv_split(value)?;
            let insn = read32(field, 0) & 0x01FF_F07F;
            write32(field, 0, insn | ((lo >> 5) << 25) | ((lo & 0x1F) << 7));
        }
        Encoding::RvCall => {
            let (hi, lo) = riscv_split(value)?;
            write32(field, 0, (read32(field, 0) & 0xFFF) | (hi << 12));
            write32(field, 4, (read32(field, 4) & 0x000F_FFFF) | (lo << 20));
        }
    }
    Ok(())
}
