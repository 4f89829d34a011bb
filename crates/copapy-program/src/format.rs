//! The binary program file format (version [`VERSION`]).
//!
//! All integers are little-endian. A file is a fixed header followed by four sections
//! with no padding between them:
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 4 | magic `b"CPPY"` |
//! | 4 | 2 | format version ([`VERSION`]) |
//! | 6 | 1 | architecture ([`Arch`] as `u8`) |
//! | 7 | 1 | reserved, written as 0 |
//! | 8 | 4 | code length in bytes |
//! | 12 | 4 | data length in bytes |
//! | 16 | 4 | number of patches |
//! | 20 | 4 | number of symbols |
//! | 24 | 4 | length of the symbol section in bytes |
//! | 28 | 4 | entry offset into code |
//! | 32 | 4 | CRC-32 (IEEE) of header bytes 0..32 followed by everything after the header |
//!
//! Then: the code bytes; the initial data image; `patches` records of
//! [`PATCH_RECORD_BYTES`] bytes (`offset: u32, encoding: u8, base: u8, reserved: u16,
//! target: u32, addend: i32`); and the symbol records (`offset: u32, type: u8,
//! reserved: u8, name_len: u16, name: [u8; name_len]` UTF-8).
//!
//! The checksum covers the header too, so a flipped bit anywhere (a size, the entry,
//! a code byte) is reported as corruption rather than executed. A reader checks, in
//! order: magic, version, architecture byte, section sizes against the file length,
//! checksum, record contents, and finally that every patch, symbol and the entry lie
//! inside their buffers (see [`FormatError`]).

use crate::{Arch, FormatError, Patch};

/// `b"CPPY"`: the first four bytes of every program file.
pub const MAGIC: [u8; 4] = *b"CPPY";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 1;
/// Size of the fixed header.
pub const HEADER_BYTES: usize = 36;
/// Size of one patch record.
pub const PATCH_RECORD_BYTES: usize = 16;
/// Size of a symbol record before its name.
pub const SYMBOL_RECORD_BYTES: usize = 8;
/// Offset of the checksum field in the header.
pub(crate) const CHECKSUM_AT: usize = 32;

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

pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Checks that the program can run on a runner for `runner`.
pub fn check_arch(program: Arch, runner: Arch) -> Result<(), FormatError> {
    if program == runner {
        Ok(())
    } else {
        Err(FormatError::ArchMismatch { program, runner })
    }
}

/// The layout checks shared by [`crate::ProgramView::parse`] and `Program::validate`:
/// entry inside code, every patch field inside code, every patch target inside its
/// buffer, every symbol inside data.
pub(crate) fn check_layout(
    code_len: usize,
    data_len: usize,
    entry: u32,
    patches: impl Iterator<Item = Patch>,
    symbols: impl Iterator<Item = u32>,
) -> Result<(), FormatError> {
    if entry as usize >= code_len {
        return Err(FormatError::EntryOutOfRange { entry, code_len });
    }
    for (index, p) in patches.enumerate() {
        check_patch(index, &p, code_len, data_len)?;
    }
    for (index, offset) in symbols.enumerate() {
        if (offset as usize).saturating_add(crate::ScalarType::BYTES) > data_len {
            return Err(FormatError::SymbolOutOfRange {
                index,
                offset,
                data_len,
            });
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
