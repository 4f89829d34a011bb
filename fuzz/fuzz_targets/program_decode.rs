//! Program decoding, validation and installation never panic, and whatever decodes
//! re-encodes to the same bytes. Half the inputs get a correct checksum, so the fuzzer
//! reaches every check after it. A relocatable program that installs is also pre-linked
//! for the same buffers (format version 10 with its pre-linked flag): the image
//! round-trips and installs to the same bytes. Files of versions 9 and 10 get their checksum
//! fixed too, so version 10's pair records and half-word data are reached.
#![no_main]

use copapy_program::compact_file::{CHECKSUM_RANGE, FIXED_BYTES};
use copapy_program::format::{is_compact_file, Crc32, CHECKSUM_AT, HEADER_BYTES};
use copapy_program::placement::PlacementProblem;
use copapy_program::{FormatError, Program, ProgramView};
use libfuzzer_sys::fuzz_target;

#[repr(align(4096))]
struct Buffers([u8; 1 << 16]);

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let mut file = rest.to_vec();
    let compact = file
        .get(4..6)
        .is_some_and(|v| is_compact_file(u16::from_le_bytes([v[0], v[1]])));
    if mode & 1 == 1 && compact && file.len() >= FIXED_BYTES {
        // versions 9 and 10: the CRC-32 at 6..10, over everything else
        let sum = copapy_program::compact_file::checksum(&file).to_le_bytes();
        file[CHECKSUM_RANGE].copy_from_slice(&sum);
    } else if mode & 1 == 1 && file.len() >= HEADER_BYTES {
        let mut crc = Crc32::new();
        crc.update(&file[..CHECKSUM_AT]);
        crc.update(&file[HEADER_BYTES..]);
        let sum = crc.finish().to_le_bytes();
        file[CHECKSUM_AT..HEADER_BYTES].copy_from_slice(&sum);
    }
    let Ok(view) = ProgramView::parse(&file) else {
        assert!(Program::decode(&file).is_err());
        return;
    };
    let program = Program::decode(&file).expect("a file that parses decodes");
    program.validate().expect("a decoded program validates");
    let again = program.encode();
    if view.version == program.format_version() {
        assert_eq!(again, file, "decode then encode changes the file");
    } else {
        // an older writer's file (versions 4 to 9) is written back as the newest version:
        // the same program in other bytes
        let back = Program::decode(&again).expect("a re-encoded file decodes");
        assert_eq!(
            back, program,
            "re-encoding in the newest version changes the program"
        );
    }
    for s in view.symbols() {
        assert_eq!(s.offsets().count(), s.len());
    }
    // Installation (copy + patch, no execution) into buffers of both alignments.
    let mut code = Box::new(Buffers([0; 1 << 16]));
    let mut data = Box::new(Buffers([0; 1 << 16]));
    let _ = copapy_runner::install(&view, &mut code.0[1..], &mut data.0[3..]);
    if copapy_runner::install(&view, &mut code.0, &mut data.0).is_ok() && view.placement().is_none()
    {
        let (code_len, data_len) = (view.code.len(), view.data.len());
        let want = (code.0[..code_len].to_vec(), data.0[..data_len].to_vec());
        let at = copapy_program::Placement {
            code: code.0.as_ptr() as u64,
            data: data.0.as_ptr() as u64,
        };
        // it installed there, so only a 32-bit program above 4 GiB (this process's
        // buffers) cannot be pre-linked for them
        let linked = match copapy_runner::prelink::prelink(&program, at) {
            Ok(linked) => linked,
            Err(copapy_runner::prelink::PrelinkError::Format(FormatError::BadPlacement {
                problem: PlacementProblem::OutsideAddressSpace(_),
            })) => return,
            Err(e) => panic!("installs but does not pre-link: {e}"),
        };
        let image = linked.encode();
        assert_eq!(Program::decode(&image).expect("an image decodes"), linked);
        let image_view = ProgramView::parse(&image).expect("an image parses");
        code.0.fill(0);
        data.0.fill(0);
        copapy_runner::install(&image_view, &mut code.0, &mut data.0).expect("at its addresses");
        assert_eq!(
            (code.0[..code_len].to_vec(), data.0[..data_len].to_vec()),
            want
        );
    }
});
