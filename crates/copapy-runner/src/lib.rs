//! The copapy runner: copy, patch, protect, call.
//!
//! The core ([`install`], [`apply_patches`], [`call_entry`]) is `no_std` and allocation-free, so the same code
//! serves the Python module, a standalone runner binary and firmware: it writes the
//! final addresses into a program's code once the code and data buffers are placed.
//!
//! With the `std` feature (default) [`LoadedProgram`] places a [`Program`] in host
//! memory: one `mmap`ed region, code pages followed by data pages (relative
//! addressing needs them within ±2 GiB of each other), with the code made read+execute
//! only after it is patched — never writable and executable at once.
//!
//! [`Program`]: copapy_program::Program
#![no_std]

#[cfg(feature = "std")]
extern crate std;

pub mod fields;
pub mod imports;
mod install;
mod patch;
pub use install::{call_entry, check_aligned, install, install_prelinked, EntryFn, InstallError};
pub use patch::{apply_patch_iter, apply_patches, PatchError};

#[cfg(feature = "std")]
pub mod cpu;
#[cfg(all(feature = "std", unix))]
mod host;
#[cfg(feature = "std")]
pub mod prelink;
#[cfg(all(feature = "std", unix))]
pub use host::{LoadError, LoadedProgram};

pub use copapy_program::{Arch, Base, Encoding, Patch};
