//! Instruction-set rules for reading stencil objects: one module per ISA.
//!
//! The stencil database ([`crate::stencil_db`]) is the same for every architecture;
//! what differs is in an [`Isa`]: which ELF relocation types exist and how each one is
//! patched (an [`Encoding`]), where a REL relocation keeps its addend inside the
//! instruction, and what the final tail jump to `cp_next` looks like. Adding an
//! architecture is one module here, one row in [`crate::targets`] and its row in
//! `copapy_program::isas` (what the stencil build and the emulator know of it; the
//! `target_table` test checks that row against the module here).

use copapy_program::{Arch, Encoding};

mod aarch64;
mod arm;
mod riscv;
mod x86_64;

/// The final tail jump of a stencil, which the linker drops so control falls through.
#[derive(Clone, Copy, Debug)]
pub struct TailJump {
    /// Length of the jump in bytes (the last `len` bytes of the stencil).
    pub len: usize,
    /// Offset of the relocated field from the start of the jump.
    pub field_at: usize,
    /// Encoding of the jump's relocation.
    pub encoding: Encoding,
    /// Whether `bytes` (the `len` bytes of the jump) are an unconditional jump
    /// (and not a call or a conditional branch with the same relocation).
    pub is_jump: fn(bytes: &[u8]) -> bool,
}

/// What a relocation type means to copapy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelocKind {
    /// How the runner patches it.
    pub encoding: Encoding,
    /// RISC-V `PCREL_LO12_*`: the symbol is the label of the `AUIPC` whose
    /// `PCREL_HI20` relocation names the real target.
    pub lo12_of_pair: bool,
}

/// The rules of one instruction set.
pub trait Isa: Sync {
    /// The architecture.
    fn arch(&self) -> Arch;
    /// How relocation `r_type` is patched, or `None` if copapy does not support it.
    fn classify(&self, r_type: u32) -> Option<RelocKind>;
    /// The addend a REL relocation keeps in the instruction `field` (ARM); RELA
    /// architectures never call this.
    fn implicit_addend(&self, encoding: Encoding, field: &[u8]) -> i64 {
        let _ = (encoding, field);
        0
    }
    /// The final tail jump of every stencil.
    fn tail_jump(&self) -> TailJump;
    /// ELF name of a relocation type, for messages (empty if unknown).
    fn reloc_name(&self, r_type: u32) -> &'static str;
    /// Byte used to pad between code objects (a trap where one byte is one).
    fn pad_byte(&self) -> u8 {
        0
    }
    /// Whether literal data may follow the tail jump (ARM literal pools); the jump is
    /// then kept and patched to the end of the stencil instead of dropped.
    fn literal_pools(&self) -> bool {
        false
    }
}

/// The rules for `arch`.
pub fn isa(arch: Arch) -> &'static dyn Isa {
    match arch {
        Arch::X86_64 => &x86_64::X86_64,
        Arch::AArch64 => &aarch64::AARCH64,
        Arch::Arm => &arm::ARM,
        Arch::Thumb => &arm::THUMB,
        Arch::RiscV64 => &riscv::RISCV64,
        Arch::RiscV32 => &riscv::RISCV32,
    }
}

/// Name of an ELF relocation type for messages, e.g. `R_X86_64_32S (type 11)`.
pub fn reloc_name(arch: Arch, r_type: u32) -> String {
    match isa(arch).reloc_name(r_type) {
        "" => format!("type {r_type} ({})", arch.name()),
        name => format!("{name} (type {r_type})"),
    }
}

/// How a relocation of raw ELF type `r_type` is encoded on `arch`, if copapy supports it.
pub fn classify(arch: Arch, r_type: u32) -> Option<Encoding> {
    isa(arch).classify(r_type).map(|k| k.encoding)
}

fn plain(encoding: Encoding) -> Option<RelocKind> {
    Some(RelocKind {
        encoding,
        lo12_of_pair: false,
    })
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn sign_extend(value: u32, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((value as i64) << shift) >> shift
}
