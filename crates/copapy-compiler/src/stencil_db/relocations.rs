//! Step 2 of reading a stencil object: relocations become holes.
//!
//! Three things happen per section, in this order: each relocation is classified by
//! the [`Isa`] and gets its addend (from the instruction for REL objects); RISC-V
//! `PCREL_LO12` relocations take the target of the `PCREL_HI20` they point at; and
//! the final tail jump of a stencil is dropped (or, before an ARM literal pool, kept
//! as a jump to the end of the stencil). A stencil that does not end in its tail
//! jump is an error: control would run off its end.

use copapy_program::Encoding;
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionIndex,
    SymbolKind,
};

use super::sections::{section_name, Layout, Role};
use super::{Hole, HoleTarget, StencilError, RETURN_STENCIL};
use crate::isa::{Isa, RelocKind};

/// A resolved relocation target before it becomes a hole.
#[derive(Clone, Copy)]
enum Resolved {
    Next,
    Data,
    Data2,
    Head,
    Arg(u8),
    Section(SectionIndex, u64),
}

/// One relocation with its meaning and full addend.
struct Raw {
    offset: u64,
    kind: RelocKind,
    symbol: String,
    resolved: Resolved,
    addend: i64,
}

/// Whether only literal data follows `from` in a section (an ARM `$d` mapping symbol
/// starts there and no code mapping symbol comes after it).
fn only_data_after(marks: Option<&Vec<(u64, bool)>>, from: u64) -> bool {
    let Some(marks) = marks else { return false };
    marks.contains(&(from, true)) && !marks.iter().any(|&(at, data)| at > from && !data)
}

fn resolve(
    file: &object::File<'_>,
    isa: &dyn Isa,
    target: RelocationTarget,
    owner: &dyn Fn() -> String,
) -> Result<(String, Resolved), StencilError> {
    match target {
        RelocationTarget::Symbol(si) => {
            let sym = file
                .symbol_by_index(si)
                .map_err(|e| StencilError::Elf(e.to_string()))?;
            let name = sym.name().unwrap_or("").to_string();
            if sym.is_undefined() {
                let r = match name.as_str() {
                    "cp_next" => Resolved::Next,
                    "cp_mf" | "cp_mi" => Resolved::Data,
                    "cp_mf2" | "cp_mi2" => Resolved::Data2,
                    "cp_head" => Resolved::Head,
                    other if super::arg_hole(other).is_some() => {
                        Resolved::Arg(super::arg_hole(other).expect("checked"))
                    }
                    _ => {
                        return Err(StencilError::UnknownSymbol {
                            symbol: name,
                            owner: owner(),
                        })
                    }
                };
                Ok((name, r))
            } else if let Some(sec) = sym.section_index() {
                let name = if name.is_empty() {
                    section_name(file, sec)
                } else {
                    name
                };
                // A Thumb function's symbol value has bit 0 set (the Thumb state bit);
                // the function itself starts at the even address.
                let mut address = sym.address();
                if isa.arch() == copapy_program::Arch::Thumb && sym.kind() == SymbolKind::Text {
                    address &= !1;
                }
                Ok((name, Resolved::Section(sec, address)))
            } else {
                Err(StencilError::BadTarget {
                    symbol: name,
                    owner: owner(),
                    reason: "absolute and common symbols are not supported",
                })
            }
        }
        RelocationTarget::Section(sec) => Ok((section_name(file, sec), Resolved::Section(sec, 0))),
        _ => Err(StencilError::BadTarget {
            symbol: String::from("<absolute>"),
            owner: owner(),
            reason: "absolute relocations are not supported",
        }),
    }
}

/// Reads the relocations of section `index` of the layout into holes.
pub(super) fn decode(
    file: &object::File<'_>,
    isa: &dyn Isa,
    layout: &mut Layout,
    index: usize,
) -> Result<(), StencilError> {
    let (role, sec_index) = layout.sections[index];
    let section = file
        .section_by_index(sec_index)
        .map_err(|e| StencilError::Elf(e.to_string()))?;
    let size = section.size();
    let bytes = section
        .data()
        .map_err(|e| StencilError::Elf(e.to_string()))?;
    let owner = || layout.owner(role);

    // 1. Classify, bounds-check, read addends.
    let mut raws = Vec::new();
    for (offset, reloc) in section.relocations() {
        let (symbol, resolved) = resolve(file, isa, reloc.target(), &owner)?;
        let RelocationFlags::Elf {
            r_type: object::elf::RelocationType(r_type),
        } = reloc.flags()
        else {
            return Err(StencilError::Elf("non-ELF relocation".into()));
        };
        let kind = isa
            .classify(r_type)
            .ok_or_else(|| StencilError::UnsupportedRelocation {
                arch: isa.arch(),
                r_type,
                symbol: symbol.clone(),
                owner: owner(),
                offset,
            })?;
        let width = kind.encoding.width() as u64;
        let field = offset
            .checked_add(width)
            .filter(|&end| end <= size)
            .map(|end| &bytes[offset as usize..end as usize])
            .ok_or_else(|| StencilError::RelocationOutOfRange {
                owner: owner(),
                offset,
            })?;
        let addend = if reloc.has_implicit_addend() {
            isa.implicit_addend(kind.encoding, field)
        } else {
            reloc.addend()
        };
        raws.push(Raw {
            offset,
            kind,
            symbol,
            resolved,
            addend,
        });
    }

    // 2. RISC-V: a PCREL_LO12 names the label of its AUIPC; use that pair's target,
    //    with the addend moved so the runner computes the AUIPC's distance.
    for i in 0..raws.len() {
        if !raws[i].kind.lo12_of_pair {
            continue;
        }
        let label = match raws[i].resolved {
            Resolved::Section(sec, at) if sec == sec_index => Some(at),
            _ => None,
        };
        let hi = label.and_then(|at| {
            raws.iter()
                .position(|r| r.offset == at && r.kind.encoding == Encoding::RvHi20)
        });
        let Some(hi) = hi else {
            return Err(StencilError::BadTarget {
                symbol: raws[i].symbol.clone(),
                owner: owner(),
                reason: "a PCREL_LO12 relocation must point at the AUIPC of its PCREL_HI20 pair",
            });
        };
        let moved = raws[i].offset as i64 - raws[hi].offset as i64;
        raws[i].resolved = raws[hi].resolved;
        raws[i].symbol = raws[hi].symbol.clone();
        raws[i].addend = raws[hi].addend + moved;
    }

    // 3. Holes, and the tail rule.
    let tail = isa.tail_jump();
    let mut holes = Vec::with_capacity(raws.len());
    let (mut tail_dropped, mut tail_kept) = (false, false);
    for raw in raws {
        let out_of_range = || StencilError::RelocationOutOfRange {
            owner: owner(),
            offset: raw.offset,
        };
        let target = match raw.resolved {
            Resolved::Next
            | Resolved::Data
            | Resolved::Data2
            | Resolved::Head
            | Resolved::Arg(_)
                if matches!(role, Role::Object(_)) =>
            {
                return Err(StencilError::BadTarget {
                    symbol: raw.symbol,
                    owner: owner(),
                    reason: "only stencils may use the cp_next and data slot holes",
                })
            }
            Resolved::Next => HoleTarget::Next,
            Resolved::Data => HoleTarget::Data,
            Resolved::Data2 => HoleTarget::Data2,
            Resolved::Head => HoleTarget::Head,
            Resolved::Arg(k) => HoleTarget::Arg(k),
            Resolved::Section(sec, value) => match layout.roles.get(&sec) {
                Some(Role::Object(object)) => HoleTarget::Object {
                    object: *object,
                    offset: u32::try_from(value).map_err(|_| out_of_range())?,
                },
                Some(Role::Stencil(_)) => {
                    return Err(StencilError::BadTarget {
                        symbol: raw.symbol,
                        owner: owner(),
                        reason: "stencils are placed many times, so nothing may refer to one",
                    })
                }
                None => {
                    return Err(StencilError::BadTarget {
                        symbol: raw.symbol,
                        owner: owner(),
                        reason: "it is not in code or read-only data (writable globals are not \
                                 supported: keep state in data slots)",
                    })
                }
            },
        };
        if let (Role::Stencil(_), HoleTarget::Next) = (role, target) {
            let start = raw.offset.checked_sub(tail.field_at as u64);
            let jump = start
                .filter(|&s| raw.kind.encoding == tail.encoding && s + tail.len as u64 <= size)
                .filter(|&s| (tail.is_jump)(&bytes[s as usize..s as usize + tail.len]));
            if let Some(start) = jump {
                let end = start + tail.len as u64;
                if end == size {
                    tail_dropped = true;
                    continue;
                }
                if isa.literal_pools() && only_data_after(layout.mapping.get(&sec_index), end) {
                    tail_kept = true;
                }
            }
        }
        holes.push(Hole {
            offset: raw.offset as u32,
            encoding: raw.kind.encoding,
            addend: i32::try_from(raw.addend).map_err(|_| out_of_range())?,
            target,
        });
    }
    holes.sort_by_key(|h| h.offset);

    match role {
        Role::Stencil(i) => {
            let st = &mut layout.stencils[i];
            if st.name != RETURN_STENCIL && !tail_dropped && !tail_kept {
                return Err(StencilError::NoTailJump {
                    stencil: st.name.clone(),
                });
            }
            if tail_dropped {
                st.bytes.truncate(st.bytes.len() - tail.len);
                st.tail_dropped = true;
            }
            st.has_data_hole = holes.iter().any(|h| h.target == HoleTarget::Data);
            st.has_data2_hole = holes.iter().any(|h| h.target == HoleTarget::Data2);
            st.arg_holes = holes.iter().fold(0, |bits, h| match h.target {
                HoleTarget::Arg(k) => bits | 1 << k,
                _ => bits,
            });
            st.holes = holes;
        }
        Role::Object(o) => layout.objects[o.0 as usize].holes = holes,
    }
    Ok(())
}
