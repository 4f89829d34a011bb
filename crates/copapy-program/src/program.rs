//! The owning program type and its encoder/decoder (feature `alloc`).

use alloc::string::String;
use alloc::vec::Vec;

use crate::bounds::BOUNDS_BYTES;
use crate::format::{
    check_align, check_layout, Crc32, Section, SymbolSlots, CHECKSUM_AT, HEADER_BYTES, MAGIC,
    MAX_RANK, PATCH_RECORD_BYTES, SYMBOL_RECORD_BYTES,
};
use crate::names::{check_name, duplicate, NameExcerpt, NameProblem};
use crate::{Arch, ElementType, FormatError, InstructionBounds, Patch, ProgramView, Role};

/// A user-visible variable: its name, role, type, shape and where its elements live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Variable name (see [`crate::names`] for what a name may be).
    pub name: String,
    /// Input, output or state.
    pub role: Role,
    /// Type of every element (4 bytes each in data memory, 1 for [`ElementType::Byte`]).
    pub ty: ElementType,
    /// Dimensions, at most [`MAX_RANK`]; empty for a scalar.
    pub shape: Vec<u32>,
    /// Data offset of every element, row-major (one for a scalar).
    pub offsets: Vec<u32>,
}

impl Symbol {
    /// A scalar variable at data offset `offset`.
    pub fn scalar(
        name: impl Into<String>,
        role: Role,
        ty: impl Into<ElementType>,
        offset: u32,
    ) -> Symbol {
        Symbol {
            name: name.into(),
            role,
            ty: ty.into(),
            shape: Vec::new(),
            offsets: alloc::vec![offset],
        }
    }

    fn record_bytes(&self) -> usize {
        SYMBOL_RECORD_BYTES + 4 * self.shape.len() + self.name.len() + 4 * self.offsets.len()
    }
}

/// A compiled program: what the compiler produces and a runner loads.
///
/// `code` is position-independent only after patching: the runner copies `code` and
/// `data` into memory and applies `patches` with the actual addresses. `entry` is
/// the code offset of the function to call. See [`crate::format`] for the file
/// format.
///
/// ```
/// use copapy_program::{Arch, Base, Encoding, Patch, Program};
/// let p = Program::new(
///     Arch::X86_64,
///     // movss xmm0, [rip + data]; ret
///     vec![0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, 0xC3],
///     1.5f32.to_le_bytes().to_vec(),
///     vec![Patch { offset: 4, encoding: Encoding::Rel32, base: Base::Data, target: 0, addend: -4 }],
///     0,
/// );
/// p.validate().unwrap();
/// assert_eq!(Program::decode(&p.encode()).unwrap(), p);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Architecture the code is for.
    pub arch: Arch,
    /// CPU feature bits the code needs (see [`crate::format::check_features`]).
    pub features: u32,
    /// Alignment in bytes the code buffer needs (power of two, at most 4096).
    pub code_align: u32,
    /// Alignment in bytes the data buffer needs (power of two, at most 4096).
    pub data_align: u32,
    /// Machine code, unpatched.
    pub code: Vec<u8>,
    /// Initial data image (variables, constants, intermediate values).
    pub data: Vec<u8>,
    /// Address fix-ups to apply to `code` once the buffers are placed.
    pub patches: Vec<Patch>,
    /// Code offset of the function to call.
    pub entry: u32,
    /// User-visible variables.
    pub symbols: Vec<Symbol>,
    /// Instructions one run executes, if the compiler bounded them (written as format
    /// version 4; None keeps the file readable by runners that predate bounds).
    pub instructions: Option<InstructionBounds>,
    /// Functions the program calls, resolved by name at load (format version 5; a
    /// program with imports always carries bounds, `Unbounded` if it had none).
    pub imports: Vec<crate::Import>,
    /// The addresses a pre-linked image's code and data were patched for (format
    /// version 6, [`crate::placement`]; it has no patches); None for a relocatable program.
    pub placement: Option<crate::Placement>,
}

fn len_u32(len: usize, section: Section) -> Result<u32, FormatError> {
    u32::try_from(len).map_err(|_| FormatError::TooLarge { section })
}

impl Program {
    /// A program with no feature requirements, 16-byte code and data alignment and no symbols.
    pub fn new(
        arch: Arch,
        code: Vec<u8>,
        data: Vec<u8>,
        patches: Vec<Patch>,
        entry: u32,
    ) -> Program {
        Program {
            arch,
            features: 0,
            code_align: 16,
            data_align: 16,
            code,
            data,
            patches,
            entry,
            symbols: Vec::new(),
            instructions: None,
            imports: Vec::new(),
            placement: None,
        }
    }

    /// Checks that the program is well formed: sizes and alignments fit the file
    /// format, the entry and every patch field lie inside code, every patch target
    /// inside its base buffer, every symbol element slot inside data and aligned.
    pub fn validate(&self) -> Result<(), FormatError> {
        len_u32(self.code.len(), Section::Code)?;
        len_u32(self.data.len(), Section::Data)?;
        len_u32(self.patches.len(), Section::Patches)?;
        len_u32(self.symbols.len(), Section::Symbols)?;
        check_align(Section::Code, self.code_align)?;
        check_align(Section::Data, self.data_align)?;
        if let Some(b) = self.instructions {
            b.check()?;
        }
        if let Some(placement) = self.placement {
            if !self.patches.is_empty() {
                return Err(FormatError::BadPlacement {
                    problem: crate::placement::PlacementProblem::HasPatches,
                });
            }
            placement.check(
                self.arch,
                (self.code.len(), self.code_align),
                (self.data.len(), self.data_align),
            )?;
        }
        for (index, i) in self.imports.iter().enumerate() {
            i.check(index)?;
        }
        let section = crate::imports::encode_section(&self.imports);
        crate::ImportTable::parse(&section, self.data.len())?;
        for (index, s) in self.symbols.iter().enumerate() {
            check_name(s.name.as_bytes()).map_err(|problem| FormatError::BadSymbolName {
                index,
                name: NameExcerpt::of(s.name.as_bytes()),
                problem,
            })?;
            if s.shape.len() > MAX_RANK {
                return Err(FormatError::BadRank {
                    index,
                    rank: s.shape.len() as u8,
                });
            }
            let count = s
                .shape
                .iter()
                .try_fold(1usize, |n, &d| n.checked_mul(d as usize));
            if count != Some(s.offsets.len()) {
                return Err(FormatError::BadShape { index });
            }
        }
        if let Some((first, later, name)) =
            duplicate(self.symbols.iter().map(|s| s.name.as_bytes()))
        {
            return Err(FormatError::BadSymbolName {
                index: later,
                name: NameExcerpt::of(name),
                problem: NameProblem::Duplicate {
                    first: first as u32,
                },
            });
        }
        len_u32(self.symbols_bytes(), Section::Symbols)?;
        check_layout(
            self.code.len(),
            self.data.len(),
            self.entry,
            self.patches.iter().copied(),
            self.symbols.iter().map(|s| SymbolSlots {
                size: s.ty.size(),
                offsets: s.offsets.iter().copied(),
            }),
        )
    }

    /// Refuses the program unless it is for `runner`.
    pub fn check_arch(&self, runner: Arch) -> Result<(), FormatError> {
        crate::format::check_arch(self.arch, runner)
    }

    /// Refuses the program if it needs a CPU feature bit that `runner` lacks.
    pub fn check_features(&self, runner: u32) -> Result<(), FormatError> {
        crate::format::check_features(self.features, runner)
    }

    /// The format version [`Program::encode`] writes: 9, which holds every program
    /// (older writers chose the oldest version that held it, see
    /// [`crate::format::version_for`]).
    pub fn format_version(&self) -> u16 {
        crate::format::PAIRED_FILE_VERSION
    }

    fn symbols_bytes(&self) -> usize {
        self.symbols.iter().map(Symbol::record_bytes).sum()
    }

    /// Encodes the program in the file format.
    ///
    /// # Panics
    ///
    /// If [`Program::validate`] would report an error; the compiler never produces
    /// such programs. Call `validate` first for programs built by hand.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_as(self.format_version())
    }

    /// Encodes the program as the copapy before format version 9 wrote it (version 2 or 3
    /// without instruction bounds, 8 with them, 6 for a pre-linked image), for a runner that
    /// predates version 9; tests edit the fixed offsets of these files.
    pub fn encode_legacy(&self) -> Vec<u8> {
        let version = if self.placement.is_some() {
            crate::placement::PRELINKED_VERSION
        } else if !self.imports.is_empty() {
            crate::format::PREDICTED_TARGETS_VERSION
        } else {
            let types = self.symbols.iter().map(|s| s.ty);
            crate::format::version_for(types, self.instructions.is_some())
        };
        self.encode_as(version)
    }

    /// Encodes the program as format `version` (the tests write version 4 files, which
    /// readers still accept, with it).
    pub(crate) fn encode_as(&self, version: u16) -> Vec<u8> {
        if crate::format::is_compact_file(version) {
            return crate::compact_file::encode(self, version);
        }
        const MSG: &str = "program does not fit the file format; see Program::validate";
        let symbols_len = self.symbols_bytes();
        let stream = crate::compact::Stream::of_version(version);
        let patch_bytes = if let Some(placement) = self.placement {
            placement.to_bytes().to_vec()
        } else if let Some(stream) = stream {
            crate::compact::encode(&self.patches, stream)
        } else {
            self.patches.iter().flat_map(patch_record).collect()
        };
        let imports = if self.imports.is_empty() {
            Vec::new()
        } else {
            crate::imports::encode_section(&self.imports)
        };
        // a version 5 file with imports and a version 6 file always have their bounds
        // section (before the imports)
        let bounds = match self.instructions {
            None if !imports.is_empty() || self.placement.is_some() => {
                Some(InstructionBounds::Unbounded)
            }
            b => b,
        };
        let total = HEADER_BYTES
            + self.code.len()
            + self.data.len()
            + patch_bytes.len()
            + symbols_len
            + bounds.map_or(0, |_| BOUNDS_BYTES)
            + imports.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.push(self.arch as u8);
        out.push(0);
        out.extend_from_slice(&self.features.to_le_bytes());
        for a in [self.code_align, self.data_align] {
            out.extend_from_slice(&u16::try_from(a).expect(MSG).to_le_bytes());
        }
        for n in [
            self.code.len(),
            self.data.len(),
            self.patches.len(),
            self.symbols.len(),
            symbols_len,
        ] {
            out.extend_from_slice(&u32::try_from(n).expect(MSG).to_le_bytes());
        }
        out.extend_from_slice(&self.entry.to_le_bytes());
        out.extend_from_slice(&[0; 4]); // checksum, filled in below
        debug_assert_eq!(out.len(), HEADER_BYTES);
        out.extend_from_slice(&self.code);
        out.extend_from_slice(&self.data);
        out.extend_from_slice(&patch_bytes);
        for s in &self.symbols {
            out.push(s.role as u8);
            out.push(s.ty as u8);
            out.push(u8::try_from(s.shape.len()).expect(MSG));
            out.push(0);
            out.extend_from_slice(&u16::try_from(s.name.len()).expect(MSG).to_le_bytes());
            out.extend_from_slice(&[0, 0]);
            for d in &s.shape {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(s.name.as_bytes());
            for o in &s.offsets {
                out.extend_from_slice(&o.to_le_bytes());
            }
        }
        if let Some(b) = bounds {
            out.extend_from_slice(&b.to_bytes());
        }
        out.extend_from_slice(&imports);
        debug_assert_eq!(out.len(), total);
        let mut crc = Crc32::new();
        crc.update(&out[..CHECKSUM_AT]);
        crc.update(&out[HEADER_BYTES..]);
        out[CHECKSUM_AT..HEADER_BYTES].copy_from_slice(&crc.finish().to_le_bytes());
        out
    }

    /// Decodes and validates a program file (see [`ProgramView::parse`] for the checks).
    pub fn decode(bytes: &[u8]) -> Result<Program, FormatError> {
        Ok(Program::from_view(&ProgramView::parse(bytes)?))
    }

    /// Copies a parsed view into an owning program.
    pub fn from_view(view: &ProgramView<'_>) -> Program {
        Program {
            arch: view.arch,
            features: view.features,
            code_align: view.code_align,
            data_align: view.data_align,
            code: view.code.to_vec(),
            data: view.data.to_vec(),
            patches: view.patches().collect(),
            entry: view.entry,
            symbols: view
                .symbols()
                .map(|s| Symbol {
                    name: s.name.into(),
                    role: s.role,
                    ty: s.ty,
                    shape: s.shape().to_vec(),
                    offsets: s.offsets().collect(),
                })
                .collect(),
            instructions: view.instruction_bounds(),
            imports: view
                .imports()
                .iter()
                .map(|i| crate::Import {
                    name: i.name_str().into(),
                    signature: i.signature_str().into(),
                    slot: i.slot,
                })
                .collect(),
            placement: view.placement(),
        }
    }
}

/// A patch as a 16-byte record (format versions 2 to 4).
fn patch_record(p: &Patch) -> [u8; PATCH_RECORD_BYTES] {
    let mut r = [0u8; PATCH_RECORD_BYTES];
    r[0..4].copy_from_slice(&p.offset.to_le_bytes());
    r[4] = p.encoding as u8;
    r[5] = p.base as u8;
    r[8..12].copy_from_slice(&p.target.to_le_bytes());
    r[12..16].copy_from_slice(&p.addend.to_le_bytes());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::BoundsProblem;
    use crate::{Base, Encoding};
    use alloc::string::ToString;
    use alloc::vec;

    fn sample() -> Program {
        Program {
            arch: Arch::X86_64,
            features: 0,
            code_align: 16,
            data_align: 4,
            code: vec![0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, 0xC3, 0x90, 0x90, 0x90],
            data: vec![0; 8],
            patches: vec![
                Patch {
                    offset: 4,
                    encoding: Encoding::Rel32,
                    base: Base::Data,
                    target: 4,
                    addend: -4,
                },
                Patch {
                    offset: 0,
                    encoding: Encoding::Abs64,
                    base: Base::Code,
                    target: 8,
                    addend: 0,
                },
            ],
            entry: 0,
            symbols: vec![
                Symbol::scalar("x", Role::Input, crate::ScalarType::Float, 0),
                Symbol {
                    name: "zähler".to_string(),
                    role: Role::State,
                    ty: ElementType::Int,
                    shape: vec![1, 2],
                    offsets: vec![4, 0],
                },
            ],
            instructions: None,
            imports: Vec::new(),
            placement: None,
        }
    }

    fn err(bytes: &[u8]) -> FormatError {
        Program::decode(bytes).expect_err("decode should fail")
    }

    /// Rewrites the checksum so that a deliberately edited header reaches the later checks.
    fn reseal(bytes: &mut [u8]) {
        let mut crc = Crc32::new();
        crc.update(&bytes[..CHECKSUM_AT]);
        crc.update(&bytes[HEADER_BYTES..]);
        let c = crc.finish();
        bytes[CHECKSUM_AT..HEADER_BYTES].copy_from_slice(&c.to_le_bytes());
    }

    #[test]
    fn round_trip() {
        let p = sample();
        p.validate().unwrap();
        let bytes = p.encode();
        assert_eq!(&bytes[..4], b"CPPY");
        assert_eq!(Program::decode(&bytes).unwrap(), p);
        let v = ProgramView::parse(&bytes).unwrap();
        assert_eq!(v.patch_count(), 2);
        assert_eq!(v.symbol_count(), 2);
        assert_eq!(v.symbols().nth(1).unwrap().name, "zähler");
    }

    #[test]
    fn crc32_reference_value() {
        let mut c = Crc32::new();
        c.update(b"123456789");
        assert_eq!(c.finish(), 0xCBF4_3926);
    }

    #[test]
    fn truncated() {
        let bytes = sample().encode_legacy();
        let e = err(&bytes[..10]);
        assert_eq!(
            e,
            FormatError::Truncated {
                section: Section::Header,
                expected: 44,
                found: 10
            }
        );
        assert_eq!(
            e.to_string(),
            "file truncated: a program header is 44 bytes, only 10 present"
        );
        let e = err(&bytes[..HEADER_BYTES + 5]);
        assert_eq!(
            e.to_string(),
            "file truncated: header says 12 code bytes, only 5 present"
        );
        let e = err(&bytes[..bytes.len() - 1]);
        assert!(
            matches!(
                e,
                FormatError::Truncated {
                    section: Section::Symbols,
                    ..
                }
            ),
            "{e}"
        );
        let e = err(&bytes[..HEADER_BYTES + 12 + 8 + 20]);
        assert_eq!(
            e.to_string(),
            "file truncated: header says 2 patches (32 bytes), only 20 bytes present"
        );
    }

    #[test]
    fn trailing_bytes() {
        let mut bytes = sample().encode();
        bytes.push(0);
        assert_eq!(err(&bytes), FormatError::TrailingBytes { extra: 1 });
    }

    #[test]
    fn bad_magic() {
        let mut bytes = sample().encode();
        bytes[0] = b'\x7f';
        let e = err(&bytes);
        assert!(matches!(e, FormatError::BadMagic(_)));
        assert!(e.to_string().starts_with("not a copapy program"), "{e}");
    }

    #[test]
    fn wrong_version() {
        let mut bytes = sample().encode();
        bytes[4] = 99;
        reseal(&mut bytes);
        let e = err(&bytes);
        assert_eq!(e, FormatError::UnsupportedVersion { found: 99 });
        assert!(e.to_string().contains("version 99 is not supported"), "{e}");
    }

    #[test]
    fn unknown_and_wrong_arch() {
        let mut bytes = sample().encode_legacy();
        bytes[6] = 200;
        assert_eq!(err(&bytes), FormatError::UnknownArch(200));
        let mut p = sample();
        p.arch = Arch::AArch64;
        let e = ProgramView::parse(&p.encode_legacy())
            .unwrap()
            .check_arch(Arch::X86_64)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "program is for aarch64 but this runner is x86_64"
        );
        assert!(sample().check_arch(Arch::X86_64).is_ok());
    }

    #[test]
    fn every_corrupted_byte_is_detected() {
        let bytes = sample().encode();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(
                Program::decode(&b).is_err(),
                "flipping byte {i} went unnoticed"
            );
        }
        let mut b = bytes.clone();
        b[HEADER_BYTES + 2] ^= 1; // a code byte
        let e = err(&b);
        assert!(matches!(e, FormatError::ChecksumMismatch { .. }));
        assert!(
            e.to_string()
                .starts_with("checksum mismatch: file corrupted"),
            "{e}"
        );
    }

    #[test]
    fn patch_field_out_of_range() {
        let mut p = sample();
        p.patches[0].offset = 10; // 4-byte field at 10 in 12 bytes of code
        let e = p.validate().unwrap_err();
        assert_eq!(
            e,
            FormatError::PatchFieldOutOfRange {
                index: 0,
                offset: 10,
                width: 4,
                code_len: 12
            }
        );
        assert!(
            e.to_string()
                .contains("extends past the end of the 12 code bytes"),
            "{e}"
        );
        // The same check applies when decoding a file.
        assert_eq!(err(&p.encode()), e);
        p.patches[0].offset = u32::MAX;
        assert!(p.validate().is_err());
        let mut p = sample();
        p.patches[1].offset = 5; // 8-byte field
        assert!(matches!(
            p.validate(),
            Err(FormatError::PatchFieldOutOfRange { index: 1, .. })
        ));
    }

    #[test]
    fn patch_target_out_of_range() {
        let mut p = sample();
        p.patches[0].target = 8;
        let e = p.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "patch 0 out of range: target data offset 8 is outside the 8-byte data buffer"
        );
        assert_eq!(err(&p.encode()), e);
        let mut p = sample();
        p.patches[1].target = 12;
        assert!(matches!(
            p.validate(),
            Err(FormatError::PatchTargetOutOfRange {
                index: 1,
                base: Base::Code,
                ..
            })
        ));
    }

    #[test]
    fn entry_and_symbols_out_of_range() {
        let mut p = sample();
        p.entry = 12;
        assert_eq!(
            p.validate(),
            Err(FormatError::EntryOutOfRange {
                entry: 12,
                code_len: 12
            })
        );
        let mut p = sample();
        p.symbols[1].offsets[0] = 6;
        assert_eq!(
            p.validate(),
            Err(FormatError::SymbolOutOfRange {
                index: 1,
                offset: 6,
                data_len: 8
            })
        );
        let mut q = sample();
        q.symbols[1].offsets[1] = 2;
        assert_eq!(
            q.validate(),
            Err(FormatError::SymbolMisaligned {
                index: 1,
                offset: 2
            })
        );
        assert_eq!(err(&q.encode_legacy()), q.validate().unwrap_err());
        assert!(err(&p.encode_legacy())
            .to_string()
            .starts_with("symbol 1 out of range"));
    }

    #[test]
    fn bad_records() {
        let bytes = sample().encode_legacy();
        let patches_at = HEADER_BYTES + 12 + 8;
        let mut b = bytes.clone();
        // one past the last encoding, and zero, are not encodings
        for bad in [Encoding::ALL.len() as u8 + 1, 0] {
            b[patches_at + 4] = bad;
            reseal(&mut b);
            assert_eq!(
                err(&b),
                FormatError::UnknownEncoding {
                    index: 0,
                    value: bad
                }
            );
        }
        let mut b = bytes.clone();
        b[patches_at + PATCH_RECORD_BYTES + 5] = 9;
        reseal(&mut b);
        assert_eq!(err(&b), FormatError::UnknownBase { index: 1, value: 9 });
        let symbols_at = patches_at + 2 * PATCH_RECORD_BYTES;
        let mut b = bytes.clone();
        b[symbols_at + 1] = 5;
        reseal(&mut b);
        assert_eq!(
            err(&b),
            FormatError::UnknownScalarType { index: 0, value: 5 }
        );
        let mut b = bytes.clone();
        b[symbols_at] = 3;
        reseal(&mut b);
        assert_eq!(err(&b), FormatError::UnknownRole { index: 0, value: 3 });
        let mut b = bytes.clone();
        b[symbols_at + 2] = 5;
        reseal(&mut b);
        assert_eq!(err(&b), FormatError::BadRank { index: 0, rank: 5 });
        // symbol 1's shape [1, 2] claims 2^32-ish elements
        let second = symbols_at + SYMBOL_RECORD_BYTES + 1 + 4;
        let mut b = bytes.clone();
        b[second + SYMBOL_RECORD_BYTES..second + SYMBOL_RECORD_BYTES + 4]
            .copy_from_slice(&u32::MAX.to_le_bytes());
        reseal(&mut b);
        assert_eq!(err(&b), FormatError::BadShape { index: 1 });
        let mut b = bytes.clone();
        b[symbols_at + 4] = 200; // name length runs past the section
        reseal(&mut b);
        assert_eq!(err(&b), FormatError::BadSymbolTable { index: 0 });
        let mut b = bytes.clone();
        b[symbols_at + 8] = 0xFF; // invalid UTF-8
        reseal(&mut b);
        assert!(matches!(
            err(&b),
            FormatError::BadSymbolName {
                index: 0,
                problem: NameProblem::NotUtf8 { at: 0 },
                ..
            }
        ));
    }

    #[test]
    fn features_and_alignment() {
        let mut p = sample();
        p.features = 0b101;
        let bytes = p.encode_legacy();
        let v = ProgramView::parse(&bytes).unwrap();
        assert_eq!(v.features, 0b101);
        assert_eq!((v.code_align, v.data_align), (16, 4));
        assert!(v.check_features(0b111).is_ok());
        let e = v.check_features(0b001).unwrap_err();
        assert_eq!(
            e,
            FormatError::MissingFeatures {
                needed: 0b101,
                available: 0b001
            }
        );
        assert!(e.to_string().contains("missing armv6)"), "{e}");
        let e = FormatError::MissingFeatures {
            needed: 0x8000_0008,
            available: 0,
        };
        assert!(e.to_string().contains("missing armv7+0x80000000)"), "{e}");
        let mut p = sample();
        p.code_align = 24;
        assert_eq!(
            p.validate(),
            Err(FormatError::BadAlignment {
                section: Section::Code,
                align: 24
            })
        );
        let mut b = sample().encode_legacy();
        b[14] = 0; // data alignment 0
        reseal(&mut b);
        assert_eq!(
            err(&b),
            FormatError::BadAlignment {
                section: Section::Data,
                align: 0
            }
        );
    }

    #[test]
    fn shapes_must_match_offsets() {
        let mut p = sample();
        p.symbols[1].shape = vec![3];
        assert_eq!(p.validate(), Err(FormatError::BadShape { index: 1 }));
        p.symbols[1].shape = vec![1; 5];
        assert!(matches!(
            p.validate(),
            Err(FormatError::BadRank { index: 1, rank: 5 })
        ));
        let v_bytes = sample().encode();
        let v = ProgramView::parse(&v_bytes).unwrap();
        let z = v.symbol("zähler").unwrap();
        assert_eq!(z.shape(), &[1, 2]);
        assert_eq!(z.offsets().collect::<Vec<_>>(), vec![4, 0]);
        assert_eq!(z.role, Role::State);
        assert!(v.symbol("nope").is_none());
    }

    /// `sample` with its first symbol renamed (encoded without `validate`, as a
    /// hand-made or damaged file would be).
    fn renamed(name: &str) -> Vec<u8> {
        let mut p = sample();
        p.symbols[0].name = name.to_string();
        p.encode()
    }

    #[test]
    fn readers_refuse_names_writers_never_write() {
        for (name, problem) in [
            ("", NameProblem::Empty),
            ("a b", NameProblem::Forbidden { ch: ' ', at: 1 }),
            ("x\nok y", NameProblem::Forbidden { ch: '\n', at: 1 }),
            ("k=v", NameProblem::Forbidden { ch: '=', at: 1 }),
            ("x:float", NameProblem::Forbidden { ch: ':', at: 1 }),
            ("a,b", NameProblem::Forbidden { ch: ',', at: 1 }),
            (
                "\u{1b}[2J",
                NameProblem::Forbidden {
                    ch: '\u{1b}',
                    at: 0,
                },
            ),
            ("zähler", NameProblem::Duplicate { first: 1 }),
        ] {
            let mut p = sample();
            p.symbols[0].name = name.to_string();
            let (index, problem) = match problem {
                // the later of the two carries the error
                NameProblem::Duplicate { .. } => (1, NameProblem::Duplicate { first: 0 }),
                other => (0, other),
            };
            let want = FormatError::BadSymbolName {
                index,
                name: NameExcerpt::of(name.as_bytes()),
                problem,
            };
            assert_eq!(p.validate(), Err(want), "{name:?}");
            assert_eq!(err(&renamed(name)), want, "{name:?}");
            assert!(matches!(
                ProgramView::parse(&renamed(name)),
                Err(e) if e == want
            ));
        }
        let long = "n".repeat(256);
        assert!(matches!(
            err(&renamed(&long)),
            FormatError::BadSymbolName {
                index: 0,
                problem: NameProblem::TooLong { len: 256 },
                ..
            }
        ));
        assert_eq!(
            Program::decode(&renamed(&"n".repeat(255))).unwrap().symbols[0]
                .name
                .len(),
            255
        );
    }

    #[test]
    fn name_errors_quote_the_name_escaped_and_say_what_is_allowed() {
        let e = err(&renamed("x\nok y")).to_string();
        assert_eq!(
            e,
            "symbol 0 has the name \"x\\nok y\", which has the control character '\\n' \
             (U+000A) at byte 1: a name is 1 to 255 bytes of UTF-8 without whitespace, control \
             characters, '=', ':' or ',', unique within its program; the file is damaged or \
             was not written by copapy"
        );
        assert!(!e.contains('\n'));
        let e = err(&renamed("zähler")).to_string();
        assert!(
            e.starts_with("symbol 1 has the name \"zähler\", which is also the name of symbol 0:"),
            "{e}"
        );
    }

    /// `sample` with a byte variable of 3 elements at unaligned data offsets 5..8.
    fn with_bytes() -> Program {
        let mut p = sample();
        p.symbols.push(Symbol {
            name: "b".to_string(),
            role: Role::Input,
            ty: ElementType::Byte,
            shape: vec![3],
            offsets: vec![5, 6, 7],
        });
        p
    }

    #[test]
    fn byte_symbols_need_version_3_and_nothing_else_does() {
        // written as version 10 now; older writers chose 2 or 3, which is still checked
        assert_eq!(sample().format_version(), 10);
        let bytes = sample().encode_legacy();
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 2);
        let p = with_bytes();
        p.validate().unwrap();
        let bytes = p.encode_legacy();
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 3);
        let back = Program::decode(&bytes).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.encode_legacy(), bytes);
        let view = ProgramView::parse(&bytes).unwrap();
        let b = view.symbol("b").unwrap();
        assert_eq!(
            (b.ty, b.ty.size(), b.ty.name()),
            (ElementType::Byte, 1, "byte")
        );
        assert_eq!(b.offsets().collect::<Vec<_>>(), vec![5, 6, 7]);

        // a byte variable in a version 2 file, a version 3 file without one
        let mut old = bytes.clone();
        old[4] = 2;
        reseal(&mut old);
        let e = err(&old);
        assert_eq!(
            e,
            FormatError::VersionMismatch {
                found: 2,
                needed: 3
            }
        );
        assert!(
            e.to_string()
                .contains("has a byte variable, which needs version 3"),
            "{e}"
        );
        let mut new = sample().encode_legacy();
        new[4] = 3;
        reseal(&mut new);
        let e = err(&new);
        assert_eq!(
            e,
            FormatError::VersionMismatch {
                found: 3,
                needed: 2
            }
        );
        assert!(
            e.to_string().contains("uses nothing beyond version 2"),
            "{e}"
        );
        for v in [1u8, 11] {
            let mut b = bytes.clone();
            b[4] = v;
            reseal(&mut b);
            let e = err(&b);
            assert_eq!(e, FormatError::UnsupportedVersion { found: v.into() });
            assert!(e.to_string().contains("reads versions 2 to 10"), "{e}");
        }
    }

    #[test]
    fn byte_symbols_are_checked_against_the_data_byte_by_byte() {
        let mut p = with_bytes();
        p.symbols[2].offsets[2] = 8; // one past the 8 data bytes
        let e = p.validate().unwrap_err();
        assert_eq!(
            e,
            FormatError::SymbolOutOfRange {
                index: 2,
                offset: 8,
                data_len: 8
            }
        );
        assert_eq!(err(&p.encode_legacy()), e);
        // a 4-byte element at an odd offset is still refused
        let mut p = with_bytes();
        p.symbols[0].offsets[0] = 3;
        assert_eq!(
            p.validate(),
            Err(FormatError::SymbolMisaligned {
                index: 0,
                offset: 3
            })
        );
        // the type byte: 3 is byte, 4 is nothing
        let bytes = with_bytes().encode_legacy();
        let every_flip_detected = (0..bytes.len()).all(|i| {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            Program::decode(&b).is_err()
        });
        assert!(every_flip_detected);
        let symbols_at = bytes.len() - (SYMBOL_RECORD_BYTES + 4 + 1 + 3 * 4);
        assert_eq!(bytes[symbols_at + 1], ElementType::Byte as u8);
        let mut b = bytes.clone();
        b[symbols_at + 1] = 4;
        reseal(&mut b);
        assert_eq!(
            err(&b),
            FormatError::UnknownScalarType { index: 2, value: 4 }
        );
        // turned into an int variable, its odd offsets are misaligned (and the file
        // would be version 2): the first error met is the version
        let mut b = bytes.clone();
        b[symbols_at + 1] = ElementType::Int as u8;
        reseal(&mut b);
        assert_eq!(
            err(&b),
            FormatError::VersionMismatch {
                found: 3,
                needed: 2
            }
        );
    }

    fn bounded(p: Program, fewest: u64, most: u64) -> Program {
        Program {
            instructions: Some(InstructionBounds::Known { fewest, most }),
            ..p
        }
    }

    #[test]
    fn instruction_bounds_make_version_9_and_round_trip() {
        for p in [
            bounded(sample(), 40, 40),
            bounded(with_bytes(), 7, 1 << 40),
            Program {
                instructions: Some(InstructionBounds::Unbounded),
                ..sample()
            },
        ] {
            p.validate().unwrap();
            assert_eq!(p.format_version(), 10);
            let bytes = p.encode();
            assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 10);
            // the same program in version 4 (16-byte patch records), 5 (compact patches
            // without implied targets), 7 (implied targets of adjacent pairs) and 8 (44-byte
            // header) still reads
            for old in [4, 5, 7, 8] {
                let file = p.encode_as(old);
                assert_eq!(u16::from_le_bytes([file[4], file[5]]), old);
                assert_eq!(Program::decode(&file).unwrap(), p);
            }
            let (v4, v8) = (p.encode_as(4), p.encode_as(8));
            let compact =
                crate::compact::encode(&p.patches, crate::compact::Stream::Predicted).len();
            assert_eq!(v4.len() - v8.len(), p.patches.len() * 16 - compact);
            assert!(
                bytes.len() + 50 < v8.len(),
                "{} against {}",
                bytes.len(),
                v8.len()
            );
            let back = Program::decode(&bytes).unwrap();
            assert_eq!(back, p);
            assert_eq!(back.encode(), bytes);
            let view = ProgramView::parse(&bytes).unwrap();
            assert_eq!(view.instruction_bounds(), p.instructions);
            // the checksum covers the bounds: any flipped bit is refused
            for i in 0..bytes.len() {
                let mut b = bytes.clone();
                b[i] ^= 0x04;
                assert!(
                    Program::decode(&b).is_err(),
                    "flipping byte {i} went unnoticed"
                );
            }
        }
    }

    #[test]
    fn files_without_bounds_stay_version_2_and_3() {
        // what runners before version 4 read, byte for byte as they were written
        for (p, version) in [(sample(), 2u16), (with_bytes(), 3)] {
            let bytes = p.encode_legacy();
            assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), version);
            let back = Program::decode(&bytes).unwrap();
            assert_eq!(back.instructions, None);
            assert_eq!(
                ProgramView::parse(&bytes).unwrap().instruction_bounds(),
                None
            );
            assert_eq!(back.encode_legacy(), bytes);
        }
        // relabelling a version 4 file as 3 (or the reverse) leaves the sections wrong
        let mut b = bounded(with_bytes(), 1, 2).encode_as(4);
        b[4] = 3;
        reseal(&mut b);
        assert_eq!(err(&b), FormatError::TrailingBytes { extra: 20 });
        // and so does relabelling a version 5 file (compact patches) as 3 or 4
        for v in [3, 4] {
            let mut b = bounded(with_bytes(), 1, 2).encode_legacy();
            b[4] = v;
            reseal(&mut b);
            assert!(Program::decode(&b).is_err(), "version 5 relabelled {v}");
        }
        let mut b = with_bytes().encode_legacy();
        b[4] = 4;
        reseal(&mut b);
        assert!(matches!(
            err(&b),
            FormatError::Truncated {
                section: Section::Bounds,
                expected: 20,
                ..
            }
        ));
    }

    #[test]
    fn malformed_bounds_are_refused() {
        let p = bounded(sample(), 41, 40);
        let e = p.validate().unwrap_err();
        assert_eq!(
            e,
            FormatError::BadInstructionBounds {
                problem: BoundsProblem::FewestAboveMost
            }
        );
        assert_eq!(err(&p.encode_as(8)), e);
        assert_eq!(
            e.to_string(),
            "program file's instruction bounds say more instructions at fewest than at most: \
             the file is damaged or was not written by copapy"
        );
        let bytes = bounded(sample(), 0, 0).encode_as(8);
        let at = bytes.len() - BOUNDS_BYTES;
        let mut b = bytes.clone();
        b[at] = 1; // unbounded, yet with counts
        b[at + 4] = 9;
        reseal(&mut b);
        assert_eq!(
            err(&b),
            FormatError::BadInstructionBounds {
                problem: BoundsProblem::CountsWhenUnbounded
            }
        );
        let mut b = bytes.clone();
        b[at + 3] = 0x80; // an unknown flag
        reseal(&mut b);
        assert_eq!(
            err(&b),
            FormatError::BadInstructionBounds {
                problem: BoundsProblem::UnknownFlags
            }
        );
    }

    fn prelinked() -> Program {
        Program {
            patches: Vec::new(),
            placement: Some(crate::Placement {
                code: 0x2000_0000,
                data: 0x2002_0000,
            }),
            instructions: Some(InstructionBounds::Known { fewest: 3, most: 9 }),
            ..with_bytes()
        }
    }

    #[test]
    fn prelinked_images_of_version_6_round_trip_and_carry_no_patches() {
        let p = prelinked();
        p.validate().unwrap();
        assert_eq!(p.format_version(), 10);
        let bytes = p.encode_as(6);
        // header, code, data, placement, symbols, bounds: nothing else
        let symbols = p.symbols_bytes();
        assert_eq!(
            bytes.len(),
            HEADER_BYTES + p.code.len() + p.data.len() + 16 + symbols + BOUNDS_BYTES
        );
        let back = Program::decode(&bytes).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.encode_as(6), bytes);
        let view = ProgramView::parse(&bytes).unwrap();
        assert_eq!(view.placement(), p.placement);
        assert_eq!(view.patches().count(), 0);
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x02;
            assert!(
                Program::decode(&b).is_err(),
                "flipping byte {i} went unnoticed"
            );
        }
        // patches in a pre-linked image, a misaligned or overlapping placement
        let with_patches = Program {
            patches: sample().patches,
            ..prelinked()
        };
        let has = FormatError::BadPlacement {
            problem: crate::placement::PlacementProblem::HasPatches,
        };
        assert_eq!(with_patches.validate(), Err(has));
        let mut b = bytes.clone();
        b[24] = 1; // patch count
        reseal(&mut b);
        assert_eq!(err(&b), has);
        let at = HEADER_BYTES + p.code.len() + p.data.len();
        let mut b = bytes.clone();
        b[at] = 1; // code base 0x20000001: not 16-aligned
        reseal(&mut b);
        assert!(matches!(err(&b), FormatError::BadPlacement { .. }));
        assert!(err(&b).to_string().contains("not aligned"), "{}", err(&b));
        // a relocatable runner's reader (version 5 at most) names the version
        let mut b = bytes.clone();
        b[4] = 5;
        reseal(&mut b);
        assert!(Program::decode(&b).is_err());
    }

    /// Versions 9 and 10 ([`crate::compact_file`]): every program round-trips to the same
    /// bytes, and every flipped bit, cut, byte added at the end or number written longer
    /// than its shortest form is refused.
    #[test]
    fn version_9_and_10_files_are_canonical_and_every_damage_is_refused() {
        let relocatable = bounded(with_bytes(), 7, 1 << 40);
        let unbounded = Program {
            instructions: Some(InstructionBounds::Unbounded),
            ..sample()
        };
        let no_patches = Program {
            patches: Vec::new(),
            ..bounded(sample(), 1, 1)
        };
        let programs = [relocatable, unbounded, prelinked(), no_patches];
        for (p, version) in programs.iter().flat_map(|p| [(p, 9), (p, 10)]) {
            p.validate().unwrap();
            let bytes = p.encode_as(version);
            assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), version);
            let back = Program::decode(&bytes).unwrap();
            assert_eq!(&back, p);
            assert_eq!(back.encode_as(version), bytes);
            if version == 10 {
                assert!(bytes.len() < p.encode_as(9).len(), "version 10 is shorter");
            }
            // the same program in the 44-byte-header versions is larger
            let old = p.encode_as(if p.placement.is_some() { 6 } else { 8 });
            assert_eq!(&Program::decode(&old).unwrap(), p);
            assert!(
                bytes.len() + 40 < old.len(),
                "{} against {}",
                bytes.len(),
                old.len()
            );
            for i in 0..bytes.len() {
                for bit in [0x01, 0x10, 0x80] {
                    let mut b = bytes.clone();
                    b[i] ^= bit;
                    assert!(Program::decode(&b).is_err(), "flip {bit:#x} at {i}");
                }
            }
            for cut in 0..bytes.len() {
                assert!(Program::decode(&bytes[..cut]).is_err(), "cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            let crc = crate::compact_file::checksum(&longer);
            longer[6..10].copy_from_slice(&crc.to_le_bytes());
            assert!(matches!(
                Program::decode(&longer),
                Err(FormatError::TrailingBytes { extra: 1 })
            ));
            // each header number one byte longer (a zero group on top) is refused
            let mut at = if version == 10 {
                crate::compact_file::PAIRED_FIXED_BYTES
            } else {
                crate::compact_file::FIXED_BYTES
            };
            let numbers =
                6 + 2 + usize::from(p.instructions != Some(InstructionBounds::Unbounded)) * 2;
            for _ in 0..numbers - usize::from(p.placement.is_none()) {
                let (_, used) = crate::leb128::read(&bytes[at..]).unwrap();
                let mut b = bytes[..at + used].to_vec();
                *b.last_mut().unwrap() |= 0x80;
                b.push(0);
                b.extend_from_slice(&bytes[at + used..]);
                let crc = crate::compact_file::checksum(&b);
                b[6..10].copy_from_slice(&crc.to_le_bytes());
                assert!(Program::decode(&b).is_err(), "number at {at} lengthened");
                at += used;
            }
        }
    }

    #[test]
    fn huge_sizes_in_header_do_not_overflow() {
        let mut b = sample().encode_legacy();
        for at in [16, 20, 24, 32] {
            b[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        }
        reseal(&mut b);
        assert!(matches!(
            err(&b),
            FormatError::Truncated {
                section: Section::Code,
                ..
            }
        ));
    }
}
