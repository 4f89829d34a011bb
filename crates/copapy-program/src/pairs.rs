//! Instruction pairs as one record: the compact patch stream of format version
//! [`PAIRED_FILE_VERSION`].
//!
//! A data access on AArch64, ARMv7, Cortex-M4 and RISC-V is two patches: `ADRP` then
//! `LDR`/`ADD` (`LO12`), `MOVW` then `MOVT`, `AUIPC` (`HI20`) then `LO12_I`/`LO12_S`. In
//! version 8 the second half costs one byte (its head: offset step, kind, "implied");
//! PID's 20 accesses on RISC-V were 20 of its 73 patch bytes, and its file 1.32× code +
//! data. Version 10 writes a second half that directly follows its first half as part of
//! the first half's record: a *pair kind* names both encodings, and the second half is
//! the patch [`GAP`] bytes on with the same base and target and the addend of the first
//! plus [`addend_step`] (RISC-V's `LO12` counts from its `AUIPC`, 4 bytes before it).
//!
//! The kind table of version 10: a single kind is one byte `encoding | base << 7` as
//! before, a pair kind two: `first encoding | PAIR | base << 7`, then the second encoding.
//! The three scales (offset, code target, data target) share one byte, `o | c << 2 | d << 5`
//! (caps [`SCALE_CAPS`]). A pair record decodes to both patches, in that order; a single
//! second half right after a single first half it pairs with is refused, so every patch
//! list keeps one encoding.

use crate::{Encoding, Patch};

/// The format version whose compact patches code pairs as one record.
pub use crate::format::PAIRED_FILE_VERSION;

/// Bytes from a first half to the second half of a pair record.
pub const GAP: u32 = 4;
/// Kind byte bit: a pair kind (its second encoding follows).
pub const PAIR: u8 = 0x40;
/// The bits of a kind byte that hold the encoding.
pub const ENCODING_BITS: u8 = 0x3f;
/// Pairs of encodings that form a pair record: ADRP with each of the five `LO12`s, the
/// two MOVW/MOVT pairs, and HI20 with either `LO12`.
pub const PAIRS: usize = 9;
/// Largest scales of version 10 (offset, code target, data target).
pub const SCALE_CAPS: [u32; 3] = [3, 7, 7];

/// Whether `first` then `second` is an instruction pair.
pub fn is_pair(first: Encoding, second: Encoding) -> bool {
    use Encoding::*;
    matches!(
        (first, second),
        (
            A64AdrPage21,
            A64Lo12Scale0 | A64Lo12Scale1 | A64Lo12Scale2 | A64Lo12Scale3 | A64Lo12Scale4
        ) | (ArmMovwAbs, ArmMovtAbs)
            | (ThumbMovwAbs, ThumbMovtAbs)
            | (RvHi20, RvLo12I | RvLo12S)
    )
}

/// Whether `encoding` fills the first half of a pair.
pub fn is_first_half(encoding: Encoding) -> bool {
    use Encoding::*;
    matches!(encoding, A64AdrPage21 | ArmMovwAbs | ThumbMovwAbs | RvHi20)
}

/// The second half's addend minus the first half's in a pair record: RISC-V's `LO12`
/// is computed from the address of its `AUIPC`, [`GAP`] bytes before it.
pub fn addend_step(second: Encoding) -> i32 {
    match second {
        Encoding::RvLo12I | Encoding::RvLo12S => GAP as i32,
        _ => 0,
    }
}

/// The second half of the pair record whose first half is `first`.
pub fn second_half(first: &Patch, second: Encoding) -> Option<Patch> {
    let mut q = *first;
    q.offset = first.offset.checked_add(GAP)?;
    q.addend = first.addend.checked_add(addend_step(second))?;
    q.encoding = second;
    Some(q)
}

/// Whether `q` is the second half of a pair record whose first half is `p`.
pub fn pairs_with(p: &Patch, q: &Patch) -> bool {
    is_pair(p.encoding, q.encoding) && second_half(p, q.encoding) == Some(*q)
}

/// A kind's tag for comparing kinds: the kind byte without [`PAIR`], and the second
/// encoding (0 for a single kind) above it.
pub fn tag(byte: u8, second: Option<Encoding>) -> u16 {
    u16::from(byte) | second.map_or(0, |e| (e as u16) << 8)
}

/// Length of the kind count and table of `count` kinds at the start of `body` (may run
/// past its end: the caller checks).
pub(crate) fn table_len(body: &[u8], count: usize) -> usize {
    let mut at = 1;
    for _ in 0..count {
        let pair = body.get(at).is_some_and(|b| b & PAIR != 0);
        at += 1 + usize::from(pair);
    }
    at
}

/// Kind `index` of the table: its byte without [`PAIR`], and the second encoding of a
/// pair kind.
pub(crate) fn entry(kinds: &[u8], count: usize, index: usize) -> Option<(u8, Option<Encoding>)> {
    let mut at = 0;
    for i in 0..count {
        let byte = *kinds.get(at)?;
        let second = if byte & PAIR != 0 {
            at += 1;
            Some(Encoding::from_u8(*kinds.get(at)?)?)
        } else {
            None
        };
        at += 1;
        if i == index {
            return Some((byte & !PAIR, second));
        }
    }
    None
}

/// The index of the first kind with `tag` (a version 5 to 8 table: one byte per kind).
pub(crate) fn position(kinds: &[u8], count: usize, paired: bool, tag: u16) -> Option<usize> {
    if !paired {
        return kinds.iter().position(|&k| u16::from(k) == tag);
    }
    (0..count).find(|&i| entry(kinds, count, i).is_some_and(|(b, s)| self::tag(b, s) == tag))
}

/// Checks a version 10 kind table: known encodings, pairs that are pairs, no byte left.
pub(crate) fn check_table(kinds: &[u8], count: usize) -> Option<()> {
    let mut at = 0;
    for _ in 0..count {
        let byte = *kinds.get(at)?;
        let first = Encoding::from_u8(byte & ENCODING_BITS)?;
        if byte & PAIR != 0 {
            at += 1;
            let second = Encoding::from_u8(*kinds.get(at)?)?;
            if !is_pair(first, second) {
                return None;
            }
        }
        at += 1;
    }
    (at == kinds.len()).then_some(())
}

/// The three scales from version 10's scale byte.
pub(crate) fn unpack_scales(byte: u8) -> (u8, u8, u8) {
    (byte & 3, (byte >> 2) & 7, byte >> 5)
}

/// The records of `patches`: each with the second half of its pair, if it has one.
#[cfg(feature = "alloc")]
pub(crate) fn records(patches: &[Patch]) -> alloc::vec::Vec<(Patch, Option<Encoding>)> {
    let mut out = alloc::vec::Vec::with_capacity(patches.len());
    let mut i = 0;
    while let Some(p) = patches.get(i) {
        match patches.get(i + 1) {
            Some(q) if is_first_half(p.encoding) && pairs_with(p, q) => {
                out.push((*p, Some(q.encoding)));
                i += 2;
            }
            _ => {
                out.push((*p, None));
                i += 1;
            }
        }
    }
    out
}

/// The kind table's bytes for `tags` ([`tag`]).
#[cfg(feature = "alloc")]
pub(crate) fn table_bytes(tags: &[u16]) -> alloc::vec::Vec<u8> {
    let mut out = alloc::vec::Vec::with_capacity(2 * tags.len());
    for &t in tags {
        let (byte, second) = (t as u8, (t >> 8) as u8);
        if second == 0 {
            out.push(byte);
        } else {
            out.extend_from_slice(&[byte | PAIR, second]);
        }
    }
    out
}
