//! The stencil database: precompiled machine-code fragments read from an ELF object.
//!
//! Stencils are compiled ahead of time from C into one ELF relocatable object per
//! architecture (`-ffunction-sections`, so every function has its own section). This
//! module reads that object once and turns it into plain tables the linker can copy
//! from without looking at ELF again.
//!
//! # The stencil ABI
//!
//! Every stencil is `void st_<name>(float a, float b, int32_t i, int32_t j)` ending in
//! `__attribute__((musttail)) return cp_next(a, b, i, j);`. The undefined symbols are
//! *holes* the linker fills:
//!
//! | symbol | meaning | [`HoleTarget`] |
//! | --- | --- | --- |
//! | `cp_next` | the next stencil | [`HoleTarget::Next`] (end of this stencil) |
//! | `cp_mf`, `cp_mi` | the step's data slot (float / int32) | [`HoleTarget::Data`] |
//! | `cp_mf2`, `cp_mi2` | the step's second data slot (both operands in memory) | [`HoleTarget::Data2`] |
//! | `cp_head` | the loop head (back-edge stencil only) | [`HoleTarget::Head`] |
//! | `cp_a0` … `cp_a3`, `cp_n` | array stencils: result, operands, element count | [`HoleTarget::Arg`] |
//! | a `cpm_*` helper or a `.rodata*` symbol | a code object copied once | [`HoleTarget::Object`] |
//!
//! Other functions (named `cpm_*`) are helpers that stencils call; `.rodata*`
//! sections hold constants. Both are [`CodeObject`]s, copied into a program once and
//! only if a stencil used by it needs them (directly or through another object).
//!
//! The final tail jump to `cp_next` (x86_64: `E9 rel32`, the last 5 bytes, with an
//! `R_X86_64_PLT32`/`PC32` relocation) is dropped, so control falls through into the
//! next stencil copied after it. Any other relocation is kept as a [`Hole`] with an
//! architecture-independent [`Encoding`] and the ELF addend. A relocation this module
//! does not understand is an error naming the relocation type, symbol and stencil —
//! never silently skipped, since a skipped relocation is wrong machine code.
//!
//! Relocation types are matched on the raw ELF `r_type`, so other architectures are
//! added by extending [`classify`] (and the tail-jump rule) for their `e_machine`.
//!
//! # Example
//!
//! ```no_run
//! use copapy_compiler::stencil_db::StencilDb;
//! let elf = std::fs::read("stencils/x86_64.o").unwrap();
//! let db = StencilDb::parse(&elf).unwrap();
//! let id = db.id("st_add_f_r0m_r0").expect("stencil exists");
//! println!("{} bytes, {} holes", db.stencil(id).bytes.len(), db.stencil(id).holes.len());
//! ```

use copapy_program::{Arch, Encoding};
use object::{Architecture, BinaryFormat, Object, ObjectKind, ObjectSymbol};
use rustc_hash::FxHashMap;

mod error;
mod relocations;
mod sections;

/// Index of a stencil in a [`StencilDb`]. Look ids up once with [`StencilDb::id`]
/// (a hash lookup) and then use them (an array index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StencilId(pub u32);

/// Index of a [`CodeObject`] (helper function or read-only data section) in a [`StencilDb`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub u32);

/// What a hole's address refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HoleTarget {
    /// The end of this stencil, which is where the next stencil starts (`cp_next`
    /// used anywhere but in the dropped final tail jump).
    Next,
    /// The data slot given with the step (`cp_mf` / `cp_mi`).
    Data,
    /// The second data slot given with the step (`cp_mf2` / `cp_mi2`), for stencils
    /// whose two operands both come from memory.
    Data2,
    /// The first step of the loop body this back-edge closes (`cp_head`, only in
    /// `st_loop_i_mm`): the step's `args[0]` is that step's index
    /// ([`crate::link::Step::args`]).
    Head,
    /// Argument `k` of an array step ([`crate::link::Step::args`]): `cp_a0` … `cp_a3`
    /// are `0..=3` (the result and up to three operands), `cp_n` (the slot holding the
    /// element count) is [`ARG_COUNT`].
    Arg(u8),
    /// Byte `offset` of a code object (a helper function or read-only data).
    Object {
        /// The object.
        object: ObjectId,
        /// Offset of the referenced symbol inside the object.
        offset: u32,
    },
}

/// A place in a stencil or code object that the linker turns into a patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hole {
    /// Offset of the patched field from the start of the stencil or object.
    pub offset: u32,
    /// How the address is written into the field.
    pub encoding: Encoding,
    /// The ELF addend (e.g. -4 for an x86_64 rip-relative field at the end of its instruction).
    pub addend: i32,
    /// What the address refers to.
    pub target: HoleTarget,
}

/// One stencil: code to copy for an operation, and its holes.
#[derive(Clone, Debug)]
pub struct Stencil {
    /// Symbol name, e.g. `st_add_f_r0m_r0`.
    pub name: String,
    /// Machine code, without the final tail jump.
    pub bytes: Vec<u8>,
    /// Holes, sorted by offset.
    pub holes: Vec<Hole>,
    /// Whether a final tail jump to `cp_next` was dropped. A stencil without one
    /// (only `st_return`, normally) ends the chain.
    pub tail_dropped: bool,
    /// Whether a hole refers to the step's data slot, so the step needs one.
    pub has_data_hole: bool,
    /// Whether a hole refers to the step's second data slot.
    pub has_data2_hole: bool,
    /// Bit `k` set: a hole refers to argument `k` of the step ([`HoleTarget::Arg`]).
    pub arg_holes: u8,
    /// Every code object this stencil needs, directly or through other objects, sorted.
    pub objects: Vec<ObjectId>,
}

/// What kind of code object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectRole {
    /// A helper function (`cpm_*`) that stencils call.
    Helper,
    /// A read-only data section (`.rodata*`): constants, tables.
    ReadOnly,
}

/// A helper function or read-only data section, copied at most once into a program.
#[derive(Clone, Debug)]
pub struct CodeObject {
    /// Function name for helpers, section name for read-only data.
    pub name: String,
    /// Helper or read-only data.
    pub role: ObjectRole,
    /// Contents.
    pub bytes: Vec<u8>,
    /// Required alignment of the start, in bytes (a power of two).
    pub align: u32,
    /// Holes; all of them target [`HoleTarget::Object`].
    pub holes: Vec<Hole>,
}

pub use crate::isa::{classify, reloc_name};

/// Number of array-step arguments: `cp_a0` … `cp_a3` and `cp_n`.
pub const ARG_HOLES: usize = 5;
/// The argument index of `cp_n`, the data slot holding an array step's element count.
pub const ARG_COUNT: u8 = 4;

/// The argument index of an array hole symbol, if `name` is one.
pub fn arg_hole(name: &str) -> Option<u8> {
    match name {
        "cp_a0" => Some(0),
        "cp_a1" => Some(1),
        "cp_a2" => Some(2),
        "cp_a3" => Some(3),
        "cp_n" => Some(ARG_COUNT),
        _ => None,
    }
}
pub use error::StencilError;

/// Parsed stencils and code objects of one architecture.
///
/// Built once per process (parsing is the only expensive part); lookups are a hash
/// by name ([`StencilDb::id`]) and then plain indexing by [`StencilId`].
#[derive(Clone, Debug)]
pub struct StencilDb {
    arch: Arch,
    stencils: Vec<Stencil>,
    objects: Vec<CodeObject>,
    by_name: FxHashMap<String, StencilId>,
    return_id: Option<StencilId>,
}

/// The stencil appended to every program so it ends by returning.
pub const RETURN_STENCIL: &str = "st_return";

impl StencilDb {
    /// Reads every stencil, helper and read-only section of an ELF relocatable object.
    ///
    /// Errors say which relocation, symbol and stencil are the problem.
    pub fn parse(elf: &[u8]) -> Result<StencilDb, StencilError> {
        let file = object::File::parse(elf).map_err(|e| StencilError::Elf(e.to_string()))?;
        if file.format() != BinaryFormat::Elf {
            return Err(StencilError::Elf(format!(
                "{:?} file, expected ELF",
                file.format()
            )));
        }
        if file.kind() != ObjectKind::Relocatable {
            return Err(StencilError::NotRelocatable);
        }
        let arch = match (file.architecture(), e_flags_thumb(&file)) {
            (Architecture::X86_64, _) => Arch::X86_64,
            (Architecture::Aarch64, _) => Arch::AArch64,
            (Architecture::Arm, false) => Arch::Arm,
            (Architecture::Arm, true) => Arch::Thumb,
            (Architecture::Riscv64, _) => Arch::RiscV64,
            (Architecture::Riscv32, _) => Arch::RiscV32,
            (other, _) => return Err(StencilError::UnsupportedArch(format!("{other:?}"))),
        };
        let isa = crate::isa::isa(arch);

        let mut layout = sections::read(&file)?;
        for i in 0..layout.sections.len() {
            relocations::decode(&file, isa, &mut layout, i)?;
        }
        let sections::Layout {
            mut stencils,
            objects,
            ..
        } = layout;
        resolve_dependencies(&mut stencils, &objects);

        let mut by_name = FxHashMap::default();
        by_name.reserve(stencils.len());
        for (i, st) in stencils.iter().enumerate() {
            if by_name
                .insert(st.name.clone(), StencilId(i as u32))
                .is_some()
            {
                return Err(StencilError::Duplicate(st.name.clone()));
            }
        }
        let return_id = by_name.get(RETURN_STENCIL).copied();
        Ok(StencilDb {
            arch,
            stencils,
            objects,
            by_name,
            return_id,
        })
    }

    /// Architecture of the stencils.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The id of the stencil called `name` (e.g. `"st_add_f_r0m_r0"`), if there is one.
    pub fn id(&self, name: &str) -> Option<StencilId> {
        self.by_name.get(name).copied()
    }

    /// The stencil with id `id`.
    ///
    /// # Panics
    ///
    /// If `id` is not from this database (use [`StencilDb::get`] to check).
    pub fn stencil(&self, id: StencilId) -> &Stencil {
        &self.stencils[id.0 as usize]
    }

    /// The stencil with id `id`, or `None` for an id from another database.
    pub fn get(&self, id: StencilId) -> Option<&Stencil> {
        self.stencils.get(id.0 as usize)
    }

    /// All stencils; the index of each is its [`StencilId`].
    pub fn stencils(&self) -> &[Stencil] {
        &self.stencils
    }

    /// The code object with id `id`.
    ///
    /// # Panics
    ///
    /// If `id` is not from this database.
    pub fn object(&self, id: ObjectId) -> &CodeObject {
        &self.objects[id.0 as usize]
    }

    /// All helper functions and read-only sections; the index of each is its [`ObjectId`].
    pub fn objects(&self) -> &[CodeObject] {
        &self.objects
    }

    /// The `st_return` stencil that ends every program, if the object has one.
    pub fn return_stencil(&self) -> Option<StencilId> {
        self.return_id
    }
}

/// Thumb code is its own [`Arch`] (its entry address has the low bit set); a Thumb
/// object is recognised by its functions' symbol values, which have bit 0 set.
fn e_flags_thumb(file: &object::File<'_>) -> bool {
    file.architecture() == Architecture::Arm
        && file.symbols().any(|s| {
            s.kind() == object::SymbolKind::Text && s.is_definition() && s.address() & 1 == 1
        })
}

/// Every code object each stencil needs, directly or through other objects.
fn resolve_dependencies(stencils: &mut [Stencil], objects: &[CodeObject]) {
    let mut seen = vec![false; objects.len()];
    let mut stack = Vec::new();
    for st in stencils {
        seen.iter_mut().for_each(|s| *s = false);
        for h in &st.holes {
            if let HoleTarget::Object { object, .. } = h.target {
                stack.push(object);
            }
        }
        while let Some(o) = stack.pop() {
            if std::mem::replace(&mut seen[o.0 as usize], true) {
                continue;
            }
            for h in &objects[o.0 as usize].holes {
                if let HoleTarget::Object { object, .. } = h.target {
                    stack.push(object);
                }
            }
        }
        st.objects = (0..objects.len() as u32)
            .filter(|&o| seen[o as usize])
            .map(ObjectId)
            .collect();
    }
}
