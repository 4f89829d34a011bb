//! x86_64: RELA, rip-relative data, `jmp rel32` tail jump.

use copapy_program::{Arch, Encoding};
use object::elf::*;

use super::{plain, Isa, RelocKind, TailJump};

pub(super) struct X86_64Isa;
pub(super) static X86_64: X86_64Isa = X86_64Isa;

impl Isa for X86_64Isa {
    fn arch(&self) -> Arch {
        Arch::X86_64
    }

    fn classify(&self, r_type: u32) -> Option<RelocKind> {
        match RelocationType(r_type) {
            R_X86_64_PC32 | R_X86_64_PLT32 => plain(Encoding::Rel32),
            R_X86_64_64 => plain(Encoding::Abs64),
            _ => None,
        }
    }

    fn tail_jump(&self) -> TailJump {
        // jmp rel32 (E9 xx xx xx xx)
        TailJump {
            len: 5,
            field_at: 1,
            encoding: Encoding::Rel32,
            is_jump: |b| b[0] == 0xE9,
        }
    }

    fn reloc_name(&self, r_type: u32) -> &'static str {
        NAMES_R_X86_64.name(RelocationType(r_type)).unwrap_or("")
    }

    fn pad_byte(&self) -> u8 {
        0xCC // int3
    }
}
