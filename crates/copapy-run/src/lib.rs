//! `copapy-run`: the standalone runner around the `no_std` core of `copapy-runner`.
//!
//! The core copies, patches, protects and calls; this crate adds the thin shells the
//! design asks for: a command line ([`cli`]), a fixed-period loop with realtime setup
//! and timing statistics ([`periodic`], [`realtime`], [`stats`]), variables by name
//! over stdin/stdout lines ([`lines`]) and a binary frame protocol over TCP or pipes
//! ([`protocol`], [`server`]), all driving one [`session::Session`]. Only
//! [`realtime`] (libc clock and scheduler calls) contains `unsafe`; every other module
//! forbids it.

pub mod cli;
pub mod entry;
pub mod lines;
pub mod periodic;
pub mod protocol;
pub mod realtime;
pub mod server;
pub mod session;
pub mod stats;
