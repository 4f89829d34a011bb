//! Reading instruction fields back, written from the architecture manuals (Arm ARM
//! A64/A32/T32 encodings, RISC-V unprivileged spec) independently of
//! `copapy_runner::fields`, so a property test can check that what the runner writes
//! is what the CPU will read.

use copapy_program::Encoding;

fn word(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn half(b: &[u8], at: usize) -> u32 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as u32
}

/// `v`'s low `bits` bits as a two's complement number.
fn sext(v: u32, bits: u32) -> i128 {
    let v = v as i128 & ((1 << bits) - 1);
    if v >> (bits - 1) != 0 {
        v - (1 << bits)
    } else {
        v
    }
}

/// The field bits of each 32-bit word of the instruction (Thumb: first halfword in
/// the low 16 bits). `Rel32`, `Abs32` and `Abs64` are all field.
pub fn field_mask(encoding: Encoding) -> Vec<u32> {
    match encoding {
        Encoding::Rel32 | Encoding::Abs32 => vec![0xFFFF_FFFF],
        Encoding::Abs64 => vec![0xFFFF_FFFF; 2],
        Encoding::A64Branch26 => vec![0x03FF_FFFF],
        // immlo 29–30, immhi 5–23
        Encoding::A64AdrPage21 => vec![0x60FF_FFE0],
        Encoding::A64Lo12Scale0
        | Encoding::A64Lo12Scale1
        | Encoding::A64Lo12Scale2
        | Encoding::A64Lo12Scale3
        | Encoding::A64Lo12Scale4 => vec![0x003F_FC00],
        Encoding::ArmBranch24 => vec![0x00FF_FFFF],
        // imm4 16–19, imm12 0–11
        Encoding::ArmMovwAbs | Encoding::ArmMovtAbs => vec![0x000F_0FFF],
        // hw1: S 10, imm10 0–9; hw2: J1 13, J2 11, imm11 0–10
        Encoding::ThumbBranch24 => vec![0x2FFF_07FF],
        // hw1: i 10, imm4 0–3; hw2: imm3 12–14, imm8 0–7
        Encoding::ThumbMovwAbs | Encoding::ThumbMovtAbs => vec![0x70FF_040F],
        Encoding::RvHi20 => vec![0xFFFF_F000],
        Encoding::RvLo12I => vec![0xFFF0_0000],
        // imm[11:5] 25–31, imm[4:0] 7–11
        Encoding::RvLo12S => vec![0xFE00_0F80],
        Encoding::RvCall => vec![0xFFFF_F000, 0xFFF0_0000],
    }
}

/// What the field of `insn` says, in bytes: the branch or page distance, the offset
/// inside the page (A64 lo12), the 16 immediate bits (MOVW/MOVT), the AUIPC's
/// `hi << 12`, the signed low part, or the AUIPC+JALR pair's sum.
pub fn decode(encoding: Encoding, insn: &[u8]) -> i128 {
    let w = word(insn, 0);
    match encoding {
        Encoding::Rel32 => w as i32 as i128,
        Encoding::Abs32 => w as i128,
        Encoding::Abs64 => u64::from_le_bytes(insn[..8].try_into().unwrap()) as i128,
        Encoding::A64Branch26 => sext(w, 26) * 4,
        Encoding::A64AdrPage21 => {
            let immlo = (w >> 29) & 3;
            let immhi = (w >> 5) & 0x7_FFFF;
            sext(immhi << 2 | immlo, 21) * 4096
        }
        Encoding::A64Lo12Scale0
        | Encoding::A64Lo12Scale1
        | Encoding::A64Lo12Scale2
        | Encoding::A64Lo12Scale3
        | Encoding::A64Lo12Scale4 => {
            let scale = match encoding {
                Encoding::A64Lo12Scale0 => 0,
                Encoding::A64Lo12Scale1 => 1,
                Encoding::A64Lo12Scale2 => 2,
                Encoding::A64Lo12Scale3 => 3,
                _ => 4,
            };
            (((w >> 10) & 0xFFF) << scale) as i128
        }
        Encoding::ArmBranch24 => sext(w, 24) * 4,
        Encoding::ArmMovwAbs | Encoding::ArmMovtAbs => {
            (((w >> 16) & 0xF) << 12 | (w & 0xFFF)) as i128
        }
        Encoding::ThumbBranch24 => {
            let (hw1, hw2) = (half(insn, 0), half(insn, 2));
            let s = (hw1 >> 10) & 1;
            let i1 = !((hw2 >> 13) & 1 ^ s) & 1;
            let i2 = !((hw2 >> 11) & 1 ^ s) & 1;
            let imm = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3FF) << 12 | (hw2 & 0x7FF) << 1;
            sext(imm, 25)
        }
        Encoding::ThumbMovwAbs | Encoding::ThumbMovtAbs => {
            let (hw1, hw2) = (half(insn, 0), half(insn, 2));
            let imm4 = hw1 & 0xF;
            let i = (hw1 >> 10) & 1;
            let imm3 = (hw2 >> 12) & 7;
            (imm4 << 12 | i << 11 | imm3 << 8 | (hw2 & 0xFF)) as i128
        }
        Encoding::RvHi20 => sext(w >> 12, 20) << 12,
        Encoding::RvLo12I => sext(w >> 20, 12),
        Encoding::RvLo12S => sext((w >> 25) << 5 | (w >> 7) & 0x1F, 12),
        Encoding::RvCall => (sext(w >> 12, 20) << 12) + sext(word(insn, 4) >> 20, 12),
    }
}

/// Whether a field that [`decode`]s to `field` holds `value` as the encoding's table
/// says (e.g. only the low 12 bits of an A64 lo12 address; for a RISC-V half of a
/// pair, any split whose halves add up to `value` with a signed 12-bit low part).
pub fn holds(encoding: Encoding, value: i128, field: i128) -> bool {
    match encoding {
        Encoding::A64Lo12Scale0
        | Encoding::A64Lo12Scale1
        | Encoding::A64Lo12Scale2
        | Encoding::A64Lo12Scale3
        | Encoding::A64Lo12Scale4 => field == value & 0xFFF,
        Encoding::ArmMovwAbs | Encoding::ThumbMovwAbs => field == value & 0xFFFF,
        Encoding::ArmMovtAbs | Encoding::ThumbMovtAbs => field == (value >> 16) & 0xFFFF,
        // What the low part must add: a signed 12-bit number.
        Encoding::RvHi20 => (-0x800..0x800).contains(&(value - field)),
        // The low part is signed 12-bit by construction; AUIPC's part is a multiple of 4096.
        Encoding::RvLo12I | Encoding::RvLo12S => (value - field) % 0x1000 == 0,
        _ => field == value,
    }
}
