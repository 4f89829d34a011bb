//! A runner must refuse damaged or hostile program files with an error, never panic or
//! touch memory outside its buffers. These tests throw truncations, bit flips and random
//! (but correctly checksummed) files at the parser and the loader.

use copapy_program::format::CHECKSUM_AT;
use copapy_program::format::{Crc32, HEADER_BYTES};
use copapy_program::{
    Arch, Base, ElementType, Encoding, Patch, Program, ProgramView, Role, ScalarType, Symbol,
};
use copapy_runner::LoadedProgram;

/// A small valid x86_64 program: `movss xmm0,[rip+d0]; addss xmm0,xmm0; movss [rip+d4],xmm0; ret`.
fn valid_program() -> Program {
    let code = vec![
        0xF3, 0x0F, 0x10, 0x05, 0, 0, 0, 0, // movss xmm0, [rip+rel32]
        0xF3, 0x0F, 0x58, 0xC0, // addss xmm0, xmm0
        0xF3, 0x0F, 0x11, 0x05, 0, 0, 0, 0,    // movss [rip+rel32], xmm0
        0xC3, // ret
    ];
    let mut data = 1.25f32.to_le_bytes().to_vec();
    data.extend([0; 4]);
    let patch = |offset, target| Patch {
        offset,
        encoding: Encoding::Rel32,
        base: Base::Data,
        target,
        addend: -4,
    };
    let mut p = Program::new(Arch::X86_64, code, data, vec![patch(4, 0), patch(16, 4)], 0);
    p.symbols = vec![
        Symbol::scalar("x", Role::Input, ScalarType::Float, 0),
        Symbol {
            name: "xy".into(),
            role: Role::Output,
            ty: ElementType::Float,
            shape: vec![2],
            offsets: vec![0, 4],
        },
    ];
    p
}

/// [`valid_program`] with a byte variable too (format version 3): its elements at
/// unaligned offsets exercise the byte-by-byte layout checks.
fn with_bytes() -> Program {
    let mut p = valid_program();
    p.symbols.push(Symbol {
        name: "b".into(),
        role: Role::Input,
        ty: ElementType::Byte,
        shape: vec![3],
        offsets: vec![1, 2, 7],
    });
    p
}

/// Every file the hostile tests start from: versions 2 and 3 (what older copapy wrote)
/// and the version 10 files of the same programs.
fn valid_files() -> [Vec<u8>; 4] {
    let files = [
        valid_program().encode_legacy(),
        with_bytes().encode_legacy(),
        valid_program().encode(),
        with_bytes().encode(),
    ];
    let versions = files.each_ref().map(|f| f[4]);
    assert_eq!(versions, [2, 3, 10, 10]);
    files
}

/// The file a writer of `file`'s version makes of `program` (one encoding per program).
fn encoded_like(program: &Program, file: &[u8]) -> Vec<u8> {
    if file[4] == 10 {
        program.encode()
    } else {
        program.encode_legacy()
    }
}

mod common;
use common::Rng;

fn reseal(file: &mut [u8]) {
    if matches!(file.get(4), Some(&9 | &10)) && file.len() >= 10 {
        let sum = copapy_program::compact_file::checksum(file).to_le_bytes();
        file[6..10].copy_from_slice(&sum);
        return;
    }
    let mut crc = Crc32::new();
    crc.update(&file[..CHECKSUM_AT]);
    crc.update(&file[HEADER_BYTES..]);
    let sum = crc.finish().to_le_bytes();
    file[CHECKSUM_AT..HEADER_BYTES].copy_from_slice(&sum);
}

#[test]
fn the_valid_program_runs() {
    let file = valid_program().encode();
    let mut loaded = LoadedProgram::load_file(&file).expect("valid file loads");
    loaded.run();
    assert_eq!(&loaded.data()[4..8], &2.5f32.to_le_bytes());
}

#[test]
fn every_truncation_is_refused() {
    for file in valid_files() {
        for len in 0..file.len() {
            assert!(
                ProgramView::parse(&file[..len]).is_err(),
                "accepted a file cut to {len} bytes"
            );
            assert!(LoadedProgram::load_file(&file[..len]).is_err());
        }
    }
}

#[test]
fn every_single_byte_corruption_is_refused() {
    for file in valid_files() {
        for at in 0..file.len() {
            for flip in [0x01u8, 0x80, 0xFF] {
                let mut bad = file.clone();
                bad[at] ^= flip;
                assert!(
                    ProgramView::parse(&bad).is_err(),
                    "accepted a file with byte {at} xor {flip:#x}"
                );
            }
        }
    }
}

#[test]
fn random_files_with_a_correct_checksum_never_panic() {
    for base in valid_files() {
        random_mutations(&base);
    }
}

fn random_mutations(base: &[u8]) {
    // Fields are garbage but the checksum matches, so every later check is exercised.
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut file = base.to_vec();
        let flips = 1 + (rng.next() % 6) as usize;
        for _ in 0..flips {
            let at = (rng.next() % file.len() as u64) as usize;
            file[at] = rng.next() as u8;
        }
        reseal(&mut file);
        if let Ok(view) = ProgramView::parse(&file) {
            accepted += 1;
            // an accepted file is the one encoding of its program (the version too)
            assert_eq!(encoded_like(&Program::decode(&file).unwrap(), &file), file);
            // whatever passed parsing must load (or be refused) without panicking; only
            // programs whose bytes are unchanged code may be run
            if let Ok(loaded) = LoadedProgram::load_view(&view) {
                drop(loaded);
            }
        }
    }
    assert!(accepted < 20_000, "the parser accepted every mutation");
}

/// Inputs the fuzzer (`fuzz/fuzz_targets/program_decode.rs`) found, kept so the bugs stay
/// fixed: the first byte says whether the fuzzer resealed the checksum, as in the target.
#[test]
fn fuzzer_findings_stay_fixed() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fuzz-regressions/program_decode"
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("regression inputs") {
        let input = std::fs::read(entry.unwrap().path()).unwrap();
        let Some((&mode, rest)) = input.split_first() else {
            continue;
        };
        let mut file = rest.to_vec();
        if mode & 1 == 1 && file.len() >= HEADER_BYTES {
            reseal(&mut file);
        }
        if let Ok(view) = ProgramView::parse(&file) {
            // whatever is accepted is the one canonical encoding of its program
            let program = Program::decode(&file).unwrap();
            assert_eq!(encoded_like(&program, &file), file);
            let mut code = vec![0u8; 1 << 16];
            let mut data = vec![0u8; 1 << 16];
            let _ = copapy_runner::install(&view, &mut code, &mut data);
        }
        seen += 1;
    }
    assert!(seen >= 1);
}

#[test]
fn reserved_bytes_must_be_zero() {
    let file = valid_program().encode_legacy();
    // header byte 7, the first patch record's reserved u16, the first symbol's reserved bytes
    let patches_at = HEADER_BYTES + 21 + 8;
    let symbols_at = patches_at + 2 * 16;
    for at in [
        7,
        patches_at + 6,
        patches_at + 7,
        symbols_at + 3,
        symbols_at + 6,
        symbols_at + 7,
    ] {
        let mut bad = file.clone();
        bad[at] = 1;
        reseal(&mut bad);
        let e = ProgramView::parse(&bad).unwrap_err();
        assert!(e.to_string().contains("reserved"), "byte {at}: {e}");
    }
}
