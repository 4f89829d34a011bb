//! Host memory: loading a program into an `mmap`ed region with W^X protections.

use core::fmt;
use core::ptr::NonNull;
use std::io;
use std::vec::Vec;

use copapy_program::{Arch, FormatError, Patch, Program, ProgramView};

use crate::patch::{apply_patch_iter, PatchError};

/// Why a program could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The program is malformed or for another architecture (message says which).
    Format(FormatError),
    /// A patch could not be applied at the addresses the memory got.
    Patch(PatchError),
    /// This machine is not one copapy generates code for.
    UnsupportedHost(&'static str),
    /// A pre-linked image's addresses cannot be given to it here: its data does not
    /// follow its code at the next page (the one layout this loader maps), or the
    /// memory there is taken or refused.
    Placement {
        /// Where the image must run.
        placement: copapy_program::Placement,
        /// Why it cannot.
        reason: &'static str,
    },
    /// The operating system refused memory or a protection change.
    Os {
        /// The call that failed (`mmap`, `mprotect`).
        call: &'static str,
        /// The OS error.
        error: io::Error,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Format(e) => e.fmt(f),
            LoadError::Patch(e) => e.fmt(f),
            LoadError::UnsupportedHost(arch) => {
                write!(f, "copapy cannot run programs on this machine ({arch})")
            }
            LoadError::Os { call, error } => write!(f, "{call} failed: {error}"),
            LoadError::Placement { placement, reason } => write!(
                f,
                "pre-linked program needs its code at {:#x} and its data at {:#x}, and {reason}: \
                 save it without code_base=/data_base= for a relocatable file this runner places \
                 anywhere",
                placement.code, placement.data
            ),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Format(e) => Some(e),
            LoadError::Patch(e) => Some(e),
            LoadError::Os { error, .. } => Some(error),
            LoadError::UnsupportedHost(_) | LoadError::Placement { .. } => None,
        }
    }
}

impl From<FormatError> for LoadError {
    fn from(e: FormatError) -> Self {
        LoadError::Format(e)
    }
}

impl From<PatchError> for LoadError {
    fn from(e: PatchError) -> Self {
        LoadError::Patch(e)
    }
}

/// A program placed in executable memory, ready to [`run`](LoadedProgram::run).
///
/// The memory is one anonymous mapping: `code.len()` rounded up to whole pages,
/// mapped read+execute, followed by the data pages, mapped read+write. The code is
/// written and patched while the mapping is still read+write and only then switched
/// to read+execute, so no page is ever writable and executable at once. Data keeps
/// its state between runs; [`reset_data`](LoadedProgram::reset_data) restores the
/// initial image. Dropping the value unmaps the memory.
///
/// ```no_run
/// # fn f(program: &copapy_program::Program) -> Result<(), copapy_runner::LoadError> {
/// use copapy_runner::LoadedProgram;
/// let mut loaded = LoadedProgram::load(program)?;
/// loaded.data_mut()[0..4].copy_from_slice(&2.0f32.to_le_bytes()); // an input
/// loaded.run();
/// let out = f32::from_le_bytes(loaded.data()[4..8].try_into().unwrap());
/// # Ok(()) }
/// ```
pub struct LoadedProgram {
    region: NonNull<u8>,
    region_len: usize,
    code_len: usize,
    /// Offset of the data pages in the region (= code length rounded up to pages).
    data_offset: usize,
    data_len: usize,
    entry: usize,
    arch: Arch,
    initial_data: Vec<u8>,
}

// SAFETY: the mapping is owned exclusively by this value (nothing else holds its
// address), so moving it to another thread is like moving a Box.
unsafe impl Send for LoadedProgram {}
// SAFETY: `&self` methods only read the data pages; running (which writes them)
// needs `&mut self`.
unsafe impl Sync for LoadedProgram {}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

fn round_up(n: usize, to: usize) -> Option<usize> {
    n.checked_add(to - 1).map(|v| v / to * to)
}

fn os_error(call: &'static str) -> LoadError {
    LoadError::Os {
        call,
        error: io::Error::last_os_error(),
    }
}

/// The address a pre-linked image's region must be mapped at: its code base, with its
/// data at the next page after the code (`data_offset`), the only layout `load` maps.
fn fixed_address(
    at: copapy_program::Placement,
    data_offset: usize,
) -> Result<*mut libc::c_void, LoadError> {
    let page = page_size() as u64;
    let refuse = |reason| {
        Err(LoadError::Placement {
            placement: at,
            reason,
        })
    };
    if !at.code.is_multiple_of(page) {
        return refuse("its code address is not at the start of a page of this machine");
    }
    if at.code.checked_add(data_offset as u64) != Some(at.data) {
        return refuse(
            "this runner maps data only at the page after the code (data_base = code_base + \
             the code rounded up to whole pages)",
        );
    }
    Ok(at.code as usize as *mut libc::c_void)
}

/// `MAP_FIXED_NOREPLACE` where the OS has it (Linux 4.17+); elsewhere a plain hint whose
/// result `load` checks.
const fn fixed_noreplace() -> libc::c_int {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        libc::MAP_FIXED_NOREPLACE
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        0
    }
}

impl LoadedProgram {
    /// Validates `program`, maps memory, copies code and data, applies the patches and
    /// makes the code executable.
    ///
    /// Refuses a program for another architecture than the host's
    /// ("program is for aarch64 but this runner is x86_64") or one that fails
    /// [`Program::validate`].
    pub fn load(program: &Program) -> Result<LoadedProgram, LoadError> {
        let host = Arch::host().ok_or(LoadError::UnsupportedHost(std::env::consts::ARCH))?;
        program.check_arch(host)?;
        program.validate()?;
        Self::load_parts(
            program.arch,
            program.features,
            &program.code,
            &program.data,
            program.entry,
            program.placement,
            program.patches.iter().copied(),
        )
    }

    /// Like [`load`](LoadedProgram::load), from a program file parsed without copying.
    pub fn load_view(view: &ProgramView<'_>) -> Result<LoadedProgram, LoadError> {
        // `ProgramView::parse` already validated the layout.
        Self::load_parts(
            view.arch,
            view.features,
            view.code,
            &view.data.to_vec(),
            view.entry,
            view.placement(),
            view.patches(),
        )
    }

    /// Like [`load`](LoadedProgram::load), from the bytes of a program file.
    pub fn load_file(bytes: &[u8]) -> Result<LoadedProgram, LoadError> {
        Self::load_view(&ProgramView::parse(bytes)?)
    }

    fn load_parts(
        arch: Arch,
        features: u32,
        code: &[u8],
        data: &[u8],
        entry: u32,
        placement: Option<copapy_program::Placement>,
        patches: impl IntoIterator<Item = Patch>,
    ) -> Result<LoadedProgram, LoadError> {
        let host = Arch::host().ok_or(LoadError::UnsupportedHost(std::env::consts::ARCH))?;
        copapy_program::format::check_arch(arch, host)?;
        // the CPU's own features, as its kernel reports them (crate::cpu): a program
        // is refused only for what this CPU really lacks
        copapy_program::format::check_features(features, crate::cpu::features().0)?;
        // Alignments are at most 4096 (checked by validation), and both buffers start
        // on page boundaries of at least that size.
        if entry as usize >= code.len() {
            return Err(FormatError::EntryOutOfRange {
                entry,
                code_len: code.len(),
            }
            .into());
        }
        let page = page_size();
        let too_big = || LoadError::Os {
            call: "mmap",
            error: io::Error::new(io::ErrorKind::OutOfMemory, "program too large"),
        };
        let data_offset = round_up(code.len(), page).ok_or_else(too_big)?;
        let region_len = round_up(data.len(), page)
            .and_then(|d| d.checked_add(data_offset))
            .ok_or_else(too_big)?;
        let (hint, fixed) = match placement {
            None => (core::ptr::null_mut(), 0),
            Some(at) => (fixed_address(at, data_offset)?, fixed_noreplace()),
        };
        // SAFETY: anonymous private mapping at an address of the kernel's choosing, or
        // (pre-linked) at `hint` only if nothing is mapped there (MAP_FIXED_NOREPLACE):
        // no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                hint,
                region_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | fixed,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(match placement {
                Some(placement) => LoadError::Placement {
                    placement,
                    reason: "this machine has memory mapped there or refuses to map it",
                },
                None => os_error("mmap"),
            });
        }
        if !hint.is_null() && ptr != hint {
            // a kernel before 4.17 takes the flag for a hint and maps elsewhere
            // SAFETY: the mapping just made, used by nothing.
            unsafe { libc::munmap(ptr, region_len) };
            return Err(LoadError::Placement {
                placement: placement.unwrap_or(copapy_program::Placement { code: 0, data: 0 }),
                reason: "this machine's kernel mapped the memory elsewhere",
            });
        }
        let region = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| os_error("mmap"))?;
        // From here on, Drop unmaps the region on every error path.
        let mut loaded = LoadedProgram {
            region,
            region_len,
            code_len: code.len(),
            data_offset,
            data_len: data.len(),
            entry: entry as usize,
            arch,
            initial_data: data.to_vec(),
        };
        // SAFETY: the region is `region_len >= data_offset + data.len()` bytes, readable
        // and writable, and exclusively ours.
        let code_mem = unsafe {
            core::ptr::copy_nonoverlapping(code.as_ptr(), region.as_ptr(), code.len());
            core::slice::from_raw_parts_mut(region.as_ptr(), code.len())
        };
        loaded.data_mut().copy_from_slice(data);
        let code_addr = region.as_ptr() as u64;
        let data_addr = loaded.data_addr() as u64;
        apply_patch_iter(code_mem, code_addr, data_addr, data.len(), patches)?;
        flush_icache(region.as_ptr(), code.len());
        // SAFETY: the first `data_offset` bytes of our own mapping; page aligned.
        let r = unsafe { libc::mprotect(ptr, data_offset, libc::PROT_READ | libc::PROT_EXEC) };
        if r != 0 {
            return Err(os_error("mprotect"));
        }
        Ok(loaded)
    }

    /// Calls the program's entry point once (the stencil ABI's register arguments are
    /// all zero). Data memory keeps its state between runs.
    ///
    /// Takes `&mut self` because the code writes data memory: no slice from
    /// [`data`](LoadedProgram::data) may be alive while it runs.
    ///
    /// Running executes the program's machine code: loading a program means trusting
    /// whoever compiled it, as with loading a shared library. The runner checks the
    /// file and every patch, but it cannot check the instructions.
    pub fn run(&mut self) {
        // SAFETY: `entry < code_len` (checked in load); the code pages are mapped
        // read+execute for the lifetime of `self`, patched for the addresses they
        // have, and generated for the `EntryFn` ABI by the copapy compiler. The code
        // only touches its own data pages, which we borrow mutably here.
        unsafe {
            crate::call_entry(self.region.as_ptr(), self.entry as u32, self.arch);
        }
    }

    /// Writes the addresses of the program's imported functions into its import table
    /// (`crate::imports`), in data memory and in the initial image `reset_data` restores.
    pub fn set_imports<'s>(
        &mut self,
        table: copapy_program::ImportTable<'_>,
        mut resolve: impl FnMut(&[u8], &[u8]) -> crate::imports::Resolution<'s>,
    ) {
        crate::imports::write_import_table(table, self.data_mut(), &mut resolve);
        crate::imports::write_import_table(table, &mut self.initial_data, resolve);
    }

    /// The data memory: variables, constants and intermediate values.
    pub fn data(&self) -> &[u8] {
        // SAFETY: the data pages are mapped read+write while `self` lives; writes
        // happen only through `&mut self`.
        unsafe { core::slice::from_raw_parts(self.data_addr(), self.data_len) }
    }

    /// The data memory, writable (e.g. to set inputs before [`run`](LoadedProgram::run)).
    pub fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `data`, and `&mut self` makes the borrow exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.data_addr() as *mut u8, self.data_len) }
    }

    /// Restores the initial data image (inputs, constants, zeroed intermediates).
    pub fn reset_data(&mut self) {
        let init = core::mem::take(&mut self.initial_data);
        self.data_mut().copy_from_slice(&init);
        self.initial_data = init;
    }

    /// Address of the first code byte (for debuggers and disassembly).
    pub fn code_addr(&self) -> *const u8 {
        self.region.as_ptr()
    }

    /// Number of code bytes.
    pub fn code_len(&self) -> usize {
        self.code_len
    }

    /// Address of the first data byte.
    pub fn data_addr(&self) -> *const u8 {
        // SAFETY: `data_offset <= region_len`, so this stays inside (or one past) the mapping.
        unsafe { self.region.as_ptr().add(self.data_offset) }
    }
}

impl Drop for LoadedProgram {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `load`, which nothing else uses.
        unsafe {
            libc::munmap(self.region.as_ptr().cast(), self.region_len);
        }
    }
}

impl fmt::Debug for LoadedProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedProgram")
            .field("code_addr", &self.code_addr())
            .field("code_len", &self.code_len)
            .field("data_len", &self.data_len)
            .field("entry", &self.entry)
            .finish()
    }
}

/// Makes freshly written code visible to instruction fetch. x86 keeps instruction and
/// data caches coherent; other architectures need an explicit flush. It is done here
/// rather than with libgcc's `__clear_cache`, which a static musl build linked by
/// `rust-lld` does not have.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn flush_icache(_start: *mut u8, _len: usize) {}

/// AArch64: clean each data cache line to the point of unification, invalidate each
/// instruction cache line, with the barriers between (as the architecture manual's
/// self-modifying code sequence; Linux lets user space do this).
#[cfg(target_arch = "aarch64")]
fn flush_icache(start: *mut u8, len: usize) {
    use core::arch::asm;
    let ctr: u64;
    // SAFETY: reading CTR_EL0 (cache geometry) is allowed at EL0 on Linux and macOS.
    unsafe { asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let dline = 4usize << ((ctr >> 16) & 0xf);
    let iline = 4usize << (ctr & 0xf);
    let (start, end) = (start as usize, start as usize + len);
    // SAFETY: cache maintenance by address on our own mapped range; no memory changes.
    unsafe {
        let mut a = start & !(dline - 1);
        while a < end {
            asm!("dc cvau, {}", in(reg) a, options(nostack));
            a += dline;
        }
        asm!("dsb ish", options(nostack));
        let mut a = start & !(iline - 1);
        while a < end {
            asm!("ic ivau, {}", in(reg) a, options(nostack));
            a += iline;
        }
        asm!("dsb ish", "isb", options(nostack));
    }
}

/// 32-bit ARM Linux: the kernel's `cacheflush` call (user space cannot do it).
#[cfg(all(target_arch = "arm", target_os = "linux"))]
fn flush_icache(start: *mut u8, len: usize) {
    const ARM_NR_CACHEFLUSH: libc::c_long = 0x0f_0002;
    // SAFETY: the range is our own mapping; the call only maintains caches.
    unsafe { libc::syscall(ARM_NR_CACHEFLUSH, start, start.add(len), 0) };
}

/// RISC-V Linux: `riscv_flush_icache` on every hart (a `fence.i` would only cover this
/// one, and the thread may migrate).
#[cfg(all(
    any(target_arch = "riscv64", target_arch = "riscv32"),
    target_os = "linux"
))]
fn flush_icache(start: *mut u8, len: usize) {
    const SYS_RISCV_FLUSH_ICACHE: libc::c_long = 259;
    // SAFETY: the range is our own mapping; the call only maintains caches.
    unsafe { libc::syscall(SYS_RISCV_FLUSH_ICACHE, start, start.add(len), 0) };
}

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    all(
        any(target_arch = "arm", target_arch = "riscv64", target_arch = "riscv32"),
        target_os = "linux"
    )
)))]
fn flush_icache(start: *mut u8, len: usize) {
    extern "C" {
        fn __clear_cache(begin: *mut libc::c_char, end: *mut libc::c_char);
    }
    // SAFETY: flushes caches for our own, mapped range.
    unsafe { __clear_cache(start.cast(), start.add(len).cast()) }
}

#[cfg(all(test, target_arch = "x86_64", target_os = "linux"))]
mod tests {
    use super::*;
    use copapy_program::{Base, Encoding};
    use std::string::{String, ToString};
    use std::vec;

    /// `x = [X]; x += x; [Y] = x; ret` with rip-relative Rel32 patches into data.
    fn double_program() -> Program {
        let code = vec![
            0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, // movss xmm0, [rip + X]
            0xF3, 0x0F, 0x58, 0xC0, // addss xmm0, xmm0
            0xF3, 0x0F, 0x11, 0x05, 0, 0, 0, 0,    // movss [rip + Y], xmm0
            0xC3, // ret
        ];
        let mut data = 1.25f32.to_le_bytes().to_vec();
        data.extend_from_slice(&[0; 4]);
        Program {
            arch: Arch::X86_64,
            features: 0,
            code_align: 16,
            data_align: 16,
            code,
            data,
            patches: vec![
                Patch {
                    offset: 4,
                    encoding: Encoding::Rel32,
                    base: Base::Data,
                    target: 0,
                    addend: -4,
                },
                Patch {
                    offset: 16,
                    encoding: Encoding::Rel32,
                    base: Base::Data,
                    target: 4,
                    addend: -4,
                },
            ],
            entry: 0,
            symbols: vec![],
            instructions: None,
            imports: Vec::new(),
            placement: None,
        }
    }

    fn f32_at(d: &[u8], o: usize) -> f32 {
        f32::from_le_bytes(d[o..o + 4].try_into().unwrap())
    }

    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn runs_a_prelinked_image_at_its_address_and_refuses_other_layouts() {
        use copapy_program::Placement;
        let page = page_size() as u64;
        // a free address far from the heap and the libraries (x86_64 Linux user space)
        let code = 0x5a5a_0000_0000u64;
        let at = Placement {
            code,
            data: code + page,
        };
        let linked = crate::prelink::prelink(&double_program(), at).unwrap();
        let file = linked.encode();
        let mut p = LoadedProgram::load_file(&file).unwrap();
        assert_eq!(p.code_addr() as u64, at.code);
        assert_eq!(p.data_addr() as u64, at.data);
        p.run();
        assert_eq!(f32_at(p.data(), 4), 2.5);
        // while it is mapped there, a second copy cannot be
        let e = LoadedProgram::load_file(&file).unwrap_err().to_string();
        assert!(e.contains("memory mapped there"), "{e}");
        assert!(e.contains("save it without code_base="), "{e}");
        drop(p);
        // data not at the page after the code: refused, nothing mapped
        let apart = Placement {
            code,
            data: code + 2 * page,
        };
        let e = LoadedProgram::load(&crate::prelink::prelink(&double_program(), apart).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("data only at the page after the code"), "{e}");
    }

    #[test]
    fn runs_a_hand_assembled_program() {
        let mut p = LoadedProgram::load(&double_program()).unwrap();
        assert_eq!(f32_at(p.data(), 4), 0.0);
        p.run();
        assert_eq!(f32_at(p.data(), 4), 2.5);
        p.data_mut()[0..4].copy_from_slice(&(-3.0f32).to_le_bytes());
        p.run();
        assert_eq!(f32_at(p.data(), 4), -6.0);
        p.reset_data();
        assert_eq!(f32_at(p.data(), 0), 1.25);
        assert_eq!(f32_at(p.data(), 4), 0.0);
    }

    #[test]
    fn runs_with_abs64_patch_and_entry_offset() {
        let code = vec![
            0xCC, 0xCC, // int3 padding: entry is 2
            0x48, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, // movabs rax, imm64 (data + 0)
            0xF3, 0x0F, 0x10, 0x00, // movss xmm0, [rax]
            0xF3, 0x0F, 0x59, 0xC0, // mulss xmm0, xmm0
            0xF3, 0x0F, 0x11, 0x40, 0x04, // movss [rax + 4], xmm0
            0xC3,
        ];
        let mut data = 3.0f32.to_le_bytes().to_vec();
        data.extend_from_slice(&[0; 4]);
        let program = Program {
            arch: Arch::X86_64,
            features: 0,
            code_align: 16,
            data_align: 16,
            code,
            data,
            patches: vec![Patch {
                offset: 4,
                encoding: Encoding::Abs64,
                base: Base::Data,
                target: 0,
                addend: 0,
            }],
            entry: 2,
            symbols: vec![],
            instructions: None,
            imports: Vec::new(),
            placement: None,
        };
        let mut p = LoadedProgram::load(&program).unwrap();
        p.run();
        assert_eq!(f32_at(p.data(), 4), 9.0);
    }

    #[test]
    fn loads_from_a_file() {
        let bytes = double_program().encode();
        let mut p = LoadedProgram::load_file(&bytes).unwrap();
        p.run();
        assert_eq!(f32_at(p.data(), 4), 2.5);
        let e = LoadedProgram::load_file(&bytes[..bytes.len() - 3]).unwrap_err();
        assert!(e.to_string().starts_with("file truncated"), "{e}");
    }

    /// Permissions column of the /proc/self/maps line containing `addr`.
    fn perms_at(addr: usize) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        for line in maps.lines() {
            let mut cols = line.split_whitespace();
            let range = cols.next().unwrap();
            let perms = cols.next().unwrap();
            let (lo, hi) = range.split_once('-').unwrap();
            let lo = usize::from_str_radix(lo, 16).unwrap();
            let hi = usize::from_str_radix(hi, 16).unwrap();
            if (lo..hi).contains(&addr) {
                return perms.to_string();
            }
        }
        panic!("address {addr:#x} is not mapped");
    }

    #[test]
    fn code_is_executable_not_writable_and_data_is_writable_not_executable() {
        let p = LoadedProgram::load(&double_program()).unwrap();
        assert_eq!(perms_at(p.code_addr() as usize), "r-xp");
        assert_eq!(perms_at(p.data_addr() as usize), "rw-p");
        // Code and data are in one region, within reach of 32-bit displacements.
        assert_eq!(p.data_addr() as usize - p.code_addr() as usize, page_size());
    }

    #[test]
    fn refuses_other_architectures() {
        let mut program = double_program();
        program.arch = Arch::AArch64;
        let e = LoadedProgram::load(&program).unwrap_err();
        assert_eq!(
            e.to_string(),
            "program is for aarch64 but this runner is x86_64"
        );
    }

    #[test]
    fn refuses_invalid_programs() {
        let mut program = double_program();
        program.patches[1].target = 8;
        let e = LoadedProgram::load(&program).unwrap_err();
        assert!(
            matches!(
                e,
                LoadError::Format(FormatError::PatchTargetOutOfRange { .. })
            ),
            "{e}"
        );
        let mut program = double_program();
        program.entry = 100;
        assert!(LoadedProgram::load(&program).is_err());
    }

    #[test]
    fn empty_data_is_fine() {
        let program = Program {
            arch: Arch::X86_64,
            features: 0,
            code_align: 16,
            data_align: 16,
            code: vec![0xC3],
            data: vec![],
            patches: vec![],
            entry: 0,
            symbols: vec![],
            instructions: None,
            imports: Vec::new(),
            placement: None,
        };
        let mut p = LoadedProgram::load(&program).unwrap();
        p.run();
        assert!(p.data().is_empty());
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<LoadedProgram>();
        let mut p = LoadedProgram::load(&double_program()).unwrap();
        let t = std::thread::spawn(move || {
            p.run();
            f32_at(p.data(), 4)
        });
        assert_eq!(t.join().unwrap(), 2.5);
    }
}
