//! The C ABI's refusals and lookups, called as C would call them: NULL pointers, a
//! zeroed or edited `struct copapy_program`, overlapping buffers, and symbol lookups
//! that work from the table recorded at load without the rest of the file.

mod common;

use core::ffi::{c_char, CStr};
use core::ptr::{null, null_mut};

use common::{load_into, program, Region, COUNTER, PAGE};
use copapy_firmware::{
    copapy_error_message, copapy_load, copapy_run, copapy_symbol, copapy_symbol_at, CopapyProgram,
};

const BAD_ARGUMENT: i32 = -1;
const NO_SYMBOL: i32 = -17;
const OVERLAP: i32 = -18;
const NOT_LOADED: i32 = -19;

fn zeroed() -> CopapyProgram {
    // SAFETY: every field is an integer or a raw pointer, for which zero is valid.
    unsafe { core::mem::zeroed() }
}

fn message(code: i32) -> &'static str {
    // SAFETY: copapy_error_message returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(copapy_error_message(code)) }
        .to_str()
        .unwrap()
}

/// Loads `file` into a fresh region; returns the region and the filled struct.
fn load(file: &[u8]) -> (Region, CopapyProgram) {
    let region = Region::new();
    let mut p = zeroed();
    let r = load_into(file, &region, &mut p);
    assert_eq!(r, 0, "{}", message(r));
    region.seal();
    (region, p)
}

fn symbol(p: *const CopapyProgram, name: &CStr, index: u32) -> (i32, u32, u8) {
    let (mut offset, mut dtype) = (u32::MAX, u8::MAX);
    // SAFETY: valid or null pointers, as the ABI allows.
    let n = unsafe { copapy_symbol(p, name.as_ptr(), index, &mut offset, &mut dtype) };
    (n, offset, dtype)
}

#[test]
fn null_pointers_are_refused_and_nothing_is_written() {
    let file = program().encode();
    let region = Region::new();
    let (f, c, d) = (file.as_ptr(), region.code(), region.data());
    let mut p = zeroed();
    let out: *mut CopapyProgram = &mut p;
    let cases: [(*const u8, *mut u8, *mut u8, *mut CopapyProgram); 4] = [
        (null(), c, d, out),
        (f, null_mut(), d, out),
        (f, c, null_mut(), out),
        (f, c, d, null_mut()),
    ];
    for (file_ptr, code, data, out) in cases {
        // SAFETY: non-null pointers are valid; the null ones are what is tested.
        let r = unsafe { copapy_load(file_ptr, file.len(), code, PAGE, data, PAGE, out) };
        assert_eq!(r, BAD_ARGUMENT);
    }
    assert_eq!(p.loaded, 0, "out untouched");
    // SAFETY: the code page was never written: its bytes are the mapping's zeros.
    assert!(unsafe { core::slice::from_raw_parts(region.code(), 16) }
        .iter()
        .all(|&b| b == 0));
    // SAFETY: null is what is tested.
    assert_eq!(unsafe { copapy_run(null()) }, BAD_ARGUMENT);
    let (n, ..) = symbol(null(), c"count", 0);
    assert_eq!(n, BAD_ARGUMENT);
    // SAFETY: null outputs are what is tested.
    let n =
        unsafe { copapy_symbol_at(null(), 0, 0, null_mut(), null_mut(), null_mut(), null_mut()) };
    assert_eq!(n, BAD_ARGUMENT);
    assert!(message(BAD_ARGUMENT).contains("null pointer"));
}

#[test]
fn a_zeroed_or_edited_program_struct_runs_nothing() {
    let p = zeroed();
    // SAFETY: a valid struct that copapy_load did not fill: what is tested.
    assert_eq!(unsafe { copapy_run(&p) }, NOT_LOADED);
    assert_eq!(symbol(&p, c"count", 0).0, NOT_LOADED);
    let file = program().encode();
    let (region, loaded) = load(&file);
    for edit in [
        |p: &mut CopapyProgram| p.entry += 1,
        |p: &mut CopapyProgram| p.code = p.code.wrapping_add(16),
        |p: &mut CopapyProgram| p.data = p.data.wrapping_add(16),
        |p: &mut CopapyProgram| p.loaded = 0,
    ] {
        let mut q = CopapyProgram { ..loaded };
        edit(&mut q);
        // SAFETY: refused before anything is called.
        assert_eq!(unsafe { copapy_run(&q) }, NOT_LOADED);
    }
    // SAFETY: data page of the region, read after the refused runs.
    let count = unsafe { region.data().cast::<i32>().read() };
    assert_eq!(count, 0, "no refused struct ran the program");
    assert!(message(NOT_LOADED).contains("copapy_load"));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_loaded_program_runs_and_its_variables_are_found() {
    let file = program().encode();
    let (region, p) = load(&file);
    for _ in 0..3 {
        // SAFETY: loaded by copapy_load into a sealed (read+execute) code page.
        assert_eq!(unsafe { copapy_run(&p) }, 0);
    }
    let (n, offset, dtype) = symbol(&p, c"count", 0);
    assert_eq!((n, offset, dtype), (1, COUNTER, 1));
    // SAFETY: inside the data page.
    assert_eq!(
        unsafe { region.data().add(offset as usize).cast::<i32>().read() },
        3
    );
}

#[test]
fn symbols_are_read_from_the_table_recorded_at_load_without_reparsing() {
    let mut file = program().encode();
    let (_region, p) = load(&file);
    // Everything but the symbol table overwritten: a lookup that parsed the file again
    // (magic, checksum) would fail now.
    let table = p.symbols as usize - file.as_ptr() as usize
        ..p.symbols as usize - file.as_ptr() as usize + p.symbols_len as usize;
    assert_eq!(table.end, file.len(), "the table ends the file");
    for (i, b) in file.iter_mut().enumerate() {
        if !table.contains(&i) {
            *b = 0xA5;
        }
    }
    assert_eq!(symbol(&p, c"gain", 0), (1, 4, 0));
    assert_eq!(symbol(&p, c"v", 2), (3, 16, 1));
    assert_eq!(symbol(&p, c"v", 3).0, NO_SYMBOL);
    assert_eq!(symbol(&p, c"nope", 0).0, NO_SYMBOL);
    assert_eq!(symbol(&p, c"", 0).0, NO_SYMBOL);
    assert_eq!(p.symbol_count, 3);
    let mut listed = Vec::new();
    for var in 0..p.symbol_count + 1 {
        let (mut offset, mut dtype, mut name, mut len) = (0u32, 0u8, null::<c_char>(), 0u32);
        // SAFETY: all outputs valid for writes.
        let n =
            unsafe { copapy_symbol_at(&p, var, 0, &mut offset, &mut dtype, &mut name, &mut len) };
        if var == p.symbol_count {
            assert_eq!(n, NO_SYMBOL);
            break;
        }
        // SAFETY: copapy_symbol_at points `name` at `len` bytes inside the file.
        let bytes = unsafe { core::slice::from_raw_parts(name.cast::<u8>(), len as usize) };
        listed.push((
            core::str::from_utf8(bytes).unwrap().to_owned(),
            n,
            offset,
            dtype,
        ));
    }
    let want = [("count", 1, 0, 1), ("gain", 1, 4, 0), ("v", 3, 8, 1)];
    assert_eq!(listed, want.map(|(s, n, o, d)| (s.to_owned(), n, o, d)));
    // SAFETY: null outputs are refused, not written.
    let n = unsafe { copapy_symbol_at(&p, 0, 0, null_mut(), null_mut(), null_mut(), null_mut()) };
    assert_eq!(n, BAD_ARGUMENT);
}

/// One buffer in an arena: its start and length.
#[derive(Clone, Copy)]
struct Place {
    at: usize,
    len: usize,
}

fn intersect(a: Place, b: Place) -> bool {
    a.at < b.at + b.len && b.at < a.at + a.len
}

/// Every placement of two buffers (non-empty, 16-byte granules so alignment is never
/// the reason) in a shared arena, the third one elsewhere: refused with OVERLAP exactly
/// when the two share a byte, and then nothing is written.
#[test]
fn overlapping_buffers_are_refused_exactly_when_they_share_a_byte() {
    let file = program().encode();
    let region = Region::new();
    let arena = region.code();
    let own = [region.data(), unsafe { region.data().add(2048) }];
    let mut checked = 0;
    for pair in 0..3 {
        for a in 0..12 {
            for alen in 1..8 {
                for b in 0..12 {
                    for blen in 1..8 {
                        let (pa, pb) = (
                            Place {
                                at: 16 * a,
                                len: 16 * alen,
                            },
                            Place {
                                at: 16 * b,
                                len: 16 * blen,
                            },
                        );
                        // SAFETY: both places lie inside the first page of the region.
                        let (x, y) = unsafe { (arena.add(pa.at), arena.add(pb.at)) };
                        // The file stays valid bytes: when it is one of the pair, copy it in.
                        let (file_ptr, file_len, code, code_cap, data, data_cap) = match pair {
                            0 => (x as *const u8, pa.len, y, pb.len, own[0], 64),
                            1 => (x as *const u8, pa.len, own[0], 64, y, pb.len),
                            _ => (file.as_ptr(), file.len(), x, pa.len, y, pb.len),
                        };
                        let mut p = zeroed();
                        // SAFETY: every pointer is valid for its length (inside the mapping).
                        let r = unsafe {
                            copapy_load(file_ptr, file_len, code, code_cap, data, data_cap, &mut p)
                        };
                        assert_eq!(
                            r == OVERLAP,
                            intersect(pa, pb),
                            "pair {pair} {a}+{alen} {b}+{blen}: {r}"
                        );
                        if r == OVERLAP {
                            assert_eq!(p.loaded, 0);
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 20_000);
    // the same buffer as code and data, and a code buffer inside the file
    let mut p = zeroed();
    let mut buf = vec![0u8; 256];
    let b = buf.as_mut_ptr();
    // SAFETY: valid buffers; the overlap is what is tested.
    unsafe {
        assert_eq!(
            copapy_load(file.as_ptr(), file.len(), b, 256, b, 256, &mut p),
            OVERLAP
        );
        let inside = file.as_ptr().add(8).cast_mut();
        assert_eq!(
            copapy_load(file.as_ptr(), file.len(), inside, 16, b, 256, &mut p),
            OVERLAP
        );
    }
    assert!(message(OVERLAP).contains("overlap"));
}

/// Loads `file` into sentinel-filled buffers; returns the result and whether the
/// buffers and `out` are as they were.
fn load_untouched(file: &[u8]) -> (i32, bool) {
    let region = Region::new();
    // SAFETY: both pages of the region, read+write.
    let pages = unsafe { core::slice::from_raw_parts_mut(region.code(), 2 * PAGE) };
    pages.fill(0xEE);
    let mut p = zeroed();
    let r = load_into(file, &region, &mut p);
    (r, pages.iter().all(|&b| b == 0xEE) && p.loaded == 0)
}

/// Asserts that every truncation and every single-bit flip of `file` is refused and
/// that the refusal writes neither the buffers nor `out`.
fn assert_every_damage_refused(file: &[u8]) {
    for len in 0..file.len() {
        let (r, untouched) = load_untouched(&file[..len]);
        assert!(r < 0 && untouched, "truncated to {len}: {r}");
    }
    for bit in 0..8 * file.len() {
        let mut bad = file.to_vec();
        bad[bit / 8] ^= 1 << (bit % 8);
        let (r, untouched) = load_untouched(&bad);
        assert!(r < 0 && untouched, "bit {bit} flipped: {r} {}", message(r));
    }
}

/// Every truncation and every single-bit flip of a program file is refused, and a
/// refusal writes nothing: not the buffers, not `out`.
#[test]
fn every_truncation_and_bit_flip_is_refused_without_writing() {
    let file = program().encode();
    assert_every_damage_refused(&file);
}

/// A version 10 file (carrying instruction bounds, patches in the compact section) loads
/// and runs like the same program as a version 2 file (without them, 16-byte patch
/// records), and every truncation and bit flip of it is refused: the bounds and the
/// compact patches are inside the checksum and the section lengths.
#[test]
fn a_file_with_instruction_bounds_loads_and_its_damage_is_refused() {
    let mut with_bounds = program();
    with_bounds.instructions =
        Some(copapy_program::InstructionBounds::Known { fewest: 2, most: 2 });
    let file = with_bounds.encode();
    assert_eq!(file[4], 10);
    assert_eq!(program().encode()[4], 10);
    let (region, p) = load(&file);
    // SAFETY: loaded by copapy_load into a sealed (read+execute) code page.
    assert_eq!(unsafe { copapy_run(&p) }, 0);
    let (n, offset, _) = symbol(&p, c"count", 0);
    assert_eq!(n, 1);
    // SAFETY: inside the data page.
    assert_eq!(
        unsafe { region.data().add(offset as usize).cast::<i32>().read() },
        1
    );
    assert_every_damage_refused(&file);
}

/// Random programs (names, dtypes, shapes, offsets): copapy_symbol and copapy_symbol_at
/// give every element of every variable as the reader's own view does.
#[test]
fn lookups_agree_with_the_reader_on_random_symbol_tables() {
    use copapy_program::{ElementType, ProgramView, Role, Symbol};
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _ in 0..200 {
        let mut prog = program();
        prog.data = vec![0; 4 * 64];
        prog.symbols.clear();
        for s in 0..next(6) {
            let ty = [ElementType::Float, ElementType::Int, ElementType::Bool][next(3) as usize];
            let shape: Vec<u32> = (0..next(3)).map(|_| 1 + next(4) as u32).collect();
            let count: u32 = shape.iter().product();
            let offsets = (0..count).map(|_| 4 * next(64) as u32).collect();
            let name = format!("v{s}_{}", "ä€x".repeat(next(3) as usize));
            prog.symbols.push(Symbol {
                name,
                role: Role::Input,
                ty,
                shape,
                offsets,
            });
        }
        // every other table in version 9's compact records (version 10 keeps them)
        if next(2) == 1 {
            prog.instructions = Some(copapy_program::InstructionBounds::Unbounded);
        }
        let file = prog.encode();
        let (_region, p) = load(&file);
        let view = ProgramView::parse(&file).unwrap();
        assert_eq!(p.symbol_count as usize, view.symbol_count());
        for (var, sym) in view.symbols().enumerate() {
            let name = std::ffi::CString::new(sym.name).unwrap();
            assert_eq!(sym.name, prog.symbols[var].name);
            for (index, want) in sym.offsets().enumerate() {
                assert_eq!(want, prog.symbols[var].offsets[index]);
                let by_name = symbol(&p, &name, index as u32);
                assert_eq!(by_name, (sym.len() as i32, want, sym.ty as u8));
                let (mut offset, mut dtype, mut name_ptr, mut name_len) =
                    (0, 0, null::<c_char>(), 0);
                // SAFETY: all outputs valid for writes.
                let n = unsafe {
                    copapy_symbol_at(
                        &p,
                        var as u32,
                        index as u32,
                        &mut offset,
                        &mut dtype,
                        &mut name_ptr,
                        &mut name_len,
                    )
                };
                assert_eq!((n, offset, dtype), by_name);
                // SAFETY: a pointer and length into the file.
                let got = unsafe {
                    core::slice::from_raw_parts(name_ptr.cast::<u8>(), name_len as usize)
                };
                assert_eq!(got, sym.name.as_bytes());
            }
            assert_eq!(symbol(&p, &name, sym.len() as u32).0, NO_SYMBOL);
        }
    }
}
