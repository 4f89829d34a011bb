//! Program decoding, validation and installation never panic, and whatever decodes
//! re-encodes to the same bytes. Half the inputs get a correct checksum, so the fuzzer
//! reaches every check after it.
#![no_main]

use copapy_program::format::{Crc32, CHECKSUM_AT, HEADER_BYTES};
use copapy_program::{Program, ProgramView};
use libfuzzer_sys::fuzz_target;

#[repr(align(4096))]
struct Buffers([u8; 1 << 16]);

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let mut file = rest.to_vec();
    if mode & 1 == 1 && file.len() >= HEADER_BYTES {
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
    assert_eq!(program.encode(), file, "decode then encode changes the file");
    for s in view.symbols() {
        assert_eq!(s.offsets().count(), s.len());
    }
    // Installation (copy + patch, no execution) into buffers of both alignments.
    let mut code = Box::new(Buffers([0; 1 << 16]));
    let mut data = Box::new(Buffers([0; 1 << 16]));
    let _ = copapy_runner::install(&view, &mut code.0, &mut data.0);
    let _ = copapy_runner::install(&view, &mut code.0[1..], &mut data.0[3..]);
});
