//! Step 1 of reading a stencil object: which function lives in which section, and
//! what each section is to copapy (a stencil, a helper, read-only data, or nothing).

use object::{Object, ObjectSection, ObjectSymbol, SectionIndex, SectionKind, SymbolKind};
use rustc_hash::FxHashMap;

use super::{CodeObject, ObjectId, ObjectRole, Stencil, StencilError};

/// What a section of the object is to us.
#[derive(Clone, Copy, Debug)]
pub(super) enum Role {
    Stencil(usize),
    Object(ObjectId),
}

/// The sections copapy keeps, before their relocations are read.
pub(super) struct Layout {
    pub stencils: Vec<Stencil>,
    pub objects: Vec<CodeObject>,
    pub roles: FxHashMap<SectionIndex, Role>,
    /// Kept sections in file order (so the output is deterministic).
    pub sections: Vec<(Role, SectionIndex)>,
    /// ARM mapping symbols per section: (offset, whether data follows it).
    pub mapping: FxHashMap<SectionIndex, Vec<(u64, bool)>>,
}

impl Layout {
    /// "stencil st_x", "helper cpm_y" or "read-only section .rodata.z", for messages.
    pub fn owner(&self, role: Role) -> String {
        match role {
            Role::Stencil(i) => format!("stencil {}", self.stencils[i].name),
            Role::Object(ObjectId(o)) => {
                let obj = &self.objects[o as usize];
                match obj.role {
                    ObjectRole::Helper => format!("helper {}", obj.name),
                    ObjectRole::ReadOnly => format!("read-only section {}", obj.name),
                }
            }
        }
    }
}

/// ARM/AArch64/RISC-V mapping symbols: `$x`, `$d`, `$a`, `$t` (optionally `$d.123`).
pub(super) fn is_mapping_symbol(name: &str) -> bool {
    name.starts_with('$')
}

pub(super) fn section_name(file: &object::File<'_>, index: SectionIndex) -> String {
    file.section_by_index(index)
        .ok()
        .and_then(|s| s.name().ok().map(str::to_string))
        .unwrap_or_default()
}

/// Reads the function symbols and classifies every section.
pub(super) fn read(file: &object::File<'_>) -> Result<Layout, StencilError> {
    let mut functions: FxHashMap<SectionIndex, String> = FxHashMap::default();
    let mut mapping: FxHashMap<SectionIndex, Vec<(u64, bool)>> = FxHashMap::default();
    for sym in file.symbols() {
        let (Some(sec), Ok(name)) = (sym.section_index(), sym.name()) else {
            continue;
        };
        if is_mapping_symbol(name) {
            mapping
                .entry(sec)
                .or_default()
                .push((sym.address(), name.starts_with("$d")));
            continue;
        }
        if sym.kind() != SymbolKind::Text || !sym.is_definition() || name.is_empty() {
            continue;
        }
        if let Some(other) = functions.get(&sec) {
            if other != name {
                return Err(StencilError::SharedSection {
                    section: section_name(file, sec),
                    functions: (other.clone(), name.to_string()),
                });
            }
        }
        functions.insert(sec, name.to_string());
    }
    for marks in mapping.values_mut() {
        marks.sort_unstable();
    }

    let mut layout = Layout {
        stencils: Vec::new(),
        objects: Vec::new(),
        roles: FxHashMap::default(),
        sections: Vec::new(),
        mapping,
    };
    for section in file.sections() {
        let data = || {
            section
                .data()
                .map(<[u8]>::to_vec)
                .map_err(|e| StencilError::Elf(e.to_string()))
        };
        let sec_name = section.name().unwrap_or("").to_string();
        if sec_name == ".eh_frame" || sec_name.starts_with(".ARM.ex") {
            // Unwind tables describe the stencils' original placement; programs have
            // no unwinder. (Build with -fno-asynchronous-unwind-tables to omit them.)
            continue;
        }
        let align = section.align().max(1) as u32;
        let role = match section.kind() {
            SectionKind::Text if section.size() == 0 => continue,
            SectionKind::Text => match functions.get(&section.index()) {
                Some(func) if func.starts_with("st_") => {
                    layout.stencils.push(Stencil {
                        name: func.clone(),
                        bytes: data()?,
                        holes: Vec::new(),
                        tail_dropped: false,
                        has_data_hole: false,
                        has_data2_hole: false,
                        objects: Vec::new(),
                    });
                    Role::Stencil(layout.stencils.len() - 1)
                }
                // A helper function; code without a function symbol is kept as an
                // object too, named after its section, in case something calls it.
                func => {
                    layout.objects.push(CodeObject {
                        name: func.cloned().unwrap_or(sec_name),
                        role: ObjectRole::Helper,
                        bytes: data()?,
                        align,
                        holes: Vec::new(),
                    });
                    Role::Object(ObjectId(layout.objects.len() as u32 - 1))
                }
            },
            SectionKind::ReadOnlyData
            | SectionKind::ReadOnlyString
            | SectionKind::ReadOnlyDataWithRel => {
                layout.objects.push(CodeObject {
                    name: sec_name,
                    role: ObjectRole::ReadOnly,
                    bytes: data()?,
                    align,
                    holes: Vec::new(),
                });
                Role::Object(ObjectId(layout.objects.len() as u32 - 1))
            }
            _ => continue,
        };
        layout.roles.insert(section.index(), role);
        layout.sections.push((role, section.index()));
    }
    Ok(layout)
}
