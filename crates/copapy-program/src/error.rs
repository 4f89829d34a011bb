//! Why a program file or program was refused.

use core::fmt;

use crate::format::{Section, BYTES_VERSION, MAGIC, OLDEST_READ, OLDEST_VERSION, VERSION};
use crate::names::{NameExcerpt, NameProblem, NAME_RULE};
use crate::{Arch, Base};

/// Everything that can be wrong with a program file or an in-memory program.
///
/// Each variant carries enough to say *what* is wrong in its [`Display`](fmt::Display)
/// message, e.g. `file truncated: header says 4096 code bytes, only 100 present`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// The file ends before a section the header announces (or inside the header).
    Truncated {
        /// The section that is cut short.
        section: Section,
        /// Bytes the header says it has (for the header: its fixed size).
        expected: u64,
        /// Bytes actually present.
        found: u64,
    },
    /// The file is longer than its header says.
    TrailingBytes {
        /// Number of extra bytes.
        extra: u64,
    },
    /// The file does not start with `CPPY`.
    BadMagic([u8; 4]),
    /// The file uses a format version this reader does not know.
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
    },
    /// The version field is not the one the file's contents call for (see
    /// [`crate::format::version_for`]): a byte symbol in a version 2 file, or a
    /// version 3 file without one. Each program has one encoding, so either is
    /// a damaged or hand-made file.
    VersionMismatch {
        /// Version in the file.
        found: u16,
        /// Version its symbols call for.
        needed: u16,
    },
    /// The instruction-bounds section (version 4) is malformed: unknown flag bits,
    /// counts on an unbounded program, or more fewest than most instructions.
    BadInstructionBounds {
        /// Which of the three.
        problem: crate::bounds::BoundsProblem,
    },
    /// The placement section of a pre-linked image (version 6, [`crate::placement`]) is
    /// malformed.
    BadPlacement {
        /// What is wrong.
        problem: crate::placement::PlacementProblem,
    },
    /// A loader for pre-linked images only ([`crate::ProgramView::parse_prelinked`]) was
    /// given a relocatable file.
    NotPrelinked {
        /// Its version.
        found: u16,
    },
    /// A pre-linked image was given buffers at other addresses than it was linked for.
    WrongPlacement {
        /// The buffer at the wrong address.
        section: Section,
        /// The address the image was linked for.
        expected: u64,
        /// The buffer's address.
        actual: u64,
    },
    /// A record of the import section (version 5) is malformed.
    BadImport {
        /// Its index.
        index: u32,
        /// What is wrong.
        problem: crate::imports::ImportProblem,
    },
    /// The architecture byte names no known architecture.
    UnknownArch(u8),
    /// The program is for another architecture than the runner.
    ArchMismatch {
        /// Architecture of the program.
        program: Arch,
        /// Architecture of the runner.
        runner: Arch,
    },
    /// The program needs CPU features the runner does not have.
    MissingFeatures {
        /// Feature bits the program needs.
        needed: u32,
        /// Feature bits the runner has.
        available: u32,
    },
    /// An alignment field is not a power of two up to [`crate::format::MAX_ALIGN`].
    BadAlignment {
        /// The section the alignment is for (code or data).
        section: Section,
        /// The value found.
        align: u32,
    },
    /// A buffer given to the runner is not aligned as the program requires.
    BufferMisaligned {
        /// The section the buffer is for (code or data).
        section: Section,
        /// The alignment the program requires.
        align: u32,
        /// The address of the buffer.
        addr: usize,
    },
    /// A reserved byte is not zero (so the file is not the one canonical encoding of
    /// its program, and a future version may give the byte a meaning).
    ReservedNotZero {
        /// Where: the header, or a patch or symbol record.
        section: Section,
        /// Index of the record (0 for the header).
        index: usize,
    },
    /// The stored checksum does not match the contents.
    ChecksumMismatch {
        /// Checksum in the header.
        stored: u32,
        /// Checksum of the contents.
        computed: u32,
    },
    /// A patch record has an unknown encoding byte.
    UnknownEncoding {
        /// Index of the patch.
        index: usize,
        /// The byte found.
        value: u8,
    },
    /// A patch record has an unknown base byte.
    UnknownBase {
        /// Index of the patch.
        index: usize,
        /// The byte found.
        value: u8,
    },
    /// A symbol record has an unknown type byte.
    UnknownScalarType {
        /// Index of the symbol.
        index: usize,
        /// The byte found.
        value: u8,
    },
    /// A symbol record has an unknown role byte.
    UnknownRole {
        /// Index of the symbol.
        index: usize,
        /// The byte found.
        value: u8,
    },
    /// A symbol has more dimensions than [`crate::format::MAX_RANK`].
    BadRank {
        /// Index of the symbol.
        index: usize,
        /// The rank found.
        rank: u8,
    },
    /// A symbol's shape does not match its number of offsets (or is too large).
    BadShape {
        /// Index of the symbol.
        index: usize,
    },
    /// The compact patch section (versions 5 and 7, [`crate::compact`]) is malformed.
    BadPatchStream {
        /// Index of the first patch that does not decode (or the count if bytes are left over).
        index: usize,
    },
    /// Version 9's data image ([`crate::compact_file`]) marks a word as stored that is all
    /// zero bytes, or sets a map bit past the last word: each image has one encoding.
    BadDataImage {
        /// The word (4-byte group of the data) where it goes wrong.
        word: usize,
    },
    /// The symbol records do not fill the symbol section exactly.
    BadSymbolTable {
        /// Index of the first symbol that does not fit (or the count if bytes are left over).
        index: usize,
    },
    /// A symbol name breaks the rule every writer keeps ([`crate::names`]): empty, too
    /// long, not UTF-8, with whitespace, a control character or a separator, or the name
    /// of an earlier symbol.
    BadSymbolName {
        /// Index of the symbol.
        index: usize,
        /// The start of the name, for the message.
        name: NameExcerpt,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// Code, data, patch or symbol counts exceed what 32-bit fields hold.
    TooLarge {
        /// The section that is too large.
        section: Section,
    },
    /// The entry offset is not inside the code.
    EntryOutOfRange {
        /// Entry offset.
        entry: u32,
        /// Code size.
        code_len: usize,
    },
    /// A patch field extends past the end of the code.
    PatchFieldOutOfRange {
        /// Index of the patch.
        index: usize,
        /// Code offset of the field.
        offset: u32,
        /// Field width in bytes.
        width: usize,
        /// Code size.
        code_len: usize,
    },
    /// A patch target is outside its base buffer.
    PatchTargetOutOfRange {
        /// Index of the patch.
        index: usize,
        /// Buffer of the target.
        base: Base,
        /// Target offset.
        target: u32,
        /// Size of that buffer.
        len: usize,
    },
    /// A symbol element's slot is not aligned to its 4-byte size.
    SymbolMisaligned {
        /// Index of the symbol.
        index: usize,
        /// Data offset of the misaligned element.
        offset: u32,
    },
    /// A symbol's 4-byte slot is not inside the data.
    SymbolOutOfRange {
        /// Index of the symbol.
        index: usize,
        /// Data offset of the symbol.
        offset: u32,
        /// Data size.
        data_len: usize,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FormatError::*;
        match *self {
            Truncated { section: Section::Header, expected, found } => write!(
                f,
                "file truncated: a program header is {expected} bytes, only {found} present"
            ),
            Truncated { section: Section::Patches, expected, found } => write!(
                f,
                "file truncated: header says {} patches ({expected} bytes), only {found} bytes present",
                expected / crate::format::PATCH_RECORD_BYTES as u64
            ),
            Truncated { section, expected, found } => write!(
                f,
                "file truncated: header says {expected} {} bytes, only {found} present",
                section.name()
            ),
            TrailingBytes { extra } => {
                write!(f, "file has {extra} bytes after the end announced by its header")
            }
            BadMagic(m) => write!(
                f,
                "not a copapy program: file starts with {m:02x?}, expected {MAGIC:02x?} (\"CPPY\")"
            ),
            UnsupportedVersion { found } if (OLDEST_VERSION..OLDEST_READ).contains(&found) => {
                write!(
                    f,
                    "program file format version {found} is not supported (this runner reads \
                     version {OLDEST_READ}, which every copapy since it writes); re-save the \
                     program with the current copapy (cp.load(path).save(path)) or recompile it"
                )
            }
            UnsupportedVersion { found } => write!(
                f,
                "program file format version {found} is not supported (this runner reads versions \
                 {OLDEST_READ} to {VERSION}); recompile the program with a matching copapy"
            ),
            VersionMismatch { found, needed } if needed == BYTES_VERSION => write!(
                f,
                "program file says format version {found} but has a byte variable, which needs \
                 version {needed}: the file is damaged or was not written by copapy"
            ),
            VersionMismatch { found, needed } => write!(
                f,
                "program file says format version {found} but uses nothing beyond version \
                 {needed} (copapy writes the oldest version that holds a program): the file is \
                 damaged or was not written by copapy"
            ),
            BadInstructionBounds { problem } => write!(
                f,
                "program file's instruction bounds {}: the file is damaged or was not written \
                 by copapy",
                problem.describe()
            ),
            BadPlacement { problem } => write!(
                f,
                "pre-linked program file {}: the file is damaged or was not written by copapy",
                problem.describe()
            ),
            NotPrelinked { found } => write!(
                f,
                "this loader takes only pre-linked images (format version 6) and the file is \
                 a relocatable program (version {found}): save it with code_base=/data_base= set \
                 to this runner's buffer addresses"
            ),
            WrongPlacement { section, expected, actual } => write!(
                f,
                "pre-linked program needs its {} at {expected:#x}, but this runner's {} buffer is \
                 at {actual:#x}: save it with the addresses of this runner's buffers, or without \
                 code_base=/data_base= for a relocatable file any runner places",
                section.name(),
                section.name()
            ),
            BadImport { index, problem } => write!(
                f,
                "program file's import {index} {}: the file is damaged or was not written by \
                 copapy",
                problem.describe()
            ),
            UnknownArch(a) => write!(f, "program names unknown architecture number {a}"),
            ArchMismatch { program, runner } => write!(
                f,
                "program is for {} but this runner is {}",
                program.name(),
                runner.name()
            ),
            MissingFeatures { needed, available } => {
                f.write_str("program needs CPU features ")?;
                write_features(f, needed)?;
                f.write_str(" but this runner has ")?;
                write_features(f, available)?;
                f.write_str(" (missing ")?;
                write_features(f, needed & !available)?;
                f.write_str("); compile for this runner's target")
            }
            BadAlignment { section, align } => write!(
                f,
                "{} alignment {align} is not a power of two up to {}",
                section.name(),
                crate::format::MAX_ALIGN
            ),
            BufferMisaligned { section, align, addr } => write!(
                f,
                "the {} buffer at {addr:#x} is not aligned to the {align} bytes the program requires",
                section.name()
            ),
            ReservedNotZero { section: Section::Header, .. } => {
                write!(f, "reserved header byte 7 is not zero")
            }
            ReservedNotZero { section, index } => write!(
                f,
                "{} record {index} has a reserved byte that is not zero",
                section.name()
            ),
            ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch: file corrupted (stored {stored:#010x}, contents give {computed:#010x})"
            ),
            UnknownEncoding { index, value } => write!(f, "patch {index} has unknown encoding {value}"),
            UnknownBase { index, value } => write!(f, "patch {index} has unknown base buffer {value}"),
            UnknownScalarType { index, value } => write!(f, "symbol {index} has unknown type {value}"),
            UnknownRole { index, value } => write!(f, "symbol {index} has unknown role {value}"),
            BadRank { index, rank } => write!(
                f,
                "symbol {index} has {rank} dimensions, at most {} are allowed",
                crate::format::MAX_RANK
            ),
            BadShape { index } => write!(f, "symbol {index} has more elements than its record holds"),
            BadPatchStream { index } => write!(
                f,
                "compact patch section is malformed at patch {index}: the file is damaged or \
                 was not written by copapy"
            ),
            BadDataImage { word } => write!(
                f,
                "data image is malformed at word {word} (a stored word of zeros, or a map bit \
                 past the data): the file is damaged or was not written by copapy"
            ),
            BadSymbolTable { index } => write!(
                f,
                "symbol table is malformed at symbol {index}: records do not fill the symbol section exactly"
            ),
            BadSymbolName { index, name, problem } => write!(
                f,
                "symbol {index} has the name {name}, which {problem}: {NAME_RULE}; the file is \
                 damaged or was not written by copapy"
            ),
            TooLarge { section } => write!(f, "{} section is too large for the program format (4 GiB limit)", section.name()),
            EntryOutOfRange { entry, code_len } => {
                write!(f, "entry point {entry} is outside the {code_len} code bytes")
            }
            PatchFieldOutOfRange { index, offset, width, code_len } => write!(
                f,
                "patch {index} out of range: its {width}-byte field at code offset {offset} extends past the end of the {code_len} code bytes"
            ),
            PatchTargetOutOfRange { index, base, target, len } => write!(
                f,
                "patch {index} out of range: target {} offset {target} is outside the {len}-byte {} buffer",
                base.name(),
                base.name()
            ),
            SymbolMisaligned { index, offset } => write!(
                f,
                "symbol {index} misaligned: its slot at data offset {offset} is not a multiple of 4"
            ),
            SymbolOutOfRange { index, offset, data_len } => write!(
                f,
                "symbol {index} out of range: its slot at data offset {offset} is outside the {data_len} data bytes"
            ),
        }
    }
}

impl core::error::Error for FormatError {}

/// `armv7+vfp3`: the names of a feature bit set (unnamed bits in hex; `none` if empty).
fn write_features(f: &mut fmt::Formatter<'_>, bits: u32) -> fmt::Result {
    if bits == 0 {
        return f.write_str("none");
    }
    let mut rest = bits;
    let mut first = true;
    for (feature, name) in crate::Features::NAMED {
        if bits & feature.0 != 0 {
            f.write_str(if first { "" } else { "+" })?;
            f.write_str(name)?;
            rest &= !feature.0;
            first = false;
        }
    }
    if rest != 0 {
        write!(f, "{}{rest:#x}", if first { "" } else { "+" })?;
    }
    Ok(())
}
