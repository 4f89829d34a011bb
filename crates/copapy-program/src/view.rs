//! Zero-copy, allocation-free reading of program files (what a `no_std` runner uses).

use crate::format::{
    check_layout, u16_at, u32_at, Crc32, Section, CHECKSUM_AT, HEADER_BYTES, MAGIC,
    PATCH_RECORD_BYTES, SYMBOL_RECORD_BYTES, VERSION,
};
use crate::{Arch, Base, Encoding, FormatError, Patch, ScalarType};

/// A validated program file, borrowing its sections from the file bytes.
///
/// [`ProgramView::parse`] checks everything a runner relies on — header, sizes,
/// checksum, record contents, and that every patch, symbol and the entry lie inside
/// their buffers — so iterating afterwards cannot fail.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use copapy_program::{Arch, Program, ProgramView};
/// let p = Program { arch: Arch::X86_64, code: vec![0xC3], data: vec![0; 4],
///                   patches: vec![], entry: 0, symbols: vec![] };
/// let bytes = p.encode();
/// let view = ProgramView::parse(&bytes).unwrap();
/// assert_eq!(view.code, &[0xC3]);
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ProgramView<'a> {
    /// Architecture the code is for.
    pub arch: Arch,
    /// Machine code (before patching).
    pub code: &'a [u8],
    /// Initial data image.
    pub data: &'a [u8],
    /// Entry offset into code.
    pub entry: u32,
    patches: &'a [u8],
    symbols: &'a [u8],
    symbol_count: u32,
}

fn decode_patch(index: usize, r: &[u8]) -> Result<Patch, FormatError> {
    let encoding =
        Encoding::from_u8(r[4]).ok_or(FormatError::UnknownEncoding { index, value: r[4] })?;
    let base = Base::from_u8(r[5]).ok_or(FormatError::UnknownBase { index, value: r[5] })?;
    Ok(Patch {
        offset: u32_at(r, 0),
        encoding,
        base,
        target: u32_at(r, 8),
        addend: u32_at(r, 12) as i32,
    })
}

/// Reads the symbol record at the start of `rest`; returns it and the record length.
fn decode_symbol(index: usize, rest: &[u8]) -> Result<(SymbolView<'_>, usize), FormatError> {
    if rest.len() < SYMBOL_RECORD_BYTES {
        return Err(FormatError::BadSymbolTable { index });
    }
    let offset = u32_at(rest, 0);
    let ty = ScalarType::from_u8(rest[4]).ok_or(FormatError::UnknownScalarType {
        index,
        value: rest[4],
    })?;
    let name_len = u16_at(rest, 6) as usize;
    let end = SYMBOL_RECORD_BYTES + name_len;
    let name = rest
        .get(SYMBOL_RECORD_BYTES..end)
        .ok_or(FormatError::BadSymbolTable { index })?;
    let name = core::str::from_utf8(name).map_err(|_| FormatError::SymbolNameNotUtf8 { index })?;
    Ok((SymbolView { name, offset, ty }, end))
}

impl<'a> ProgramView<'a> {
    /// Parses and fully validates a program file without copying or allocating.
    ///
    /// Checks in order: magic, version, architecture byte, section sizes against the
    /// file length, checksum, record contents, layout (see [`FormatError`]). It does
    /// not check that the architecture is the host's: use [`ProgramView::check_arch`].
    pub fn parse(bytes: &'a [u8]) -> Result<ProgramView<'a>, FormatError> {
        if bytes.len() >= 4 && bytes[..4] != MAGIC {
            return Err(FormatError::BadMagic([
                bytes[0], bytes[1], bytes[2], bytes[3],
            ]));
        }
        if bytes.len() < HEADER_BYTES {
            return Err(FormatError::Truncated {
                section: Section::Header,
                expected: HEADER_BYTES as u64,
                found: bytes.len() as u64,
            });
        }
        let version = u16_at(bytes, 4);
        if version != VERSION {
            return Err(FormatError::UnsupportedVersion { found: version });
        }
        let arch = Arch::from_u8(bytes[6]).ok_or(FormatError::UnknownArch(bytes[6]))?;
        let code_len = u32_at(bytes, 8) as u64;
        let data_len = u32_at(bytes, 12) as u64;
        let patch_count = u32_at(bytes, 16) as u64;
        let symbol_count = u32_at(bytes, 20);
        let symbols_len = u32_at(bytes, 24) as u64;
        let entry = u32_at(bytes, 28);
        let stored = u32_at(bytes, CHECKSUM_AT);

        // Section boundaries, in u64 so no size in the header can overflow.
        let mut at = HEADER_BYTES as u64;
        let total = bytes.len() as u64;
        let mut bounds = [(0usize, 0usize); 4];
        let sizes = [
            (Section::Code, code_len),
            (Section::Data, data_len),
            (Section::Patches, patch_count * PATCH_RECORD_BYTES as u64),
            (Section::Symbols, symbols_len),
        ];
        for (i, &(section, len)) in sizes.iter().enumerate() {
            let present = total - at;
            if present < len {
                return Err(FormatError::Truncated {
                    section,
                    expected: len,
                    found: present,
                });
            }
            bounds[i] = (at as usize, (at + len) as usize);
            at += len;
        }
        if at < total {
            return Err(FormatError::TrailingBytes { extra: total - at });
        }

        let mut crc = Crc32::new();
        crc.update(&bytes[..CHECKSUM_AT]);
        crc.update(&bytes[HEADER_BYTES..]);
        let computed = crc.finish();
        if computed != stored {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }

        let view = ProgramView {
            arch,
            code: &bytes[bounds[0].0..bounds[0].1],
            data: &bytes[bounds[1].0..bounds[1].1],
            entry,
            patches: &bytes[bounds[2].0..bounds[2].1],
            symbols: &bytes[bounds[3].0..bounds[3].1],
            symbol_count,
        };

        // Record contents.
        for (index, r) in view.patches.chunks_exact(PATCH_RECORD_BYTES).enumerate() {
            decode_patch(index, r)?;
        }
        let mut rest = view.symbols;
        for index in 0..symbol_count as usize {
            let (_, used) = decode_symbol(index, rest)?;
            rest = &rest[used..];
        }
        if !rest.is_empty() {
            return Err(FormatError::BadSymbolTable {
                index: symbol_count as usize,
            });
        }

        check_layout(
            view.code.len(),
            view.data.len(),
            entry,
            view.patches(),
            view.symbols().map(|s| s.offset),
        )?;
        Ok(view)
    }

    /// Refuses the program unless it is for `runner`.
    ///
    /// The error's message reads e.g. "program is for aarch64 but this runner is x86_64".
    pub fn check_arch(&self, runner: Arch) -> Result<(), FormatError> {
        crate::format::check_arch(self.arch, runner)
    }

    /// Number of patches.
    pub fn patch_count(&self) -> usize {
        self.patches.len() / PATCH_RECORD_BYTES
    }

    /// The patches, in file order.
    pub fn patches(&self) -> PatchIter<'a> {
        PatchIter {
            records: self.patches.chunks_exact(PATCH_RECORD_BYTES),
        }
    }

    /// Number of symbols.
    pub fn symbol_count(&self) -> usize {
        self.symbol_count as usize
    }

    /// The symbols, in file order.
    pub fn symbols(&self) -> SymbolIter<'a> {
        SymbolIter {
            rest: self.symbols,
            index: 0,
            count: self.symbol_count as usize,
        }
    }
}

/// Iterator over the patches of a [`ProgramView`].
#[derive(Clone, Debug)]
pub struct PatchIter<'a> {
    records: core::slice::ChunksExact<'a, u8>,
}

impl Iterator for PatchIter<'_> {
    type Item = Patch;

    fn next(&mut self) -> Option<Patch> {
        // Records were validated by `parse`, so decoding cannot fail here; a record
        // that somehow did would end the iteration rather than panic.
        decode_patch(0, self.records.next()?).ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.records.size_hint()
    }
}

/// One symbol of a [`ProgramView`], borrowing its name from the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolView<'a> {
    /// Variable name.
    pub name: &'a str,
    /// Offset of its slot in data memory.
    pub offset: u32,
    /// Scalar type stored in the slot.
    pub ty: ScalarType,
}

/// Iterator over the symbols of a [`ProgramView`].
#[derive(Clone, Debug)]
pub struct SymbolIter<'a> {
    rest: &'a [u8],
    index: usize,
    count: usize,
}

impl<'a> Iterator for SymbolIter<'a> {
    type Item = SymbolView<'a>;

    fn next(&mut self) -> Option<SymbolView<'a>> {
        if self.index >= self.count {
            return None;
        }
        let (sym, used) = decode_symbol(self.index, self.rest).ok()?;
        self.rest = &self.rest[used..];
        self.index += 1;
        Some(sym)
    }
}
