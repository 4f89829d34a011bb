//! The firmware-sized runner: install a validated program into caller-provided
//! buffers, then call it. No allocator, no OS.

use core::fmt;

use copapy_program::format::Section;
use copapy_program::{Arch, Base, FormatError, ProgramView};

use crate::patch::{apply_patch_iter, PatchError};

/// Why [`install`] refused a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallError {
    /// The program does not fit this runner (architecture, features, alignment).
    Format(FormatError),
    /// A buffer is too small or a patch cannot be applied at these addresses.
    Patch(PatchError),
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallError::Format(e) => e.fmt(f),
            InstallError::Patch(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for InstallError {}

impl From<FormatError> for InstallError {
    fn from(e: FormatError) -> Self {
        InstallError::Format(e)
    }
}

impl From<PatchError> for InstallError {
    fn from(e: PatchError) -> Self {
        InstallError::Patch(e)
    }
}

/// Checks that a buffer at `addr` meets the program's alignment for `section`.
pub fn check_aligned(section: Section, align: u32, addr: usize) -> Result<(), FormatError> {
    if addr.is_multiple_of(align as usize) {
        Ok(())
    } else {
        Err(FormatError::BufferMisaligned {
            section,
            align,
            addr,
        })
    }
}

/// Copies a parsed program into caller-provided memory and patches it for the
/// addresses of those buffers: the whole runner for a `no_std` target whose code
/// and data memory are static arrays (e.g. firmware running from RAM).
///
/// `code` must be at least `view.code.len()` bytes and `data` at least
/// `view.data.len()`, aligned as the program's `code_align` and `data_align` say; the
/// tails beyond are left as they are. Nothing is written unless every check passes
/// except the patches themselves, which are checked one by one as they are applied.
/// The caller then makes `code` executable if its platform needs that (and flushes
/// the instruction cache on non-x86 targets) and calls it with [`call_entry`]. Check
/// [`ProgramView::check_arch`] and [`ProgramView::check_features`] first.
pub fn install(
    view: &ProgramView<'_>,
    code: &mut [u8],
    data: &mut [u8],
) -> Result<(), InstallError> {
    let (code, data) = copy_in(view, code, data)?;
    let (code_addr, data_addr) = (code.as_ptr() as u64, data.as_ptr() as u64);
    apply_patch_iter(code, code_addr, data_addr, data.len(), view.patches())?;
    Ok(())
}

/// [`install`] for pre-linked images only (format version 10 with its pre-linked flag, or 6; from
/// [`ProgramView::parse_prelinked`]): checks the buffers are at the image's addresses and
/// copies; a relocatable program is refused ([`FormatError::NotPrelinked`]). A firmware
/// that loads only such images links no patch code through it.
pub fn install_prelinked(
    view: &ProgramView<'_>,
    code: &mut [u8],
    data: &mut [u8],
) -> Result<(), InstallError> {
    if view.placement().is_none() {
        return Err(FormatError::NotPrelinked {
            found: view.version,
        }
        .into());
    }
    copy_in(view, code, data).map(drop)
}

/// The checks before anything is written (sizes, a pre-linked image's addresses,
/// alignment), then the copy of code and data; the parts of the buffers in use. Inlined:
/// a firmware has one of its two callers, and a call costs code.
#[inline(always)]
fn copy_in<'b>(
    view: &ProgramView<'_>,
    code: &'b mut [u8],
    data: &'b mut [u8],
) -> Result<(&'b mut [u8], &'b mut [u8]), InstallError> {
    if code.len() < view.code.len() {
        return Err(PatchError::BufferTooSmall {
            base: Base::Code,
            needed: view.code.len(),
            available: code.len(),
        }
        .into());
    }
    if data.len() < view.data.len() {
        return Err(PatchError::BufferTooSmall {
            base: Base::Data,
            needed: view.data.len(),
            available: data.len(),
        }
        .into());
    }
    // a pre-linked image runs only where it was linked for (and has no patches)
    if let Some(placement) = view.placement() {
        placement.check_buffers(code.as_ptr() as u64, data.as_ptr() as u64)?;
    }
    check_aligned(Section::Code, view.code_align, code.as_ptr() as usize)?;
    check_aligned(Section::Data, view.data_align, data.as_ptr() as usize)?;
    // zip instead of slicing and copy_from_slice: the same copy without a panic path
    let (code, _) = code
        .split_at_mut_checked(view.code.len())
        .unwrap_or((&mut [], &mut []));
    let (data, _) = data
        .split_at_mut_checked(view.data.len())
        .unwrap_or((&mut [], &mut []));
    for (d, s) in code.iter_mut().zip(view.code) {
        *d = *s;
    }
    view.data.copy_to(data);
    Ok((code, data))
}

/// The signature of every copapy entry point: the stencil ABI's four register
/// arguments (two floats, two ints), all passed as zero.
pub type EntryFn = unsafe extern "C" fn(f32, f32, i32, i32);

/// Calls the installed program whose code starts at `code` and whose entry is
/// `entry` bytes into it (Thumb code is entered with the address's low bit set).
///
/// # Safety
///
/// Executing code cannot be checked: `code` must hold a program installed by
/// [`install`] for this machine's architecture, still patched for the addresses of
/// its code and data buffers, in memory the CPU may execute; the data buffer must be
/// alive and not borrowed elsewhere while the program runs; `entry` must be the
/// program's entry offset.
pub unsafe fn call_entry(code: *const u8, entry: u32, arch: Arch) {
    let mut addr = code as usize + entry as usize;
    if arch == Arch::Thumb {
        addr |= 1;
    }
    // SAFETY: the caller guarantees `addr` is the entry of a program for this CPU and
    // ABI; a usize-to-fn-pointer transmute is how a loader calls generated code.
    unsafe {
        let f: EntryFn = core::mem::transmute::<usize, EntryFn>(addr);
        f(0.0, 0.0, 0, 0);
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use copapy_program::{Encoding, Patch, Program};
    use std::string::ToString;
    use std::vec;

    #[test]
    fn install_into_static_buffers() {
        let code = vec![0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, 0xC3];
        let p = Patch {
            offset: 4,
            encoding: Encoding::Rel32,
            base: Base::Data,
            target: 4,
            addend: -4,
        };
        let mut program = Program::new(
            Arch::X86_64,
            code.clone(),
            vec![1, 2, 3, 4, 5, 6, 7, 8],
            vec![p],
            0,
        );
        program.code_align = 16;
        program.data_align = 4;
        let file = program.encode();
        let view = ProgramView::parse(&file).unwrap();

        #[repr(align(16))]
        struct Aligned([u8; 32]);
        let mut code_mem = Aligned([0; 32]);
        let mut data_mem = Aligned([0; 32]);
        install(&view, &mut code_mem.0[..16], &mut data_mem.0[..8]).unwrap();
        assert_eq!(data_mem.0[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
        let disp = i32::from_le_bytes(code_mem.0[4..8].try_into().unwrap()) as i64;
        let field_end = code_mem.0.as_ptr() as i64 + 8;
        assert_eq!(field_end + disp, data_mem.0.as_ptr() as i64 + 4);
        let mut expected = code.clone();
        expected[4..8].copy_from_slice(&code_mem.0[4..8]);
        assert_eq!(code_mem.0[..9], expected[..]);

        assert_eq!(
            install(&view, &mut code_mem.0, &mut data_mem.0[..4]),
            Err(InstallError::Patch(PatchError::BufferTooSmall {
                base: Base::Data,
                needed: 8,
                available: 4
            }))
        );
        let e = install(&view, &mut code_mem.0[1..], &mut data_mem.0).unwrap_err();
        assert!(
            matches!(
                e,
                InstallError::Format(FormatError::BufferMisaligned {
                    section: Section::Code,
                    align: 16,
                    ..
                })
            ),
            "{e}"
        );
        let e = install(&view, &mut code_mem.0, &mut data_mem.0[2..]).unwrap_err();
        assert!(e.to_string().contains("not aligned to the 4 bytes"), "{e}");
    }
}
