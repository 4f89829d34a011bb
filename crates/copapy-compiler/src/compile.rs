//! The compiler driver: traced outputs in, a linked [`Program`] and a variable map out.

use std::fmt;

use copapy_program::Program;

use crate::graph::Value;
use crate::link::{link, LinkError};
use crate::optimise::build_arena;
use crate::schedule::schedule;
use crate::select::{MissingStencil, StencilTable};
use crate::stencil_db::StencilDb;

/// A compiled program and where each variable lives in its data memory.
pub struct Compiled {
    pub program: Program,
    /// Data offset of each requested output, in the order given.
    pub outputs: Vec<u32>,
    /// Every input variable the program reads, with its data offset.
    pub inputs: Vec<(Value, u32)>,
    /// Every other value the user still held at compile time, with its data offset.
    pub exposed: Vec<(Value, u32)>,
    /// Number of operations (stencil steps) in the program.
    pub steps: usize,
}

/// Why compilation failed.
#[derive(Debug)]
pub enum CompileError {
    NothingToCompile,
    Missing(MissingStencil),
    Link(LinkError),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::NothingToCompile => f.write_str(
                "nothing to compile: pass the values to compute, e.g. tg.compile(c, d) or tg.compile([c, d])",
            ),
            CompileError::Missing(m) => m.fmt(f),
            CompileError::Link(e) => write!(f, "linking failed: {e}"),
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
    if outputs.is_empty() {
        return Err(CompileError::NothingToCompile);
    }
    let arena = build_arena(outputs);
    let sched = schedule(&arena, table)?;
    let steps = sched.steps.len();
    let program = link(db, &sched.steps, sched.data)?;
    let outputs = arena
        .outputs
        .iter()
        .map(|&o| sched.slot[o as usize])
        .collect();
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
        program,
        outputs,
        inputs,
        exposed,
        steps,
    })
}

/// Reads a scalar of `ty` from a 4-byte little-endian slot as its bit pattern.
pub fn read_bits(data: &[u8], offset: u32) -> u32 {
    let o = offset as usize;
    u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]])
}
