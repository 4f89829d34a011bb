//! The copapy program format: everything a runner needs to execute compiled code.
//!
//! A [`Program`] is machine code, an initial data image, a list of [`Patch`]es that
//! the runner applies once it knows where code and data live, the entry offset, and
//! a symbol table of the user-visible variables. The host compiler does all ELF
//! interpretation; a patch is a small, architecture-tagged instruction for the runner.
//!
//! This crate is `no_std`; with the `alloc` feature it also owns buffers and can
//! encode and decode the binary file format.
#![no_std]

#[cfg(feature = "alloc")]
extern crate alloc;

mod types;
pub use types::*;
