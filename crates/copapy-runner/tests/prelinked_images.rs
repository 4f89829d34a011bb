//! Pre-linked images (format version 6) against the relocatable programs they come from,
//! over random programs: both kinds round-trip through the file format bit for bit, a
//! pre-linked image installed at its addresses holds exactly the bytes the relocatable
//! program holds once installed there, it is refused anywhere else, and every truncated
//! or corrupted image is refused.

use copapy_program::{
    Arch, Base, Encoding, FormatError, InstructionBounds, Patch, Placement, Program, ProgramView,
    Role, ScalarType, Symbol,
};
use copapy_runner::prelink::prelink;
use copapy_runner::{install, InstallError};

mod common;
use common::Rng;

/// Encodings whose values reach any two buffers of this process (PC-relative within
/// ±2 GiB, or 64-bit absolute): what a 64-bit host can install anywhere.
const ENCODINGS: [Encoding; 8] = [
    Encoding::Rel32,
    Encoding::Abs64,
    Encoding::A64AdrPage21,
    Encoding::A64Lo12Scale0,
    Encoding::A64Lo12Scale2,
    Encoding::RvHi20,
    Encoding::RvLo12I,
    Encoding::RvCall,
];

fn random_program(rng: &mut Rng) -> Program {
    let code_len = 16 + 4 * rng.below(64) as usize;
    let data_len = 4 + 4 * rng.below(64) as usize;
    let code: Vec<u8> = (0..code_len).map(|_| rng.next() as u8).collect();
    let data: Vec<u8> = (0..data_len).map(|_| rng.next() as u8).collect();
    let patches = (0..rng.below(24))
        .map(|_| {
            let encoding = ENCODINGS[rng.below(ENCODINGS.len() as u64) as usize];
            let base = if rng.below(4) == 0 {
                Base::Code
            } else {
                Base::Data
            };
            let len = if base == Base::Code {
                code_len
            } else {
                data_len
            };
            Patch {
                offset: 4 * rng.below(((code_len - encoding.width()) / 4 + 1) as u64) as u32,
                encoding,
                base,
                target: rng.below(len as u64) as u32,
                addend: rng.below(17) as i32 - 8,
            }
        })
        .collect();
    let mut p = Program::new(
        Arch::X86_64,
        code,
        data,
        patches,
        rng.below(code_len as u64) as u32,
    );
    p.data_align = 4;
    p.symbols = vec![Symbol::scalar(
        "x",
        Role::Input,
        ScalarType::Float,
        4 * rng.below((data_len / 4) as u64) as u32,
    )];
    if rng.below(2) == 0 {
        p.instructions = Some(InstructionBounds::Known {
            fewest: rng.below(100),
            most: 100 + rng.below(100),
        });
    }
    p
}

#[repr(align(4096))]
struct Buffer([u8; 1 << 12]);

#[test]
fn random_programs_prelinked_install_to_the_same_bytes_and_round_trip() {
    let mut rng = Rng(0x005e_ed0f_c0de);
    let (mut code, mut data) = (
        Box::new(Buffer([0; 1 << 12])),
        Box::new(Buffer([0; 1 << 12])),
    );
    let at = Placement {
        code: code.0.as_ptr() as u64,
        data: data.0.as_ptr() as u64,
    };
    let mut installed = 0;
    for _ in 0..400 {
        let program = random_program(&mut rng);
        program.validate().unwrap();
        let file = program.encode();
        assert_eq!(Program::decode(&file).unwrap(), program);
        assert_eq!(Program::decode(&file).unwrap().encode(), file);

        let relocatable = ProgramView::parse(&file).unwrap();
        let relocated = install(&relocatable, &mut code.0, &mut data.0).map(|()| {
            (
                code.0[..program.code.len()].to_vec(),
                data.0[..program.data.len()].to_vec(),
            )
        });
        let linked = prelink(&program, at);
        // a patch that does not fit (e.g. an odd ADRP distance) fails both ways
        assert_eq!(
            relocated.is_ok(),
            linked.is_ok(),
            "{relocated:?} {linked:?}"
        );
        let (Ok((want_code, want_data)), Ok(linked)) = (relocated, linked) else {
            continue;
        };
        installed += 1;
        assert!(linked.patches.is_empty());
        let image = linked.encode();
        assert_eq!(
            image[4], 10,
            "a pre-linked image is written as format version 10"
        );
        assert_eq!(Program::decode(&image).unwrap(), linked);
        assert_eq!(Program::decode(&image).unwrap().encode(), image);
        // the image holds the patched code itself, and installs to the same bytes
        assert_eq!(linked.code, want_code);
        code.0.fill(0);
        data.0.fill(0);
        let view = ProgramView::parse(&image).unwrap();
        install(&view, &mut code.0, &mut data.0).unwrap();
        assert_eq!(&code.0[..want_code.len()], &want_code[..]);
        assert_eq!(&data.0[..want_data.len()], &want_data[..]);
        // anywhere else it is refused before anything is written
        code.0.fill(0);
        let e = install(&view, &mut code.0[16..], &mut data.0).unwrap_err();
        assert!(matches!(
            e,
            InstallError::Format(FormatError::WrongPlacement { .. })
        ));
        assert!(code.0.iter().all(|&b| b == 0));
        // every truncation and every flipped bit is refused
        for cut in 0..image.len() {
            assert!(ProgramView::parse(&image[..cut]).is_err(), "cut at {cut}");
        }
        let at_byte = rng.below(image.len() as u64) as usize;
        let mut flipped = image.clone();
        flipped[at_byte] ^= 1 << rng.below(8);
        assert!(
            ProgramView::parse(&flipped).is_err(),
            "flip in byte {at_byte}"
        );
    }
    assert!(
        installed > 100,
        "only {installed} of 400 random programs installed"
    );
}

/// A program whose patches come as the compiler writes two-operand loads: up to three
/// first halves of pairs (AArch64 `ADRP`, RISC-V `AUIPC`), then their second halves in the
/// same order, their targets walking two arrays in turn (a dot product) or jumping.
fn paired_program(rng: &mut Rng) -> Program {
    let mut p = random_program(rng);
    let data_len = p.data.len() as u64;
    let (first, second) = if rng.below(2) == 0 {
        (Encoding::A64AdrPage21, Encoding::A64Lo12Scale2)
    } else {
        (Encoding::RvHi20, Encoding::RvLo12I)
    };
    let (mut offset, mut walk) = (0u32, [0u64, data_len / 2]);
    p.patches.clear();
    while (offset as usize) + 64 < p.code.len() && p.patches.len() < 48 {
        let n = 1 + rng.below(3) as usize;
        let targets: Vec<u32> = (0..n)
            .map(|i| {
                let w = &mut walk[i % 2];
                *w = if rng.below(5) == 0 {
                    rng.below(data_len)
                } else {
                    (*w + 4) % data_len
                };
                *w as u32 & !3
            })
            .collect();
        for encoding in [first, second] {
            for &target in &targets {
                p.patches.push(Patch {
                    offset,
                    encoding,
                    base: Base::Data,
                    target,
                    // RISC-V's LO12 counts from its AUIPC, 4 bytes before: the compiler's
                    // addend, which version 10 codes an adjacent pair with
                    addend: if rng.below(8) == 0 { 4 } else { 0 }
                        + if encoding == Encoding::RvLo12I { 4 } else { 0 },
                });
                offset += 4;
            }
        }
        offset += 4 * rng.below(4) as u32;
    }
    p
}

/// Format 10 (version 8's predicted targets, adjacent pairs as one record) over programs shaped
/// like the compiler's: every program round-trips bit for bit, and every truncation and every
/// flipped bit is refused.
#[test]
fn paired_patches_round_trip_and_every_damage_is_refused() {
    let mut rng = Rng(0x0008_f11e);
    for _ in 0..60 {
        let program = paired_program(&mut rng);
        program.validate().unwrap();
        let file = program.encode();
        assert_eq!(file[4], 10, "every program is written as version 10");
        assert_eq!(Program::decode(&file).unwrap(), program);
        assert_eq!(Program::decode(&file).unwrap().encode(), file);
        for cut in 0..file.len() {
            assert!(ProgramView::parse(&file[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..file.len() {
            for bit in 0..8 {
                let mut b = file.clone();
                b[at] ^= 1 << bit;
                assert!(ProgramView::parse(&b).is_err(), "bit {bit} of byte {at}");
            }
        }
    }
}
