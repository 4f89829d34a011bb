//! One whole network connection driven from a byte string: the runner's CHALLENGE,
//! the client's bytes cut into reads of varying sizes, the incremental frame reader,
//! authentication, the policy and every request handler, against a session holding a
//! known-good program. Used by the cargo-fuzz target `session_stream` and, with
//! generated inputs, by `tests/session_stream.rs` in the ordinary test run.
//!
//! The first input byte picks the setup (gate, a valid AUTH in front or not, policy,
//! read sizes, frame limit); the rest is what the client sends. LOAD is always refused
//! (a fuzzed file that validates would be executed), and the peer "leaves" after 256
//! checks, which bounds the steps a RUN or STREAM can ask for.
//!
//! [`drive`] asserts what must hold for every input: the output is a sequence of
//! well-formed reply frames; unless the stream starts with a valid AUTH nothing but
//! the CHALLENGE and one ERR comes back; all buffer bytes are given back to the budget at the end.
#![forbid(unsafe_code)]

use std::io::{self, Read};
use std::time::Duration;

use crate::auth::{Gate, Token};
use crate::frames::{Budget, FrameLimits, FrameReader, ReadTimeout};
use crate::protocol::{self, kind};
use crate::server::{serve, Connection, Peer, Policy};
use crate::session::Session;

/// The token the harness's runner holds.
pub const TOKEN: &[u8] = b"harness-token-0123456789abcdef";
/// The harness runner's (fixed) challenge nonce.
pub const NONCE: [u8; 32] = [0x5A; 32];
/// The harness client's nonce.
pub const CLIENT_NONCE: [u8; 32] = [0xC1; 32];
/// Frame buffers of the harness's runner (small, so the budget is reached).
pub const BUDGET: usize = 256 << 10;

/// The client's side of the stream.
struct Client<'a> {
    bytes: &'a [u8],
    cut: usize,
    checks: u32,
}

impl Read for Client<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.cut).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

impl ReadTimeout for Client<'_> {
    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

impl Peer for Client<'_> {
    fn gone(&mut self) -> bool {
        self.checks += 1;
        self.checks > 256
    }
}

/// A valid AUTH frame for the harness runner.
pub fn auth_frame() -> Vec<u8> {
    let token = Token::from_bytes(TOKEN).expect("long enough");
    let mut payload = CLIENT_NONCE.to_vec();
    payload.extend(token.client_mac(&NONCE, &CLIENT_NONCE));
    protocol::request(kind::AUTH, &payload)
}

/// Splits the runner's output into frames, checking each one's form.
pub fn frames(mut out: &[u8]) -> Vec<(u8, &[u8])> {
    let mut frames = Vec::new();
    while !out.is_empty() {
        assert!(out.len() >= 5, "a reply frame cut short");
        let len = u32::from_le_bytes([out[0], out[1], out[2], out[3]]) as usize;
        assert!(
            len >= 1 && out.len() >= 4 + len,
            "a reply frame's length is wrong"
        );
        let k = out[4];
        assert!(
            [kind::OK, kind::DATA, kind::ERR, kind::CHALLENGE].contains(&k),
            "unknown reply kind {k:#04x}"
        );
        frames.push((k, &out[5..4 + len]));
        out = &out[4 + len..];
    }
    frames
}

/// Serves `input` (setup byte, then the client's bytes) on a session holding
/// `program`; returns the runner's output after checking the invariants above.
pub fn drive(program: &[u8], input: &[u8]) -> Vec<u8> {
    let Some((&setup, sent)) = input.split_first() else {
        return Vec::new();
    };
    let token = Token::from_bytes(TOKEN).expect("long enough");
    let gated = setup & 1 == 1;
    let authed = gated && setup & 2 == 2;
    let gate = if gated {
        Gate::Token {
            token,
            nonce: NONCE,
        }
    } else {
        Gate::Open
    };
    let policy = if setup & 4 == 4 {
        Policy::FIXED_PROGRAM
    } else {
        Policy {
            load: false,
            raw_memory: true,
        }
    };
    let cut = [1, 2, 3, 7, 64, 4096, 1 << 20, usize::MAX][(setup >> 3 & 7) as usize];
    let max_frame = if setup & 64 == 64 { 300 } else { 1 << 20 };
    let mut stream = if authed { auth_frame() } else { Vec::new() };
    stream.extend_from_slice(sent);
    let mut session = Session::new();
    session.load(program).expect("the harness program loads");
    let mut conn = Connection::new(session, policy, gate);
    let mut client = Client {
        bytes: &stream,
        cut,
        checks: 0,
    };
    let budget = Budget::new(BUDGET);
    let mut reader = FrameReader::new(budget.clone());
    let limits = FrameLimits {
        max_frame,
        idle: None,
        frame: None,
    };
    let mut out = Vec::new();
    let _ = serve(&mut conn, &mut client, &mut out, &mut reader, &limits);
    drop(reader);
    assert_eq!(budget.used(), 0, "buffer bytes not given back");
    let replies = frames(&out);
    assert_eq!(replies.first().map(|f| f.0), Some(kind::CHALLENGE));
    if gated && !stream.starts_with(&auth_frame()) {
        assert!(
            replies.len() <= 2 && replies[1..].iter().all(|f| f.0 == kind::ERR),
            "an unauthenticated client got an answer"
        );
        assert!(!conn.authenticated(), "authenticated without the token");
    }
    out
}
