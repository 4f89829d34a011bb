//! The copapy program format: everything a runner needs to execute compiled code.
//!
//! A [`Program`] is machine code, an initial data image, a list of [`Patch`]es that
//! the runner applies once it knows where code and data live, the entry offset, and
//! a symbol table of the user-visible variables. The host compiler does all ELF
//! interpretation; a patch is a small, architecture-tagged instruction for the runner.
//!
//! This crate is `no_std`. Without features it offers [`ProgramView`], a zero-copy,
//! allocation-free parser and validator of program files (what a firmware runner
//! needs). With the `alloc` feature it also has the owning [`Program`], which can
//! [`encode`](Program::encode) and [`decode`](Program::decode) the file format.
//!
//! The file format is described in the [`format`] module.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod bounds;
pub mod compact;
pub mod compact_file;
mod data_image;
mod error;
pub mod format;
pub mod imports;
pub mod isas;
pub mod leb128;
pub mod names;
pub mod pairs;
pub mod placement;
pub mod predict;
#[cfg(feature = "alloc")]
mod program;
pub mod targets;
mod types;
mod view;

pub use bounds::InstructionBounds;
pub use data_image::DataImage;
pub use error::FormatError;
#[cfg(feature = "alloc")]
pub use imports::Import;
pub use imports::{ImportTable, ImportView};
pub use placement::Placement;
#[cfg(feature = "alloc")]
pub use program::{Program, Symbol};
pub use types::*;
pub use view::{OffsetIter, PatchIter, ProgramView, SymbolIter, SymbolTable, SymbolView};
