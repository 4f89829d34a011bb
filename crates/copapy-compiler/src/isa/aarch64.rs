//! AArch64: RELA, `ADRP` + `:lo12:` data access, `b` tail jump.

use copapy_program::{Arch, Encoding};
use object::elf::*;

use super::{plain, u32_at, Isa, RelocKind, TailJump};

pub(super) struct AArch64Isa;
pub(super) static AARCH64: AArch64Isa = AArch64Isa;

impl Isa for AArch64Isa {
    fn arch(&self) -> Arch {
        Arch::AArch64
    }

    fn classify(&self, r_type: u32) -> Option<RelocKind> {
        match RelocationType(r_type) {
            R_AARCH64_JUMP26 | R_AARCH64_CALL26 => plain(Encoding::A64Branch26),
            R_AARCH64_ADR_PREL_PG_HI21 => plain(Encoding::A64AdrPage21),
            R_AARCH64_ADD_ABS_LO12_NC | R_AARCH64_LDST8_ABS_LO12_NC => {
                plain(Encoding::A64Lo12Scale0)
            }
            R_AARCH64_LDST16_ABS_LO12_NC => plain(Encoding::A64Lo12Scale1),
            R_AARCH64_LDST32_ABS_LO12_NC => plain(Encoding::A64Lo12Scale2),
            R_AARCH64_LDST64_ABS_LO12_NC => plain(Encoding::A64Lo12Scale3),
            R_AARCH64_LDST128_ABS_LO12_NC => plain(Encoding::A64Lo12Scale4),
            _ => None,
        }
    }

    fn tail_jump(&self) -> TailJump {
        // b imm26: 000101 imm26 (bl is 100101)
        TailJump {
            len: 4,
            field_at: 0,
            encoding: Encoding::A64Branch26,
            is_jump: |b| u32_at(b, 0) & 0xFC00_0000 == 0x1400_0000,
        }
    }

    fn reloc_name(&self, r_type: u32) -> &'static str {
        NAMES_R_AARCH64.name(RelocationType(r_type)).unwrap_or("")
    }
}
