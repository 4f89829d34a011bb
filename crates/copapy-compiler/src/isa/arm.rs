//! 32-bit ARM, in ARM state (ARMv6, ARMv7-A) and Thumb-2 state (Cortex-M4).
//!
//! ARM objects use REL relocations: the addend sits inside the instruction, so it is
//! read here ([`Isa::implicit_addend`]) and carried in the patch, and the runner
//! overwrites the whole field. Without MOVW/MOVT (ARMv6) addresses come from literal
//! pools (`R_ARM_ABS32`) placed after a function's last instruction, so a tail jump
//! followed by a pool is kept (patched to the end of the stencil) rather than dropped.

use copapy_program::{Arch, Encoding};
use object::elf::*;

use super::{plain, sign_extend, u32_at, Isa, RelocKind, TailJump};

pub(super) struct ArmIsa {
    thumb: bool,
}
pub(super) static ARM: ArmIsa = ArmIsa { thumb: false };
pub(super) static THUMB: ArmIsa = ArmIsa { thumb: true };

fn halfwords(field: &[u8]) -> (u32, u32) {
    (
        u16::from_le_bytes([field[0], field[1]]) as u32,
        u16::from_le_bytes([field[2], field[3]]) as u32,
    )
}

/// The 16-bit immediate of an ARM-state MOVW/MOVT (imm4:imm12).
fn arm_imm16(insn: u32) -> u32 {
    ((insn >> 4) & 0xF000) | (insn & 0x0FFF)
}

/// The 16-bit immediate of a Thumb-2 MOVW/MOVT (imm4:i:imm3:imm8).
fn thumb_imm16(field: &[u8]) -> u32 {
    let (hw1, hw2) = halfwords(field);
    ((hw1 & 0xF) << 12) | (((hw1 >> 10) & 1) << 11) | (((hw2 >> 12) & 7) << 8) | (hw2 & 0xFF)
}

/// The byte offset of a Thumb-2 B.W/BL (S:I1:I2:imm10:imm11:0).
fn thumb_branch_offset(field: &[u8]) -> i64 {
    let (hw1, hw2) = halfwords(field);
    let s = (hw1 >> 10) & 1;
    let i1 = !(((hw2 >> 13) & 1) ^ s) & 1;
    let i2 = !(((hw2 >> 11) & 1) ^ s) & 1;
    let imm = (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3FF) << 12) | ((hw2 & 0x7FF) << 1);
    sign_extend(imm, 25)
}

impl Isa for ArmIsa {
    fn arch(&self) -> Arch {
        if self.thumb {
            Arch::Thumb
        } else {
            Arch::Arm
        }
    }

    fn classify(&self, r_type: u32) -> Option<RelocKind> {
        match (self.thumb, RelocationType(r_type)) {
            (_, R_ARM_ABS32) => plain(Encoding::Abs32),
            (false, R_ARM_JUMP24 | R_ARM_CALL) => plain(Encoding::ArmBranch24),
            (false, R_ARM_MOVW_ABS_NC) => plain(Encoding::ArmMovwAbs),
            (false, R_ARM_MOVT_ABS) => plain(Encoding::ArmMovtAbs),
            (true, R_ARM_THM_JUMP24 | R_ARM_THM_PC22) /* PC22 is THM_CALL */ => plain(Encoding::ThumbBranch24),
            (true, R_ARM_THM_MOVW_ABS_NC) => plain(Encoding::ThumbMovwAbs),
            (true, R_ARM_THM_MOVT_ABS) => plain(Encoding::ThumbMovtAbs),
            _ => None,
        }
    }

    fn implicit_addend(&self, encoding: Encoding, field: &[u8]) -> i64 {
        match encoding {
            Encoding::Abs32 => sign_extend(u32_at(field, 0), 32),
            Encoding::ArmBranch24 => sign_extend((u32_at(field, 0) & 0x00FF_FFFF) << 2, 26),
            Encoding::ArmMovwAbs | Encoding::ArmMovtAbs => {
                sign_extend(arm_imm16(u32_at(field, 0)), 16)
            }
            Encoding::ThumbBranch24 => thumb_branch_offset(field),
            Encoding::ThumbMovwAbs | Encoding::ThumbMovtAbs => sign_extend(thumb_imm16(field), 16),
            _ => 0,
        }
    }

    fn tail_jump(&self) -> TailJump {
        if self.thumb {
            // B.W (T4): 11110 S imm10 | 10 J1 1 J2 imm11 (BL has 11 J1 1 J2)
            TailJump {
                len: 4,
                field_at: 0,
                encoding: Encoding::ThumbBranch24,
                is_jump: |b| {
                    let (hw1, hw2) = halfwords(b);
                    hw1 & 0xF800 == 0xF000 && hw2 & 0xD000 == 0x9000
                },
            }
        } else {
            // B (A1) with condition AL: 1110 1010 imm24 (BL is 1110 1011)
            TailJump {
                len: 4,
                field_at: 0,
                encoding: Encoding::ArmBranch24,
                is_jump: |b| b[3] == 0xEA,
            }
        }
    }

    fn reloc_name(&self, r_type: u32) -> &'static str {
        NAMES_R_ARM.name(RelocationType(r_type)).unwrap_or("")
    }

    fn literal_pools(&self) -> bool {
        true
    }
}
