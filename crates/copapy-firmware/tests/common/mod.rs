//! A small x86_64 program file and executable buffers for the ABI tests.
// Each test binary uses part of this module.
#![allow(dead_code)]

use copapy_firmware::{copapy_load, CopapyProgram};
use copapy_program::{Arch, Base, ElementType, Encoding, Patch, Program, Role, Symbol};

/// Data offset of the step counter the program increments.
pub const COUNTER: u32 = 0;

/// `inc dword ptr [rip + counter]; ret`, with three variables: `count` (int, the
/// counter), `gain` (float) and `v` (three ints).
pub fn program() -> Program {
    let code = vec![0xFF, 0x05, 0, 0, 0, 0, 0xC3];
    let mut data = vec![0u8; 20];
    data[4..8].copy_from_slice(&2.5f32.to_le_bytes());
    for (i, v) in [7i32, -8, 9].iter().enumerate() {
        data[8 + 4 * i..12 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    let patch = Patch {
        offset: 2,
        encoding: Encoding::Rel32,
        base: Base::Data,
        target: COUNTER,
        addend: -4,
    };
    let mut p = Program::new(Arch::X86_64, code, data, vec![patch], 0);
    p.symbols = vec![
        Symbol::scalar("count", Role::State, ElementType::Int, COUNTER),
        Symbol::scalar("gain", Role::Input, ElementType::Float, 4),
        Symbol {
            name: "v".into(),
            role: Role::Output,
            ty: ElementType::Int,
            shape: vec![3],
            offsets: vec![8, 12, 16],
        },
    ];
    p
}

/// One mapping: a code page, then a data page (x86_64's relative addressing wants them
/// close), read+write until [`Region::seal`] makes the code page read+execute.
pub struct Region {
    pub base: *mut u8,
}

pub const PAGE: usize = 4096;

impl Region {
    pub fn new() -> Region {
        // SAFETY: an anonymous private mapping, checked below.
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                2 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        Region { base: base.cast() }
    }

    pub fn code(&self) -> *mut u8 {
        self.base
    }

    pub fn data(&self) -> *mut u8 {
        // SAFETY: inside the two-page mapping.
        unsafe { self.base.add(PAGE) }
    }

    pub fn seal(&self) {
        // SAFETY: the first page of our mapping.
        let r =
            unsafe { libc::mprotect(self.base.cast(), PAGE, libc::PROT_READ | libc::PROT_EXEC) };
        assert_eq!(r, 0);
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), 2 * PAGE) };
    }
}

/// `copapy_load(file, region's code page, region's data page, out)`: the buffers of one
/// [`Region`], disjoint and valid for their lengths.
pub fn load_into(file: &[u8], region: &Region, out: &mut CopapyProgram) -> i32 {
    // SAFETY: `file` is valid for its length; the code and data pages are the region's
    // two disjoint read+write pages; `out` is a valid struct.
    unsafe {
        copapy_load(
            file.as_ptr(),
            file.len(),
            region.code(),
            PAGE,
            region.data(),
            PAGE,
            out,
        )
    }
}
