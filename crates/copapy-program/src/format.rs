//! The binary program file format (versions [`OLDEST_VERSION`] to [`VERSION`]).
//!
//! All integers are little-endian. A file is a fixed [`HEADER_BYTES`]-byte header
//! followed by four sections with no padding between them: code, initial data,
//! patch records, symbol records; version 4 adds a fifth, the instruction bounds
//! ([`crate::InstructionBounds`], [`crate::bounds::BOUNDS_BYTES`] bytes). The byte-by-byte table is in `docs/program-format.md`;
//! in short:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `b"CPPY"` |
//! | 4 | 2 | format version ([`OLDEST_VERSION`] or [`VERSION`], see [`version_for`]) |
//! | 6 | 1 | architecture ([`Arch`] as `u8`) |
//! | 7 | 1 | reserved, 0 |
//! | 8 | 4 | CPU features the code needs (bitset, see [`check_features`]) |
//! | 12 | 2 | code alignment in bytes (power of two) |
//! | 14 | 2 | data alignment in bytes (power of two) |
//! | 16 | 4 | code length in bytes |
//! | 20 | 4 | data length in bytes |
//! | 24 | 4 | number of patches |
//! | 28 | 4 | number of symbols |
//! | 32 | 4 | length of the symbol section in bytes |
//! | 36 | 4 | entry offset into code |
//! | 40 | 4 | CRC-32 (IEEE) of header bytes 0..40 followed by everything after the header |
//!
//! A patch record is [`PATCH_RECORD_BYTES`] bytes: `offset: u32, encoding: u8, base: u8,
//! reserved: u16, target: u32, addend: i32`. A symbol record is `role: u8, dtype: u8,
//! rank: u8, reserved: u8, name_len: u16, reserved: u16`, then `rank` dimensions (`u32`
//! each, rank at most [`MAX_RANK`]), the UTF-8 name, and one data offset (`u32`) per
//! element (the product of the dimensions; 1 for a scalar), row-major. The dtype is an
//! [`ElementType`]; byte elements (3) exist from version 3 on.
//!
//! The checksum covers the header too, so a flipped bit anywhere (a size, the entry,
//! a code byte) is reported as corruption rather than executed. A reader checks, in
//! order: magic, version, architecture byte, alignment fields, section sizes against
//! the file length, checksum, record contents, and finally that every patch, symbol and
//! the entry lie inside their buffers (see [`FormatError`]).

use crate::{Arch, ElementType, FormatError, Patch};

/// `b"CPPY"`: the first four bytes of every program file.
pub const MAGIC: [u8; 4] = *b"CPPY";
/// The newest format version this crate reads and writes.
pub const VERSION: u16 = PAIRED_FILE_VERSION;
/// The oldest format version this crate writes, and reads with the `legacy` feature.
pub const OLDEST_VERSION: u16 = 2;
/// The oldest format version this build reads: [`OLDEST_VERSION`], or without the
/// `legacy` feature (a firmware runner) [`PAIRED_FILE_VERSION`].
pub const OLDEST_READ: u16 = if cfg!(feature = "legacy") {
    OLDEST_VERSION
} else {
    PAIRED_FILE_VERSION
};
/// The version a program with a byte symbol needs: the first that has byte elements.
pub const BYTES_VERSION: u16 = 3;
/// The version a program carrying its instruction bounds needs: the first with the
/// bounds section (it may hold byte symbols too).
pub const BOUNDS_VERSION: u16 = 4;
/// The version whose patches are stored compactly ([`crate::compact`]), and which may
/// end with an import section ([`crate::imports`]).
pub const COMPACT_VERSION: u16 = 5;
/// The version of a pre-linked image ([`crate::placement`]): the sections of version 5
/// with a placement section (the addresses code and data were patched for) where the
/// patches were. Relocatable files keep versions 2 to 5.
pub const PRELINKED_VERSION: u16 = 6;
/// Version 5 whose compact patches take the target of a pair's second patch from the
/// first when it follows it directly ([`crate::compact`]); still read.
pub const IMPLIED_TARGETS_VERSION: u16 = 7;
/// The version of relocatable files written now: version 7 whose compact patches predict
/// targets from instruction pairs and from the last two targets written ([`crate::predict`]).
pub const PREDICTED_TARGETS_VERSION: u16 = 8;
/// The version written now: the sections of version 8 (or, pre-linked, of version 6)
/// behind a header of LEB128 numbers, with compact symbol records and bounds
/// ([`crate::compact_file`]).
pub const COMPACT_FILE_VERSION: u16 = 9;
/// The version written now: version 9 with instruction pairs as one patch record
/// ([`crate::pairs`]), architecture and flags in one byte, and words whose low half is
/// zero stored as their high half where that is shorter ([`crate::DataImage`]).
pub const PAIRED_FILE_VERSION: u16 = 10;

/// Whether `version` has version 9's layout (9 or 10, [`crate::compact_file`]).
pub const fn is_compact_file(version: u16) -> bool {
    version == COMPACT_FILE_VERSION || version == PAIRED_FILE_VERSION
}

/// The version a writer before version 9 chose for a file holding symbols of these element
/// types, and instruction bounds or not: the oldest that could hold them, so runners that
/// predate byte symbols or bounds still loaded every program without them. A version 2 or
/// 3 file marked with another of the two is refused ([`FormatError::VersionMismatch`]),
/// which keeps each program's encoding unique. A program with bounds was written as
/// version 8 (compact patches with predicted targets, [`crate::compact`],
/// [`crate::predict`]); version 4 files (16-byte patch records and bounds), version 5 files
/// (compact patches without implied targets) and version 7 files (implied targets of
/// adjacent pairs only) are still read ([`version_accepted`]). Every program is written as
/// version 9 now ([`crate::compact_file`]).
pub fn version_for(mut types: impl Iterator<Item = ElementType>, has_bounds: bool) -> u16 {
    if has_bounds {
        PREDICTED_TARGETS_VERSION
    } else if types.any(|t| t == ElementType::Byte) {
        BYTES_VERSION
    } else {
        OLDEST_VERSION
    }
}
/// Whether a file of version `found` (2 to 8) may hold what calls for version `needed`
/// ([`version_for`]): the same version, or a version 4, 5 or 7 file where 8 was written
/// last, or a pre-linked image (version 6 holds everything the relocatable versions do).
/// Version 9 holds every program.
pub fn version_accepted(found: u16, needed: u16) -> bool {
    found == needed
        || (matches!(
            found,
            BOUNDS_VERSION | COMPACT_VERSION | IMPLIED_TARGETS_VERSION
        ) && needed == PREDICTED_TARGETS_VERSION)
        || found == PRELINKED_VERSION
        || is_compact_file(found)
}

/// Size of the fixed header.
pub const HEADER_BYTES: usize = 44;
/// Size of one patch record.
pub const PATCH_RECORD_BYTES: usize = 16;
/// Size of a symbol record before its dimensions, name and offsets.
pub const SYMBOL_RECORD_BYTES: usize = 8;
/// Largest number of dimensions a symbol may have (a scalar has 0).
pub const MAX_RANK: usize = 4;
/// Largest alignment a program may ask for (one 4 KiB page).
pub const MAX_ALIGN: u32 = 4096;
/// Offset of the checksum field in the header.
pub const CHECKSUM_AT: usize = 40;

/// Which part of a program file a size refers to (for error messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The fixed header.
    Header,
    /// The machine code.
    Code,
    /// The initial data image.
    Data,
    /// The patch records.
    Patches,
    /// The symbol records.
    Symbols,
    /// The instruction bounds (version 4).
    Bounds,
    /// The load addresses of a pre-linked image (version 6).
    Placement,
}

impl Section {
    /// Lower-case name used in messages.
    pub const fn name(self) -> &'static str {
        match self {
            Section::Header => "header",
            Section::Code => "code",
            Section::Data => "data",
            Section::Patches => "patch",
            Section::Symbols => "symbol",
            Section::Bounds => "instruction-bounds",
            Section::Placement => "placement",
        }
    }
}

const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

static CRC_TABLE: [u32; 256] = crc_table();

/// Incremental CRC-32 (IEEE 802.3, the one zlib and PNG use).
///
/// ```
/// use copapy_program::format::Crc32;
/// let mut c = Crc32::new();
/// c.update(b"1234");
/// c.update(b"56789");
/// assert_eq!(c.finish(), 0xCBF4_3926);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Crc32(u32);

impl Crc32 {
    /// Starts a checksum.
    pub const fn new() -> Crc32 {
        Crc32(0xFFFF_FFFF)
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        let mut c = self.0;
        for &b in bytes {
            c = CRC_TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
        }
        self.0 = c;
    }

    /// The checksum of everything fed so far.
    pub const fn finish(self) -> u32 {
        !self.0
    }
}

impl Default for Crc32 {
    fn default() -> Self {
        Crc32::new()
    }
}

// Readers never panic: callers check lengths first, and a read past the end gives 0.
// Keeping every panic path out of the parser keeps `core::fmt` (panic messages) out of
// firmware, which is most of a small runner's code size.

pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at.wrapping_add(2))
        .and_then(|s| <[u8; 2]>::try_from(s).ok())
        .map_or(0, u16::from_le_bytes)
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at.wrapping_add(4))
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, u32::from_le_bytes)
}

/// `b[from..to]`, or empty where that is out of range (callers check bounds first).
pub(crate) fn sub(b: &[u8], from: usize, to: usize) -> &[u8] {
    b.get(from..to).unwrap_or(&[])
}

/// Checks that the program can run on a runner for `runner`.
pub fn check_arch(program: Arch, runner: Arch) -> Result<(), FormatError> {
    if program == runner {
        Ok(())
    } else {
        Err(FormatError::ArchMismatch { program, runner })
    }
}

/// Checks that a runner offering the CPU features `runner` (a bitset, bits defined
/// per architecture next to [`Arch`]) has every feature the program needs.
///
/// ```
/// use copapy_program::format::check_features;
/// assert!(check_features(0b01, 0b11).is_ok());
/// assert!(check_features(0b110, 0b010).is_err());
/// ```
pub fn check_features(program: u32, runner: u32) -> Result<(), FormatError> {
    let missing = program & !runner;
    if missing == 0 {
        Ok(())
    } else {
        Err(FormatError::MissingFeatures {
            needed: program,
            available: runner,
        })
    }
}

/// Checks an alignment field: a power of two no larger than [`MAX_ALIGN`].
pub fn check_align(section: Section, align: u32) -> Result<(), FormatError> {
    if align.is_power_of_two() && align <= MAX_ALIGN {
        Ok(())
    } else {
        Err(FormatError::BadAlignment { section, align })
    }
}

/// One symbol's placement, as the layout check sees it.
pub(crate) struct SymbolSlots<I> {
    /// Bytes per element (its alignment too).
    pub size: usize,
    pub offsets: I,
}

/// The layout checks shared by [`crate::ProgramView::parse`] and `Program::validate`:
/// entry inside code, every patch field inside code, every patch target inside its
/// buffer, every symbol element inside data and aligned to its size (4 bytes, or 1
/// for a byte element).
pub(crate) fn check_layout<I: Iterator<Item = u32>>(
    code_len: usize,
    data_len: usize,
    entry: u32,
    patches: impl Iterator<Item = Patch>,
    symbols: impl Iterator<Item = SymbolSlots<I>>,
) -> Result<(), FormatError> {
    if entry as usize >= code_len {
        return Err(FormatError::EntryOutOfRange { entry, code_len });
    }
    for (index, p) in patches.enumerate() {
        check_patch(index, &p, code_len, data_len)?;
    }
    for (index, s) in symbols.enumerate() {
        for offset in s.offsets {
            if (offset as usize).saturating_add(s.size) > data_len {
                return Err(FormatError::SymbolOutOfRange {
                    index,
                    offset,
                    data_len,
                });
            }
            if !(offset as usize).is_multiple_of(s.size) {
                return Err(FormatError::SymbolMisaligned { index, offset });
            }
        }
    }
    Ok(())
}

/// Checks one patch against the buffer sizes (used by the runner too).
pub fn check_patch(
    index: usize,
    p: &Patch,
    code_len: usize,
    data_len: usize,
) -> Result<(), FormatError> {
    let width = p.encoding.width();
    if (p.offset as usize).saturating_add(width) > code_len {
        return Err(FormatError::PatchFieldOutOfRange {
            index,
            offset: p.offset,
            width,
            code_len,
        });
    }
    let len = match p.base {
        crate::Base::Code => code_len,
        crate::Base::Data => data_len,
    };
    if p.target as usize >= len {
        return Err(FormatError::PatchTargetOutOfRange {
            index,
            base: p.base,
            target: p.target,
            len,
        });
    }
    Ok(())
}
