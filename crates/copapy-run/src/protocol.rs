//! The binary frame protocol of `copapy-run --listen` and `--serve-stdio` (see
//! `docs/copapy-run.md`): pure parsing and encoding, no I/O.
//!
//! A frame is `length: u32 LE` followed by `length` bytes: a kind byte and its payload.
//! Every malformed body parses to a [`ProtoError`] whose message goes back in an error
//! reply; only a bad length (0 or above the frame limit, [`MAX_FRAME`] by default) ends
//! the connection, because the stream can no longer be split into frames (the
//! incremental reader is `frames.rs`). Over TCP the runner speaks first with a
//! CHALLENGE and a client's first request is AUTH (`auth.rs`).
#![forbid(unsafe_code)]

use core::fmt;

/// Largest frame body accepted by default (a program file must fit in one frame;
/// `--max-frame`).
pub const MAX_FRAME: u32 = 64 << 20;

/// Largest frame accepted before a connection has authenticated (an AUTH is 65 bytes),
/// so an unauthenticated client cannot make the runner buffer anything sizeable.
pub const PRE_AUTH_MAX_FRAME: u32 = 256;

/// Request kinds.
pub mod kind {
    /// Load a program file: payload is the file.
    pub const LOAD: u8 = 0x01;
    /// Write data memory: `offset: u32`, then the bytes.
    pub const WRITE: u8 = 0x02;
    /// Read data memory: `offset: u32, size: u32`.
    pub const READ: u8 = 0x03;
    /// Run `n: u32` steps.
    pub const RUN: u8 = 0x04;
    /// Set a variable by name: `name_len: u16, name`, then 4 bytes per element.
    pub const SET: u8 = 0x05;
    /// Get a variable by name: `name_len: u16, name`.
    pub const GET: u8 = 0x06;
    /// Run `n: u32` steps, sending the named variables after each: `n: u32, count: u8`,
    /// then `count` times `name_len: u16, name`.
    pub const STREAM: u8 = 0x07;
    /// What the runner runs: `"<target> <features>"`, e.g. `"armv7
    /// armv6,armv7,vfp2,vfp3"` (the best target for its CPU, and the CPU's features).
    pub const INFO: u8 = 0x08;
    /// The loaded program's variables, one `name role dtype shape` line each.
    pub const VARS: u8 = 0x09;
    /// End the session.
    pub const STOP: u8 = 0x0A;
    /// Answer the runner's CHALLENGE: `client_nonce: [u8; 32], mac: [u8; 32]`.
    pub const AUTH: u8 = 0x0B;
    /// Run `steps: u32` steps, one every `period_us: u32` microseconds (absolute
    /// deadlines); the reply holds five `u32`: steps run, overruns, deadlines skipped,
    /// largest and mean lateness in ns. The firmware serves it too.
    pub const PERIODIC: u8 = 0x0C;
    /// Reply: success, optional payload.
    pub const OK: u8 = 0x80;
    /// Reply: one step's streamed values.
    pub const DATA: u8 = 0x81;
    /// The runner's first frame on a TCP connection: `mode: u8` (1 = AUTH with the
    /// token required, 0 = `--insecure-no-auth`), `server_nonce: [u8; 32]`.
    pub const CHALLENGE: u8 = 0x82;
    /// Reply: failure, payload is a UTF-8 message.
    pub const ERR: u8 = 0xEE;
}

/// A parsed request, borrowing from the frame body.
#[derive(Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// See [`kind::LOAD`].
    Load(&'a [u8]),
    /// See [`kind::WRITE`].
    Write {
        /// Data offset.
        offset: u32,
        /// Bytes to write.
        bytes: &'a [u8],
    },
    /// See [`kind::READ`].
    Read {
        /// Data offset.
        offset: u32,
        /// Number of bytes.
        size: u32,
    },
    /// See [`kind::RUN`].
    Run(u32),
    /// See [`kind::SET`].
    Set {
        /// Variable name.
        name: &'a str,
        /// Element bytes, 4 per element.
        bytes: &'a [u8],
    },
    /// See [`kind::GET`].
    Get(&'a str),
    /// See [`kind::STREAM`].
    Stream {
        /// Steps to run.
        steps: u32,
        /// Variables to send after each step.
        names: Vec<&'a str>,
    },
    /// See [`kind::INFO`].
    Info,
    /// See [`kind::VARS`].
    Vars,
    /// See [`kind::STOP`].
    Stop,
    /// See [`kind::PERIODIC`].
    Periodic {
        /// Steps to run.
        steps: u32,
        /// Period in microseconds.
        period_us: u32,
    },
    /// See [`kind::AUTH`].
    Auth {
        /// The client's nonce.
        client_nonce: &'a [u8],
        /// HMAC over the label and both nonces.
        mac: &'a [u8],
    },
}

/// Why a frame body is not a valid request.
#[derive(Debug, PartialEq, Eq)]
pub enum ProtoError {
    /// The body is empty (no kind byte).
    Empty,
    /// The kind byte names no request.
    UnknownKind(u8),
    /// The payload is shorter or longer than the request needs.
    BadLength {
        /// Request kind.
        kind: u8,
        /// What was wrong.
        why: &'static str,
    },
    /// A name is not UTF-8.
    NameNotUtf8,
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::Empty => f.write_str("empty frame: a frame needs a kind byte"),
            ProtoError::UnknownKind(k) => write!(f, "unknown request kind {k:#04x}"),
            ProtoError::BadLength { kind, why } => {
                write!(f, "malformed request {kind:#04x}: {why}")
            }
            ProtoError::NameNotUtf8 => f.write_str("variable name is not UTF-8"),
        }
    }
}

/// A cursor over a payload that never reads past its end.
struct Cursor<'a> {
    rest: &'a [u8],
    kind: u8,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, why: &'static str) -> Result<&'a [u8], ProtoError> {
        if self.rest.len() < n {
            return Err(ProtoError::BadLength {
                kind: self.kind,
                why,
            });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn u32(&mut self, why: &'static str) -> Result<u32, ProtoError> {
        let b = self.take(4, why)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn name(&mut self) -> Result<&'a str, ProtoError> {
        let b = self.take(2, "missing name length")?;
        let len = u16::from_le_bytes([b[0], b[1]]) as usize;
        let name = self.take(len, "name runs past the end of the frame")?;
        core::str::from_utf8(name).map_err(|_| ProtoError::NameNotUtf8)
    }

    fn end(&self) -> Result<(), ProtoError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(ProtoError::BadLength {
                kind: self.kind,
                why: "trailing bytes after the request",
            })
        }
    }
}

/// Parses a frame body (kind byte and payload).
pub fn parse(body: &[u8]) -> Result<Request<'_>, ProtoError> {
    let (&k, payload) = body.split_first().ok_or(ProtoError::Empty)?;
    let mut c = Cursor {
        rest: payload,
        kind: k,
    };
    let req = match k {
        kind::LOAD => return Ok(Request::Load(payload)),
        kind::WRITE => {
            let offset = c.u32("missing offset")?;
            return Ok(Request::Write {
                offset,
                bytes: c.rest,
            });
        }
        kind::READ => Request::Read {
            offset: c.u32("missing offset")?,
            size: c.u32("missing size")?,
        },
        kind::RUN => Request::Run(c.u32("missing step count")?),
        kind::SET => {
            let name = c.name()?;
            if !c.rest.len().is_multiple_of(4) {
                return Err(ProtoError::BadLength {
                    kind: k,
                    why: "values must be 4 bytes each",
                });
            }
            return Ok(Request::Set {
                name,
                bytes: c.rest,
            });
        }
        kind::GET => Request::Get(c.name()?),
        kind::STREAM => {
            let steps = c.u32("missing step count")?;
            let count = c.take(1, "missing name count")?[0];
            let mut names = Vec::with_capacity(count as usize);
            for _ in 0..count {
                names.push(c.name()?);
            }
            Request::Stream { steps, names }
        }
        kind::INFO => Request::Info,
        kind::VARS => Request::Vars,
        kind::STOP => Request::Stop,
        kind::PERIODIC => Request::Periodic {
            steps: c.u32("missing step count")?,
            period_us: c.u32("missing period")?,
        },
        kind::AUTH => Request::Auth {
            client_nonce: c.take(32, "missing client nonce (32 bytes)")?,
            mac: c.take(32, "missing MAC (32 bytes)")?,
        },
        other => return Err(ProtoError::UnknownKind(other)),
    };
    c.end()?;
    Ok(req)
}

/// Encodes a reply frame.
pub fn reply(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + payload.len());
    out.extend_from_slice(&(payload.len() as u32 + 1).to_le_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
    out
}

/// Encodes a request frame (for clients and tests).
pub fn request(kind: u8, payload: &[u8]) -> Vec<u8> {
    reply(kind, payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Vec<u8> {
        let mut v = (n.len() as u16).to_le_bytes().to_vec();
        v.extend_from_slice(n.as_bytes());
        v
    }

    #[test]
    fn parses_every_request() {
        assert_eq!(parse(&[kind::LOAD, 1, 2]), Ok(Request::Load(&[1, 2])));
        assert_eq!(
            parse(&[kind::WRITE, 4, 0, 0, 0, 9]),
            Ok(Request::Write {
                offset: 4,
                bytes: &[9]
            })
        );
        assert_eq!(
            parse(&[kind::READ, 8, 0, 0, 0, 4, 0, 0, 0]),
            Ok(Request::Read { offset: 8, size: 4 })
        );
        assert_eq!(parse(&[kind::RUN, 3, 0, 0, 0]), Ok(Request::Run(3)));
        let mut b = vec![kind::SET];
        b.extend(name("x"));
        b.extend(1.5f32.to_le_bytes());
        assert_eq!(
            parse(&b),
            Ok(Request::Set {
                name: "x",
                bytes: &1.5f32.to_le_bytes()
            })
        );
        let mut b = vec![kind::GET];
        b.extend(name("speed"));
        assert_eq!(parse(&b), Ok(Request::Get("speed")));
        let mut b = vec![kind::STREAM, 10, 0, 0, 0, 2];
        b.extend(name("a"));
        b.extend(name("bc"));
        assert_eq!(
            parse(&b),
            Ok(Request::Stream {
                steps: 10,
                names: vec!["a", "bc"]
            })
        );
        assert_eq!(parse(&[kind::INFO]), Ok(Request::Info));
        assert_eq!(parse(&[kind::VARS]), Ok(Request::Vars));
        assert_eq!(parse(&[kind::STOP]), Ok(Request::Stop));
        assert_eq!(
            parse(&[kind::PERIODIC, 5, 0, 0, 0, 0xE8, 3, 0, 0]),
            Ok(Request::Periodic {
                steps: 5,
                period_us: 1000
            })
        );
        let mut b = vec![kind::AUTH];
        b.extend([1u8; 32]);
        b.extend([2u8; 32]);
        assert_eq!(
            parse(&b),
            Ok(Request::Auth {
                client_nonce: &[1; 32],
                mac: &[2; 32]
            })
        );
        assert!(matches!(parse(&b[..64]), Err(ProtoError::BadLength { .. })));
    }

    #[test]
    fn malformed_bodies_get_their_own_errors() {
        assert_eq!(parse(&[]), Err(ProtoError::Empty));
        assert_eq!(parse(&[0x42]), Err(ProtoError::UnknownKind(0x42)));
        assert!(matches!(
            parse(&[kind::RUN, 1]),
            Err(ProtoError::BadLength { .. })
        ));
        assert!(matches!(
            parse(&[kind::RUN, 1, 0, 0, 0, 0]),
            Err(ProtoError::BadLength {
                why: "trailing bytes after the request",
                ..
            })
        ));
        assert!(matches!(
            parse(&[kind::GET, 5, 0, b'a']),
            Err(ProtoError::BadLength { .. })
        ));
        assert_eq!(
            parse(&[kind::GET, 1, 0, 0xFF]),
            Err(ProtoError::NameNotUtf8)
        );
        assert!(matches!(
            parse(&[kind::SET, 1, 0, b'x', 1, 2, 3]),
            Err(ProtoError::BadLength { .. })
        ));
        assert!(matches!(
            parse(&[kind::STREAM, 1, 0, 0, 0, 3, 0, 0]),
            Err(ProtoError::BadLength { .. })
        ));
        assert!(parse(&[0x42]).unwrap_err().to_string().contains("0x42"));
    }
}
