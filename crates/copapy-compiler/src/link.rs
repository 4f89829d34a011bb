//! The linker: copies stencils one after another and turns their holes into patches.
//!
//! The layout of a linked program's code is
//!
//! ```text
//! [step 0][step 1] ... [step n-1][st_return] pad [object] pad [object] ...
//! ```
//!
//! Each step's stencil has had its final tail jump removed (see
//! [`stencil_db`](crate::stencil_db)), so control falls from one into the next;
//! `st_return` is appended so the chain returns to the caller. After it come the
//! helper functions and then the read-only sections that the used stencils need, each
//! copied once, aligned as its section requires, in database order within each group
//! (constants right before a helper's hot loop made the README benchmark's fused dot
//! product 40 % slower on AMD Zen).
//!
//! Every hole becomes a [`Patch`]: `cp_next` holes point at the end of their stencil,
//! data holes at the step's slot in the data buffer, object holes at the object's copy.
//! The entry is offset 0; the symbol table is filled in by [`crate::compile()`].
//!
//! Linking is two passes over the steps (sizes, then bytes and patches) into vectors
//! reserved to their exact final size; nothing else is allocated per step.

use std::fmt;

use copapy_program::{Arch, Base, Patch, Program, ScalarType};

use crate::stencil_db::{
    Hole, HoleTarget, ObjectRole, StencilDb, StencilId, ARG_HOLES, RETURN_STENCIL,
};

/// One operation of a program: a stencil and the data slot its data hole refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// The stencil to copy.
    pub stencil: StencilId,
    /// Byte offset in the data buffer of the slot the stencil's `cp_mf`/`cp_mi` hole
    /// refers to; required if the stencil has a data hole, ignored otherwise.
    pub slot: Option<u32>,
    /// Byte offset of the slot the stencil's second data hole (`cp_mf2`/`cp_mi2`) refers
    /// to, for stencils whose two operands both come from memory.
    pub slot2: Option<u32>,
    /// Data offsets for the holes of array stencils (`cp_a0` … `cp_a3`, then `cp_n`):
    /// the result, up to three operands and the slot holding the element count. More
    /// than two operands do not fit `slot`/`slot2`; scalar stencils leave these at 0.
    pub args: [u32; ARG_HOLES],
}

impl Step {
    /// A scalar step: a stencil and the data slot of its memory operand, if any.
    pub const fn new(stencil: StencilId, slot: Option<u32>) -> Step {
        Step {
            stencil,
            slot,
            slot2: None,
            args: [0; ARG_HOLES],
        }
    }
}

/// Why linking failed. These are compiler bugs or a stencil object that does not
/// match the compiler, not user errors, so messages name steps and stencils.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The stencil object has no `st_return`.
    NoReturnStencil,
    /// A step names a stencil id that is not in the database.
    UnknownStencil {
        /// Index of the step.
        step: usize,
        /// The id.
        id: StencilId,
    },
    /// A step's stencil has a data hole but the step has no slot.
    MissingSlot {
        /// Index of the step (`steps.len()` for the appended `st_return`).
        step: usize,
        /// Stencil name.
        stencil: String,
    },
    /// A step's slot does not fit in the data buffer.
    SlotOutOfRange {
        /// Index of the step.
        step: usize,
        /// Stencil name.
        stencil: String,
        /// The slot offset.
        slot: u32,
        /// Size of the data buffer.
        data_len: usize,
    },
    /// The code would be larger than the program format's 4 GiB.
    TooLarge,
    /// A loop back-edge step whose head (`args[0]`) is not an earlier step.
    BadLoopHead {
        /// Index of the step.
        step: usize,
        /// The head it names.
        head: u32,
    },
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::NoReturnStencil => write!(
                f,
                "the stencil object has no {RETURN_STENCIL} stencil, so no program can end"
            ),
            LinkError::UnknownStencil { step, id } => {
                write!(f, "step {step} uses stencil id {} which the stencil database does not have", id.0)
            }
            LinkError::MissingSlot { step, stencil } => write!(
                f,
                "step {step} ({stencil}) accesses data memory but was given no data slot"
            ),
            LinkError::SlotOutOfRange { step, stencil, slot, data_len } => write!(
                f,
                "step {step} ({stencil}) uses data slot {slot}, outside the {data_len}-byte data buffer"
            ),
            LinkError::TooLarge => f.write_str("program code exceeds 4 GiB"),
            LinkError::BadLoopHead { step, head } => write!(
                f,
                "step {step} jumps back to step {head}, which is not an earlier step"
            ),
        }
    }
}

impl std::error::Error for LinkError {}

/// Padding byte between objects: a trap on x86 (`int3`), zero elsewhere.
fn pad_byte(arch: Arch) -> u8 {
    match arch {
        Arch::X86_64 => 0xCC,
        _ => 0,
    }
}

/// Where the code objects and the steps placed so far start in the code buffer.
#[derive(Clone, Copy)]
struct CodePositions<'a> {
    objects: &'a [u32],
    steps: &'a [u32],
}

#[inline]
fn emit_holes(
    patches: &mut Vec<Patch>,
    holes: &[Hole],
    pos: u32,
    end: u32,
    slots: (u32, u32),
    args: &[u32; ARG_HOLES],
    code_pos: CodePositions<'_>,
) {
    for h in holes {
        let (base, target) = match h.target {
            HoleTarget::Next => (Base::Code, end),
            HoleTarget::Data => (Base::Data, slots.0),
            HoleTarget::Data2 => (Base::Data, slots.1),
            HoleTarget::Arg(k) => (Base::Data, args[k as usize]),
            // checked in pass 1: an earlier step, whose position is known
            HoleTarget::Head => (Base::Code, code_pos.steps[args[0] as usize]),
            HoleTarget::Object { object, offset } => {
                (Base::Code, code_pos.objects[object.0 as usize] + offset)
            }
        };
        patches.push(Patch {
            offset: pos + h.offset,
            encoding: h.encoding,
            base,
            target,
            addend: h.addend,
        });
    }
}

/// Links `steps` into a program whose initial data image is `data`.
///
/// ```no_run
/// use copapy_compiler::link::{link, Step};
/// use copapy_compiler::stencil_db::StencilDb;
/// let db = StencilDb::parse(&std::fs::read("stencils/x86_64.o").unwrap()).unwrap();
/// let load = db.id("st_copy_f_m_r0").unwrap();
/// let store = db.id("st_store_f_r0").unwrap();
/// let mut data = 2.5f32.to_le_bytes().to_vec();
/// data.extend([0; 4]);
/// // r0 = data[0]; data[4] = r0
/// let steps = [
///     Step::new(load, Some(0)),
///     Step::new(store, Some(4)),
/// ];
/// let program = link(&db, &steps, data).unwrap();
/// ```
pub fn link(db: &StencilDb, steps: &[Step], data: Vec<u8>) -> Result<Program, LinkError> {
    let ret = db.return_stencil().ok_or(LinkError::NoReturnStencil)?;

    // Pass 1: check the steps, measure code and patches, mark the objects needed.
    let mut object_used = vec![false; db.objects().len()];
    let mut stencil_seen = vec![false; db.stencils().len()];
    let mut code_len: u64 = 0;
    let mut patch_count: usize = 0;
    let check = |index: usize, step: &Step| -> Result<(), LinkError> {
        let st = db.get(step.stencil).ok_or(LinkError::UnknownStencil {
            step: index,
            id: step.stencil,
        })?;
        if st.holes.iter().any(|h| h.target == HoleTarget::Head) && step.args[0] as usize >= index {
            return Err(LinkError::BadLoopHead {
                step: index,
                head: step.args[0],
            });
        }
        let args = (0..ARG_HOLES).map(|k| (st.arg_holes >> k & 1 == 1, Some(step.args[k])));
        for (needed, slot) in [
            (st.has_data_hole, step.slot),
            (st.has_data2_hole, step.slot2),
        ]
        .into_iter()
        .chain(args)
        {
            if !needed {
                continue;
            }
            let slot = slot.ok_or_else(|| LinkError::MissingSlot {
                step: index,
                stencil: st.name.clone(),
            })?;
            if slot as u64 + ScalarType::BYTES as u64 > data.len() as u64 {
                return Err(LinkError::SlotOutOfRange {
                    step: index,
                    stencil: st.name.clone(),
                    slot,
                    data_len: data.len(),
                });
            }
        }
        Ok(())
    };
    let ret_step = Step::new(ret, None);
    for (index, step) in steps.iter().chain(std::iter::once(&ret_step)).enumerate() {
        check(index, step)?;
        let st = db.stencil(step.stencil);
        code_len += st.bytes.len() as u64;
        patch_count += st.holes.len();
        let seen = &mut stencil_seen[step.stencil.0 as usize];
        if !*seen {
            *seen = true;
            for o in &st.objects {
                object_used[o.0 as usize] = true;
            }
        }
    }
    let stencils_end = code_len;

    // Object layout, after the stencils: helpers first, then read-only data, so
    // constants never sit between or right before hot loops.
    let mut order: Vec<usize> = (0..db.objects().len())
        .filter(|&i| object_used[i])
        .collect();
    order.sort_by_key(|&i| db.objects()[i].role == ObjectRole::ReadOnly);
    let mut object_pos = vec![u32::MAX; db.objects().len()];
    for &i in &order {
        let obj = &db.objects()[i];
        {
            let align = obj.align.max(1) as u64;
            code_len = code_len.div_ceil(align) * align;
            object_pos[i] = u32::try_from(code_len).map_err(|_| LinkError::TooLarge)?;
            code_len += obj.bytes.len() as u64;
            patch_count += obj.holes.len();
        }
    }
    let code_len = u32::try_from(code_len).map_err(|_| LinkError::TooLarge)?;

    // Pass 2: bytes and patches.
    let mut code = Vec::with_capacity(code_len as usize);
    let mut patches = Vec::with_capacity(patch_count);
    // where each step starts, for the back-edges of loops (`HoleTarget::Head`)
    let mut step_pos = Vec::with_capacity(steps.len() + 1);
    for step in steps.iter().chain(std::iter::once(&ret_step)) {
        let st = db.stencil(step.stencil);
        let pos = code.len() as u32;
        step_pos.push(pos);
        code.extend_from_slice(&st.bytes);
        let end = code.len() as u32;
        emit_holes(
            &mut patches,
            &st.holes,
            pos,
            end,
            (step.slot.unwrap_or(0), step.slot2.unwrap_or(0)),
            &step.args,
            CodePositions {
                objects: &object_pos,
                steps: &step_pos,
            },
        );
    }
    debug_assert_eq!(code.len() as u64, stencils_end);
    let pad = pad_byte(db.arch());
    for &i in &order {
        let obj = &db.objects()[i];
        {
            let pos = object_pos[i];
            code.resize(pos as usize, pad);
            code.extend_from_slice(&obj.bytes);
            emit_holes(
                &mut patches,
                &obj.holes,
                pos,
                pos,
                (0, 0),
                &[0; ARG_HOLES],
                CodePositions {
                    objects: &object_pos,
                    steps: &[],
                },
            );
        }
    }
    debug_assert_eq!(code.len(), code_len as usize);
    debug_assert_eq!(patches.len(), patch_count);

    // Objects were placed at offsets aligned for them, so the code buffer needs the
    // largest of their alignments (and 16 for the stencils' own loops and constants).
    let code_align = db
        .objects()
        .iter()
        .zip(&object_used)
        .filter(|(_, used)| **used)
        .map(|(o, _)| o.align.max(1))
        .fold(16, u32::max)
        .next_power_of_two()
        .min(copapy_program::format::MAX_ALIGN);
    let mut program = Program::new(db.arch(), code, data, patches, 0);
    program.code_align = code_align;
    Ok(program)
}
