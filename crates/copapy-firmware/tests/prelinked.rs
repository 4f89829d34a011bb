//! Pre-linked images through the C ABI, as a firmware calls it: `copapy_load_prelinked`
//! and `copapy_load` take an image whose addresses are their buffers' and run it with
//! nothing patched; an image for other addresses is refused (`COPAPY_E_WRONG_BASE`), and
//! `copapy_load_prelinked` refuses a relocatable file (`COPAPY_E_NOT_PRELINKED`), each
//! before anything is written.

mod common;

use core::ptr::null_mut;

use common::{load_into, program, Region, COUNTER, PAGE};
use copapy_firmware::{copapy_load_prelinked, copapy_run, CopapyProgram};
use copapy_program::{InstructionBounds, Placement, Program};

const WRONG_BASE: i32 = -22;
const NOT_PRELINKED: i32 = -23;

/// The common program with its one Rel32 patch applied by hand for `region`:
/// disp32 = (data + COUNTER) - 4 ... measured from the end of the field at code + 6.
fn image_for(region: &Region) -> Vec<u8> {
    let (code, data) = (region.code() as i64, region.data() as i64);
    let mut p = program();
    let disp = (data + i64::from(COUNTER)) - (code + 2) - 4;
    p.code[2..6].copy_from_slice(&i32::try_from(disp).unwrap().to_le_bytes());
    let image = Program {
        patches: Vec::new(),
        placement: Some(Placement {
            code: code as u64,
            data: data as u64,
        }),
        instructions: Some(InstructionBounds::Unbounded),
        ..p
    };
    image.encode()
}

fn load_prelinked(file: &[u8], region: &Region, out: &mut CopapyProgram) -> i32 {
    // SAFETY: `file` is valid for its length, the region's two pages are disjoint and
    // read+write, `out` is a valid struct; no imports.
    unsafe {
        copapy_load_prelinked(
            file.as_ptr(),
            file.len(),
            region.code(),
            PAGE,
            region.data(),
            PAGE,
            core::ptr::null(),
            0,
            out,
            null_mut(),
            null_mut(),
        )
    }
}

fn counter(region: &Region) -> i32 {
    // SAFETY: the data page is mapped read+write and holds the counter at COUNTER.
    unsafe {
        region
            .data()
            .add(COUNTER as usize)
            .cast::<i32>()
            .read_unaligned()
    }
}

fn zeroed() -> CopapyProgram {
    // SAFETY: every field is an integer or a raw pointer, for which zero is valid.
    unsafe { core::mem::zeroed() }
}

#[test]
fn an_image_runs_at_its_addresses_from_either_loader() {
    for prelinked_only in [true, false] {
        let region = Region::new();
        let image = image_for(&region);
        assert_eq!(image[4], 10);
        let mut p = zeroed();
        let r = if prelinked_only {
            load_prelinked(&image, &region, &mut p)
        } else {
            load_into(&image, &region, &mut p)
        };
        assert_eq!(r, 0);
        region.seal();
        for _ in 0..3 {
            // SAFETY: loaded into the sealed region, which outlives the runs.
            assert_eq!(unsafe { copapy_run(&p) }, 0);
        }
        assert_eq!(counter(&region), 3);
    }
}

#[test]
fn an_image_for_other_buffers_or_a_relocatable_file_is_refused_untouched() {
    let (region, elsewhere) = (Region::new(), Region::new());
    let cases = [
        (image_for(&elsewhere), WRONG_BASE),
        (program().encode(), NOT_PRELINKED),
    ];
    for (file, code) in cases {
        let mut p = zeroed();
        assert_eq!(load_prelinked(&file, &region, &mut p), code);
        assert_eq!(p.loaded, 0, "out untouched");
        // SAFETY: the code page is mapped read+write.
        let code_page = unsafe { core::slice::from_raw_parts(region.code(), 16) };
        assert!(code_page.iter().all(|&b| b == 0), "nothing written");
    }
    let mut p = zeroed();
    assert_eq!(
        load_into(&image_for(&elsewhere), &region, &mut p),
        WRONG_BASE
    );
}
