//! RISC-V (RV64GC and RV32IMAFC): RELA, `AUIPC` + `%pcrel_lo` pairs, and an
//! `AUIPC`+`JALR` pair as both call and tail jump.

use copapy_program::{Arch, Encoding};
use object::elf::*;

use super::{plain, u32_at, Isa, RelocKind, TailJump};

pub(super) struct RiscVIsa {
    arch: Arch,
}
pub(super) static RISCV64: RiscVIsa = RiscVIsa {
    arch: Arch::RiscV64,
};
pub(super) static RISCV32: RiscVIsa = RiscVIsa {
    arch: Arch::RiscV32,
};

impl Isa for RiscVIsa {
    fn arch(&self) -> Arch {
        self.arch
    }

    fn classify(&self, r_type: u32) -> Option<RelocKind> {
        match RelocationType(r_type) {
            R_RISCV_CALL | R_RISCV_CALL_PLT => plain(Encoding::RvCall),
            R_RISCV_PCREL_HI20 => plain(Encoding::RvHi20),
            R_RISCV_PCREL_LO12_I => Some(RelocKind {
                encoding: Encoding::RvLo12I,
                lo12_of_pair: true,
            }),
            R_RISCV_PCREL_LO12_S => Some(RelocKind {
                encoding: Encoding::RvLo12S,
                lo12_of_pair: true,
            }),
            _ => None,
        }
    }

    fn tail_jump(&self) -> TailJump {
        // `tail`: auipc t1, hi ; jalr x0, lo(t1). A call has rd = ra in the jalr.
        TailJump {
            len: 8,
            field_at: 0,
            encoding: Encoding::RvCall,
            is_jump: |b| {
                let (auipc, jalr) = (u32_at(b, 0), u32_at(b, 4));
                auipc & 0x7F == 0x17 && jalr & 0x7F == 0x67 && (jalr >> 7) & 0x1F == 0
            },
        }
    }

    fn reloc_name(&self, r_type: u32) -> &'static str {
        NAMES_R_RISCV.name(RelocationType(r_type)).unwrap_or("")
    }
}
