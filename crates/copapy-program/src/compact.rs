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
//! (`uleb` is unsigned LEB128 of at most 10 bytes, in its shortest form only, see
//! [`crate::leb128`]; `zigzag` maps signed to unsigned
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
/// The version whose compact patches code an adjacent instruction pair as one record
/// ([`crate::pairs`]).
pub use crate::format::PAIRED_FILE_VERSION;
/// The version whose compact patches predict targets ([`crate::predict`]).
pub use crate::format::PREDICTED_TARGETS_VERSION;

/// Which of the three compact patch streams a section holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Version 5: every patch spells out its target step.
    Plain,
    /// Version 7: a patch with the previous target of its base is implied.
    Implied,
    /// Version 8: targets predicted from pairs and the last two written ([`crate::predict`]).
    Predicted,
    /// Version 10: version 8 with adjacent pairs as one record and the scales in one byte
    /// ([`crate::pairs`]).
    Paired,
}

impl Stream {
    /// The stream of format `version`, if it has compact patches.
    pub const fn of_version(version: u16) -> Option<Stream> {
        match version {
            COMPACT_VERSION => Some(Stream::Plain),
            IMPLIED_TARGETS_VERSION => Some(Stream::Implied),
            PREDICTED_TARGETS_VERSION => Some(Stream::Predicted),
            _ => None,
        }
    }
}
/// At most one kind per (encoding, base) pair.
pub const MAX_KINDS: usize = 2 * Encoding::ALL.len();
/// Version 10 adds one kind per (first half, second half, base) of an instruction pair.
pub const MAX_PAIRED_KINDS: usize = MAX_KINDS + 2 * crate::pairs::PAIRS;

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

/// Version 8's number for a target written out as a step from `from` (selector `select`):
/// `(zigzag(step / 2^scale) << 1 | select) << 1 | new_addend`.
fn predicted_number(target: u32, from: u32, scale: u32, select: usize, new_addend: bool) -> u64 {
    let step = (i64::from(target) - i64::from(from)) >> scale.min(15);
    (zigzag(step) << 2) | (select as u64) << 1 | u64::from(new_addend)
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
    /// The kind table: one byte per kind, two for a pair kind of version 10.
    kinds: &'a [u8],
    /// Number of kinds (the table's first byte).
    kind_count: usize,
    /// Bits of `kinds.len() - 1`: the width of the kind field in each patch's first number.
    kind_bits: u32,
    /// Scales (log2) of offset steps and of code and data target steps.
    offset_scale: u32,
    target_scales: [u32; 2],
    stream: &'a [u8],
    /// Which stream (see the module documentation).
    stream_kind: Stream,
    remaining: u32,
    index: usize,
    offset: u32,
    addends: [i32; MAX_PAIRED_KINDS],
    /// Version 8's prediction state.
    predicted: crate::predict::Targets,
    /// Version 10: the second half of the pair record just decoded, next to give.
    second: Option<Patch>,
    /// Version 10: the last patch, when it was a single first half of a pair (a second
    /// half that would pair with it must have been written as one record).
    single_first: Option<Patch>,
    /// The kind tag of the last record ([`crate::pairs::tag`]), for `validate`.
    record_tag: u16,
    /// Whether the last patch given starts a record (is not a pair's second half).
    record_start: bool,
}

impl<'a> CompactPatches<'a> {
    /// The decoder of `section` (the whole section, length field included) holding
    /// `count` patches, as `stream` (format version 5, 7 or 8).
    pub(crate) fn new(section: &'a [u8], count: u32, stream: Stream) -> CompactPatches<'a> {
        Self::from_body(sub(section, 4, section.len()), count, stream)
    }

    /// The decoder of a section's `body` (everything after its length field; version 9
    /// stores the length as a LEB128 number in front of it).
    pub(crate) fn from_body(body: &'a [u8], count: u32, stream: Stream) -> CompactPatches<'a> {
        // a firmware build (without `legacy`) reads version 10's stream only
        let stream = if cfg!(feature = "legacy") {
            stream
        } else {
            Stream::Paired
        };
        let kind_count = body.first().copied().unwrap_or(0) as usize;
        let paired = stream == Stream::Paired;
        let table_end = if paired {
            crate::pairs::table_len(body, kind_count)
        } else {
            1 + kind_count
        }
        .min(body.len());
        let scales_end = (table_end + 2 - usize::from(paired)).min(body.len());
        let scales = sub(body, table_end, scales_end);
        let (o, c, d) = match scales {
            [o, t] => (*o, t & 0xf, t >> 4),
            [s] if paired => crate::pairs::unpack_scales(*s),
            _ => (0xff, 0xf, 0xf),
        };
        CompactPatches {
            kinds: sub(body, 1, table_end),
            kind_count,
            kind_bits: kind_bits(kind_count),
            offset_scale: u32::from(o),
            target_scales: [u32::from(c), u32::from(d)],
            stream: sub(body, scales_end, body.len()),
            stream_kind: stream,
            remaining: count,
            index: 0,
            offset: 0,
            addends: [0; MAX_PAIRED_KINDS],
            predicted: crate::predict::Targets::new(matches!(
                stream,
                Stream::Predicted | Stream::Paired
            )),
            second: None,
            single_first: None,
            record_tag: 0,
            record_start: false,
        }
    }

    /// Checks the section as a whole: the kind table fits and names known encodings,
    /// and decoding gives the header's number of patches using up the stream exactly.
    pub(crate) fn validate(&self, section: &[u8]) -> Result<(), FormatError> {
        self.validate_body(sub(section, 4, section.len()))
    }

    /// [`CompactPatches::validate`] of a section's body (without its length field).
    pub(crate) fn validate_body(&self, body: &[u8]) -> Result<(), FormatError> {
        let declared = self.kind_count;
        let paired = self.stream() == Stream::Paired;
        let (max_kinds, scale_caps, head) = if paired {
            (MAX_PAIRED_KINDS, crate::pairs::SCALE_CAPS, 2)
        } else {
            (MAX_KINDS, [15; 3], 3)
        };
        if body.len() < head + self.kinds.len()
            || declared > max_kinds
            || (!paired && self.kinds.len() != declared)
            || self.offset_scale > scale_caps[0]
        {
            return Err(self.bad());
        }
        if paired {
            crate::pairs::check_table(self.kinds, declared).ok_or(self.bad())?;
        } else {
            for &kind in self.kinds {
                Encoding::from_u8(kind & 0x7f).ok_or(self.bad())?;
            }
        }
        let mut rest = self.clone();
        // the scales a writer chooses: the most trailing zero bits (at most 15, or version
        // 10's caps) of every non-zero offset step and target step of each base; any other
        // is a second encoding of the same patches
        let (mut offset, mut targets) = (0u32, [0u32; 2]);
        let mut scales = scale_caps;
        let mut step = |slot: usize, from: u32, to: u32| {
            let d = to.wrapping_sub(from);
            if d != 0 {
                scales[slot] = scales[slot].min(d.trailing_zeros());
            }
        };
        // the kinds a writer lists: each once, in the order the records first use them
        let mut kinds_used = 0usize;
        while let Some(patch) = rest.next() {
            let p = patch?;
            if rest.record_start {
                let tag = if paired {
                    rest.record_tag
                } else {
                    u16::from((p.encoding as u8) | ((p.base as u8) << 7))
                };
                match crate::pairs::position(self.kinds, declared, paired, tag) {
                    Some(k) if k == kinds_used => kinds_used += 1,
                    Some(k) if k < kinds_used => {}
                    _ => return Err(FormatError::BadPatchStream { index: rest.index }),
                }
            }
            let slot = p.base as usize;
            step(0, offset, p.offset);
            step(1 + slot, targets[slot & 1], p.target);
            (offset, targets[slot & 1]) = (p.offset, p.target);
        }
        if !rest.stream.is_empty()
            || kinds_used != declared
            || scales
                != [
                    self.offset_scale,
                    self.target_scales[0],
                    self.target_scales[1],
                ]
        {
            return Err(FormatError::BadPatchStream { index: rest.index });
        }
        Ok(())
    }

    fn bad(&self) -> FormatError {
        FormatError::BadPatchStream { index: self.index }
    }

    /// The stream this decoder reads: a constant in a firmware build, so the compiler
    /// drops the older streams' paths from it.
    fn stream(&self) -> Stream {
        if cfg!(feature = "legacy") {
            self.stream_kind
        } else {
            Stream::Paired
        }
    }

    /// The next number of the stream: shortest LEB128 only ([`crate::leb128`]).
    fn uleb(&mut self) -> Result<u64, FormatError> {
        let (value, used) = crate::leb128::read(self.stream).ok_or(self.bad())?;
        self.stream = sub(self.stream, used, self.stream.len());
        Ok(value)
    }

    // No indexing, shift or division here can panic (every one is checked or `get`):
    // a panic path would pull `core::fmt` into firmware (see `format.rs`). The three
    // streams share one path: version 7 is version 8 without pairs and without the
    // selector (every target counts as written, so the step is from the previous one),
    // version 5 version 7 without implied patches (the head's flag is the new-addend bit).
    fn next_patch(&mut self) -> Result<Patch, FormatError> {
        let bad = self.bad();
        let head = self.uleb()?;
        let flag = head & 1 == 1;
        let kind = ((head >> 1) & ((1u64 << self.kind_bits) - 1)) as usize;
        let offset_step = (head >> 1) >> self.kind_bits;
        let paired = self.stream() == Stream::Paired;
        let (tag, second) = if paired {
            crate::pairs::entry(self.kinds, self.kind_count, kind).ok_or(bad)?
        } else {
            (self.kinds.get(kind).copied().ok_or(bad)?, None)
        };
        self.record_tag = crate::pairs::tag(tag, second);
        let encoding = Encoding::from_u8(tag & crate::pairs::ENCODING_BITS).ok_or(bad)?;
        let (base, scale) = if tag & 0x80 == 0 {
            (Base::Code, self.target_scales[0])
        } else {
            (Base::Data, self.target_scales[1])
        };
        let offset = scaled_step(offset_step, self.offset_scale)
            .and_then(|d| i64::from(self.offset).checked_add(d))
            .and_then(|o| u32::try_from(o).ok())
            .ok_or(bad)?;
        let predicted = self.predicted.predict(base, encoding);
        let plain = self.stream() == Stream::Plain;
        let select_bits = u32::from(matches!(self.stream(), Stream::Predicted | Stream::Paired));
        let (target, new_addend) = if flag && !plain {
            (predicted, false)
        } else {
            let number = self.uleb()?;
            let (number, new_addend) = if plain {
                (number << 1, flag)
            } else {
                (number, number & 1 == 1)
            };
            let select = ((number >> 1) & u64::from(select_bits)) as usize;
            let from = self.predicted.written(base);
            let target = scaled_step(number >> (1 + select_bits), scale)
                .and_then(|d| i64::from(*from.get(select)?).checked_add(d))
                .and_then(|t| u32::try_from(t).ok())
                .ok_or(bad)?;
            // one encoding per program: the predicted target with the kind's addend is
            // implied, and a step counts from whichever written target gives the smaller
            // number
            let other = 1 - select;
            let smaller = select_bits == 1
                && from.get(other).is_some_and(|&o| {
                    predicted_number(target, o, scale, other, new_addend) < number
                });
            if !plain && ((target == predicted && !new_addend) || smaller) {
                return Err(bad);
            }
            (target, new_addend)
        };
        let previous_addend = self.addends.get(kind).copied().ok_or(bad)?;
        let addend = if new_addend {
            // a new addend is another one: a step of 0 would be a second encoding
            let step = unzigzag(self.uleb()?);
            i64::from(previous_addend)
                .checked_add(step)
                .filter(|_| step != 0)
                .and_then(|a| i32::try_from(a).ok())
                .ok_or(bad)?
        } else {
            previous_addend
        };
        self.offset = offset;
        self.predicted.record(
            base,
            encoding,
            target,
            select_bits == 0 || !flag,
            second.is_none(),
        );
        if let Some(a) = self.addends.get_mut(kind) {
            *a = addend;
        }
        let patch = Patch {
            offset,
            encoding,
            base,
            target,
            addend,
        };
        if paired {
            self.check_pairing(patch, second)?;
        }
        Ok(patch)
    }

    /// Version 10: queues a pair record's second half, and refuses a single second half
    /// that pairs with the single first half before it (one encoding per program).
    fn check_pairing(&mut self, patch: Patch, second: Option<Encoding>) -> Result<(), FormatError> {
        if let Some(e2) = second {
            // the count covers both halves
            if self.remaining < 2 {
                return Err(self.bad());
            }
            let q = crate::pairs::second_half(&patch, e2).ok_or(self.bad())?;
            self.offset = q.offset;
            self.second = Some(q);
            self.single_first = None;
            return Ok(());
        }
        if self
            .single_first
            .is_some_and(|p| crate::pairs::pairs_with(&p, &patch))
        {
            return Err(self.bad());
        }
        self.single_first = crate::pairs::is_first_half(patch.encoding).then_some(patch);
        Ok(())
    }
}

impl Iterator for CompactPatches<'_> {
    type Item = Result<Patch, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        if let Some(second) = self.second.take() {
            self.remaining -= 1;
            self.index = self.index.saturating_add(1);
            self.record_start = false;
            return Some(Ok(second));
        }
        self.record_start = true;
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
/// version 5, 7, 8 or 10 (`stream`).
#[cfg(feature = "alloc")]
pub(crate) fn encode(patches: &[Patch], stream: Stream) -> alloc::vec::Vec<u8> {
    use alloc::vec::Vec;

    use crate::leb128::write as uleb;
    let paired = stream == Stream::Paired;
    let records = if paired {
        crate::pairs::records(patches)
    } else {
        patches.iter().map(|p| (*p, None)).collect()
    };
    let tag = |p: &Patch, second: Option<Encoding>| {
        crate::pairs::tag((p.encoding as u8) | ((p.base as u8) << 7), second)
    };
    let mut kinds: Vec<u16> = Vec::new();
    for (p, second) in &records {
        if !kinds.contains(&tag(p, *second)) {
            kinds.push(tag(p, *second));
        }
    }
    let caps = if paired {
        crate::pairs::SCALE_CAPS
    } else {
        [15; 3]
    };
    // the largest power of two (up to the cap) dividing every step
    let scale = |cap: u32, steps: &mut dyn Iterator<Item = i64>| {
        steps.fold(
            cap,
            |s: u32, d| if d == 0 { s } else { s.min(d.trailing_zeros()) },
        )
    };
    let mut previous = 0i64;
    let offset_scale = scale(
        caps[0],
        &mut patches.iter().map(|p| {
            let d = i64::from(p.offset) - previous;
            previous = i64::from(p.offset);
            d
        }),
    );
    let mut target_scales = [0u32; 2];
    for (slot, scale_of_base) in target_scales.iter_mut().enumerate() {
        let mut previous = 0i64;
        *scale_of_base = scale(
            caps[1 + slot],
            &mut patches.iter().filter(|p| p.base as usize == slot).map(|p| {
                let d = i64::from(p.target) - previous;
                previous = i64::from(p.target);
                d
            }),
        );
    }
    let mut body = Vec::with_capacity(3 + 2 * kinds.len() + patches.len() * 3);
    body.push(kinds.len() as u8);
    if paired {
        body.extend_from_slice(&crate::pairs::table_bytes(&kinds));
        body.push((offset_scale | target_scales[0] << 2 | target_scales[1] << 5) as u8);
    } else {
        body.extend(kinds.iter().map(|&k| k as u8));
        body.push(offset_scale as u8);
        body.push((target_scales[0] | target_scales[1] << 4) as u8);
    }
    let (mut offset, mut targets) = (0i64, [0i64; 2]);
    let mut addends = [0i64; MAX_PAIRED_KINDS];
    let k = kind_bits(kinds.len());
    let mut predicted = crate::predict::Targets::new(true);
    for (p, second) in &records {
        let kind = kinds
            .iter()
            .position(|&x| x == tag(p, *second))
            .unwrap_or(0);
        let new_addend = i64::from(p.addend) != addends[kind];
        let head = (zigzag((i64::from(p.offset) - offset) >> offset_scale) << k) | kind as u64;
        let slot = p.base as usize;
        let target_step = (i64::from(p.target) - targets[slot]) >> target_scales[slot];
        if matches!(stream, Stream::Predicted | Stream::Paired) {
            let scale = target_scales[slot];
            let implied = predicted.predict(p.base, p.encoding) == p.target && !new_addend;
            uleb(&mut body, head * 2 + u64::from(implied));
            if !implied {
                let from = predicted.written(p.base);
                let number = |select: usize| {
                    predicted_number(p.target, from[select], scale, select, new_addend)
                };
                uleb(&mut body, number(0).min(number(1)));
            }
            predicted.record(p.base, p.encoding, p.target, !implied, second.is_none());
        } else if stream == Stream::Implied {
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
        offset = i64::from(p.offset)
            + if second.is_some() {
                i64::from(crate::pairs::GAP)
            } else {
                0
            };
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
        for implied in [
            Stream::Plain,
            Stream::Implied,
            Stream::Predicted,
            Stream::Paired,
        ] {
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
        for implied in [
            Stream::Plain,
            Stream::Implied,
            Stream::Predicted,
            Stream::Paired,
        ] {
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
        let (v5, v7) = (
            encode(&patches, Stream::Plain),
            encode(&patches, Stream::Implied),
        );
        // one byte less per pair, and for the first patch, whose target is the start value 0
        assert_eq!(v5.len() - v7.len(), 21);
        let back: Vec<Patch> = CompactPatches::new(&v7, 40, Stream::Implied)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, patches);
        // a spelled-out step of 0 with the kind's addend is refused: it must be implied
        let one = [patch(0, Encoding::Rel32, Data, 0, 0)];
        let mut spelled = encode(&one, Stream::Implied);
        let last = spelled.len() - 1;
        assert_eq!(spelled[last], 1, "implied head");
        spelled[last] = 0; // explicit...
        spelled.push(0); // ...step 0, no new addend
        spelled[0] += 1; // section length
        assert!(CompactPatches::new(&spelled, 1, Stream::Implied)
            .validate(&spelled)
            .is_err());
    }

    #[test]
    fn version_8_predicts_interleaved_pairs_and_alternating_arrays() {
        // AArch64's two-operand loads: ADRP a, ADRP b, LDR a, LDR b; a walks an
        // activation array, b a weight array far away (a dot product)
        let patches: Vec<Patch> = (0..30)
            .flat_map(|i| {
                let (a, b) = (64 + 4 * (i % 8), 4096 + 4 * i);
                [
                    patch(i * 20, Encoding::A64AdrPage21, Data, a, 0),
                    patch(i * 20 + 4, Encoding::A64AdrPage21, Data, b, 0),
                    patch(i * 20 + 8, Encoding::A64Lo12Scale2, Data, a, 0),
                    patch(i * 20 + 12, Encoding::A64Lo12Scale2, Data, b, 0),
                ]
            })
            .collect();
        let (v7, v8) = (
            encode(&patches, Stream::Implied),
            encode(&patches, Stream::Predicted),
        );
        // every LDR is implied (one byte), every ADRP one byte of target step
        assert_eq!(v8.len(), 4 + 1 + 2 + 2 + 30 * 6 + 2, "{} bytes", v8.len());
        assert!(
            v8.len() * 10 < v7.len() * 7,
            "{} against {}",
            v8.len(),
            v7.len()
        );
        let back: Vec<Patch> = CompactPatches::new(&v8, 120, Stream::Predicted)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, patches);
        // a step counted from the other written target than the one giving the smaller
        // number is refused (each program keeps one encoding)
        let two = [
            patch(0, Encoding::Rel32, Data, 400, 0),
            patch(4, Encoding::Rel32, Data, 8, 0),
            patch(8, Encoding::Rel32, Data, 404, 0),
        ];
        let good = encode(&two, Stream::Predicted);
        let last = good.len() - 1;
        // the third patch counts 404 from 400 (selector 1): step 1, number 0b110 with scale 2
        assert_eq!(good[last], (2 << 2) | 0b10, "{good:?}");
        // ...and refused counted from 8 (selector 0) instead
        let mut from_eight = good[..last].to_vec();
        from_eight.extend(leb((((404 - 8) / 4) * 2) << 2)); // zigzag(99), selector 0
        from_eight[0] = (from_eight.len() - 4) as u8;
        CompactPatches::new(&good, 3, Stream::Predicted)
            .validate(&good)
            .unwrap();
        assert!(CompactPatches::new(&from_eight, 3, Stream::Predicted)
            .validate(&from_eight)
            .is_err());
    }

    fn leb(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        crate::leb128::write(&mut out, v);
        out
    }

    /// A patch that announces a new addend must change it: a step of 0 (the kind's
    /// previous addend spelled out) is a second encoding (found by fuzzing).
    #[test]
    fn a_new_addend_equal_to_the_previous_is_refused() {
        let patches = [
            patch(0, Encoding::Rel32, Data, 0, 4),
            patch(4, Encoding::Rel32, Data, 40, 4),
        ];
        for stream in [Stream::Plain, Stream::Implied, Stream::Predicted] {
            let good = encode(&patches, stream);
            CompactPatches::new(&good, 2, stream)
                .validate(&good)
                .unwrap();
            // the second patch again, with its new-addend bit set and a step of 0
            let first = encode(&patches[..1], stream);
            let mut bad = first.clone();
            let tail = &good[first.len()..];
            let (head, used) = crate::leb128::read(tail).unwrap();
            let (number, more) = crate::leb128::read(&tail[used..]).unwrap();
            match stream {
                Stream::Plain => bad.extend(leb(head | 1)),
                _ => bad.extend(leb(head)),
            }
            match stream {
                Stream::Plain => bad.extend(leb(number)),
                _ => bad.extend(leb(number | 1)),
            }
            assert_eq!(
                used + more,
                tail.len(),
                "{stream:?}: no addend step in the good file"
            );
            bad.push(0); // addend step 0
            let len = (bad.len() - 4) as u32;
            bad[..4].copy_from_slice(&len.to_le_bytes());
            assert!(
                CompactPatches::new(&bad, 2, stream).validate(&bad).is_err(),
                "{stream:?}"
            );
        }
    }

    /// Every number of a section written longer than it must be (a zero group added on
    /// top) is refused: one encoding per program.
    #[test]
    fn overlong_numbers_in_a_section_are_refused() {
        let patches: Vec<Patch> = (0..12)
            .map(|i| {
                patch(
                    i * 6,
                    Encoding::Rel32,
                    Data,
                    (i * 52) % 300,
                    -4 + i as i32 % 2,
                )
            })
            .collect();
        for stream in [Stream::Plain, Stream::Implied, Stream::Predicted] {
            let bytes = encode(&patches, stream);
            let body_at = 4 + 1 + bytes[4] as usize + 2;
            let mut at = body_at;
            let mut lengthened = 0;
            while at < bytes.len() {
                let (_, used) = crate::leb128::read(&bytes[at..]).unwrap();
                let mut b = bytes[..at + used].to_vec();
                *b.last_mut().unwrap() |= 0x80;
                b.push(0);
                b.extend_from_slice(&bytes[at + used..]);
                let len = (b.len() - 4) as u32;
                b[..4].copy_from_slice(&len.to_le_bytes());
                assert!(
                    CompactPatches::new(&b, 12, stream).validate(&b).is_err(),
                    "{stream:?}: number at {at} written one byte longer"
                );
                lengthened += 1;
                at += used;
            }
            assert!(lengthened >= 12);
        }
    }

    /// Random patch lists of every kind mix (pairs in and out of order, repeated and
    /// scattered targets, changing addends) come back exactly from every stream, and the
    /// decoded list encodes to the same bytes (one encoding per list).
    #[test]
    fn random_patch_lists_round_trip_in_every_stream() {
        let mut state = 0x8_5eed_u64;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        for _ in 0..300 {
            let n = next(40);
            let recent = [next(512) as u32 * 4, next(512) as u32 * 4];
            let patches: Vec<Patch> = (0..n)
                .map(|i| {
                    let encoding = Encoding::ALL[next(Encoding::ALL.len() as u64) as usize];
                    let base = if next(4) == 0 { Code } else { Data };
                    let target = match next(3) {
                        0 => recent[next(2) as usize] + 4 * next(3) as u32,
                        1 => recent[0],
                        _ => next(1 << 20) as u32,
                    };
                    let addend = [0, -4, 4][next(3) as usize];
                    patch(
                        i as u32 * 4 + next(2) as u32 * 8,
                        encoding,
                        base,
                        target,
                        addend,
                    )
                })
                .collect();
            for stream in [
                Stream::Plain,
                Stream::Implied,
                Stream::Predicted,
                Stream::Paired,
            ] {
                let bytes = encode(&patches, stream);
                let back: Vec<Patch> = CompactPatches::new(&bytes, n as u32, stream)
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert_eq!(back, patches, "{stream:?}");
                assert_eq!(encode(&back, stream), bytes);
                CompactPatches::new(&bytes, n as u32, stream)
                    .validate(&bytes)
                    .unwrap();
            }
        }
    }

    /// Version 10: data accesses as pairs (RISC-V `AUIPC`+`LO12`, AArch64 `ADRP`+`LDR`,
    /// MOVW/MOVT) mixed with singles and interleaved halves come back exactly, each pair
    /// costs its first half's bytes only, and a pair split into two singles is refused.
    #[test]
    fn version_10_codes_adjacent_pairs_as_one_record() {
        let mut state = 0x10_5eed_u64;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        let families = [
            (Encoding::RvHi20, Encoding::RvLo12I, 4),
            (Encoding::RvHi20, Encoding::RvLo12S, 4),
            (Encoding::A64AdrPage21, Encoding::A64Lo12Scale2, 0),
            (Encoding::ThumbMovwAbs, Encoding::ThumbMovtAbs, 0),
            (Encoding::ArmMovwAbs, Encoding::ArmMovtAbs, 0),
        ];
        for _ in 0..300 {
            let mut patches = Vec::new();
            let mut offset = 0u32;
            for _ in 0..next(30) {
                let (e1, e2, step) = families[next(families.len() as u64) as usize];
                let base = if next(5) == 0 { Code } else { Data };
                let target = next(64) as u32 * 4;
                offset += 4 * (1 + next(3) as u32);
                let addend = [0, 0, 8][next(3) as usize];
                // mostly adjacent pairs, some with a gap, another addend or interleaved
                let (gap, second_addend) = match next(6) {
                    0 => (8, addend + step),
                    1 => (4, addend + step + 4),
                    _ => (4, addend + step),
                };
                patches.push(patch(offset, e1, base, target, addend));
                patches.push(patch(offset + gap, e2, base, target, second_addend));
                offset += gap;
            }
            let n = patches.len() as u32;
            let v8 = encode(&patches, Stream::Predicted);
            let v10 = encode(&patches, Stream::Paired);
            let back: Vec<Patch> = CompactPatches::new(&v10, n, Stream::Paired)
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(back, patches);
            CompactPatches::new(&v10, n, Stream::Paired)
                .validate(&v10)
                .unwrap();
            let pairs = crate::pairs::records(&patches)
                .iter()
                .filter(|r| r.1.is_some())
                .count();
            // a byte per pair saved, against at most two bytes of kind table per pair kind
            // and a scale byte saved
            assert!(
                v10.len() + pairs <= v8.len() + 2 * 8 + 1,
                "{} + {pairs} against {}",
                v10.len(),
                v8.len()
            );
            // the count must cover both halves of the last pair
            if pairs > 0 && crate::pairs::records(&patches).last().unwrap().1.is_some() {
                assert!(CompactPatches::new(&v10, n - 1, Stream::Paired)
                    .validate(&v10)
                    .is_err());
            }
        }
    }

    #[test]
    fn version_10_refuses_a_pair_written_as_two_singles() {
        let pair = [
            patch(0, Encoding::RvHi20, Data, 16, 0),
            patch(4, Encoding::RvLo12I, Data, 16, 4),
        ];
        let good = encode(&pair, Stream::Paired);
        // kind count 1, the pair kind (2 bytes), scales, one record of two numbers
        // scales: offsets 2^2, code 2^7 (none), data 2^4; the target one step of 16
        let scales = 2 | 7 << 2 | 4 << 5;
        assert_eq!(good[4..], [1, 17 | 0x40 | 0x80, 18, scales, 0, 2 << 2]);
        let back: Vec<Patch> = CompactPatches::new(&good, 2, Stream::Paired)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, pair);
        // the same two patches as singles of two single kinds
        let mut split = alloc::vec![0, 0, 0, 0, 2, 17 | 0x80, 18 | 0x80, scales];
        split.extend([0, 2 << 2]); // HI20: kind 0, offset 0, target one step
                                   // LO12: kind 1, offset step 4, its target from the first half, new addend 4
        split.extend([(2 << 1 | 1) << 1, 1, 8]);
        let len = (split.len() - 4) as u32;
        split[..4].copy_from_slice(&len.to_le_bytes());
        assert!(CompactPatches::new(&split, 2, Stream::Paired)
            .validate(&split)
            .is_err());
        // a pair kind of two encodings that are no pair
        let mut bad = good.clone();
        bad[6] = 8; // A64 LO12 after a RISC-V HI20
        assert!(CompactPatches::new(&bad, 2, Stream::Paired)
            .validate(&bad)
            .is_err());
    }
}
