//! Zero-copy, allocation-free reading of program files (what a `no_std` runner uses).

use crate::bounds::BOUNDS_BYTES;
use crate::compact::{self, CompactPatches, Stream};
use crate::compact_file;
use crate::format::version_accepted;
use crate::format::{
    check_align, check_layout, sub, u16_at, u32_at, version_for, Crc32, Section, SymbolSlots,
    BOUNDS_VERSION, CHECKSUM_AT, HEADER_BYTES, MAGIC, MAX_RANK, OLDEST_VERSION, PATCH_RECORD_BYTES,
    SYMBOL_RECORD_BYTES, VERSION,
};
use crate::format::{is_compact_file, COMPACT_FILE_VERSION, PAIRED_FILE_VERSION};
use crate::names::{check_name, NameExcerpt, NameProblem};
use crate::placement::{PlacementProblem, PLACEMENT_BYTES, PRELINKED_VERSION};
use crate::{Arch, Base, ElementType, Encoding, FormatError, InstructionBounds, Patch, Role};

/// A validated program file, borrowing its sections from the file bytes.
///
/// [`ProgramView::parse`] checks everything a runner relies on — header, sizes,
/// checksum, record contents, and that every patch, symbol and the entry lie inside
/// their buffers — so iterating afterwards cannot fail.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use copapy_program::{Arch, Program, ProgramView};
/// let p = Program::new(Arch::X86_64, vec![0xC3], vec![0; 4], vec![], 0);
/// let bytes = p.encode();
/// let view = ProgramView::parse(&bytes).unwrap();
/// assert_eq!(view.code, &[0xC3]);
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ProgramView<'a> {
    /// Architecture the code is for.
    pub arch: Arch,
    /// CPU feature bits the code needs (see [`ProgramView::check_features`]).
    pub features: u32,
    /// Alignment in bytes the code buffer must have.
    pub code_align: u32,
    /// Alignment in bytes the data buffer must have.
    pub data_align: u32,
    /// Machine code (before patching).
    pub code: &'a [u8],
    /// Initial data image (its bytes, or version 9's map of non-zero words: use
    /// [`crate::DataImage::copy_to`]).
    pub data: crate::DataImage<'a>,
    /// Entry offset into code.
    pub entry: u32,
    /// The file's format version.
    pub version: u16,
    /// The patch section, or (pre-linked, version 6) the placement section.
    patches: &'a [u8],
    /// The number of patches, and how `patches` is laid out.
    patch_count: u32,
    layout: PatchLayout,
    symbols: &'a [u8],
    symbol_count: u32,
    /// The instruction-bounds section: empty before version 4.
    bounds: &'a [u8],
    /// The imported functions (version 5; empty before).
    imports: crate::ImportTable<'a>,
    /// Version 9: symbol records are compact ([`crate::compact_file`]).
    compact_symbols: bool,
    /// Version 9: the bounds and placement, read from the header.
    header_bounds: Option<InstructionBounds>,
    header_placement: Option<crate::Placement>,
}

/// What the section after the data holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PatchLayout {
    /// 16-byte patch records (versions 2 to 4).
    Records,
    /// The compact patch section (versions 5, 7 and 8).
    Compact,
    /// A pre-linked image's placement (version 6): no patches.
    Placed,
    /// Version 9: version 8's compact stream without its length field.
    Body,
}

fn decode_patch(index: usize, r: &[u8; PATCH_RECORD_BYTES]) -> Result<Patch, FormatError> {
    let encoding =
        Encoding::from_u8(r[4]).ok_or(FormatError::UnknownEncoding { index, value: r[4] })?;
    let base = Base::from_u8(r[5]).ok_or(FormatError::UnknownBase { index, value: r[5] })?;
    if r[6] != 0 || r[7] != 0 {
        return Err(FormatError::ReservedNotZero {
            section: Section::Patches,
            index,
        });
    }
    Ok(Patch {
        offset: u32_at(r, 0),
        encoding,
        base,
        target: u32_at(r, 8),
        addend: u32_at(r, 12) as i32,
    })
}

/// The patch stream of a version 9 or 10 file (a firmware build reads only version 10's).
fn body_stream(version: u16) -> Stream {
    if version == COMPACT_FILE_VERSION && cfg!(feature = "legacy") {
        Stream::Predicted
    } else {
        Stream::Paired
    }
}

/// A validated symbol record whose name is still bytes (see [`decode_symbol`]).
struct RawSymbol<'a> {
    name: &'a [u8],
    role: Role,
    ty: ElementType,
    rank: u8,
    dims: [u32; MAX_RANK],
    offsets: Offsets<'a>,
}

/// Where a symbol's element offsets are, and how they are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Offsets<'a> {
    bytes: &'a [u8],
    count: u32,
    /// Version 9's numbers (in units of `size`) instead of `u32`s.
    compact: bool,
    size: u8,
}

impl<'a> Offsets<'a> {
    fn iter(&self) -> OffsetIter<'a> {
        OffsetIter {
            rest: self.bytes,
            remaining: self.count,
            compact: self.compact,
            size: self.size,
            previous: -1,
        }
    }
}

/// The `len` bytes of `bytes` at `*at` (then past them), or the truncation error of
/// `section`.
fn take<'a>(
    bytes: &'a [u8],
    at: &mut u64,
    section: Section,
    len: u64,
) -> Result<&'a [u8], FormatError> {
    let present = (bytes.len() as u64).saturating_sub(*at);
    if present < len {
        return Err(FormatError::Truncated {
            section,
            expected: len,
            found: present,
        });
    }
    let slice = sub(bytes, *at as usize, (*at + len) as usize);
    *at += len;
    Ok(slice)
}

/// The error for symbol `index` named `name` that breaks the naming rule (out of line:
/// the excerpt copy is code a firmware runner should carry once).
#[cold]
#[inline(never)]
fn bad_name(index: usize, name: &[u8], problem: NameProblem) -> FormatError {
    FormatError::BadSymbolName {
        index,
        name: NameExcerpt::of(name),
        problem,
    }
}

/// Reads the symbol record at the start of `rest`; returns it and the record length.
fn decode_symbol(
    index: usize,
    rest: &[u8],
    compact: bool,
) -> Result<(SymbolView<'_>, usize), FormatError> {
    let (raw, used) = decode_symbol_raw(index, rest, compact)?;
    let name = core::str::from_utf8(raw.name).map_err(|e| {
        bad_name(
            index,
            raw.name,
            NameProblem::NotUtf8 {
                at: e.valid_up_to() as u8, // names were checked for length by `parse`
            },
        )
    })?;
    let sym = SymbolView {
        name,
        role: raw.role,
        ty: raw.ty,
        rank: raw.rank,
        dims: raw.dims,
        offsets: raw.offsets,
    };
    Ok((sym, used))
}

/// [`decode_symbol`] without making the name a `str` (it is checked to be UTF-8).
fn decode_symbol_raw(
    index: usize,
    rest: &[u8],
    compact: bool,
) -> Result<(RawSymbol<'_>, usize), FormatError> {
    if compact || !cfg!(feature = "legacy") {
        return decode_compact_symbol(index, rest);
    }
    let head: &[u8; SYMBOL_RECORD_BYTES] = rest
        .first_chunk()
        .ok_or(FormatError::BadSymbolTable { index })?;
    let role = Role::from_u8(head[0]).ok_or(FormatError::UnknownRole {
        index,
        value: head[0],
    })?;
    let ty = ElementType::from_u8(head[1]).ok_or(FormatError::UnknownScalarType {
        index,
        value: head[1],
    })?;
    let rank = head[2];
    if head[3] != 0 || head[6] != 0 || head[7] != 0 {
        return Err(FormatError::ReservedNotZero {
            section: Section::Symbols,
            index,
        });
    }
    if rank as usize > MAX_RANK {
        return Err(FormatError::BadRank { index, rank });
    }
    let name_len = u16_at(head, 4) as usize;
    let dims_end = SYMBOL_RECORD_BYTES + 4 * rank as usize;
    let dims_bytes = rest
        .get(SYMBOL_RECORD_BYTES..dims_end)
        .ok_or(FormatError::BadSymbolTable { index })?;
    let mut dims = [0u32; MAX_RANK];
    // The element count is bounded by the bytes left, so a huge shape is refused
    // before anything multiplies past u64.
    let mut count: u64 = 1;
    for (d, b) in dims.iter_mut().zip(dims_bytes.as_chunks::<4>().0) {
        *d = u32::from_le_bytes(*b);
        count = count.saturating_mul(*d as u64);
    }
    let name_end = dims_end + name_len;
    let name = rest
        .get(dims_end..name_end)
        .ok_or(FormatError::BadSymbolTable { index })?;
    check_name(name).map_err(|problem| bad_name(index, name, problem))?;
    let left = rest.len().saturating_sub(name_end) as u64;
    if count > left / 4 {
        return Err(FormatError::BadShape { index });
    }
    let end = name_end + 4 * count as usize;
    let sym = RawSymbol {
        name,
        role,
        ty,
        rank,
        dims,
        offsets: Offsets {
            bytes: sub(rest, name_end, end),
            count: count as u32,
            compact: false,
            size: ty.size() as u8,
        },
    };
    Ok((sym, end))
}

/// A version 9 symbol record ([`crate::compact_file`]) at the start of `rest`, checked
/// number by number (each in its shortest form, every offset a `u32`).
fn decode_compact_symbol(index: usize, rest: &[u8]) -> Result<(RawSymbol<'_>, usize), FormatError> {
    let bad = FormatError::BadSymbolTable { index };
    let head = *rest.first().ok_or(bad)?;
    let role = Role::from_u8(head & 3).ok_or(FormatError::UnknownRole {
        index,
        value: head & 3,
    })?;
    let ty = ElementType::from_u8((head >> 2) & 3).ok_or(bad)?;
    let rank = (head >> 4) & 7;
    if head & 0x80 != 0 {
        return Err(FormatError::ReservedNotZero {
            section: Section::Symbols,
            index,
        });
    }
    if rank as usize > MAX_RANK {
        return Err(FormatError::BadRank { index, rank });
    }
    let mut n = crate::compact_file::Numbers { bytes: rest, at: 1 };
    let mut dims = [0u32; MAX_RANK];
    let mut count: u64 = 1;
    for d in dims.iter_mut().take(rank as usize) {
        *d = n.next_u32(bad)?;
        count = count.saturating_mul(u64::from(*d));
    }
    let name_len = n.next(bad)? as usize;
    let name_end = n.at.saturating_add(name_len);
    let name = rest.get(n.at..name_end).ok_or(bad)?;
    check_name(name).map_err(|problem| bad_name(index, name, problem))?;
    // every element takes at least one byte
    if count > rest.len().saturating_sub(name_end) as u64 {
        return Err(FormatError::BadShape { index });
    }
    n.at = name_end;
    let size = ty.size() as i64;
    let mut previous = -1i64;
    for _ in 0..count {
        let step = n.next(bad)?;
        let unit = previous
            .checked_add(((step >> 1) as i64) ^ -((step & 1) as i64))
            .and_then(|u| u.checked_add(1))
            .ok_or(bad)?;
        // an offset is a u32 (so a unit is at most u32::MAX / size)
        if unit < 0 || unit.saturating_mul(size) > i64::from(u32::MAX) {
            return Err(bad);
        }
        previous = unit;
    }
    let sym = RawSymbol {
        name,
        role,
        ty,
        rank,
        dims,
        offsets: Offsets {
            bytes: sub(rest, name_end, n.at),
            count: count as u32,
            compact: true,
            size: size as u8,
        },
    };
    Ok((sym, n.at))
}

impl<'a> ProgramView<'a> {
    /// Parses and fully validates a program file without copying or allocating.
    ///
    /// Checks in order: magic, version, architecture byte, alignment fields, section
    /// sizes against the file length, checksum, record contents, layout (see
    /// [`FormatError`]). It does not check that the architecture and CPU features are
    /// the runner's: use [`ProgramView::check_arch`] and [`ProgramView::check_features`].
    pub fn parse(bytes: &'a [u8]) -> Result<ProgramView<'a>, FormatError> {
        Self::parse_as::<true>(bytes)
    }

    /// [`ProgramView::parse`] for pre-linked images (format version 6) only: any other
    /// version is refused ([`FormatError::NotPrelinked`]). A firmware that loads only
    /// such images links none of the patch decoding (its code is smaller).
    pub fn parse_prelinked(bytes: &'a [u8]) -> Result<ProgramView<'a>, FormatError> {
        Self::parse_as::<false>(bytes)
    }

    /// `parse`, with or without the relocatable versions (a constant, so the compiler
    /// drops the patch decoding from a build that never takes them).
    fn parse_as<const RELOCATABLE: bool>(bytes: &'a [u8]) -> Result<ProgramView<'a>, FormatError> {
        if let Some(magic) = bytes.first_chunk::<4>() {
            if *magic != MAGIC {
                return Err(FormatError::BadMagic(*magic));
            }
        }
        if bytes.len() >= 6 {
            let version = u16_at(bytes, 4);
            if !(OLDEST_VERSION..=VERSION).contains(&version) {
                return Err(FormatError::UnsupportedVersion { found: version });
            }
            // a firmware build (without `legacy`) reads the newest version only
            if version == PAIRED_FILE_VERSION
                || (cfg!(feature = "legacy") && version == COMPACT_FILE_VERSION)
            {
                return Self::parse_compact::<RELOCATABLE>(bytes, version);
            }
            if !cfg!(feature = "legacy") {
                return Err(FormatError::UnsupportedVersion { found: version });
            }
            if !RELOCATABLE && version != PRELINKED_VERSION {
                return Err(FormatError::NotPrelinked { found: version });
            }
        }
        let Some(header) = bytes.first_chunk::<HEADER_BYTES>() else {
            return Err(FormatError::Truncated {
                section: Section::Header,
                expected: HEADER_BYTES as u64,
                found: bytes.len() as u64,
            });
        };
        let arch = Arch::from_u8(header[6]).ok_or(FormatError::UnknownArch(header[6]))?;
        if header[7] != 0 {
            return Err(FormatError::ReservedNotZero {
                section: Section::Header,
                index: 0,
            });
        }
        let features = u32_at(bytes, 8);
        let code_align = u16_at(bytes, 12) as u32;
        let data_align = u16_at(bytes, 14) as u32;
        check_align(Section::Code, code_align)?;
        check_align(Section::Data, data_align)?;
        let code_len = u32_at(bytes, 16) as u64;
        let data_len = u32_at(bytes, 20) as u64;
        let patch_count = u32_at(bytes, 24) as u64;
        let symbol_count = u32_at(bytes, 28);
        let symbols_len = u32_at(bytes, 32) as u64;
        let entry = u32_at(bytes, 36);
        let stored = u32_at(bytes, CHECKSUM_AT);
        let version = u16_at(bytes, 4);
        let prelinked = !RELOCATABLE || version == PRELINKED_VERSION;
        let compact = RELOCATABLE && Stream::of_version(version).is_some();
        if prelinked && patch_count != 0 {
            return Err(FormatError::BadPlacement {
                problem: PlacementProblem::HasPatches,
            });
        }
        let bounds_len = if version >= BOUNDS_VERSION {
            BOUNDS_BYTES as u64
        } else {
            0
        };

        // Section boundaries, in u64 so no size in the header can overflow.
        let mut at = HEADER_BYTES as u64;
        let total = bytes.len() as u64;
        let mut bounds = [(0usize, 0usize); 5];
        let sizes = [
            (Section::Code, code_len),
            (Section::Data, data_len),
            if prelinked {
                (Section::Placement, PLACEMENT_BYTES as u64)
            } else {
                (Section::Patches, patch_count * PATCH_RECORD_BYTES as u64)
            },
            (Section::Symbols, symbols_len),
            (Section::Bounds, bounds_len),
        ];
        for (i, &(section, len)) in sizes.iter().enumerate() {
            let len = if compact && section == Section::Patches {
                compact::section_len(sub(bytes, at as usize, bytes.len()))?
            } else {
                len
            };
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
        // version 5: an import section, if any, runs from the bounds to the end of the file;
        // it is written only for a program with imports, so anything shorter than its
        // count, or a count of 0, is bytes after the end
        let has_imports = version >= crate::imports::IMPORTS_VERSION
            && total - at >= 4
            && u32_at(bytes, at as usize) != 0;
        let imports_at = at as usize;
        if at < total && !has_imports {
            return Err(FormatError::TrailingBytes { extra: total - at });
        }

        let mut crc = Crc32::new();
        crc.update(sub(header, 0, CHECKSUM_AT));
        crc.update(sub(bytes, HEADER_BYTES, bytes.len()));
        let computed = crc.finish();
        if computed != stored {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }

        let view = ProgramView {
            arch,
            features,
            code_align,
            data_align,
            code: sub(bytes, bounds[0].0, bounds[0].1),
            data: crate::DataImage::raw(sub(bytes, bounds[1].0, bounds[1].1)),
            entry,
            version,
            patches: sub(bytes, bounds[2].0, bounds[2].1),
            patch_count: patch_count as u32,
            layout: if prelinked {
                PatchLayout::Placed
            } else if compact {
                PatchLayout::Compact
            } else {
                PatchLayout::Records
            },
            symbols: sub(bytes, bounds[3].0, bounds[3].1),
            symbol_count,
            bounds: sub(bytes, bounds[4].0, bounds[4].1),
            imports: crate::ImportTable::default(),
            compact_symbols: false,
            header_bounds: None,
            header_placement: None,
        };
        let view = if has_imports {
            let section = sub(bytes, imports_at, bytes.len());
            ProgramView {
                imports: crate::ImportTable::parse(section, view.data.len())?,
                ..view
            }
        } else {
            view
        };

        // Record contents.
        if prelinked {
            // Checked where a program can be moved or written (the `alloc` readers). A
            // firmware loader needs no such check: it runs an image only where its own
            // buffers are (`Placement::check_buffers`), and those are aligned, inside its
            // address space and disjoint; the check would only add code.
            #[cfg(feature = "alloc")]
            crate::Placement::from_bytes(view.patches).check(
                arch,
                (view.code.len(), code_align),
                (view.data.len(), data_align),
            )?;
        } else if compact {
            CompactPatches::new(view.patches, view.patch_count, view.stream())
                .validate(view.patches)?;
        } else if RELOCATABLE {
            for (index, r) in view
                .patches
                .as_chunks::<PATCH_RECORD_BYTES>()
                .0
                .iter()
                .enumerate()
            {
                decode_patch(index, r)?;
            }
        }
        view.check_symbols()?;
        // Their contents are checked where they can be used (the `alloc` readers:
        // `Program::decode`, copapy-run, cp.load). A firmware build keeps nothing of
        // them, so its loader checks only their length and checksum: the check would
        // cost it about 140 bytes of code for numbers it never reads.
        #[cfg(feature = "alloc")]
        if bounds_len > 0 {
            InstructionBounds::from_bytes(view.bounds)?;
        }
        view.check_version_and_layout::<RELOCATABLE>(bounds_len > 0)
    }

    /// Every symbol record decodes and the records fill the section exactly, and no two
    /// share a name.
    fn check_symbols(&self) -> Result<(), FormatError> {
        let mut rest = self.symbols;
        for index in 0..self.symbol_count as usize {
            let (_, used) = decode_symbol_raw(index, rest, self.compact_symbols)?;
            rest = sub(rest, used, rest.len());
        }
        if !rest.is_empty() {
            return Err(FormatError::BadSymbolTable {
                index: self.symbol_count as usize,
            });
        }
        self.check_unique_names()
    }

    /// The version is the one the contents call for, and the entry, every patch and
    /// every symbol element lie inside their buffers.
    fn check_version_and_layout<const RELOCATABLE: bool>(
        self,
        has_bounds: bool,
    ) -> Result<ProgramView<'a>, FormatError> {
        let (found, needed) = (
            self.version,
            version_for(self.raw_symbols().map(|s| s.ty), has_bounds),
        );
        // version 9 holds every program; an older writer chose the oldest that held it
        if !is_compact_file(found) && !version_accepted(found, needed) {
            return Err(FormatError::VersionMismatch { found, needed });
        }
        let symbols = self.raw_symbols().map(|s| SymbolSlots {
            size: s.ty.size(),
            offsets: s.offsets.iter(),
        });
        let (code_len, data_len) = (self.code.len(), self.data.len());
        if RELOCATABLE {
            check_layout(code_len, data_len, self.entry, self.patches(), symbols)?;
        } else {
            check_layout(code_len, data_len, self.entry, core::iter::empty(), symbols)?;
        }
        Ok(self)
    }

    /// [`ProgramView::parse_as`] for a version 9 or 10 file ([`crate::compact_file`]).
    fn parse_compact<const RELOCATABLE: bool>(
        bytes: &'a [u8],
        version: u16,
    ) -> Result<ProgramView<'a>, FormatError> {
        let h = compact_file::parse_header(bytes, version)?;
        let prelinked = h.placement.is_some();
        if !RELOCATABLE && !prelinked {
            return Err(FormatError::NotPrelinked { found: version });
        }
        if prelinked && h.patch_count != 0 {
            return Err(compact_file::HAS_PATCHES);
        }
        let mut at = h.end as u64;
        let code = take(bytes, &mut at, Section::Code, h.code_len)?;
        let (data, used) =
            crate::DataImage::parse_mapped(sub(bytes, at as usize, bytes.len()), h.data_len, {
                (version == PAIRED_FILE_VERSION).then_some(h.half_words)
            })?;
        at += used as u64;
        let patches = if h.patch_count == 0 {
            &[]
        } else {
            let rest = sub(bytes, at as usize, bytes.len());
            let (len, used) = crate::leb128::read(rest).ok_or(FormatError::Truncated {
                section: Section::Patches,
                expected: rest.len() as u64 + 1,
                found: rest.len() as u64,
            })?;
            at += used as u64;
            take(bytes, &mut at, Section::Patches, len)?
        };
        let symbols = take(bytes, &mut at, Section::Symbols, h.symbols_len)?;
        if !h.imports && (at as usize) < bytes.len() {
            return Err(FormatError::TrailingBytes {
                extra: bytes.len() as u64 - at,
            });
        }
        let stored = u32_at(bytes, compact_file::CHECKSUM_RANGE.start);
        let computed = compact_file::checksum(bytes);
        if computed != stored {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        let mut view = ProgramView {
            arch: h.arch,
            features: h.features,
            code_align: h.code_align,
            data_align: h.data_align,
            code,
            data,
            entry: h.entry,
            version,
            patches,
            patch_count: h.patch_count,
            layout: if prelinked {
                PatchLayout::Placed
            } else {
                PatchLayout::Body
            },
            symbols,
            symbol_count: h.symbol_count,
            bounds: &[],
            imports: crate::ImportTable::default(),
            compact_symbols: true,
            header_bounds: h.bounds,
            header_placement: h.placement,
        };
        if h.imports {
            view.imports =
                crate::ImportTable::parse(sub(bytes, at as usize, bytes.len()), data.len())?;
        }
        #[cfg(feature = "alloc")]
        if let Some(placement) = h.placement {
            placement.check(
                h.arch,
                (code.len(), h.code_align),
                (data.len(), h.data_align),
            )?;
        }
        if RELOCATABLE && h.patch_count != 0 {
            CompactPatches::from_body(patches, h.patch_count, body_stream(version))
                .validate_body(patches)?;
        }
        view.check_symbols()?;
        view.check_version_and_layout::<RELOCATABLE>(true)
    }

    /// Refuses two symbols of one name: a lookup by name would silently pick one.
    fn check_unique_names(&self) -> Result<(), FormatError> {
        let names = self.raw_symbols().map(|s| s.name);
        match crate::names::duplicate(names) {
            Some((first, later, name)) => Err(bad_name(
                later,
                name,
                NameProblem::Duplicate {
                    first: first as u32,
                },
            )),
            None => Ok(()),
        }
    }

    /// The symbols with their names as bytes: what validation needs, without
    /// `core::str::from_utf8` (see [`crate::names`]).
    fn raw_symbols(&self) -> impl Iterator<Item = RawSymbol<'a>> + Clone {
        let (mut rest, compact) = (self.symbols, self.compact_symbols);
        (0..self.symbol_count as usize).map_while(move |index| {
            let (sym, used) = decode_symbol_raw(index, rest, compact).ok()?;
            rest = sub(rest, used, rest.len());
            Some(sym)
        })
    }

    /// Refuses the program unless it is for `runner`.
    ///
    /// The error's message reads e.g. "program is for aarch64 but this runner is x86_64".
    pub fn check_arch(&self, runner: Arch) -> Result<(), FormatError> {
        crate::format::check_arch(self.arch, runner)
    }

    /// Refuses the program if it needs a CPU feature bit that `runner` lacks.
    pub fn check_features(&self, runner: u32) -> Result<(), FormatError> {
        crate::format::check_features(self.features, runner)
    }

    /// The instruction bounds the file carries (version 4), or None (older versions).
    pub fn instruction_bounds(&self) -> Option<InstructionBounds> {
        if is_compact_file(self.version) {
            self.header_bounds
        } else if self.bounds.is_empty() {
            None
        } else {
            InstructionBounds::from_bytes(self.bounds).ok()
        }
    }

    /// The functions the program imports (version 5), validated by `parse`.
    pub fn imports(&self) -> crate::ImportTable<'a> {
        self.imports
    }

    /// Number of patches.
    pub fn patch_count(&self) -> usize {
        self.patch_count as usize
    }

    /// Which compact patch stream the file holds (versions 5, 7 and 8).
    fn stream(&self) -> Stream {
        Stream::of_version(self.version).unwrap_or(Stream::Plain)
    }

    /// Where a pre-linked image (version 6) must be loaded; None for a relocatable file.
    pub fn placement(&self) -> Option<crate::Placement> {
        if self.header_placement.is_some() {
            return self.header_placement;
        }
        (self.layout == PatchLayout::Placed).then(|| crate::Placement::from_bytes(self.patches))
    }

    /// The patches, in file order (none in a pre-linked image).
    pub fn patches(&self) -> PatchIter<'a> {
        if self.layout == PatchLayout::Placed {
            return PatchIter::Records([].iter());
        }
        if self.layout == PatchLayout::Body || !cfg!(feature = "legacy") {
            return PatchIter::Compact(CompactPatches::from_body(
                self.patches,
                self.patch_count,
                body_stream(self.version),
            ));
        }
        if self.layout == PatchLayout::Compact {
            return PatchIter::Compact(CompactPatches::new(
                self.patches,
                self.patch_count,
                self.stream(),
            ));
        }
        PatchIter::Records(self.patches.as_chunks::<PATCH_RECORD_BYTES>().0.iter())
    }

    /// Number of symbols.
    pub fn symbol_count(&self) -> usize {
        self.symbol_count as usize
    }

    /// The symbols, in file order.
    pub fn symbols(&self) -> SymbolIter<'a> {
        self.symbol_table().symbols()
    }

    /// The symbol called `name`, if any.
    pub fn symbol(&self, name: &str) -> Option<SymbolView<'a>> {
        self.symbol_table().symbol(name)
    }

    /// The symbol table alone, to keep after loading and look variables up in
    /// without parsing and checksumming the file again.
    pub fn symbol_table(&self) -> SymbolTable<'a> {
        SymbolTable {
            bytes: self.symbols,
            count: self.symbol_count,
            compact: self.compact_symbols,
        }
    }
}

/// The symbol table of a validated program ([`ProgramView::symbol_table`]).
///
/// A runner that keeps only the table's bytes and record count (the firmware ABI's
/// `struct copapy_program` does) rebuilds it with [`SymbolTable::from_raw_parts`].
/// Reading it never fails or panics: given bytes that were not validated, iteration
/// stops at the first record that does not decode.
#[derive(Clone, Copy, Debug)]
pub struct SymbolTable<'a> {
    bytes: &'a [u8],
    count: u32,
    /// Version 9's records ([`crate::compact_file`]) rather than the fixed ones.
    compact: bool,
}

impl<'a> SymbolTable<'a> {
    /// The table over `bytes` with `count` records, compact (version 9) or not, as
    /// [`SymbolTable::raw_parts`] gave.
    pub const fn from_raw_parts(bytes: &'a [u8], count: u32, compact: bool) -> SymbolTable<'a> {
        SymbolTable {
            bytes,
            count,
            compact,
        }
    }

    /// The table's bytes (inside the program file), its record count and whether its
    /// records are version 9's compact ones.
    pub const fn raw_parts(&self) -> (&'a [u8], u32, bool) {
        (self.bytes, self.count, self.compact)
    }

    /// The symbols, in file order.
    pub fn symbols(&self) -> SymbolIter<'a> {
        SymbolIter {
            rest: self.bytes,
            index: 0,
            count: self.count as usize,
            compact: self.compact,
        }
    }

    /// The symbol called `name`, if any.
    pub fn symbol(&self, name: &str) -> Option<SymbolView<'a>> {
        self.symbols().find(|s| s.name == name)
    }
}

/// Iterator over the patches of a [`ProgramView`]: 16-byte records (up to version 4)
/// or the compact stream (versions 5, 7, 8 and 9).
#[derive(Clone, Debug)]
// the compact decoder keeps one addend per kind (a few hundred bytes, on the stack while
// a program is placed); without an allocator there is nothing to box it in
#[allow(clippy::large_enum_variant)]
pub enum PatchIter<'a> {
    /// Fixed records.
    Records(core::slice::Iter<'a, [u8; PATCH_RECORD_BYTES]>),
    /// The compact section ([`crate::compact`]).
    Compact(CompactPatches<'a>),
}

impl Iterator for PatchIter<'_> {
    type Item = Patch;

    fn next(&mut self) -> Option<Patch> {
        // Patches were validated by `parse`, so decoding cannot fail here; one that
        // somehow did would end the iteration rather than panic.
        match self {
            PatchIter::Records(records) => decode_patch(0, records.next()?).ok(),
            PatchIter::Compact(stream) => stream.next()?.ok(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            PatchIter::Records(records) => records.size_hint(),
            PatchIter::Compact(stream) => stream.size_hint(),
        }
    }
}

/// One symbol of a [`ProgramView`], borrowing its name and offsets from the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolView<'a> {
    /// Variable name.
    pub name: &'a str,
    /// Whether the variable is an input, output or state.
    pub role: Role,
    /// Type of every element (its size in data memory: [`ElementType::size`]).
    pub ty: ElementType,
    rank: u8,
    dims: [u32; MAX_RANK],
    offsets: Offsets<'a>,
}

impl<'a> SymbolView<'a> {
    /// The dimensions (empty for a scalar).
    pub fn shape(&self) -> &[u32] {
        &self.dims[..self.rank as usize]
    }

    /// Number of elements (1 for a scalar).
    pub fn len(&self) -> usize {
        self.offsets.count as usize
    }

    /// Whether the symbol has no elements (a zero dimension).
    pub fn is_empty(&self) -> bool {
        self.offsets.count == 0
    }

    /// Data offset of every element, row-major.
    pub fn offsets(&self) -> OffsetIter<'a> {
        self.offsets.iter()
    }
}

/// Iterator over the element offsets of a [`SymbolView`].
#[derive(Clone, Debug)]
pub struct OffsetIter<'a> {
    rest: &'a [u8],
    remaining: u32,
    /// Version 9's steps in units of `size` (see [`crate::compact_file`]), or `u32`s.
    compact: bool,
    size: u8,
    /// The previous element's unit (version 9).
    previous: i64,
}

impl Iterator for OffsetIter<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        self.remaining = self.remaining.checked_sub(1)?;
        if !self.compact && cfg!(feature = "legacy") {
            let (b, rest) = self.rest.split_first_chunk::<4>()?;
            self.rest = rest;
            return Some(u32::from_le_bytes(*b));
        }
        // validated by `parse`; a step that somehow does not decode ends the iteration
        let (step, used) = crate::leb128::read(self.rest)?;
        self.rest = sub(self.rest, used, self.rest.len());
        let unit = self
            .previous
            .checked_add((((step >> 1) as i64) ^ -((step & 1) as i64)).checked_add(1)?)?;
        self.previous = unit;
        u32::try_from(unit.checked_mul(i64::from(self.size))?).ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining as usize))
    }
}

/// Iterator over the symbols of a [`ProgramView`].
#[derive(Clone, Debug)]
pub struct SymbolIter<'a> {
    rest: &'a [u8],
    index: usize,
    count: usize,
    compact: bool,
}

impl<'a> Iterator for SymbolIter<'a> {
    type Item = SymbolView<'a>;

    fn next(&mut self) -> Option<SymbolView<'a>> {
        if self.index >= self.count {
            return None;
        }
        let (sym, used) = decode_symbol(self.index, self.rest, self.compact).ok()?;
        self.rest = sub(self.rest, used, self.rest.len());
        self.index += 1;
        Some(sym)
    }
}
