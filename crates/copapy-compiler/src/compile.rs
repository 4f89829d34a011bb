//! The compiler driver: traced outputs in, a linked [`Program`] and a variable map out.

use std::fmt;

use copapy_program::Program;

use crate::graph::{ScalarType, Value};
use crate::link::{link, LinkError};
use crate::loops::{copy_into_states, copy_slot, Carried, LoopSpan};
use crate::optimise::build_arena;
use crate::schedule::schedule;
use crate::select::Class;
use crate::select::{MissingStencil, StencilTable};
use crate::stencil_db::{StencilDb, StencilId, ARG_HOLES};

/// A compiled program and where each variable lives in its data memory.
pub struct Compiled {
    pub program: Program,
    /// Data offset of each requested output, in the order given.
    pub outputs: Vec<u32>,
    /// Every input variable the program reads, with its data offset.
    pub inputs: Vec<(Value, u32)>,
    /// Every other value the user still held at compile time, with its data offset.
    pub exposed: Vec<(Value, u32)>,
    /// Data offset of each updated state variable, in the order of the updates given.
    pub states: Vec<u32>,
    /// Number of operations (stencil steps) in the program.
    pub steps: usize,
    /// The stencil of each step, in order (the linker appends `st_return`), with the
    /// initial value of its element-count slot `cp_n` for an array step (0 otherwise):
    /// with the stencil build's per-stencil instruction counts, the bounds of one run.
    pub stencils: Vec<(StencilId, u32)>,
    /// The linked steps themselves (stencil and holes), in the same order: linking one
    /// of them alone with the program's data gives a program that runs just that step,
    /// which is how an array step's instruction count is found (`copapy._bounds`).
    pub linked_steps: Vec<crate::link::Step>,
    /// The loops among those steps, whose bodies run more than once per run.
    pub loops: Vec<LoopSpan>,
}

/// Why compilation failed.
#[derive(Debug)]
pub enum CompileError {
    NothingToCompile,
    Missing(MissingStencil),
    Link(LinkError),
    /// Update `index` targets a computed value; only variables (`cp.value`) hold state.
    UpdateNotVariable {
        index: usize,
    },
    /// Update `index` targets a variable already updated by an earlier one.
    UpdateTwice {
        index: usize,
    },
    /// Update `index` would store a value of another type in the variable.
    UpdateType {
        index: usize,
        state: ScalarType,
        value: ScalarType,
    },
    /// Update `index` pairs a state with a whole array: updates copy one scalar slot.
    UpdateArray {
        index: usize,
    },
    /// A value computed inside a loop body is used outside the loop.
    LoopIntermediate,
    /// One import called with two signatures.
    ImportSignature(crate::imports::SignatureConflict),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::NothingToCompile => f.write_str(
                "nothing to compile: pass the values to compute, e.g. tg.compile(c, d) or tg.compile([c, d])",
            ),
            CompileError::Missing(m) => m.fmt(f),
            CompileError::Link(e) => write!(f, "linking failed: {e}"),
            CompileError::UpdateNotVariable { index } => write!(
                f,
                "update {index} targets a computed value: only variables made with cp.value(...) \
                 can hold state between runs"
            ),
            CompileError::UpdateTwice { index } => write!(
                f,
                "update {index} targets a variable that an earlier update already sets: give each \
                 state variable one next value"
            ),
            CompileError::UpdateType { index, state, value } => write!(
                f,
                "update {index} stores a {} value into a {} variable: convert it so the types match",
                value.name(),
                state.name()
            ),
            CompileError::ImportSignature(c) => c.fmt(f),
            CompileError::UpdateArray { index } => write!(
                f,
                "update {index} has an array as its next value: updates store scalar \
                 values; pair each element's state with its next value instead"
            ),
            CompileError::LoopIntermediate => f.write_str(
                "a value computed inside the body of a cp.fori_loop / cp.scan is used outside \
                 the loop: the body's intermediates exist only inside it; return the value \
                 in the carry (or as a scan output) to use it after the loop",
            ),
        }
    }
}

impl std::error::Error for CompileError {}

impl From<MissingStencil> for CompileError {
    fn from(m: MissingStencil) -> Self {
        CompileError::Missing(m)
    }
}

impl From<LinkError> for CompileError {
    fn from(e: LinkError) -> Self {
        CompileError::Link(e)
    }
}

/// Compiles the computation of `outputs`: optimise → schedule → link.
pub fn compile(
    db: &StencilDb,
    table: &StencilTable,
    outputs: &[Value],
) -> Result<Compiled, CompileError> {
    compile_with_updates(db, table, outputs, &[])
}

fn check_updates(updates: &[(Value, Value)]) -> Result<(), CompileError> {
    for (index, (state, next)) in updates.iter().enumerate() {
        if !state.is_input() {
            return Err(CompileError::UpdateNotVariable { index });
        }
        if updates[..index].iter().any(|(s, _)| s.ptr_eq(state)) {
            return Err(CompileError::UpdateTwice { index });
        }
        if crate::array::len_of(next).is_some() {
            return Err(CompileError::UpdateArray { index });
        }
        if state.ty() != next.ty() {
            return Err(CompileError::UpdateType {
                index,
                state: state.ty(),
                value: next.ty(),
            });
        }
    }
    Ok(())
}

/// Like [`compile`], and at the end of every run each `(state, next)` of `updates`
/// stores `next` into the variable `state`, so one run is one step of a loop.
///
/// Every next value is computed from the states' values at the start of the run
/// (the copies come after all computation, and a next value that is itself a state
/// is staged in a spare slot first, so `{x: y, y: x}` swaps). An output that is an
/// updated state's node is that state's slot: after a run it holds the next value
/// (see [`compile_with_run_outputs`] for outputs that keep the run's value).
pub fn compile_with_updates(
    db: &StencilDb,
    table: &StencilTable,
    outputs: &[Value],
    updates: &[(Value, Value)],
) -> Result<Compiled, CompileError> {
    compile_with_run_outputs(db, table, outputs, updates, &[])
}

/// Like [`compile_with_updates`], and each output position in `run_outputs` that is an
/// updated state's node gets a slot of its own, copied from the state after all
/// computation and before the updates: it holds the value this run computed with
/// (the state's value at the start of the run), not the next one. A traced `1.0 * x`
/// is the node of `x`, so this is how an output that merely folded onto a state stays
/// an output; positions not listed are views of the state.
pub fn compile_with_run_outputs(
    db: &StencilDb,
    table: &StencilTable,
    outputs: &[Value],
    updates: &[(Value, Value)],
    run_outputs: &[usize],
) -> Result<Compiled, CompileError> {
    if outputs.is_empty() && updates.is_empty() {
        return Err(CompileError::NothingToCompile);
    }
    check_updates(updates)?;
    let mut all: Vec<Value> = outputs.to_vec();
    // States are outputs too, so each has a slot even if nothing reads it.
    all.extend(updates.iter().map(|(state, _)| state.clone()));
    all.extend(updates.iter().map(|(_, next)| next.clone()));
    let mut arena = build_arena(&all);
    arena.stored = arena.outputs[outputs.len()..outputs.len() + updates.len()].to_vec();
    if arena
        .inputs
        .iter()
        .any(|(v, _)| crate::loops::is_placeholder(v))
    {
        return Err(CompileError::LoopIntermediate);
    }
    check_import_signatures(&arena)?;
    let mut sched = schedule(&arena, table)?;
    let slots: Vec<u32> = arena
        .outputs
        .iter()
        .map(|&o| sched.slot[o as usize])
        .collect();
    let n = outputs.len();
    let states: Vec<u32> = slots[n..n + updates.len()].to_vec();
    let nexts = &slots[n + updates.len()..];
    let mut output_slots = slots[..n].to_vec();
    for &i in run_outputs {
        let Some(&slot) = output_slots.get(i) else {
            continue;
        };
        if states.contains(&slot) {
            let own = sched.data.len() as u32;
            sched.data.extend_from_slice(&[0; 4]);
            copy_slot(
                &mut sched.steps,
                table,
                Class::of(outputs[i].ty()),
                slot,
                own,
            )?;
            output_slots[i] = own;
        }
    }
    let kinds: Vec<Carried> = updates.iter().map(|(s, _)| Carried::of(s)).collect();
    copy_into_states(
        &mut sched.steps,
        &mut sched.data,
        table,
        &kinds,
        nexts,
        &states,
    )?;
    let steps = sched.steps.len();
    let n_hole = ARG_HOLES - 1; // cp_n, after cp_a0..cp_a3
    let stencils = sched
        .steps
        .iter()
        .map(|s| {
            let uses_n = db
                .get(s.stencil)
                .is_some_and(|st| st.arg_holes >> n_hole & 1 == 1);
            let n_slot = s.args[n_hole];
            let n = if uses_n && n_slot as usize + 4 <= sched.data.len() {
                read_bits(&sched.data, n_slot)
            } else {
                0
            };
            (s.stencil, n)
        })
        .collect();
    let imports = std::mem::take(&mut sched.imports);
    let linked_steps = sched.steps.clone();
    let mut program = link(db, &sched.steps, sched.data)?;
    program.imports = imports
        .into_iter()
        .map(|i| copapy_program::Import {
            name: i.name.to_string(),
            signature: i.signature.to_string(),
            slot: i.slot,
        })
        .collect();
    let outputs = output_slots;
    let inputs = arena
        .inputs
        .into_iter()
        .map(|(v, id)| (v, sched.slot[id as usize]))
        .collect();
    let exposed = arena
        .exposed
        .into_iter()
        .map(|(v, id)| (v, sched.slot[id as usize]))
        .collect();
    Ok(Compiled {
        loops: sched.loops,
        program,
        outputs,
        inputs,
        exposed,
        states,
        steps,
        stencils,
        linked_steps,
    })
}

/// Refuses a program that calls one import with two signatures.
fn check_import_signatures(arena: &crate::optimise::Arena) -> Result<(), CompileError> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for a in &arena.arrays {
        let crate::graph::NodeKind::Array(node) = a.node.kind() else {
            continue;
        };
        let crate::array::ArrayOp::Call { name, signature } = &node.op else {
            continue;
        };
        match seen.iter().find(|(n, _)| *n == &**name) {
            Some((_, first)) if *first != &**signature => {
                return Err(CompileError::ImportSignature(
                    crate::imports::SignatureConflict {
                        name: name.clone(),
                        first: (*first).into(),
                        second: signature.clone(),
                    },
                ))
            }
            Some(_) => {}
            None => seen.push((name, signature)),
        }
    }
    Ok(())
}

/// Reads a scalar of `ty` from a 4-byte little-endian slot as its bit pattern.
pub fn read_bits(data: &[u8], offset: u32) -> u32 {
    let o = offset as usize;
    u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]])
}
