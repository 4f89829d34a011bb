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

use std::fmt;

use copapy_program::{Arch, Encoding};
use object::{
    Architecture, BinaryFormat, Object, ObjectKind, ObjectSection, ObjectSymbol, RelocationFlags,
    RelocationTarget, SectionIndex, SectionKind, SymbolKind,
};
use rustc_hash::FxHashMap;

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

/// Why a stencil object was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StencilError {
    /// The bytes are not a readable ELF object.
    Elf(String),
    /// The ELF file is not a relocatable object (`.o`).
    NotRelocatable,
    /// The object is for an architecture copapy does not support.
    UnsupportedArch(String),
    /// A relocation type this module does not handle.
    UnsupportedRelocation {
        /// Architecture of the object.
        arch: Arch,
        /// Raw ELF relocation type.
        r_type: u32,
        /// Symbol (or section) the relocation refers to.
        symbol: String,
        /// Where the relocation is, e.g. "stencil st_x".
        owner: String,
        /// Offset of the relocation in its section.
        offset: u64,
    },
    /// An undefined symbol that is not a hole.
    UnknownSymbol {
        /// The symbol.
        symbol: String,
        /// Where the relocation is.
        owner: String,
    },
    /// A relocation the ABI forbids (e.g. a helper using `cp_mf`, a stencil calling a stencil).
    BadTarget {
        /// The symbol.
        symbol: String,
        /// Where the relocation is.
        owner: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A relocation addend or offset does not fit 32 bits or lies outside its section.
    RelocationOutOfRange {
        /// Where the relocation is.
        owner: String,
        /// Offset of the relocation.
        offset: u64,
    },
    /// Two functions share a section: the object was built without `-ffunction-sections`.
    SharedSection {
        /// Section name.
        section: String,
        /// The two functions.
        functions: (String, String),
    },
    /// Two stencils have the same name.
    Duplicate(String),
}

impl fmt::Display for StencilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StencilError::Elf(e) => write!(f, "not a valid ELF object: {e}"),
            StencilError::NotRelocatable => {
                f.write_str("not a relocatable ELF object: stencils must be compiled with -c")
            }
            StencilError::UnsupportedArch(a) => {
                write!(f, "stencil object is for {a}, which copapy does not support")
            }
            StencilError::UnsupportedRelocation { arch, r_type, symbol, owner, offset } => write!(
                f,
                "unsupported relocation {} against '{symbol}' at offset {offset:#x} in {owner}",
                reloc_name(*arch, *r_type)
            ),
            StencilError::UnknownSymbol { symbol, owner } => write!(
                f,
                "{owner} refers to undefined symbol '{symbol}': only cp_next, cp_mf, cp_mi, cp_mf2 and cp_mi2 may be \
                 undefined; helpers must be compiled into the stencil object"
            ),
            StencilError::BadTarget { symbol, owner, reason } => {
                write!(f, "{owner} refers to '{symbol}': {reason}")
            }
            StencilError::RelocationOutOfRange { owner, offset } => write!(
                f,
                "relocation at offset {offset:#x} in {owner} lies outside the section or has an addend beyond 32 bits"
            ),
            StencilError::SharedSection { section, functions } => write!(
                f,
                "functions {} and {} share section {section}: compile stencils with -ffunction-sections",
                functions.0, functions.1
            ),
            StencilError::Duplicate(name) => write!(f, "stencil {name} is defined twice"),
        }
    }
}

impl std::error::Error for StencilError {}

/// Name of an ELF relocation type for messages, e.g. `R_X86_64_32S (type 11)`.
pub fn reloc_name(arch: Arch, r_type: u32) -> String {
    use object::elf::*;
    let name = match arch {
        Arch::X86_64 => match RelocationType(r_type) {
            R_X86_64_NONE => "R_X86_64_NONE",
            R_X86_64_64 => "R_X86_64_64",
            R_X86_64_PC32 => "R_X86_64_PC32",
            R_X86_64_GOT32 => "R_X86_64_GOT32",
            R_X86_64_PLT32 => "R_X86_64_PLT32",
            R_X86_64_GOTPCREL => "R_X86_64_GOTPCREL",
            R_X86_64_32 => "R_X86_64_32",
            R_X86_64_32S => "R_X86_64_32S",
            R_X86_64_16 => "R_X86_64_16",
            R_X86_64_PC16 => "R_X86_64_PC16",
            R_X86_64_8 => "R_X86_64_8",
            R_X86_64_PC8 => "R_X86_64_PC8",
            R_X86_64_PC64 => "R_X86_64_PC64",
            R_X86_64_GOTPCRELX => "R_X86_64_GOTPCRELX",
            R_X86_64_REX_GOTPCRELX => "R_X86_64_REX_GOTPCRELX",
            _ => "",
        },
        _ => "",
    };
    if name.is_empty() {
        format!("type {r_type} ({})", arch.name())
    } else {
        format!("{name} (type {r_type})")
    }
}

/// How a relocation of raw ELF type `r_type` is encoded, if copapy supports it.
///
/// This is the one table to extend for a new architecture (with the tail-jump rule
/// in `tail_jump`).
pub fn classify(arch: Arch, r_type: u32) -> Option<Encoding> {
    use object::elf::*;
    match (arch, RelocationType(r_type)) {
        (Arch::X86_64, R_X86_64_PC32 | R_X86_64_PLT32) => Some(Encoding::Rel32),
        (Arch::X86_64, R_X86_64_64) => Some(Encoding::Abs64),
        _ => None,
    }
}

/// The final tail jump of a stencil on `arch`: (instruction length, opcode bytes
/// before the field, expected addend). The field is the rest of the instruction.
fn tail_jump(arch: Arch) -> Option<(usize, &'static [u8], i64)> {
    match arch {
        // jmp rel32
        Arch::X86_64 => Some((5, &[0xE9], -4)),
        _ => None,
    }
}

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

/// What a section of the object is to us.
#[derive(Clone, Copy, Debug)]
enum Role {
    Stencil(usize),
    Object(ObjectId),
}

/// A resolved relocation target before it becomes a hole.
enum Resolved {
    Next,
    Data,
    Data2,
    Section(SectionIndex, u64),
}

const NAME_NEXT: &str = "cp_next";
/// The stencil appended to every program so it ends by returning.
pub const RETURN_STENCIL: &str = "st_return";

fn is_mapping_symbol(name: &str) -> bool {
    // ARM/AArch64/RISC-V "$x", "$d", "$a", "$t" (optionally "$x.123").
    name.starts_with('$')
}

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
        let arch = match file.architecture() {
            Architecture::X86_64 => Arch::X86_64,
            Architecture::Aarch64 => Arch::AArch64,
            Architecture::Arm => Arch::Arm,
            Architecture::Riscv64 => Arch::RiscV64,
            Architecture::Riscv32 => Arch::RiscV32,
            other => return Err(StencilError::UnsupportedArch(format!("{other:?}"))),
        };

        // 1. Which function lives in which section.
        let mut functions: FxHashMap<SectionIndex, String> = FxHashMap::default();
        for sym in file.symbols() {
            if sym.kind() != SymbolKind::Text || !sym.is_definition() {
                continue;
            }
            let (Some(sec), Ok(name)) = (sym.section_index(), sym.name()) else {
                continue;
            };
            if name.is_empty() || is_mapping_symbol(name) {
                continue;
            }
            if let Some(other) = functions.get(&sec) {
                if other != name {
                    let section = file
                        .section_by_index(sec)
                        .and_then(|s| s.name().map(str::to_string))
                        .unwrap_or_default();
                    return Err(StencilError::SharedSection {
                        section,
                        functions: (other.clone(), name.to_string()),
                    });
                }
            }
            functions.insert(sec, name.to_string());
        }

        // 2. Roles of sections, in section order (so the output is deterministic).
        let mut roles: FxHashMap<SectionIndex, Role> = FxHashMap::default();
        let mut stencils: Vec<Stencil> = Vec::new();
        let mut objects: Vec<CodeObject> = Vec::new();
        let mut sections = Vec::new(); // (role, section index), for step 3
        for section in file.sections() {
            let data = || {
                section
                    .data()
                    .map(<[u8]>::to_vec)
                    .map_err(|e| StencilError::Elf(e.to_string()))
            };
            let sec_name = section.name().unwrap_or("").to_string();
            if sec_name == ".eh_frame" {
                // Unwind tables describe the stencils' original placement; programs have
                // no unwinder. (Build with -fno-asynchronous-unwind-tables to omit them.)
                continue;
            }
            let role = match section.kind() {
                SectionKind::Text if section.size() == 0 => continue,
                SectionKind::Text => match functions.get(&section.index()) {
                    Some(func) if func.starts_with("st_") => {
                        stencils.push(Stencil {
                            name: func.clone(),
                            bytes: data()?,
                            holes: Vec::new(),
                            tail_dropped: false,
                            has_data_hole: false,
                            has_data2_hole: false,
                            objects: Vec::new(),
                        });
                        Role::Stencil(stencils.len() - 1)
                    }
                    // A helper function; code without a function symbol is kept as an
                    // object too, named after its section, in case something calls it.
                    func => {
                        objects.push(CodeObject {
                            name: func.cloned().unwrap_or(sec_name),
                            role: ObjectRole::Helper,
                            bytes: data()?,
                            align: section.align().max(1) as u32,
                            holes: Vec::new(),
                        });
                        Role::Object(ObjectId(objects.len() as u32 - 1))
                    }
                },
                SectionKind::ReadOnlyData
                | SectionKind::ReadOnlyString
                | SectionKind::ReadOnlyDataWithRel => {
                    objects.push(CodeObject {
                        name: sec_name,
                        role: ObjectRole::ReadOnly,
                        bytes: data()?,
                        align: section.align().max(1) as u32,
                        holes: Vec::new(),
                    });
                    Role::Object(ObjectId(objects.len() as u32 - 1))
                }
                _ => continue,
            };
            roles.insert(section.index(), role);
            sections.push((role, section.index()));
        }

        // 3. Relocations → holes.
        let owner_name = |role: Role, stencils: &[Stencil], objects: &[CodeObject]| match role {
            Role::Stencil(i) => format!("stencil {}", stencils[i].name),
            Role::Object(ObjectId(o)) => match objects[o as usize].role {
                ObjectRole::Helper => format!("helper {}", objects[o as usize].name),
                ObjectRole::ReadOnly => format!("read-only section {}", objects[o as usize].name),
            },
        };
        for &(role, sec_index) in &sections {
            let section = file
                .section_by_index(sec_index)
                .map_err(|e| StencilError::Elf(e.to_string()))?;
            let size = section.size();
            let mut holes = Vec::new();
            let mut tail_dropped = false;
            for (offset, reloc) in section.relocations() {
                let owner = || owner_name(role, &stencils, &objects);
                let (symbol, resolved) = match reloc.target() {
                    RelocationTarget::Symbol(si) => {
                        let sym = file
                            .symbol_by_index(si)
                            .map_err(|e| StencilError::Elf(e.to_string()))?;
                        let name = sym.name().unwrap_or("").to_string();
                        if sym.is_undefined() {
                            let r = match name.as_str() {
                                NAME_NEXT => Resolved::Next,
                                "cp_mf" | "cp_mi" => Resolved::Data,
                                "cp_mf2" | "cp_mi2" => Resolved::Data2,
                                _ => {
                                    return Err(StencilError::UnknownSymbol {
                                        symbol: name,
                                        owner: owner(),
                                    })
                                }
                            };
                            (name, r)
                        } else if let Some(sec) = sym.section_index() {
                            let name = if name.is_empty() {
                                file.section_by_index(sec)
                                    .and_then(|s| s.name().map(str::to_string))
                                    .unwrap_or_default()
                            } else {
                                name
                            };
                            (name, Resolved::Section(sec, sym.address()))
                        } else {
                            return Err(StencilError::BadTarget {
                                symbol: name,
                                owner: owner(),
                                reason: "absolute and common symbols are not supported",
                            });
                        }
                    }
                    RelocationTarget::Section(sec) => {
                        let name = file
                            .section_by_index(sec)
                            .and_then(|s| s.name().map(str::to_string))
                            .unwrap_or_default();
                        (name, Resolved::Section(sec, 0))
                    }
                    _ => {
                        return Err(StencilError::BadTarget {
                            symbol: String::from("<absolute>"),
                            owner: owner(),
                            reason: "absolute relocations are not supported",
                        })
                    }
                };
                let RelocationFlags::Elf { r_type } = reloc.flags() else {
                    return Err(StencilError::Elf("non-ELF relocation".into()));
                };
                let r_type = r_type.0;
                let encoding =
                    classify(arch, r_type).ok_or_else(|| StencilError::UnsupportedRelocation {
                        arch,
                        r_type,
                        symbol: symbol.clone(),
                        owner: owner(),
                        offset,
                    })?;
                let out_of_range = || StencilError::RelocationOutOfRange {
                    owner: owner(),
                    offset,
                };
                if offset
                    .checked_add(encoding.width() as u64)
                    .is_none_or(|end| end > size)
                {
                    return Err(out_of_range());
                }
                let addend = i32::try_from(reloc.addend()).map_err(|_| out_of_range())?;
                let target =
                    match resolved {
                        Resolved::Next | Resolved::Data | Resolved::Data2
                            if matches!(role, Role::Object(_)) =>
                        {
                            return Err(StencilError::BadTarget {
                                symbol,
                                owner: owner(),
                                reason: "only stencils may use the cp_next and data slot holes",
                            })
                        }
                        Resolved::Next => HoleTarget::Next,
                        Resolved::Data => HoleTarget::Data,
                        Resolved::Data2 => HoleTarget::Data2,
                        Resolved::Section(sec, value) => match roles.get(&sec) {
                            Some(Role::Object(object)) => HoleTarget::Object {
                                object: *object,
                                offset: u32::try_from(value).map_err(|_| out_of_range())?,
                            },
                            Some(Role::Stencil(_)) => return Err(StencilError::BadTarget {
                                symbol,
                                owner: owner(),
                                reason:
                                    "stencils are placed many times, so nothing may refer to one",
                            }),
                            None => return Err(StencilError::BadTarget {
                                symbol,
                                owner: owner(),
                                reason:
                                    "it is not in code or read-only data (writable globals are not \
                                         supported: keep state in data slots)",
                            }),
                        },
                    };
                let offset = offset as u32;
                if let (Role::Stencil(si), HoleTarget::Next, Some((len, opcode, tail_addend))) =
                    (role, target, tail_jump(arch))
                {
                    let start = size as usize - len.min(size as usize);
                    let bytes = &stencils[si].bytes;
                    if size as usize >= len
                        && offset as usize == start + opcode.len()
                        && bytes[start..start + opcode.len()] == *opcode
                        && reloc.addend() == tail_addend
                        && encoding == Encoding::Rel32
                    {
                        tail_dropped = true;
                        continue;
                    }
                }
                holes.push(Hole {
                    offset,
                    encoding,
                    addend,
                    target,
                });
            }
            holes.sort_by_key(|h| h.offset);
            match role {
                Role::Stencil(i) => {
                    let st = &mut stencils[i];
                    if tail_dropped {
                        let len = tail_jump(arch).map_or(0, |t| t.0);
                        st.bytes.truncate(st.bytes.len() - len);
                        st.tail_dropped = true;
                    }
                    st.has_data_hole = holes.iter().any(|h| h.target == HoleTarget::Data);
                    st.has_data2_hole = holes.iter().any(|h| h.target == HoleTarget::Data2);
                    st.holes = holes;
                }
                Role::Object(ObjectId(o)) => objects[o as usize].holes = holes,
            }
        }

        // 4. Transitive object dependencies of each stencil.
        let mut seen = vec![false; objects.len()];
        let mut stack = Vec::new();
        for st in &mut stencils {
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
