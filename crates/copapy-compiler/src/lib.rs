//! The copapy compiler: from a traced graph to a linked program.
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! 1. [`trace`] builds [`graph`] nodes (type promotion, constant folding via [`fold`]);
//! 2. [`optimise`] numbers the reachable graph, merging equal subexpressions, and moves
//!    negations to the readers that absorb them (`signs`);
//! 3. [`schedule`] orders operations and allocates the two virtual registers per class,
//!    choosing stencils through [`select`];
//! 4. [`link`] copies stencil bytes from the [`stencil_db`] and turns holes into patches;
//! 5. the result is a [`copapy_program::Program`], run by `copapy-runner`.
//!
//! [`compile()`] drives stages 2 to 4; [`autodiff`] transforms traced graphs (reverse mode).

#![forbid(unsafe_code)]

mod arena;
pub mod array;
pub mod array_build;
pub mod array_kernels;
pub mod array_stencils;
pub mod autodiff;
pub mod compile;
pub mod finish;
pub mod fold;
pub mod graph;
pub mod imports;
pub mod isa;
pub mod kernel_params;
pub mod link;
mod loop_grad;
pub mod loops;
mod muladd;
mod next_use;
pub mod optimise;
mod pack;
mod pack_kept;
mod pack_outputs;
// generated from stencils/optable.py (stencils/gen_optable.py), formatted by the generator
#[rustfmt::skip]
mod ops_generated;
pub mod schedule;
mod schedule_calls;
mod schedule_muladd;
mod schedule_packs;
pub mod select;
mod signs;
mod sincos;
pub mod stencil_db;
pub mod targets;
pub mod trace;
pub mod window;

pub use compile::{compile, CompileError, Compiled};
pub use graph::{Fused, Op, ScalarType, Value};
