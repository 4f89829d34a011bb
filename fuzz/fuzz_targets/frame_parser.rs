//! The runner's frame protocol never panics: the input is a byte stream cut into frames
//! by length prefix, each body parsed and handled against a session holding a
//! known-good program. LOAD frames are only parsed (a fuzzed program that validates
//! would otherwise be executed), and step counts are capped to keep runs short. The
//! whole connection (incremental reader, authentication, policy) is `session_stream`.
#![no_main]

use std::sync::OnceLock;

use copapy_run::auth::Gate;
use copapy_run::protocol::{self, Request, MAX_FRAME};
use copapy_run::server::{handle, Connection, Policy};
use copapy_run::session::Session;
use libfuzzer_sys::fuzz_target;

/// A program from the seed corpus: `x = x + 1` style state loop saved by Python.
fn program() -> &'static [u8] {
    static P: OnceLock<Vec<u8>> = OnceLock::new();
    P.get_or_init(|| {
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/seed_program.cpy"))
            .expect("fuzz/seed_program.cpy")
    })
}

fuzz_target!(|input: &[u8]| {
    let mut session = Session::new();
    session.load(program()).expect("seed program loads");
    let mut conn = Connection::new(session, Policy::ALL, Gate::Pipe);
    let mut rest = input;
    let mut out = Vec::new();
    while rest.len() >= 4 {
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        if len == 0 || len > MAX_FRAME {
            return;
        }
        let len = len as usize;
        rest = &rest[4..];
        if rest.len() < len {
            return; // a client gone mid-frame
        }
        let (body, tail) = rest.split_at(len);
        rest = tail;
        match protocol::parse(body) {
            Ok(Request::Load(_)) => continue,
            Ok(Request::Run(n) | Request::Stream { steps: n, .. }) if n > 64 => continue,
            _ => {}
        }
        out.clear();
        let _ = handle(&mut conn, body, &mut out, &mut &[][..]);
        assert!(out.len() >= 5, "every request gets a reply");
    }
});
