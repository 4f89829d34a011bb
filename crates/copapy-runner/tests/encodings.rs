//! Every instruction field the runner patches, checked against instructions
//! assembled by the real toolchain ("golden bytes").
//!
//! `fixtures/encodings/*.s` hold, per instruction set, an instruction with a zero
//! field and the same instruction with a known field value, both assembled by zig cc
//! (`fixtures/encodings/build.sh`). A case starts from the zero-field instruction,
//! writes the value with [`write_field`] and must reproduce the assembler's bytes.
//! The limits of each field, misaligned values and out-of-range addresses must be
//! refused without touching the instruction, and for random in-range values an
//! independent decoder (`encodings/decode.rs`) must read back what was written, with
//! every other bit of the instruction unchanged.

#[path = "encodings/decode.rs"]
mod decode;
#[path = "encodings/elf.rs"]
mod elf;

use copapy_program::{Base, Encoding, Patch};
use copapy_runner::fields::{write_field, FieldError};
use copapy_runner::{apply_patches, PatchError};
use decode::{decode, field_mask, holds};
use elf::Text;

fn fixture(name: &str) -> Text {
    let bytes: &[u8] = match name {
        "x86_64" => include_bytes!("fixtures/encodings/x86_64.o"),
        "aarch64" => include_bytes!("fixtures/encodings/aarch64.o"),
        "arm" => include_bytes!("fixtures/encodings/arm.o"),
        "thumb" => include_bytes!("fixtures/encodings/thumb.o"),
        "riscv64" => include_bytes!("fixtures/encodings/riscv64.o"),
        "riscv32" => include_bytes!("fixtures/encodings/riscv32.o"),
        _ => unreachable!("no fixture {name}"),
    };
    let text = elf::read_text(bytes);
    // A relocation would mean the assembler left a field for the linker, and its
    // bytes would be a placeholder rather than the value under test.
    assert_eq!(
        text.relocation_sections, 0,
        "{name}.o has relocations on .text: rewrite the case so the assembler resolves it"
    );
    text
}

impl Text {
    fn offset(&self, label: &str) -> usize {
        *self
            .labels
            .get(label)
            .unwrap_or_else(|| panic!("no label {label} in the fixture (rerun build.sh?)"))
    }

    /// Length of the instruction at `label`: up to the next label or the section end.
    fn len_of(&self, label: &str) -> usize {
        let start = self.offset(label);
        let end = self.labels.values().filter(|&&o| o > start).min();
        end.copied().unwrap_or(self.bytes.len()) - start
    }

    /// The `len` bytes at `label`.
    fn at(&self, label: &str, len: usize) -> Vec<u8> {
        let start = self.offset(label);
        self.bytes[start..start + len].to_vec()
    }
}

/// Writing `value` at byte `field` of the instruction at label `from` gives the
/// instruction at label `want`.
struct Case<'a> {
    from: &'a str,
    want: &'a str,
    field: usize,
    encoding: Encoding,
    value: i128,
}

const fn case(
    from: &'static str,
    want: &'static str,
    encoding: Encoding,
    value: i128,
) -> Case<'static> {
    Case {
        from,
        want,
        field: 0,
        encoding,
        value,
    }
}

const fn x86(
    from: &'static str,
    want: &'static str,
    field: usize,
    encoding: Encoding,
    value: i128,
) -> Case<'static> {
    Case {
        from,
        want,
        field,
        encoding,
        value,
    }
}

// x86_64: the rel32 of `call`/`jmp` counts from the end of the 5-byte instruction,
// so `call .+D` holds D - 5 (S + A - P with the usual A = -4 and P one byte in).
const X86_64: &[Case] = &[
    x86("call_zero", "call_fwd", 1, Encoding::Rel32, 0x1234_5678 - 5),
    x86("call_zero", "call_back", 1, Encoding::Rel32, -0x1000 - 5),
    x86("jmp_min", "jmp_max", 1, Encoding::Rel32, i32::MAX as i128),
    x86("jmp_max", "jmp_min", 1, Encoding::Rel32, i32::MIN as i128),
    x86("movss_zero", "movss_fwd", 4, Encoding::Rel32, 0x1234),
    x86("lea_zero", "lea_back", 3, Encoding::Rel32, -0x765_4321),
    x86(
        "movabs_zero",
        "movabs_val",
        2,
        Encoding::Abs64,
        0x1122_3344_5566_7788,
    ),
    x86(
        "movabs_zero",
        "movabs_max",
        2,
        Encoding::Abs64,
        0xFEDC_BA98_7654_3210,
    ),
    x86(
        "quad_zero",
        "quad_val",
        0,
        Encoding::Abs64,
        0x8000_0000_0000_0001,
    ),
];

// AArch64: the lo12 values are whole addresses, of which the field keeps bits 0–11.
const AARCH64: &[Case] = &[
    case("b_zero", "b_fwd", Encoding::A64Branch26, 0x1234),
    case("b_zero", "b_back", Encoding::A64Branch26, -0x1234),
    case("b_zero", "b_max", Encoding::A64Branch26, 0x7FF_FFFC),
    case("b_zero", "b_min", Encoding::A64Branch26, -0x800_0000),
    case("bl_zero", "bl_fwd", Encoding::A64Branch26, 0x2AB_CDE8),
    case("bl_zero", "bl_back", Encoding::A64Branch26, -4),
    case("adrp_zero", "adrp_fwd", Encoding::A64AdrPage21, 0x5000),
    case("adrp_zero", "adrp_back", Encoding::A64AdrPage21, -0x3000),
    case("adrp_zero", "adrp_max", Encoding::A64AdrPage21, 0xFFFF_F000),
    case(
        "adrp_zero",
        "adrp_min",
        Encoding::A64AdrPage21,
        -0x1_0000_0000,
    ),
    case(
        "adrp17_zero",
        "adrp17_odd",
        Encoding::A64AdrPage21,
        0x1234_5000,
    ),
    case("add_zero", "add_val", Encoding::A64Lo12Scale0, 0x7F12_3123),
    case("add_zero", "add_max", Encoding::A64Lo12Scale0, 0xFFF),
    case(
        "ldrb_zero",
        "ldrb_val",
        Encoding::A64Lo12Scale0,
        0x1_0000_0ABC,
    ),
    case(
        "ldrh_zero",
        "ldrh_val",
        Encoding::A64Lo12Scale1,
        0x5555_59BE,
    ),
    case(
        "ldr_s_zero",
        "ldr_s_val",
        Encoding::A64Lo12Scale2,
        0x8_0000_01FC,
    ),
    case("str_w_zero", "str_w_max", Encoding::A64Lo12Scale2, 0xFFC),
    case("ldr_d_zero", "ldr_d_val", Encoding::A64Lo12Scale3, 0x2FF8),
    case("ldr_x_zero", "ldr_x_val", Encoding::A64Lo12Scale3, 0x1808),
    case(
        "ldr_q_zero",
        "ldr_q_val",
        Encoding::A64Lo12Scale4,
        0xCAFE_FAB0,
    ),
];

// ARM: a branch's value includes the implicit addend -8 (PC reads 8 ahead), so
// `b .+D` holds D - 8.
const ARM: &[Case] = &[
    case("b_zero", "b_fwd", Encoding::ArmBranch24, 0x1234 - 8),
    case("b_zero", "b_back", Encoding::ArmBranch24, -0x1234 - 8),
    case("b_zero", "b_max", Encoding::ArmBranch24, 0x200_0004 - 8),
    case("b_zero", "b_min", Encoding::ArmBranch24, -0x1FF_FFF8 - 8),
    case("bne_zero", "bne_fwd", Encoding::ArmBranch24, 0x40 - 8),
    case("movw_zero", "movw_val", Encoding::ArmMovwAbs, 0xDEAD_BEEF),
    case(
        "movw12_zero",
        "movw12_val",
        Encoding::ArmMovwAbs,
        0x0042_1234,
    ),
    case("movt_zero", "movt_val", Encoding::ArmMovtAbs, 0xDEAD_BEEF),
    case(
        "movtne_zero",
        "movtne_val",
        Encoding::ArmMovtAbs,
        0x8001_7FFF,
    ),
    case("word_zero", "word_val", Encoding::Abs32, 0xDEAD_BEEF),
];

// Thumb: a branch's value includes the implicit addend -4, so `b.w .+D` holds D - 4.
const THUMB: &[Case] = &[
    case("bw_zero", "bw_fwd", Encoding::ThumbBranch24, 0x1234 - 4),
    case("bw_zero", "bw_back", Encoding::ThumbBranch24, -0x1234 - 4),
    case("bw_zero", "bw_i2", Encoding::ThumbBranch24, 0x40_0000),
    case("bw_zero", "bw_i1", Encoding::ThumbBranch24, 0x80_0000),
    case("bw_zero", "bw_neg_i1", Encoding::ThumbBranch24, -0x80_0000),
    case("bw_zero", "bw_max", Encoding::ThumbBranch24, 0xFF_FFFE),
    case("bw_zero", "bw_min", Encoding::ThumbBranch24, -0x100_0000),
    case("bl_zero", "bl_fwd", Encoding::ThumbBranch24, 0xA_BCDE - 4),
    case("bl_zero", "bl_back", Encoding::ThumbBranch24, -0xC0_0000),
    case("movw_zero", "movw_val", Encoding::ThumbMovwAbs, 0xDEAD_BEEF),
    case(
        "movw9_zero",
        "movw9_val",
        Encoding::ThumbMovwAbs,
        0x1234_0801,
    ),
    case("movt_zero", "movt_val", Encoding::ThumbMovtAbs, 0xDEAD_BEEF),
    case(
        "movt11_zero",
        "movt11_val",
        Encoding::ThumbMovtAbs,
        0x7F80_0ABC,
    ),
    case("word_zero", "word_val", Encoding::Abs32, 0x1234_5678),
];

/// The distances of the `pair` macro in riscv.s (from each AUIPC to its target).
const RISCV_DISTANCES: &[(&str, i128)] = &[
    ("small", 0x2A),
    ("carry", 0x1FFC),
    ("lo_max", 0x7FF),
    ("lo_min", 0x800),
    ("back", -0x801),
    ("back_carry", -0x1234),
    ("big", 0x1234_5FFC),
    ("max", 0x7FFF_F7FF),
    ("min", -0x8000_0000),
    ("reach_min", -0x8000_0800),
];

/// Every instruction of a `pair` in riscv.s, from its zero-field instruction. The
/// PCREL_LO12 value is the AUIPC's distance (the host folds P_lo - P_hi into A).
fn riscv_cases() -> Vec<(String, String, Encoding, i128)> {
    let mut cases = Vec::new();
    for &(name, d) in RISCV_DISTANCES {
        for (from, want, encoding) in [
            ("auipc_zero", "hi", Encoding::RvHi20),
            ("addi_zero", "lo", Encoding::RvLo12I),
            ("auipc_t1_zero", "st_hi", Encoding::RvHi20),
            ("sw_zero", "st", Encoding::RvLo12S),
            ("auipc_t2_zero", "l_hi", Encoding::RvHi20),
            ("flw_zero", "flw", Encoding::RvLo12I),
            ("call_zero", "call", Encoding::RvCall),
            ("tail_zero", "tail", Encoding::RvCall),
        ] {
            cases.push((from.to_string(), format!("{want}_{name}"), encoding, d));
        }
    }
    cases
}

/// Sets every field bit of `insn`, so that a writer that only ORs its value in
/// (without clearing the field) fails the golden comparison.
fn fill_field(encoding: Encoding, insn: &mut [u8]) {
    for (i, m) in field_mask(encoding).into_iter().enumerate() {
        for (b, mb) in insn[i * 4..i * 4 + 4].iter_mut().zip(m.to_le_bytes()) {
            *b |= mb;
        }
    }
}

fn check_golden(arch: &str, text: &Text, c: &Case) {
    let (encoding, value, field) = (c.encoding, c.value, c.field);
    let len = text.len_of(c.want);
    assert_eq!(
        text.len_of(c.from),
        len,
        "{arch}: {} and {} differ in length",
        c.from,
        c.want
    );
    let expected = text.at(c.want, len);
    for dirty in [false, true] {
        let mut insn = text.at(c.from, len);
        let end = field + encoding.width();
        if dirty {
            fill_field(encoding, &mut insn[field..end]);
        }
        write_field(encoding, &mut insn[field..end], value).unwrap_or_else(|e| {
            panic!("{arch} {}: {encoding:?} refused {value:#x}: {e:?}", c.want)
        });
        assert_eq!(
            insn,
            expected,
            "{arch} {}: {encoding:?} with {value:#x} (starting from {}{}) differs from the assembler",
            c.want,
            c.from,
            if dirty { " with the field all ones" } else { "" }
        );
    }
}

fn check_cases(arch: &str, cases: &[Case]) {
    let text = fixture(arch);
    for c in cases {
        check_golden(arch, &text, c);
    }
}

#[test]
fn x86_64_fields_match_the_assembler() {
    check_cases("x86_64", X86_64);
}

#[test]
fn aarch64_fields_match_the_assembler() {
    check_cases("aarch64", AARCH64);
}

#[test]
fn arm_fields_match_the_assembler() {
    check_cases("arm", ARM);
}

#[test]
fn thumb_fields_match_the_assembler() {
    check_cases("thumb", THUMB);
}

#[test]
fn riscv_fields_match_the_assembler() {
    for arch in ["riscv64", "riscv32"] {
        let text = fixture(arch);
        for (from, want, encoding, value) in riscv_cases() {
            let c = Case {
                from: &from,
                want: &want,
                field: 0,
                encoding,
                value,
            };
            check_golden(arch, &text, &c);
        }
    }
}

#[test]
fn every_encoding_has_a_golden_case() {
    let mut covered: Vec<Encoding> = [X86_64, AARCH64, ARM, THUMB]
        .iter()
        .flat_map(|cases| cases.iter().map(|c| c.encoding))
        .collect();
    covered.extend(riscv_cases().into_iter().map(|c| c.2));
    for e in Encoding::ALL {
        assert!(covered.contains(&e), "no golden case for {e:?}");
    }
}

// ---- through apply_patches, with chosen code and data addresses ----

/// Lays the zero-field instructions `from` out as a code buffer, applies `patches`
/// and compares with the golden instructions `want` laid out the same way.
fn check_program(
    arch: &str,
    layout: &[(&str, &str)],
    code_addr: u64,
    data_addr: u64,
    data_len: usize,
    patches: &[Patch],
) {
    let text = fixture(arch);
    let mut code = Vec::new();
    let mut expected = Vec::new();
    for &(from, want) in layout {
        let n = text.len_of(want);
        assert_eq!(text.len_of(from), n, "{from} and {want} differ in length");
        code.extend(text.at(from, n));
        expected.extend(text.at(want, n));
    }
    apply_patches(&mut code, code_addr, data_addr, data_len, patches)
        .unwrap_or_else(|e| panic!("{arch}: {e}"));
    assert_eq!(
        code, expected,
        "{arch}: patched program differs from the assembler"
    );
}

fn patch(offset: u32, encoding: Encoding, base: Base, target: u32, addend: i32) -> Patch {
    Patch {
        offset,
        encoding,
        base,
        target,
        addend,
    }
}

#[test]
fn x86_64_patches_match_the_assembler() {
    let code = 0x7000_0000;
    check_program(
        "x86_64",
        &[("call_zero", "call_back"), ("movss_zero", "movss_fwd")],
        code,
        0x7000_1200,
        0x100,
        &[
            // call .-0x1000: the callee is at code - 0x1000 (expressed as code target 0
            // with the distance folded into A), A = -4.
            patch(1, Encoding::Rel32, Base::Code, 0, -0x1000 - 4),
            // movss xmm0, [rip+0x1234] at 5: S + A = its end + 0x1234 = code + 13 + 0x1234,
            // i.e. data byte 0x41 (0x7000_1241) with A = -4.
            patch(9, Encoding::Rel32, Base::Data, 0x41, -4),
        ],
    );
}

#[test]
fn aarch64_patches_match_the_assembler() {
    // ADRP at 0x4000_0FF8 (page 0x4000_0000) to data byte 0xFC at 0x4000_51FC (page
    // 0x4000_5000): five pages; the LDR takes its lo12 0x1FC, the ADD data byte 0x23.
    let code = 0x4000_0FF8;
    check_program(
        "aarch64",
        &[
            ("adrp_zero", "adrp_fwd"),
            ("ldr_s_zero", "ldr_s_val"),
            ("b_zero", "b_back"),
            ("add_zero", "add_val"),
        ],
        code,
        0x4000_5100,
        0x100,
        &[
            patch(0, Encoding::A64AdrPage21, Base::Data, 0xFC, 0),
            patch(4, Encoding::A64Lo12Scale2, Base::Data, 0xFC, 0),
            // b .-0x1234 at code + 8: the target is code + 8 - 0x1234.
            patch(8, Encoding::A64Branch26, Base::Code, 0, 8 - 0x1234),
            patch(12, Encoding::A64Lo12Scale0, Base::Data, 0x23, 0),
        ],
    );
}

#[test]
fn arm_patches_match_the_assembler() {
    check_program(
        "arm",
        &[
            ("movw_zero", "movw_val"),
            ("movt_zero", "movt_val"),
            ("b_zero", "b_fwd"),
            ("word_zero", "word_val"),
        ],
        0x0010_0000,
        0xDEAD_BE00,
        0x100,
        &[
            patch(0, Encoding::ArmMovwAbs, Base::Data, 0xEF, 0),
            patch(4, Encoding::ArmMovtAbs, Base::Data, 0xEF, 0),
            // b .+0x1234 at code + 8: target code + 8 + 0x1234, implicit A = -8.
            patch(8, Encoding::ArmBranch24, Base::Code, 0, 8 + 0x1234 - 8),
            patch(12, Encoding::Abs32, Base::Data, 0xEF, 0),
        ],
    );
}

#[test]
fn thumb_patches_match_the_assembler() {
    check_program(
        "thumb",
        &[
            ("movw_zero", "movw_val"),
            ("movt_zero", "movt_val"),
            ("bl_zero", "bl_back"),
            ("bw_zero", "bw_fwd"),
        ],
        0x2000_0000,
        0xDEAD_BE00,
        0x100,
        &[
            patch(0, Encoding::ThumbMovwAbs, Base::Data, 0xEF, 0),
            patch(4, Encoding::ThumbMovtAbs, Base::Data, 0xEF, 0),
            // bl .-0xC00000+4 at code + 8 (A = -4 for the PC reading 4 ahead).
            patch(
                8,
                Encoding::ThumbBranch24,
                Base::Code,
                0,
                8 - 0xC0_0000 + 4 - 4,
            ),
            // b.w .+0x1234 at code + 12.
            patch(12, Encoding::ThumbBranch24, Base::Code, 0, 12 + 0x1234 - 4),
        ],
    );
}

#[test]
fn riscv64_patches_match_the_assembler() {
    // Code above 4 GiB: only distances matter. AUIPC t2 at code to data byte 0xFC at
    // code + 0x1FFC (the carry case: lo = -4); the FLW's PCREL_LO12 patch gets A = 4,
    // its distance from the AUIPC. The call at code + 8 goes 0x1234_5FFC ahead.
    let code = 0x8000_0000_0000;
    check_program(
        "riscv64",
        &[
            ("auipc_t2_zero", "l_hi_carry"),
            ("flw_zero", "flw_carry"),
            ("call_zero", "call_big"),
        ],
        code,
        code + 0x1F00,
        0x100,
        &[
            patch(0, Encoding::RvHi20, Base::Data, 0xFC, 0),
            patch(4, Encoding::RvLo12I, Base::Data, 0xFC, 4),
            patch(8, Encoding::RvCall, Base::Code, 0, 8 + 0x1234_5FFC),
        ],
    );
}

#[test]
fn riscv32_patches_match_the_assembler() {
    // AUIPC t1 at 0x2000_0000 to data byte 0x7FF at 0x1FFF_F7FF, 0x801 back; the
    // SW's PCREL_LO12 patch gets A = 4. The tail at code + 8 goes 2 GiB back.
    check_program(
        "riscv32",
        &[
            ("auipc_t1_zero", "st_hi_back"),
            ("sw_zero", "st_back"),
            ("tail_zero", "tail_min"),
        ],
        0x2000_0000,
        0x1FFF_F000,
        0x800,
        &[
            patch(0, Encoding::RvHi20, Base::Data, 0x7FF, 0),
            patch(4, Encoding::RvLo12S, Base::Data, 0x7FF, 4),
            patch(8, Encoding::RvCall, Base::Code, 0, i32::MIN + 8),
        ],
    );
}

#[test]
fn patch_errors_name_the_patch_and_change_nothing() {
    // movw r0, #0 / movt r0, #0 / ldr s0, [x0] / b .
    let arm = fixture("arm");
    let a64 = fixture("aarch64");
    let mut code = arm.at("movw_zero", 4);
    code.extend(arm.at("movt_zero", 4));
    code.extend(a64.at("ldr_s_zero", 4));
    code.extend(a64.at("b_zero", 4));
    let before = code.clone();

    // Data at 4 GiB: a MOVW/MOVT pair cannot hold the address.
    let movw = patch(0, Encoding::ArmMovwAbs, Base::Data, 0x10, 0);
    let movt = patch(4, Encoding::ArmMovtAbs, Base::Data, 0x10, 0);
    assert_eq!(
        apply_patches(&mut code, 0x1000, 0x1_0000_0000, 0x20, &[movw, movt]),
        Err(PatchError::OutOfReach {
            index: 0,
            encoding: Encoding::ArmMovwAbs,
            value: 0x1_0000_0010
        })
    );
    assert_eq!(code, before, "a refused patch changed the code");
    // The last byte below 4 GiB still fits.
    let top = patch(0, Encoding::ArmMovwAbs, Base::Data, 0xFF, 0);
    assert!(apply_patches(&mut code, 0x1000, 0xFFFF_FF00, 0x100, &[top]).is_ok());
    code.clone_from(&before);

    // A 32-bit load from an address that is not a multiple of 4.
    let ldr = patch(8, Encoding::A64Lo12Scale2, Base::Data, 0x1FE, 0);
    let b = patch(12, Encoding::A64Branch26, Base::Data, 0, 0);
    let e = apply_patches(&mut code, 0x1000, 0x4000, 0x200, &[ldr, b]).unwrap_err();
    assert_eq!(
        e,
        PatchError::Misaligned {
            index: 0,
            encoding: Encoding::A64Lo12Scale2,
            value: 0x41FE
        }
    );
    assert!(e.to_string().contains("A64Lo12Scale2"), "{e}");
    assert_eq!(
        code, before,
        "a refused patch changed the code or a later one ran"
    );

    // A branch 128 MiB away, one instruction beyond B's reach.
    let far = patch(12, Encoding::A64Branch26, Base::Data, 0, 0);
    assert_eq!(
        apply_patches(&mut code, 0x1000, 0x1000 + 12 + 0x800_0000, 4, &[far]),
        Err(PatchError::OutOfReach {
            index: 0,
            encoding: Encoding::A64Branch26,
            value: 0x800_0000
        })
    );
    assert_eq!(code, before);
}

// ---- limits, alignment and 32-bit addresses, straight on write_field ----

/// For each encoding, the values just inside and just outside its field.
fn limits() -> Vec<(Encoding, i128, Result<(), FieldError>)> {
    use Encoding::*;
    use FieldError::{Misaligned, OutOfReach};
    let ok = Ok(());
    vec![
        (Rel32, i32::MAX as i128, ok),
        (Rel32, i32::MAX as i128 + 1, Err(OutOfReach)),
        (Rel32, i32::MIN as i128, ok),
        (Rel32, i32::MIN as i128 - 1, Err(OutOfReach)),
        (Abs64, u64::MAX as i128, ok),
        (Abs64, u64::MAX as i128 + 1, Err(OutOfReach)),
        (Abs64, -1, Err(OutOfReach)),
        (Abs32, u32::MAX as i128, ok),
        (Abs32, 1 << 32, Err(OutOfReach)),
        (Abs32, -1, Err(OutOfReach)),
        // B/BL: ±128 MiB in steps of 4.
        (A64Branch26, (1 << 27) - 4, ok),
        (A64Branch26, 1 << 27, Err(OutOfReach)),
        (A64Branch26, -(1 << 27), ok),
        (A64Branch26, -(1 << 27) - 4, Err(OutOfReach)),
        (A64Branch26, 2, Err(Misaligned)),
        (A64Branch26, -1, Err(Misaligned)),
        // ADRP: ±4 GiB in pages.
        (A64AdrPage21, (1 << 32) - 4096, ok),
        (A64AdrPage21, 1 << 32, Err(OutOfReach)),
        (A64AdrPage21, -(1 << 32), ok),
        (A64AdrPage21, -(1 << 32) - 4096, Err(OutOfReach)),
        (A64AdrPage21, 0x800, Err(Misaligned)),
        // lo12: any address, but aligned to the access size.
        (A64Lo12Scale0, 0xFFFF_FFFF_FFFF, ok),
        (A64Lo12Scale1, 0x1001, Err(Misaligned)),
        (A64Lo12Scale1, 0x1FFE, ok),
        (A64Lo12Scale2, 0x1FE, Err(Misaligned)),
        (A64Lo12Scale2, 0x7FFF_FFFC, ok),
        (A64Lo12Scale3, 0x1004, Err(Misaligned)),
        (A64Lo12Scale3, 0xFF8, ok),
        (A64Lo12Scale4, 0x1008, Err(Misaligned)),
        (A64Lo12Scale4, 0xFF0, ok),
        // ARM B/BL: ±32 MiB in steps of 4.
        (ArmBranch24, (1 << 25) - 4, ok),
        (ArmBranch24, 1 << 25, Err(OutOfReach)),
        (ArmBranch24, -(1 << 25), ok),
        (ArmBranch24, -(1 << 25) - 4, Err(OutOfReach)),
        (ArmBranch24, 1, Err(Misaligned)),
        (ArmBranch24, 2, Err(Misaligned)),
        (ArmBranch24, 0x1002, Err(Misaligned)),
        // MOVW/MOVT hold halves of a 32-bit address.
        (ArmMovwAbs, u32::MAX as i128, ok),
        (ArmMovwAbs, 1 << 32, Err(OutOfReach)),
        (ArmMovwAbs, -1, Err(OutOfReach)),
        (ArmMovtAbs, u32::MAX as i128, ok),
        (ArmMovtAbs, 1 << 32, Err(OutOfReach)),
        (ArmMovtAbs, -1, Err(OutOfReach)),
        // Thumb B.W/BL: ±16 MiB in steps of 2.
        (ThumbBranch24, (1 << 24) - 2, ok),
        (ThumbBranch24, 1 << 24, Err(OutOfReach)),
        (ThumbBranch24, -(1 << 24), ok),
        (ThumbBranch24, -(1 << 24) - 2, Err(OutOfReach)),
        (ThumbBranch24, 1, Err(Misaligned)),
        (ThumbBranch24, -0x1001, Err(Misaligned)),
        (ThumbMovwAbs, u32::MAX as i128, ok),
        (ThumbMovwAbs, 1 << 32, Err(OutOfReach)),
        (ThumbMovtAbs, 1 << 32, Err(OutOfReach)),
        (ThumbMovtAbs, -1, Err(OutOfReach)),
    ]
    .into_iter()
    .chain(
        // AUIPC + a signed 12-bit low part reach [-2^31 - 2^11, 2^31 - 2^11).
        [RvHi20, RvLo12I, RvLo12S, RvCall]
            .into_iter()
            .flat_map(|e| {
                [
                    (e, 0x7FFF_F7FF, ok),
                    (e, 0x7FFF_F800, Err(OutOfReach)),
                    (e, -0x8000_0800, ok),
                    (e, -0x8000_0801, Err(OutOfReach)),
                ]
            }),
    )
    .collect()
}

#[test]
fn limits_and_alignment() {
    let mut rng = Rng(0x5EED);
    for (encoding, value, expected) in limits() {
        let before = rng.bytes(encoding.width());
        let mut field = before.clone();
        let got = write_field(encoding, &mut field, value);
        assert_eq!(got, expected, "{encoding:?} with {value:#x}");
        match got {
            Ok(()) => {
                let read = decode(encoding, &field);
                assert!(
                    holds(encoding, value, read),
                    "{encoding:?} with {value:#x} reads back {read:#x}"
                );
            }
            Err(_) => assert_eq!(
                field, before,
                "{encoding:?} changed the field refusing {value:#x}"
            ),
        }
    }
}

// ---- property: random values read back by an independent decoder ----

/// SplitMix64: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i128, hi: i128) -> i128 {
        let span = (hi - lo + 1) as u128;
        let r = (self.next() as u128) << 64 | self.next() as u128;
        lo + (r % span) as i128
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The values an encoding accepts: `lo..=hi` in steps of `step`.
fn domain(encoding: Encoding) -> (i128, i128, i128) {
    use Encoding::*;
    let u32_max = u32::MAX as i128;
    match encoding {
        Rel32 => (i32::MIN as i128, i32::MAX as i128, 1),
        Abs64 => (0, u64::MAX as i128, 1),
        Abs32 | ArmMovwAbs | ArmMovtAbs | ThumbMovwAbs | ThumbMovtAbs => (0, u32_max, 1),
        A64Branch26 => (-(1 << 27), (1 << 27) - 4, 4),
        A64AdrPage21 => (-(1 << 32), (1 << 32) - 4096, 4096),
        A64Lo12Scale0 => (0, u64::MAX as i128, 1),
        A64Lo12Scale1 => (0, u64::MAX as i128 - 1, 2),
        A64Lo12Scale2 => (0, u64::MAX as i128 - 3, 4),
        A64Lo12Scale3 => (0, u64::MAX as i128 - 7, 8),
        A64Lo12Scale4 => (0, u64::MAX as i128 - 15, 16),
        ArmBranch24 => (-(1 << 25), (1 << 25) - 4, 4),
        ThumbBranch24 => (-(1 << 24), (1 << 24) - 2, 2),
        RvHi20 | RvLo12I | RvLo12S | RvCall => (-0x8000_0800, 0x7FFF_F7FF, 1),
    }
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn random_values_read_back_and_keep_other_bits() {
    let mut rng = Rng(0xC0DE_C0FA);
    for encoding in Encoding::ALL {
        let (lo, hi, step) = domain(encoding);
        let mask = field_mask(encoding);
        for i in 0..4000 {
            // The ends of the domain first, then values near zero (small distances
            // are the common case), then anywhere.
            let value = match i {
                0 => lo,
                1 => hi,
                2 => 0,
                _ if i % 2 == 0 => rng.range(-0x1_0000, 0x1_0000).clamp(lo, hi) / step * step,
                _ => lo + rng.range(0, (hi - lo) / step) * step,
            };
            let before = rng.bytes(encoding.width());
            let mut field = before.clone();
            write_field(encoding, &mut field, value)
                .unwrap_or_else(|e| panic!("{encoding:?} refused in-range {value:#x}: {e:?}"));
            let read = decode(encoding, &field);
            assert!(
                holds(encoding, value, read),
                "{encoding:?}: wrote {value:#x}, read back {read:#x} from {field:02x?}"
            );
            for ((b, a), m) in words(&before).into_iter().zip(words(&field)).zip(&mask) {
                assert_eq!(
                    b & !m,
                    a & !m,
                    "{encoding:?} with {value:#x} changed bits outside the field: {b:#010x} -> {a:#010x}"
                );
            }
        }
    }
}

#[test]
fn riscv_halves_agree() {
    // The AUIPC and the low-part instruction are patched separately; their halves
    // must add up to the distance for any value in reach.
    let mut rng = Rng(0xA01C);
    let (lo, hi, _) = domain(Encoding::RvHi20);
    for i in 0..4000 {
        let value = if i % 2 == 0 {
            rng.range(-0x4000, 0x4000)
        } else {
            rng.range(lo, hi)
        };
        let mut auipc = rng.bytes(4);
        let mut addi = rng.bytes(4);
        let mut sw = rng.bytes(4);
        write_field(Encoding::RvHi20, &mut auipc, value).unwrap();
        write_field(Encoding::RvLo12I, &mut addi, value).unwrap();
        write_field(Encoding::RvLo12S, &mut sw, value).unwrap();
        let high = decode(Encoding::RvHi20, &auipc);
        assert_eq!(
            high + decode(Encoding::RvLo12I, &addi),
            value,
            "I-type, {value:#x}"
        );
        assert_eq!(
            high + decode(Encoding::RvLo12S, &sw),
            value,
            "S-type, {value:#x}"
        );
    }
}

#[test]
fn random_out_of_range_values_are_refused_unchanged() {
    let mut rng = Rng(0xBAD);
    for encoding in Encoding::ALL {
        let (lo, hi, step) = domain(encoding);
        for i in 0..1000 {
            let value = match i % 3 {
                0 => hi + rng.range(1, 1 << 40),
                1 => lo - rng.range(1, 1 << 40),
                // Inside the range but off the step: only for scaled fields.
                _ if step > 1 => {
                    lo + rng.range(0, (hi - lo) / step) * step + rng.range(1, step - 1)
                }
                _ => continue,
            };
            let is_lo12 = matches!(
                encoding,
                Encoding::A64Lo12Scale0
                    | Encoding::A64Lo12Scale1
                    | Encoding::A64Lo12Scale2
                    | Encoding::A64Lo12Scale3
                    | Encoding::A64Lo12Scale4
            );
            // lo12 fields take any address (only its low 12 bits matter), even a
            // "negative" one computed from addresses near zero; they refuse only
            // misaligned ones.
            if is_lo12 && i % 3 != 2 && value & (step - 1) == 0 {
                continue;
            }
            let before = rng.bytes(encoding.width());
            let mut field = before.clone();
            assert!(
                write_field(encoding, &mut field, value).is_err(),
                "{encoding:?} accepted {value:#x}"
            );
            assert_eq!(
                field, before,
                "{encoding:?} changed the field refusing {value:#x}"
            );
        }
    }
}
