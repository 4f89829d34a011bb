//! Format version [`COMPACT_FILE_VERSION`]: every fixed-width field of the older versions
//! as a shortest-form LEB128 number ([`crate::leb128`]), and sections only when they hold
//! something.
//!
//! A small program's file was mostly fixed overhead: 44 bytes of header, 20 of
//! instruction bounds, 16 of placement and 8 + 4 per dimension + 4 per element per symbol
//! (PID: 168 bytes around 311 of code and data). Version 9 keeps every field a reader
//! checks (magic, version, architecture, reserved bits, CPU features, alignments, sizes,
//! entry, CRC-32, bounds, placement) and stores it in as few bytes as its value needs:
//!
//! | bytes | field |
//! | --- | --- |
//! | 4 | magic `CPPY` |
//! | 2 | version, 9 (`u16`, where every older version has it, so an older runner names it in its refusal) |
//! | 4 | CRC-32 (IEEE) of bytes 0..6 followed by every byte after these four |
//! | 1 | architecture |
//! | 1 | flags: bit 0 pre-linked image, bit 1 unbounded, bit 2 imports follow the symbols, bit 3 no instruction bounds recorded (not with bit 1); other bits 0 |
//! | 1 | alignments: log2 of the code alignment, then log2 of the data alignment `<< 4` (each at most 12) |
//! | … | numbers: CPU features, code length, data length, entry, symbol count, symbol bytes; then the patch count (relocatable) or the code and data addresses (pre-linked); then, unless bit 1 or 3 is set, the fewest instructions and most − fewest |
//! | code length | code |
//! | … | initial data: a map of its non-zero 4-byte words, then those words ([`crate::DataImage`]) |
//! | … | if the patch count is not 0: the length of the patch stream, then the stream of version 8 without its 4-byte length ([`crate::compact`]) |
//! | … | the symbol records (below), one after the other |
//! | … | if flag bit 2: the import section ([`crate::imports`]) to the end of the file |
//!
//! A symbol record is a byte `role | dtype << 2 | rank << 4` (bit 7 0), the dimensions
//! (numbers), the name's length (a number, 1 to 255) and bytes, then one number per element:
//! `zigzag(unit − previous unit − 1)`, where an element's unit is its data offset divided by
//! its size (4, or 1 for bytes) and the previous unit of the first element is −1, so a
//! row-major array in consecutive slots is one byte 0 per element.

use crate::format::{check_align, Section, CHECKSUM_AT};
use crate::leb128;
use crate::placement::PlacementProblem;
use crate::{Arch, FormatError, InstructionBounds, Placement};

/// The version of files written now (defined with the other versions).
pub use crate::format::COMPACT_FILE_VERSION;

/// Where the CRC-32 is in a version 9 file.
pub const CHECKSUM_RANGE: core::ops::Range<usize> = 6..10;
/// Bytes before the first number: magic, version, CRC-32, architecture, flags, alignments.
pub const FIXED_BYTES: usize = 13;

/// Flag bit: a pre-linked image.
pub const PRELINKED: u8 = 1;
/// Flag bit: some step has no static instruction bound.
pub const UNBOUNDED: u8 = 2;
/// Flag bit: an import section ends the file.
pub const IMPORTS: u8 = 4;
/// Flag bit: the file records no instruction bounds (the writer could not count them).
pub const NO_BOUNDS: u8 = 8;
/// Flag bit (version 10): the data image marks words stored as their high half
/// ([`crate::DataImage`]).
pub const HALF_WORDS: u8 = 16;
/// Bytes before the first number in version 10: magic, version, CRC-32, architecture
/// and flags (`arch | flags << 3`), alignments.
pub const PAIRED_FIXED_BYTES: usize = 12;

/// The header of a version 9 file, as read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub arch: Arch,
    pub features: u32,
    pub code_align: u32,
    pub data_align: u32,
    pub code_len: u64,
    pub data_len: u64,
    pub entry: u32,
    pub symbol_count: u32,
    pub symbols_len: u64,
    pub patch_count: u32,
    pub placement: Option<Placement>,
    pub bounds: Option<InstructionBounds>,
    pub imports: bool,
    /// Version 10: whether the data image marks half-stored words.
    pub half_words: bool,
    /// Where the code starts.
    pub end: usize,
}

/// Reads numbers one after the other, each in its shortest form.
pub(crate) struct Numbers<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
}

impl Numbers<'_> {
    /// The next number, or `err` if it is malformed or runs past the end.
    pub fn next(&mut self, err: FormatError) -> Result<u64, FormatError> {
        let rest = self.bytes.get(self.at..).unwrap_or(&[]);
        let (v, used) = leb128::read(rest).ok_or(err)?;
        self.at += used;
        Ok(v)
    }

    /// The next number as a `u32`.
    pub fn next_u32(&mut self, err: FormatError) -> Result<u32, FormatError> {
        u32::try_from(self.next(err)?).map_err(|_| err)
    }
}

/// Reads and checks a version 9 or 10 header (the caller checked magic and version).
pub(crate) fn parse_header(bytes: &[u8], version: u16) -> Result<Header, FormatError> {
    let fixed = bytes
        .first_chunk::<FIXED_BYTES>()
        .ok_or(FormatError::Truncated {
            section: Section::Header,
            expected: FIXED_BYTES as u64,
            found: bytes.len() as u64,
        })?;
    // version 10 keeps the architecture (1 to 6) and the flags in one byte
    let paired = version == crate::format::PAIRED_FILE_VERSION || !cfg!(feature = "legacy");
    let (arch_byte, flags, fixed_len, allowed) = if paired {
        let b = fixed[10];
        (b & 7, b >> 3, PAIRED_FIXED_BYTES, HALF_WORDS)
    } else {
        (fixed[10], fixed[11], FIXED_BYTES, 0)
    };
    let arch = Arch::from_u8(arch_byte).ok_or(FormatError::UnknownArch(arch_byte))?;
    // "no bounds" and "unbounded" together would give a program two encodings
    if flags & !(PRELINKED | UNBOUNDED | IMPORTS | NO_BOUNDS | allowed) != 0
        || flags & (UNBOUNDED | NO_BOUNDS) == UNBOUNDED | NO_BOUNDS
    {
        return Err(FormatError::ReservedNotZero {
            section: Section::Header,
            index: 0,
        });
    }
    // a nibble: at most 2^15, which the check refuses as above 4096
    let align = |log: u8, section| {
        let a = 1u32 << (log & 15);
        check_align(section, a).map(|()| a)
    };
    let aligns = fixed[fixed_len - 1];
    let code_align = align(aligns & 0xf, Section::Code)?;
    let data_align = align(aligns >> 4, Section::Data)?;
    let truncated = FormatError::Truncated {
        section: Section::Header,
        expected: bytes.len() as u64 + 1,
        found: bytes.len() as u64,
    };
    let mut n = Numbers {
        bytes,
        at: fixed_len,
    };
    let features = n.next_u32(truncated)?;
    let code_len = n.next(truncated)?;
    let data_len = n.next(truncated)?;
    let entry = n.next_u32(truncated)?;
    let symbol_count = n.next_u32(truncated)?;
    let symbols_len = n.next(truncated)?;
    let (patch_count, placement) = if flags & PRELINKED != 0 {
        let code = n.next(truncated)?;
        let data = n.next(truncated)?;
        (0, Some(Placement { code, data }))
    } else {
        (n.next_u32(truncated)?, None)
    };
    let bounds = if flags & NO_BOUNDS != 0 {
        None
    } else if flags & UNBOUNDED != 0 {
        Some(InstructionBounds::Unbounded)
    } else {
        let fewest = n.next(truncated)?;
        let extra = n.next(truncated)?;
        let most = fewest
            .checked_add(extra)
            .ok_or(FormatError::BadInstructionBounds {
                problem: crate::bounds::BoundsProblem::FewestAboveMost,
            })?;
        Some(InstructionBounds::Known { fewest, most })
    };
    Ok(Header {
        arch,
        features,
        code_align,
        data_align,
        code_len,
        data_len,
        entry,
        symbol_count,
        symbols_len,
        patch_count,
        placement,
        bounds,
        imports: flags & IMPORTS != 0,
        half_words: flags & HALF_WORDS != 0,
        end: n.at,
    })
}

/// The CRC-32 a version 9 file stores: of bytes 0..6 and everything after the field.
pub fn checksum(bytes: &[u8]) -> u32 {
    let mut crc = crate::format::Crc32::new();
    crc.update(crate::format::sub(bytes, 0, CHECKSUM_RANGE.start));
    crc.update(crate::format::sub(bytes, CHECKSUM_RANGE.end, bytes.len()));
    crc.finish()
}

/// The patch count of a pre-linked image is 0; its placement is checked by the
/// `alloc` readers (see `ProgramView::parse`).
pub(crate) const HAS_PATCHES: FormatError = FormatError::BadPlacement {
    problem: PlacementProblem::HasPatches,
};

const _: () = assert!(CHECKSUM_RANGE.start < CHECKSUM_AT);

#[cfg(feature = "alloc")]
pub(crate) use write::encode;

#[cfg(feature = "alloc")]
mod write {
    use super::*;
    use crate::leb128::write as uleb;
    use crate::Program;
    use alloc::vec::Vec;

    fn zigzag(v: i64) -> u64 {
        ((v << 1) ^ (v >> 63)) as u64
    }

    /// The program as a version 10 file, or as version 9 (`version`; for the tests that
    /// check older files are still read).
    pub(crate) fn encode(p: &Program, version: u16) -> Vec<u8> {
        let mut flags = 0;
        if p.placement.is_some() {
            flags |= PRELINKED;
        }
        match p.instructions {
            None => flags |= NO_BOUNDS,
            Some(InstructionBounds::Unbounded) => flags |= UNBOUNDED,
            Some(InstructionBounds::Known { .. }) => {}
        }
        if !p.imports.is_empty() {
            flags |= IMPORTS;
        }
        let paired = version == crate::format::PAIRED_FILE_VERSION;
        let half_words = paired && crate::data_image::half_words_pay(&p.data);
        if half_words {
            flags |= HALF_WORDS;
        }
        let mut out = Vec::with_capacity(p.code.len() + p.data.len() + 64);
        out.extend_from_slice(&crate::format::MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&[0; 4]); // checksum, filled in below
        if paired {
            out.push(p.arch as u8 | flags << 3);
        } else {
            out.extend_from_slice(&[p.arch as u8, flags]);
        }
        out.push((p.code_align.trailing_zeros() | p.data_align.trailing_zeros() << 4) as u8);
        let mut symbols = Vec::new();
        for s in &p.symbols {
            symbols.push(s.role as u8 | (s.ty as u8) << 2 | (s.shape.len() as u8) << 4);
            for &d in &s.shape {
                uleb(&mut symbols, d.into());
            }
            uleb(&mut symbols, s.name.len() as u64);
            symbols.extend_from_slice(s.name.as_bytes());
            let size = s.ty.size() as i64;
            let mut previous = -1i64;
            for &o in &s.offsets {
                let unit = i64::from(o) / size;
                uleb(&mut symbols, zigzag(unit - previous - 1));
                previous = unit;
            }
        }
        for v in [
            p.features as usize,
            p.code.len(),
            p.data.len(),
            p.entry as usize,
            p.symbols.len(),
            symbols.len(),
        ] {
            uleb(&mut out, v as u64);
        }
        match p.placement {
            Some(placement) => {
                uleb(&mut out, placement.code);
                uleb(&mut out, placement.data);
            }
            None => uleb(&mut out, p.patches.len() as u64),
        }
        if let Some(InstructionBounds::Known { fewest, most }) = p.instructions {
            uleb(&mut out, fewest);
            uleb(&mut out, most - fewest);
        }
        out.extend_from_slice(&p.code);
        crate::data_image::encode_mapped(&p.data, &mut out, half_words);
        if !p.patches.is_empty() {
            let stream = if paired {
                crate::compact::Stream::Paired
            } else {
                crate::compact::Stream::Predicted
            };
            let section = crate::compact::encode(&p.patches, stream);
            let body = &section[4..];
            uleb(&mut out, body.len() as u64);
            out.extend_from_slice(body);
        }
        out.extend_from_slice(&symbols);
        if !p.imports.is_empty() {
            out.extend_from_slice(&crate::imports::encode_section(&p.imports));
        }
        let crc = checksum(&out);
        out[CHECKSUM_RANGE].copy_from_slice(&crc.to_le_bytes());
        out
    }
}
