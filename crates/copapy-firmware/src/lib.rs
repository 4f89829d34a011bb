//! The C ABI of the copapy runner core, for firmware: `include/copapy_runner.h`.
//!
//! Everything works on memory the caller provides (static arrays on a microcontroller):
//! [`copapy_load`] validates a program file completely — once — checks it is for this
//! CPU ([`copapy_set_cpu_features`] overrides what the library was built for), and copies
//! and patches it into the caller's code and data buffers; [`copapy_run`] calls it;
//! [`copapy_symbol`] and [`copapy_symbol_at`] find a variable's slots by name or number in
//! the symbol table recorded at load, without parsing the file again. No allocator, no
//! OS, no panics on any input: every refusal, including a NULL pointer, an unloaded
//! program and overlapping buffers, is a negative error code with a message
//! ([`copapy_error_message`]).
#![no_std]

// Host builds (the C test program) link std for its panic handler; bare-metal builds
// bring their own, which never runs because nothing here panics on any input.
#[cfg(not(target_os = "none"))]
extern crate std;

#[cfg(target_os = "none")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

use core::ffi::{c_char, CStr};
use core::sync::atomic::{AtomicU32, Ordering};

use copapy_program::{Arch, Features, ProgramView, SymbolTable, SymbolView};

mod errors;
use errors as code;

/// The architecture this runner executes.
pub const RUNNER_ARCH: Option<Arch> = Arch::host();

/// The CPU features this runner's core was built for (its build target's baseline):
/// what [`copapy_load`] checks programs against until [`copapy_set_cpu_features`].
/// RISC-V's F comes from the target name (build.rs), as `cfg` does not show it.
pub const RUNNER_FEATURES: u32 = Features::host().0
    | if cfg!(copapy_riscv_f) {
        Features::RV_F.0
    } else {
        0
    };

/// The feature bits [`copapy_load`] checks programs against.
static CPU_FEATURES: AtomicU32 = AtomicU32::new(RUNNER_FEATURES);

/// Marks a `struct copapy_program` that [`copapy_load`] filled, mixed with the fields a
/// run depends on so a zeroed, stale or hand-edited struct is refused by [`copapy_run`].
const LOADED: u32 = 0xC0BA_7E57;

/// A program installed by [`copapy_load`] (mirrors `struct copapy_program`).
#[repr(C)]
pub struct CopapyProgram {
    /// Start of the code buffer.
    pub code: *const u8,
    /// Entry offset into the code.
    pub entry: u32,
    /// Architecture number (format table).
    pub arch: u8,
    /// 1 if the symbol table holds format version 9's (and 10's) compact records, else 0.
    pub symbol_format: u8,
    /// Start of the data buffer.
    pub data: *mut u8,
    /// Data bytes in use.
    pub data_len: u32,
    /// The program file's symbol table (validated at load; the file must stay).
    pub symbols: *const u8,
    /// Bytes of the symbol table.
    pub symbols_len: u32,
    /// Number of variables.
    pub symbol_count: u32,
    /// Check word written by [`copapy_load`]: a constant mixed with the code and data
    /// addresses and the entry, so a zeroed or edited struct does not run.
    pub loaded: u32,
}

impl CopapyProgram {
    fn check_word(&self) -> u32 {
        LOADED ^ self.code as usize as u32 ^ self.data as usize as u32 ^ self.entry
    }

    /// The program behind `p` if [`copapy_load`] filled it.
    ///
    /// # Safety
    /// `p` must be null or valid for reads.
    #[inline(always)]
    unsafe fn loaded<'a>(p: *const CopapyProgram) -> Option<&'a CopapyProgram> {
        // SAFETY: the caller's guarantee.
        let p = unsafe { p.as_ref() }?;
        (p.loaded == p.check_word() && !p.code.is_null()).then_some(p)
    }

    /// The symbol table recorded at load.
    ///
    /// # Safety
    /// The program file must still be in memory, unchanged.
    unsafe fn symbol_table(&self) -> SymbolTable<'_> {
        // SAFETY: `symbols` and `symbols_len` describe a table inside the file copapy_load
        // validated (or, for a program without variables, an empty one).
        let bytes = unsafe { slice(self.symbols, self.symbols_len as usize) }.unwrap_or(&[]);
        SymbolTable::from_raw_parts(bytes, self.symbol_count, self.symbol_format == 1)
    }
}

/// # Safety
/// `ptr` must be null or valid for `len` bytes.
unsafe fn slice<'a>(ptr: *const u8, len: usize) -> Option<&'a [u8]> {
    if ptr.is_null() {
        None
    } else {
        // SAFETY: the caller guarantees `ptr` is valid for `len` bytes.
        Some(unsafe { core::slice::from_raw_parts(ptr, len) })
    }
}

/// Whether `a[0..a_len]` and `b[0..b_len]` share a byte. Buffers valid for their
/// lengths do not wrap around the address space, so modular differences suffice.
fn overlap(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a.wrapping_sub(b) < b_len || b.wrapping_sub(a) < a_len
}

/// Sets the CPU feature bits (`COPAPY_FEATURE_*`) that [`copapy_load`] checks programs
/// against, e.g. what the firmware probed at boot, and returns the previous set. The
/// library starts with those of its build target ([`RUNNER_FEATURES`]).
#[no_mangle]
pub extern "C" fn copapy_set_cpu_features(features: u32) -> u32 {
    CPU_FEATURES.swap(features, Ordering::Relaxed)
}

/// The CPU feature bits [`copapy_load`] checks programs against.
#[no_mangle]
pub extern "C" fn copapy_cpu_features() -> u32 {
    CPU_FEATURES.load(Ordering::Relaxed)
}

/// Validates the program file `file[0..file_len]`, checks it is for this CPU, and
/// installs it into `code[0..code_cap]` and `data[0..data_cap]`. Returns 0, or a
/// negative error code; on error `out` is untouched. The code buffer must be
/// executable when [`copapy_run`] is called (and instruction caches flushed where the
/// CPU has them); make it so after this call, not before (W^X). The file must stay in
/// memory, unchanged, while [`copapy_symbol`] is used: the symbol table is read there.
///
/// # Safety
///
/// Each pointer must be valid for its length (null is refused, and so are buffers
/// that overlap).
#[no_mangle]
pub unsafe extern "C" fn copapy_load(
    file: *const u8,
    file_len: usize,
    code: *mut u8,
    code_cap: usize,
    data: *mut u8,
    data_cap: usize,
    out: *mut CopapyProgram,
) -> i32 {
    // SAFETY: the caller's guarantees; an empty import table.
    unsafe {
        copapy_load_with_imports(
            file,
            file_len,
            code,
            code_cap,
            data,
            data_cap,
            core::ptr::null(),
            0,
            out,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        )
    }
}

/// One entry of the firmware's import table (`struct copapy_import`).
#[repr(C)]
pub struct CopapyImport {
    /// NUL-terminated C identifier.
    pub name: *const c_char,
    /// The function (hard-float C ABI).
    pub func: *const core::ffi::c_void,
    /// NUL-terminated signature, e.g. `"f(i)"`.
    pub signature: *const c_char,
}

/// Whether the NUL-terminated string at `p` (NULL: never) is `bytes`. A byte loop: no
/// `strlen` (CStr) and no UTF-8 check are linked into the firmware.
///
/// # Safety
/// `p` must be null or NUL-terminated.
unsafe fn c_str_is(p: *const c_char, bytes: &[u8]) -> bool {
    if p.is_null() {
        return false;
    }
    for (k, &b) in bytes.iter().enumerate() {
        // SAFETY: every byte before the string's NUL is readable, and a byte differing
        // from `b` (a NUL included, as `bytes` holds none) ends the loop first.
        if unsafe { *p.add(k) } as u8 != b || b == 0 {
            return false;
        }
    }
    // SAFETY: as above: the first `bytes.len()` bytes were not NUL.
    unsafe { *p.add(bytes.len()) == 0 }
}

/// [`copapy_load`] with the firmware's table of imported functions: each import the
/// program declares is found by name; a missing one gives `COPAPY_E_IMPORT_MISSING`, one
/// with another signature `COPAPY_E_IMPORT_SIGNATURE` (and its name through
/// `failed_name`/`failed_name_len`, inside the file), before anything is written.
///
/// # Safety
///
/// As [`copapy_load`]; `imports` null (with `import_count` 0) or valid for
/// `import_count` entries whose strings are NUL-terminated; `failed_name` and
/// `failed_name_len` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn copapy_load_with_imports(
    file: *const u8,
    file_len: usize,
    code: *mut u8,
    code_cap: usize,
    data: *mut u8,
    data_cap: usize,
    imports: *const CopapyImport,
    import_count: usize,
    out: *mut CopapyProgram,
    failed_name: *mut *const c_char,
    failed_name_len: *mut u32,
) -> i32 {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        load::<true>(
            file,
            file_len,
            code,
            code_cap,
            data,
            data_cap,
            imports,
            import_count,
            out,
            failed_name,
            failed_name_len,
        )
    }
}

/// [`copapy_load_with_imports`] for pre-linked images only (format version 10 with its pre-linked flag, or 6; saved with
/// `code_base=`/`data_base=`): a relocatable file is refused with
/// `COPAPY_E_NOT_PRELINKED`. A firmware that calls this instead of `copapy_load` links none
/// of the patch decoding and field writers: its loader is smaller.
///
/// # Safety
///
/// As [`copapy_load_with_imports`].
#[no_mangle]
pub unsafe extern "C" fn copapy_load_prelinked(
    file: *const u8,
    file_len: usize,
    code: *mut u8,
    code_cap: usize,
    data: *mut u8,
    data_cap: usize,
    imports: *const CopapyImport,
    import_count: usize,
    out: *mut CopapyProgram,
    failed_name: *mut *const c_char,
    failed_name_len: *mut u32,
) -> i32 {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        load::<false>(
            file,
            file_len,
            code,
            code_cap,
            data,
            data_cap,
            imports,
            import_count,
            out,
            failed_name,
            failed_name_len,
        )
    }
}

/// Both loaders: relocatable files and pre-linked images, or (`RELOCATABLE` false) only
/// the latter, with the patch code left out by the compiler.
///
/// # Safety
///
/// As [`copapy_load_with_imports`].
#[allow(clippy::too_many_arguments)]
unsafe fn load<const RELOCATABLE: bool>(
    file: *const u8,
    file_len: usize,
    code: *mut u8,
    code_cap: usize,
    data: *mut u8,
    data_cap: usize,
    imports: *const CopapyImport,
    import_count: usize,
    out: *mut CopapyProgram,
    failed_name: *mut *const c_char,
    failed_name_len: *mut u32,
) -> i32 {
    if imports.is_null() && import_count != 0 {
        return code::BAD_ARGUMENT;
    }
    let table: &[CopapyImport] = if import_count == 0 {
        &[]
    } else {
        // SAFETY: non-null and valid for `import_count` entries (caller's guarantee).
        unsafe { core::slice::from_raw_parts(imports, import_count) }
    };
    let resolve = |name: &[u8], sig: &[u8]| {
        // SAFETY: the table's strings are NUL-terminated (caller's guarantee).
        match table.iter().find(|i| unsafe { c_str_is(i.name, name) }) {
            None => copapy_runner::imports::Resolution::Missing,
            // SAFETY: as above.
            Some(i) if unsafe { c_str_is(i.signature, sig) } => {
                copapy_runner::imports::Resolution::Found(i.func as usize as u64)
            }
            // only the error code reaches C: the table's signature is not needed
            Some(_) => copapy_runner::imports::Resolution::OtherSignature(b""),
        }
    };
    if file.is_null() || code.is_null() || data.is_null() || out.is_null() {
        return code::BAD_ARGUMENT;
    }
    if overlap(file, file_len, code, code_cap)
        || overlap(file, file_len, data, data_cap)
        || overlap(code, code_cap, data, data_cap)
    {
        return code::OVERLAP;
    }
    // SAFETY: non-null, valid for their lengths (caller's guarantee), and disjoint.
    let (file, code_buf, data_buf) = unsafe {
        (
            core::slice::from_raw_parts(file, file_len),
            core::slice::from_raw_parts_mut(code, code_cap),
            core::slice::from_raw_parts_mut(data, data_cap),
        )
    };
    // borrowed from the result rather than moved out of it: the move costs a copy of
    // the view (firmware code size)
    let parsed = if RELOCATABLE {
        ProgramView::parse(file)
    } else {
        ProgramView::parse_prelinked(file)
    };
    let view = match &parsed {
        Ok(v) => v,
        Err(e) => return code::format_code(e),
    };
    let Some(arch) = RUNNER_ARCH else {
        return code::WRONG_ARCH;
    };
    if let Err(e) = view.check_arch(arch) {
        return code::format_code(&e);
    }
    if let Err(e) = view.check_features(copapy_cpu_features()) {
        return code::format_code(&e);
    }
    if let Err(e) = copapy_runner::imports::check_imports(view.imports(), resolve) {
        if !failed_name.is_null() && !failed_name_len.is_null() {
            // SAFETY: non-null and writable (caller's guarantee).
            unsafe {
                failed_name.write(e.import.name.as_ptr().cast());
                failed_name_len.write(e.import.name.len() as u32);
            }
        }
        return if e.offered.is_some() {
            code::IMPORT_SIGNATURE
        } else {
            code::IMPORT_MISSING
        };
    }
    let installed = if RELOCATABLE {
        copapy_runner::install(view, code_buf, data_buf)
    } else {
        copapy_runner::install_prelinked(view, code_buf, data_buf)
    };
    if let Err(e) = installed {
        return code::install_code(&e);
    }
    copapy_runner::imports::write_import_table(view.imports(), data_buf, resolve);
    let (symbols, symbol_count, compact) = view.symbol_table().raw_parts();
    let mut p = CopapyProgram {
        code,
        entry: view.entry,
        arch: view.arch as u8,
        symbol_format: u8::from(compact),
        data,
        data_len: view.data.len() as u32,
        symbols: symbols.as_ptr(),
        symbols_len: symbols.len() as u32,
        symbol_count,
        loaded: 0,
    };
    p.loaded = p.check_word();
    // SAFETY: `out` is non-null and valid for writes (caller's guarantee).
    unsafe { out.write(p) };
    0
}

/// Runs an installed program once. Returns 0, or (running nothing) `COPAPY_E_BAD_ARGUMENT`
/// for NULL and `COPAPY_E_NOT_LOADED` for a struct [`copapy_load`] did not fill.
///
/// # Safety
///
/// `program` must be null or valid for reads; if [`copapy_load`] filled it, its
/// buffers must still be alive, the code unchanged, executable, and (where the CPU has
/// caches) visible to instruction fetch.
#[no_mangle]
pub unsafe extern "C" fn copapy_run(program: *const CopapyProgram) -> i32 {
    if program.is_null() {
        return code::BAD_ARGUMENT;
    }
    // SAFETY: non-null and valid for reads (caller's guarantee).
    let Some(p) = (unsafe { CopapyProgram::loaded(program) }) else {
        return code::NOT_LOADED;
    };
    let Some(arch) = RUNNER_ARCH else {
        return code::WRONG_ARCH;
    };
    // SAFETY: copapy_load installed this program for this CPU into these buffers.
    unsafe { copapy_runner::call_entry(p.code, p.entry, arch) };
    0
}

/// Writes element `index`'s data offset and dtype of `sym`; returns its element count.
///
/// # Safety
/// `offset` and `dtype` must be null or valid for writes.
unsafe fn element(sym: &SymbolView<'_>, index: u32, offset: *mut u32, dtype: *mut u8) -> i32 {
    if offset.is_null() || dtype.is_null() {
        return code::BAD_ARGUMENT;
    }
    let Some(o) = sym.offsets().nth(index as usize) else {
        return code::NO_SYMBOL;
    };
    // SAFETY: non-null and writable (caller's guarantee).
    unsafe {
        offset.write(o);
        dtype.write(sym.ty as u8);
    }
    sym.len().min(i32::MAX as usize) as i32
}

/// Finds element `index` of the variable `name` (a NUL-terminated string) of a loaded
/// program: writes its data offset and dtype (0 float, 1 int, 2 bool, each 4 bytes;
/// 3 byte, 1 byte) and returns the variable's element count, or a negative error code.
/// Reads the symbol table recorded by [`copapy_load`]; nothing is parsed again.
///
/// # Safety
///
/// `program` must be null or valid for reads, with its program file still in memory;
/// `name` a NUL-terminated string or null; `offset` and `dtype` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn copapy_symbol(
    program: *const CopapyProgram,
    name: *const c_char,
    index: u32,
    offset: *mut u32,
    dtype: *mut u8,
) -> i32 {
    if program.is_null() || name.is_null() {
        return code::BAD_ARGUMENT;
    }
    // SAFETY: caller's guarantees.
    let Some(p) = (unsafe { CopapyProgram::loaded(program) }) else {
        return code::NOT_LOADED;
    };
    // SAFETY: caller's guarantee that `name` is NUL-terminated.
    let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else {
        return code::NO_SYMBOL;
    };
    // SAFETY: the file is still in memory (caller's guarantee).
    let Some(sym) = (unsafe { p.symbol_table() }).symbol(name) else {
        return code::NO_SYMBOL;
    };
    // SAFETY: caller's guarantee on the outputs.
    unsafe { element(&sym, index, offset, dtype) }
}

/// Variable number `var` (0 .. `symbol_count` - 1, in file order) of a loaded program:
/// as [`copapy_symbol`] for its element `index`, and also writes where its name is
/// (`name_len` UTF-8 bytes inside the program file, not NUL-terminated) when `name`
/// and `name_len` are not null. Lets firmware list every variable.
///
/// # Safety
///
/// As [`copapy_symbol`]; `name` and `name_len` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn copapy_symbol_at(
    program: *const CopapyProgram,
    var: u32,
    index: u32,
    offset: *mut u32,
    dtype: *mut u8,
    name: *mut *const c_char,
    name_len: *mut u32,
) -> i32 {
    if program.is_null() {
        return code::BAD_ARGUMENT;
    }
    // SAFETY: caller's guarantees.
    let Some(p) = (unsafe { CopapyProgram::loaded(program) }) else {
        return code::NOT_LOADED;
    };
    // SAFETY: the file is still in memory (caller's guarantee).
    let Some(sym) = (unsafe { p.symbol_table() }).symbols().nth(var as usize) else {
        return code::NO_SYMBOL;
    };
    // SAFETY: caller's guarantee on the outputs.
    let n = unsafe { element(&sym, index, offset, dtype) };
    if n >= 0 && !name.is_null() && !name_len.is_null() {
        // SAFETY: non-null and writable (caller's guarantee).
        unsafe {
            name.write(sym.name.as_ptr().cast());
            name_len.write(sym.name.len() as u32);
        }
    }
    n
}

/// A static, NUL-terminated message for an error code.
#[no_mangle]
pub extern "C" fn copapy_error_message(error: i32) -> *const c_char {
    code::message_ptr(error)
}
