//! The import section (format version [`IMPORTS_VERSION`]): the functions a program
//! calls (`cp.extern`), which the runner resolves by name when it loads the program.
//!
//! The section follows the instruction bounds and runs to the end of the file (only a
//! program with imports has it, so every other program keeps its older version):
//! `count: u32`, then per import an [`IMPORT_RECORD_BYTES`]-byte record
//! `slot: u32, name_len: u8, signature_len: u8, reserved: u16` followed by the name and
//! the signature (ASCII). `slot` is the data offset of the import's 8-byte,
//! 8-aligned entry in the import table: the loader writes the function's address there
//! (little-endian, zero-extended on 32-bit targets), and the code calls through it.
//! Names are C identifiers, unique in a program; a signature is a result code (`f i b
//! v`) and the argument codes (`f i b`, and `F I` for a float32 / int32 buffer passed
//! as a pointer and an int32 length) in brackets, taking at most 4 float and 4 integer
//! registers (an int or bool one, a buffer two): `"f(ib)"`, `"i(Fi)"`.

use crate::format::{sub, u32_at};
use crate::FormatError;

/// The first format version with the import section.
pub const IMPORTS_VERSION: u16 = crate::format::COMPACT_VERSION;
/// Size of an import record before its name and signature.
pub const IMPORT_RECORD_BYTES: usize = 8;
/// Bytes of one import-table entry in data memory (a pointer on every target).
pub const IMPORT_ENTRY_BYTES: u32 = 8;
/// Most float (and most int) arguments of an import.
pub const MAX_ARGS_PER_CLASS: usize = 4;

/// What is wrong with an import record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportProblem {
    /// The section ends inside a record, or has bytes after the last one.
    Length,
    /// The name is not a C identifier.
    Name,
    /// The signature is not one the call stencils support.
    Signature,
    /// The table entry is not 8-aligned or not inside data.
    Slot,
    /// Another import has the same name.
    Duplicate,
    /// A reserved field is not zero.
    Reserved,
}

impl ImportProblem {
    /// What the message says.
    pub const fn describe(self) -> &'static str {
        match self {
            ImportProblem::Length => "does not fit the import section",
            ImportProblem::Name => "has a name that is not a C identifier",
            ImportProblem::Signature => "has a malformed signature",
            ImportProblem::Slot => "has its table entry outside data memory or misaligned",
            ImportProblem::Duplicate => "repeats the name of an earlier import",
            ImportProblem::Reserved => "has a reserved field that is not zero",
        }
    }
}

/// Whether `name` is a C identifier.
pub fn is_c_identifier(name: &[u8]) -> bool {
    match name.split_first() {
        Some((&c, rest)) => {
            (c.is_ascii_alphabetic() || c == b'_')
                && rest.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        }
        None => false,
    }
}

/// Whether `sig` is a well-formed signature: `f i b v` then `(`, argument codes `f i b F
/// I` taking at most 4 float and 4 integer registers (`F`/`I` take two), `)`.
pub fn is_signature(sig: &[u8]) -> bool {
    let [result, b'(', args @ .., b')'] = sig else {
        return false;
    };
    let floats = args.iter().filter(|&&c| c == b'f').count();
    let ints: usize = args
        .iter()
        .map(|c| match c {
            b'i' | b'b' => 1,
            b'F' | b'I' => 2,
            _ => 0,
        })
        .sum();
    // `matches!` rather than `b"fibv".contains`: a slice search links core's memchr
    // (about 400 bytes) into firmware
    matches!(result, b'f' | b'i' | b'b' | b'v')
        && args
            .iter()
            .all(|c| matches!(c, b'f' | b'i' | b'b' | b'F' | b'I'))
        && floats <= MAX_ARGS_PER_CLASS
        && ints <= MAX_ARGS_PER_CLASS
}

/// One import, as read from a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportView<'a> {
    /// The function's name (a C identifier, so ASCII). Bytes rather than `str`: a
    /// firmware compares them as bytes and links no UTF-8 validation.
    pub name: &'a [u8],
    /// Its signature, e.g. `"f(i)"` (ASCII).
    pub signature: &'a [u8],
    /// Data offset of its 8-byte entry in the import table.
    pub slot: u32,
}

impl<'a> ImportView<'a> {
    /// The name as a `str` (it is ASCII).
    pub fn name_str(&self) -> &'a str {
        core::str::from_utf8(self.name).unwrap_or("?")
    }

    /// The signature as a `str` (it is ASCII).
    pub fn signature_str(&self) -> &'a str {
        core::str::from_utf8(self.signature).unwrap_or("?")
    }
}

fn bad(index: usize, problem: ImportProblem) -> FormatError {
    FormatError::BadImport {
        index: index as u32,
        problem,
    }
}

/// The record at the start of `rest` (not yet checked against data or other records).
fn decode(index: usize, rest: &[u8]) -> Result<(ImportView<'_>, usize), FormatError> {
    let head: &[u8; IMPORT_RECORD_BYTES] = rest
        .first_chunk()
        .ok_or(bad(index, ImportProblem::Length))?;
    if head[6] != 0 || head[7] != 0 {
        return Err(bad(index, ImportProblem::Reserved));
    }
    let (name_len, sig_len) = (head[4] as usize, head[5] as usize);
    let name_end = IMPORT_RECORD_BYTES + name_len;
    let end = name_end + sig_len;
    if rest.len() < end {
        return Err(bad(index, ImportProblem::Length));
    }
    let name = sub(rest, IMPORT_RECORD_BYTES, name_end);
    let signature = sub(rest, name_end, end);
    if !is_c_identifier(name) {
        return Err(bad(index, ImportProblem::Name));
    }
    if !is_signature(signature) {
        return Err(bad(index, ImportProblem::Signature));
    }
    let view = ImportView {
        name,
        signature,
        slot: u32_at(head, 0),
    };
    Ok((view, end))
}

/// The import section of a file: validated by [`ImportTable::parse`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportTable<'a> {
    records: &'a [u8],
    count: u32,
}

impl<'a> ImportTable<'a> {
    /// Parses the section `bytes` of a program with `data_len` data bytes: every record
    /// well formed, names unique, entries 8-aligned inside data, nothing after the last.
    pub fn parse(bytes: &'a [u8], data_len: usize) -> Result<ImportTable<'a>, FormatError> {
        if bytes.len() < 4 {
            return Err(bad(0, ImportProblem::Length));
        }
        let count = u32_at(bytes, 0);
        let table = ImportTable {
            records: sub(bytes, 4, bytes.len()),
            count,
        };
        let mut rest = table.records;
        for index in 0..count as usize {
            let (import, used) = decode(index, rest)?;
            let slot = import.slot as usize;
            if !slot.is_multiple_of(IMPORT_ENTRY_BYTES as usize)
                || slot.saturating_add(IMPORT_ENTRY_BYTES as usize) > data_len
            {
                return Err(bad(index, ImportProblem::Slot));
            }
            if table.iter().take(index).any(|i| i.name == import.name) {
                return Err(bad(index, ImportProblem::Duplicate));
            }
            rest = sub(rest, used, rest.len());
        }
        if !rest.is_empty() {
            return Err(bad(count as usize, ImportProblem::Length));
        }
        Ok(table)
    }

    /// Number of imports.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the program imports nothing.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The imports, in file order.
    pub fn iter(&self) -> impl Iterator<Item = ImportView<'a>> + 'a {
        let mut rest = self.records;
        (0..self.count as usize).map_while(move |index| {
            let (import, used) = decode(index, rest).ok()?;
            rest = sub(rest, used, rest.len());
            Some(import)
        })
    }
}

#[cfg(feature = "alloc")]
pub use owned::{encode_section, Import};

#[cfg(feature = "alloc")]
mod owned {
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::*;

    /// One import of an in-memory [`crate::Program`].
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Import {
        /// The function's name (a C identifier).
        pub name: String,
        /// Its signature, e.g. `"f(i)"`.
        pub signature: String,
        /// Data offset of its 8-byte entry in the import table.
        pub slot: u32,
    }

    impl Import {
        /// Checks name and signature (lengths included: each fits a byte).
        pub fn check(&self, index: usize) -> Result<(), FormatError> {
            if !is_c_identifier(self.name.as_bytes()) || self.name.len() > 255 {
                return Err(bad(index, ImportProblem::Name));
            }
            if !is_signature(self.signature.as_bytes()) {
                return Err(bad(index, ImportProblem::Signature));
            }
            Ok(())
        }
    }

    /// The section's bytes (for imports that passed [`Import::check`]).
    pub fn encode_section(imports: &[Import]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(imports.len() as u32).to_le_bytes());
        for i in imports {
            out.extend_from_slice(&i.slot.to_le_bytes());
            out.push(i.name.len() as u8);
            out.push(i.signature.len() as u8);
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(i.name.as_bytes());
            out.extend_from_slice(i.signature.as_bytes());
        }
        out
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn signatures_and_names() {
        for ok in [
            "f()",
            "v(ffff)",
            "b(iiii)",
            "i(fbfi)",
            "f(ffffiiib)",
            "v(F)",
            "i(FI)",
            "f(ffffFii)",
            "v(iIi)",
        ] {
            assert!(is_signature(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "", "f", "f(", "x()", "f(v)", "f(fffff)", "v(iiiii)", "f(i))", "(f)", "F()", "v(FFi)",
            "v(FIF)", "v(iiiF)", "v(B)",
        ] {
            assert!(!is_signature(bad.as_bytes()), "{bad}");
        }
        for ok in ["adc_read", "_x", "a1"] {
            assert!(is_c_identifier(ok.as_bytes()));
        }
        for bad in ["", "1a", "a-b", "a b", "é"] {
            assert!(!is_c_identifier(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn section_round_trip_and_refusals() {
        let imports = vec![
            Import {
                name: "adc".to_string(),
                signature: "f(i)".to_string(),
                slot: 8,
            },
            Import {
                name: "pwm".to_string(),
                signature: "v(f)".to_string(),
                slot: 16,
            },
        ];
        let bytes = encode_section(&imports);
        let t = ImportTable::parse(&bytes, 24).unwrap();
        let got: vec::Vec<_> = t
            .iter()
            .map(|i| (i.name_str(), i.signature_str(), i.slot))
            .collect();
        assert_eq!(got, [("adc", "f(i)", 8), ("pwm", "v(f)", 16)]);
        let problem = |b: &[u8], data: usize| match ImportTable::parse(b, data) {
            Err(FormatError::BadImport { problem, .. }) => problem,
            other => panic!("{other:?}"),
        };
        assert_eq!(problem(&bytes, 20), ImportProblem::Slot);
        assert_eq!(
            problem(&bytes[..bytes.len() - 1], 24),
            ImportProblem::Length
        );
        let mut extra = bytes.clone();
        extra.push(0);
        assert_eq!(problem(&extra, 24), ImportProblem::Length);
        let mut dup = imports.clone();
        dup[1].name = "adc".to_string();
        assert_eq!(problem(&encode_section(&dup), 24), ImportProblem::Duplicate);
        let mut b = bytes.clone();
        b[4 + 8] = b'1'; // first name byte
        assert_eq!(problem(&b, 24), ImportProblem::Name);
        let mut b = bytes.clone();
        b[4 + 8 + 3] = b'q'; // first signature byte
        assert_eq!(problem(&b, 24), ImportProblem::Signature);
        let mut b = bytes.clone();
        b[4] = 9; // misaligned slot
        assert_eq!(problem(&b, 24), ImportProblem::Slot);
    }
}
