//! The ABI's error codes (negative `int32_t` in C; keep in step with `copapy_runner.h`),
//! how library errors map to them, and a sentence for each.

use core::ffi::{c_char, CStr};

use copapy_program::FormatError;
use copapy_runner::{InstallError, PatchError};

pub const BAD_ARGUMENT: i32 = -1;
pub const BAD_MAGIC: i32 = -2;
pub const VERSION: i32 = -3;
pub const UNKNOWN_ARCH: i32 = -4;
pub const WRONG_ARCH: i32 = -5;
pub const FEATURES: i32 = -6;
pub const TRUNCATED: i32 = -7;
pub const TRAILING: i32 = -8;
pub const CHECKSUM: i32 = -9;
pub const BAD_RECORD: i32 = -10;
pub const ENTRY: i32 = -11;
pub const PATCH_RANGE: i32 = -12;
pub const SYMBOL_RANGE: i32 = -13;
pub const ALIGNMENT: i32 = -14;
pub const BUFFER_TOO_SMALL: i32 = -15;
pub const PATCH_REACH: i32 = -16;
pub const NO_SYMBOL: i32 = -17;
pub const OVERLAP: i32 = -18;
pub const NOT_LOADED: i32 = -19;
pub const IMPORT_MISSING: i32 = -20;
pub const IMPORT_SIGNATURE: i32 = -21;
pub const WRONG_BASE: i32 = -22;
pub const NOT_PRELINKED: i32 = -23;

/// The code of a file the reader refused. Variants added later (the reader grows
/// checks) fall under "malformed record".
pub fn format_code(e: &FormatError) -> i32 {
    use FormatError::*;
    match e {
        BadMagic(_) => BAD_MAGIC,
        UnsupportedVersion { .. } | VersionMismatch { .. } => VERSION,
        UnknownArch(_) => UNKNOWN_ARCH,
        ArchMismatch { .. } => WRONG_ARCH,
        MissingFeatures { .. } => FEATURES,
        Truncated { .. } => TRUNCATED,
        TrailingBytes { .. } => TRAILING,
        ChecksumMismatch { .. } => CHECKSUM,
        EntryOutOfRange { .. } => ENTRY,
        PatchFieldOutOfRange { .. } | PatchTargetOutOfRange { .. } => PATCH_RANGE,
        SymbolOutOfRange { .. } => SYMBOL_RANGE,
        BadAlignment { .. } | BufferMisaligned { .. } | SymbolMisaligned { .. } => ALIGNMENT,
        WrongPlacement { .. } => WRONG_BASE,
        NotPrelinked { .. } => NOT_PRELINKED,
        _ => BAD_RECORD,
    }
}

/// The code of a program that could not be installed into the given buffers.
pub fn install_code(e: &InstallError) -> i32 {
    match e {
        InstallError::Format(f) => format_code(f),
        InstallError::Patch(PatchError::BufferTooSmall { .. }) => BUFFER_TOO_SMALL,
        InstallError::Patch(PatchError::OutOfBounds(_)) => PATCH_RANGE,
        InstallError::Patch(_) => PATCH_REACH,
    }
}

/// A static message for an error code: what is wrong and, where the caller can act,
/// what to do.
pub fn message(error: i32) -> &'static CStr {
    match error {
        0 => c"ok",
        BAD_ARGUMENT => c"a null pointer was passed, or a buffer wraps around the address space",
        BAD_MAGIC => c"not a copapy program (bad magic)",
        VERSION => {
            c"unsupported program format version (this library reads version 10: re-save older files with the current copapy), or one its contents contradict"
        }
        UNKNOWN_ARCH => c"unknown architecture number",
        WRONG_ARCH => c"program is for another architecture than this runner",
        FEATURES => {
            c"program needs CPU features this runner lacks (copapy_cpu_features; compile for this CPU)"
        }
        TRUNCATED => c"file truncated",
        TRAILING => c"bytes after the end of the program",
        CHECKSUM => c"checksum mismatch: file corrupted",
        BAD_RECORD => c"malformed patch or symbol record",
        ENTRY => c"entry point outside the code",
        PATCH_RANGE => c"patch outside its buffer",
        SYMBOL_RANGE => c"variable outside the data",
        ALIGNMENT => c"misaligned buffer, alignment field or variable",
        BUFFER_TOO_SMALL => c"code or data buffer too small for the program",
        PATCH_REACH => c"a patch cannot reach its target from these buffers",
        NO_SYMBOL => c"no such variable or element",
        OVERLAP => c"file, code and data buffers overlap: give each its own memory",
        NOT_LOADED => c"program not loaded: pass the struct a successful copapy_load filled",
        IMPORT_MISSING => {
            c"the program calls an imported function the import table lacks (failed_name names it)"
        }
        IMPORT_SIGNATURE => {
            c"an imported function's signature in the table differs from the program's (failed_name names it)"
        }
        WRONG_BASE => {
            c"pre-linked program for other buffer addresses: save it with this firmware's buffer addresses, or without code_base=/data_base="
        }
        NOT_PRELINKED => {
            c"copapy_load_prelinked takes only pre-linked images: save the program with code_base=/data_base= set to this firmware's buffers"
        }
        _ => c"unknown error code",
    }
}

/// `message` as a C string pointer.
pub fn message_ptr(error: i32) -> *const c_char {
    message(error).as_ptr()
}
