//! The compact patch section of format version [`COMPACT_VERSION`].
//!
//! Up to version 4 every patch is a 16-byte record; a program has one per relocated
//! operand, so patches were most of a file (IK, 48 steps, x86_64: 2,368 records, 37,888
//! of 70,856 bytes). Most of those bytes repeat: offsets grow in small steps, a program
//! uses a handful of (encoding, base) kinds, addends repeat per kind (x86_64's `-4`),
//! and targets lie near the previous one. Version 5 stores exactly the same patches as:
//!
//! | bytes | field |
//! | --- | --- |
//! | 4 | length of the rest of the section in bytes |
//! | 1 | K, the number of kinds, at most [`MAX_KINDS`] (0 when there are no patches) |
//! | K | each kind: `encoding \| base << 7` |
//! | 2 | scales: `o`, then `c \| d << 4`: every offset step is a multiple of 2^o, every code target step of 2^c, every data target step of 2^d (each at most 15) |
//! | … | per patch: `uleb((zigzag(offset step / 2^o) << k \| kind) << 1 \| new_addend)` with `k` the bits of `K − 1`, then `uleb(zigzag(target step / 2^c or 2^d))` (the step from the previous target of the same base), then, if `new_addend`, `uleb(zigzag(addend − previous addend of the kind))` |
//!
//! (`uleb` is unsigned LEB128 of at most 10 bytes; `zigzag` maps signed to unsigned
//! numbers, small magnitudes to small numbers; every "previous" starts at 0.)
//!
//! Version [`IMPLIED_TARGETS_VERSION`] has the same section with one change: half of the
//! data accesses of Cortex-M4, ARMv7 and RISC-V are the second patch of a pair (`MOVT`
//! after its `MOVW`, `LO12` after its `AUIPC`) with the target of the previous patch of its
//! base, which version 5 still spells out as a step of 0. There the first number's low bit
//! says "implied": the patch has the previous target of its base and the previous addend of
//! its kind, and nothing follows. Otherwise `uleb(zigzag(target step) << 1 | new_addend)`
//! follows, then the addend step if `new_addend`. A patch that could be implied must be
//! (a reader refuses one that spells out a step of 0 with no new addend), so every program
//! keeps one encoding. Patches
//! keep their order, so decoding gives back the exact list the compiler wrote. A
//! reader checks every number as it decodes (no LEB128 longer than 10 bytes, kinds,
//! offsets, targets and addends in range, the stream used up exactly, as many patches
//! as the header says).

use crate::format::{sub, u32_at, Section};
use crate::{Base, Encoding, FormatError, Patch};

/// The first format version with compact patches (defined with the other versions).
pub use crate::format::COMPACT_VERSION;
/// The version whose compact patches may take their target from the previous one.
pub use crate::format::IMPLIED_TARGETS_VERSION;
/// At most one kind per (encoding, base) pair.
pub const MAX_KINDS: usize = 2 * Encoding::ALL.len();

#[cfg(feature = "alloc")]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Bits needed for the kind numbers 0..`count`.
fn kind_bits(count: usize) -> u32 {
    usize::BITS - count.saturating_sub(1).leading_zeros()
}

/// An offset or target step: `v` decoded, times 2^`scale` (at most 15). A step between two
/// `u32`s is below 2^32 in magnitude, so anything larger is refused before shifting.
fn scaled_step(v: u64, scale: u32) -> Option<i64> {
    let step = unzigzag(v);
    if step.unsigned_abs() >= 1 << 32 || scale > 15 {
        return None;
    }
    Some(step << scale)
}

/// Length in bytes of the compact patch section that starts `rest` (the 4-byte length
/// and what it counts), or the truncation error.
pub(crate) fn section_len(rest: &[u8]) -> Result<u64, FormatError> {
    if rest.len() < 4 {
        return Err(FormatError::Truncated {
            section: Section::Patches,
            expected: 4,
            found: rest.len() as u64,
        });
    }
    Ok(4 + u64::from(u32_at(rest, 0)))
}

/// Decoder of a compact patch section: an iterator of `Result`s (every error is a
/// malformed file; [`crate::ProgramView::parse`] runs it once to the end).
#[derive(Clone, Debug)]
pub struct CompactPatches<'a> {
    kinds: &'a [u8],
    /// Bits of `kinds.len() - 1`: the width of the kind field in each patch's first number.
    kind_bits: u32,
    /// Scales (log2) of offset steps and of code and data target steps.
    offset_scale: u32,
    target_scales: [u32; 2],
    stream: &'a [u8],
    /// Version [`IMPLIED_TARGETS_VERSION`]'s stream (see the module documentation).
    implied_targets: bool,
    remaining: u32,
    index: usize,
    offset: u32,
    targets: [u32; 2],
    addends: [i32; MAX_KINDS],
}

impl<'a> CompactPatches<'a> {
    /// The decoder of `section` (the whole section, length field included) holding
    /// `count` patches, of format version 5 or (`implied_targets`) 7.
    pub(crate) fn new(section: &'a [u8], count: u32, implied_targets: bool) -> CompactPatches<'a> {
        let body = sub(section, 4, section.len());
        let kind_count = body.first().copied().unwrap_or(0) as usize;
        let table_end = (1 + kind_count).min(body.len());
        let scales_end = (table_end + 2).min(body.len());
        let scales = sub(body, table_end, scales_end);
        let (o, t) = match scales {
            [o, t] => (*o, *t),
            _ => (0xff, 0xff),
        };
        CompactPatches {
            kinds: sub(body, 1, table_end),
            kind_bits: kind_bits(kind_count),
            offset_scale: u32::from(o),
            target_scales: [u32::from(t & 0xf), u32::from(t >> 4)],
            stream: sub(body, scales_end, body.len()),
            implied_targets,
            remaining: count,
            index: 0,
            offset: 0,
            targets: [0, 0],
            addends: [0; MAX_KINDS],
        }
    }

    /// Checks the section as a whole: the kind table fits and names known encodings,
    /// and decoding gives the header's number of patches using up the stream exactly.
    pub(crate) fn validate(&self, section: &[u8]) -> Result<(), FormatError> {
        let declared = section.get(4).copied().unwrap_or(0) as usize;
        if section.len() < 7 + declared
            || declared > MAX_KINDS
            || self.kinds.len() != declared
            || self.offset_scale > 15
        {
            return Err(self.bad());
        }
        for &kind in self.kinds {
            Encoding::from_u8(kind & 0x7f).ok_or(self.bad())?;
        }
        let mut rest = self.clone();
        for patch in &mut rest {
            patch?;
        }
        if !rest.stream.is_empty() {
            return Err(FormatError::BadPatchStream { index: rest.index });
        }
        Ok(())
    }

    fn bad(&self) -> FormatError {
        FormatError::BadPatchStream { index: self.index }
    }

    fn uleb(&mut self) -> Result<u64, FormatError> {
        let mut value = 0u64;
        for (i, &b) in self.stream.iter().enumerate().take(10) {
            value |= u64::from(b & 0x7f).wrapping_shl(7u32.wrapping_mul(i as u32));
            if b & 0x80 == 0 {
                self.stream = sub(self.stream, i + 1, self.stream.len());
                return Ok(value);
            }
        }
        Err(self.bad())
    }

    // No indexing, shift or division here can panic (every one is checked or `get`):
    // a panic path would pull `core::fmt` into firmware (see `format.rs`).
    fn next_patch(&mut self) -> Result<Patch, FormatError> {
        let bad = self.bad();
        let head = self.uleb()?;
        // version 5: the low bit says a new addend follows; version 7: that the target
        // and addend are implied (the target number then carries the new-addend bit)
        let flag = head & 1 == 1;
        let kind = ((head >> 1) & ((1u64 << self.kind_bits) - 1)) as usize;
        let offset_step = (head >> 1) >> self.kind_bits;
        let tag = self.kinds.get(kind).copied().ok_or(bad)?;
        let encoding = Encoding::from_u8(tag & 0x7f).ok_or(bad)?;
        let (base, target_scale, previous_target) = if tag & 0x80 == 0 {
            (Base::Code, self.target_scales[0], self.targets[0])
        } else {
            (Base::Data, self.target_scales[1], self.targets[1])
        };
        let step = scaled_step;
        let offset = step(offset_step, self.offset_scale)
            .and_then(|d| i64::from(self.offset).checked_add(d));
        let (target_number, new_addend) = match (self.implied_targets, flag) {
            (false, _) => (self.uleb()?, flag),
            (true, true) => (0, false),
            (true, false) => {
                let n = self.uleb()?;
                // a step of 0 with the kind's addend is written implied, never spelled out
                if n == 0 {
                    return Err(bad);
                }
                (n >> 1, n & 1 == 1)
            }
        };
        let target = step(target_number, target_scale)
            .and_then(|d| i64::from(previous_target).checked_add(d));
        let previous_addend = self.addends.get(kind).copied().ok_or(bad)?;
        let addend = if new_addend {
            i64::from(previous_addend).checked_add(unzigzag(self.uleb()?))
        } else {
            Some(i64::from(previous_addend))
        };
        let (Some(Ok(offset)), Some(Ok(target)), Some(Ok(addend))) = (
            offset.map(u32::try_from),
            target.map(u32::try_from),
            addend.map(i32::try_from),
        ) else {
            return Err(bad);
        };
        self.offset = offset;
        match base {
            Base::Code => self.targets[0] = target,
            Base::Data => self.targets[1] = target,
        }
        if let Some(a) = self.addends.get_mut(kind) {
            *a = addend;
        }
        Ok(Patch {
            offset,
            encoding,
            base,
            target,
            addend,
        })
    }
}

impl Iterator for CompactPatches<'_> {
    type Item = Result<Patch, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let patch = self.next_patch();
        self.remaining = if patch.is_ok() {
            self.remaining.saturating_sub(1)
        } else {
            0
        };
        self.index = self.index.saturating_add(1);
        Some(patch)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining as usize))
    }
}

/// Encodes `patches` as a compact patch section (length field included), of format
/// version 5 or (`implied_targets`) 7.
#[cfg(feature = "alloc")]
pub(crate) fn encode(patches: &[Patch], implied_targets: bool) -> alloc::vec::Vec<u8> {
    use alloc::vec::Vec;

    fn uleb(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let tag = |p: &Patch| (p.encoding as u8) | ((p.base as u8) << 7);
    let mut kinds: Vec<u8> = Vec::new();
    for p in patches {
        if !kinds.contains(&tag(p)) {
            kinds.push(tag(p));
        }
    }
    // the largest power of two (up to 2^15) dividing every step
    let scale = |steps: &mut dyn Iterator<Item = i64>| {
        steps.fold(
            15,
            |s: u32, d| if d == 0 { s } else { s.min(d.trailing_zeros()) },
        )
    };
    let mut previous = 0i64;
    let offset_scale = scale(&mut patches.iter().map(|p| {
        let d = i64::from(p.offset) - previous;
        previous = i64::from(p.offset);
        d
    }));
    let mut target_scales = [0u32; 2];
    for (slot, scale_of_base) in target_scales.iter_mut().enumerate() {
        let mut previous = 0i64;
        *scale_of_base = scale(
            &mut patches.iter().filter(|p| p.base as usize == slot).map(|p| {
                let d = i64::from(p.target) - previous;
                previous = i64::from(p.target);
                d
            }),
        );
    }
    let mut body = Vec::with_capacity(3 + kinds.len() + patches.len() * 3);
    body.push(kinds.len() as u8);
    body.extend_from_slice(&kinds);
    body.push(offset_scale as u8);
    body.push((target_scales[0] | target_scales[1] << 4) as u8);
    let (mut offset, mut targets, mut addends) = (0i64, [0i64; 2], [0i64; MAX_KINDS]);
    let k = kind_bits(kinds.len());
    for p in patches {
        let kind = kinds.iter().position(|&x| x == tag(p)).unwrap_or(0);
        let new_addend = i64::from(p.addend) != addends[kind];
        let head = (zigzag((i64::from(p.offset) - offset) >> offset_scale) << k) | kind as u64;
        let slot = p.base as usize;
        let target_step = (i64::from(p.target) - targets[slot]) >> target_scales[slot];
        if implied_targets {
            let implied = target_step == 0 && !new_addend;
            uleb(&mut body, head * 2 + u64::from(implied));
            if !implied {
                uleb(&mut body, zigzag(target_step) * 2 + u64::from(new_addend));
            }
        } else {
            uleb(&mut body, head * 2 + u64::from(new_addend));
            uleb(&mut body, zigzag(target_step));
        }
        if new_addend {
            uleb(&mut body, zigzag(i64::from(p.addend) - addends[kind]));
        }
        offset = i64::from(p.offset);
        targets[slot] = i64::from(p.target);
        addends[kind] = i64::from(p.addend);
    }
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    use Base::{Code, Data};

    /// A patch with these fields (set one by one on a placeholder).
    fn patch(offset: u32, encoding: Encoding, base: Base, target: u32, addend: i32) -> Patch {
        let mut p = Patch {
            offset: 0,
            encoding: Encoding::Rel32,
            base: Code,
            target: 0,
            addend: 0,
        };
        (p.offset, p.encoding, p.base) = (offset, encoding, base);
        (p.target, p.addend) = (target, addend);
        p
    }

    #[test]
    fn patches_come_back_exactly_in_their_order() {
        let patches = [
            patch(3, Encoding::Rel32, Data, 64, -4),
            patch(11, Encoding::Rel32, Data, 0, -4),
            patch(7, Encoding::Rel32, Code, 4000, -8),
            patch(
                u32::MAX - 4,
                Encoding::Abs64,
                Base::Data,
                u32::MAX,
                i32::MIN,
            ),
            patch(0, Encoding::ThumbMovtAbs, Code, 0, i32::MAX),
        ];
        for implied in [false, true] {
            let bytes = encode(&patches, implied);
            let back: Vec<Patch> = CompactPatches::new(&bytes, patches.len() as u32, implied)
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(back, patches);
            CompactPatches::new(&bytes, patches.len() as u32, implied)
                .validate(&bytes)
                .unwrap();
            assert!(CompactPatches::new(&bytes, 4, implied)
                .validate(&bytes)
                .is_err());
            assert!(CompactPatches::new(&bytes, 6, implied)
                .validate(&bytes)
                .is_err());
            assert_eq!(section_len(&bytes).unwrap(), bytes.len() as u64);
        }
    }

    #[test]
    fn every_cut_or_flip_is_refused_or_still_decodes_in_range() {
        let patches: Vec<Patch> = (0..40)
            .map(|i| patch(i * 5, Encoding::Rel32, Data, (i * 37) % 200, -4))
            .collect();
        for implied in [false, true] {
            let bytes = encode(&patches, implied);
            for cut in 4..bytes.len() {
                assert!(
                    CompactPatches::new(&bytes[..cut], 40, implied)
                        .validate(&bytes[..cut])
                        .is_err(),
                    "cut at {cut}"
                );
            }
            for at in 4..bytes.len() {
                let mut b = bytes.clone();
                b[at] ^= 0x80;
                // a flip that still decodes gives patches; the checksum and the layout
                // check of the file reader catch the rest
                let _ = CompactPatches::new(&b, 40, implied).validate(&b);
            }
        }
    }

    #[test]
    fn pairs_with_one_target_cost_one_number_less_and_stay_canonical() {
        // MOVW/MOVT pairs: the second of each has its first's target and addend
        let patches: Vec<Patch> = (0..20)
            .flat_map(|i| {
                let t = (i * 12) % 64;
                [
                    patch(i * 8, Encoding::ThumbMovwAbs, Data, t, 0),
                    patch(i * 8 + 4, Encoding::ThumbMovtAbs, Data, t, 0),
                ]
            })
            .collect();
        let (v5, v7) = (encode(&patches, false), encode(&patches, true));
        // one byte less per pair, and for the first patch, whose target is the start value 0
        assert_eq!(v5.len() - v7.len(), 21);
        let back: Vec<Patch> = CompactPatches::new(&v7, 40, true)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, patches);
        // a spelled-out step of 0 with the kind's addend is refused: it must be implied
        let one = [patch(0, Encoding::Rel32, Data, 0, 0)];
        let mut spelled = encode(&one, true);
        let last = spelled.len() - 1;
        assert_eq!(spelled[last], 1, "implied head");
        spelled[last] = 0; // explicit...
        spelled.push(0); // ...step 0, no new addend
        spelled[0] += 1; // section length
        assert!(CompactPatches::new(&spelled, 1, true)
            .validate(&spelled)
            .is_err());
    }
}
