//! `copapy-run`: the standalone runner around the `no_std` core of `copapy-runner`.
//!
//! The core copies, patches, protects and calls; this crate adds the thin shells the
//! design asks for: a command line ([`cli`]), a fixed-period loop with realtime setup
//! and timing statistics ([`periodic`], [`realtime`], [`stats`]), variables by name
//! over stdin/stdout lines ([`lines`]) and a binary frame protocol over TCP or pipes
//! ([`protocol`], [`server`]), all driving one [`session::Session`]. Over TCP
//! ([`listen`]) a client first proves it holds the token ([`auth`]); frames are read
//! incrementally under a shared memory budget and timeouts ([`frames`]), and long runs
//! stop when the client leaves ([`peer`]). [`harness`] drives a whole connection from
//! bytes, for the fuzz target and its deterministic run in `cargo test`. Only
//! [`realtime`] (libc clock and scheduler calls), [`peer`] (`poll`) and [`plugins`]
//! (dlopen of `--plugin` libraries) contain `unsafe`;
//! every other module forbids it.

pub mod auth;
pub mod cli;
pub mod entry;
pub mod frames;
pub mod harness;
pub mod lines;
pub mod listen;
pub mod peer;
pub mod periodic;
pub mod plugins;
pub mod protocol;
pub mod realtime;
pub mod server;
pub mod session;
pub mod stats;
