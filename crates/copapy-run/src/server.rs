//! Frame server: the binary protocol over any byte stream (a TCP connection, or
//! stdin/stdout of a child process). Every bad frame gets an error reply.
//!
//! A [`Connection`] is one session plus what it is allowed: its [`Gate`] (the
//! authentication it still owes) and its [`Policy`] (`--no-load`). [`serve`] reads
//! frames incrementally ([`FrameReader`]) and hands each body to [`handle`].
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};

use crate::auth::Gate;
use crate::frames::{FrameError, FrameLimits, FrameReader, ReadTimeout};
use crate::protocol::{self, kind, Request, PRE_AUTH_MAX_FRAME};
use crate::session::{describe, Session};

/// Which requests a connection may make beyond SET/GET/RUN/STREAM/VARS/INFO/STOP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// LOAD: replace the program (machine code the runner then executes).
    pub load: bool,
    /// READ and WRITE: raw data memory by offset (WRITE can put any state in place,
    /// past SET's checks of roles, counts and byte ranges).
    pub raw_memory: bool,
}

impl Policy {
    /// Everything (the default).
    pub const ALL: Policy = Policy {
        load: true,
        raw_memory: true,
    };
    /// `--no-load`: the program given on the command line, used by name only.
    pub const FIXED_PROGRAM: Policy = Policy {
        load: false,
        raw_memory: false,
    };
}

/// Whether the client at the other end has gone (checked between chunks of steps).
pub trait Peer {
    /// True once the peer has disconnected.
    fn gone(&mut self) -> bool;
}

/// An in-memory stream's peer never leaves.
impl Peer for &[u8] {
    fn gone(&mut self) -> bool {
        false
    }
}

/// One session and what its client may do.
pub struct Connection {
    /// The program and its memory.
    pub session: Session,
    /// The requests allowed.
    pub policy: Policy,
    gate: Gate,
    authenticated: bool,
}

impl Connection {
    /// A connection that must pass `gate` first.
    pub fn new(session: Session, policy: Policy, gate: Gate) -> Connection {
        let authenticated = !matches!(gate, Gate::Token { .. });
        Connection {
            session,
            policy,
            gate,
            authenticated,
        }
    }

    /// Whether requests are accepted now.
    pub fn authenticated(&self) -> bool {
        self.authenticated
    }

    /// The CHALLENGE frame the runner sends first (none on the private stdio pipe).
    pub fn hello(&self) -> Option<Vec<u8>> {
        let mut payload = [0u8; 33];
        match &self.gate {
            Gate::Pipe => return None,
            Gate::Open => {}
            Gate::Token { nonce, .. } => {
                payload[0] = 1;
                payload[1..].copy_from_slice(nonce);
            }
        }
        Some(protocol::reply(kind::CHALLENGE, &payload))
    }

    fn limits(&self, limits: &FrameLimits) -> FrameLimits {
        if self.authenticated {
            *limits
        } else {
            // before AUTH: a small frame, and only the frame timeout to send it
            FrameLimits {
                max_frame: PRE_AUTH_MAX_FRAME as usize,
                idle: limits.frame,
                frame: limits.frame,
            }
        }
    }
}

fn err(out: &mut impl Write, msg: &str) -> io::Result<()> {
    out.write_all(&protocol::reply(kind::ERR, msg.as_bytes()))
}

/// Serves one client until it sends STOP, closes the stream, fails authentication,
/// breaks a limit (after an ERR saying which), or leaves during a RUN or STREAM. I/O
/// errors (a client vanishing mid-frame) end the session quietly: they are the
/// client's business, not the runner's.
pub fn serve<I, W>(
    conn: &mut Connection,
    input: &mut I,
    mut output: W,
    reader: &mut FrameReader,
    limits: &FrameLimits,
) -> io::Result<()>
where
    I: Read + ReadTimeout + Peer,
    W: Write,
{
    if let Some(hello) = conn.hello() {
        output.write_all(&hello)?;
        output.flush()?;
    }
    loop {
        let body = match reader.next(input, &conn.limits(limits)) {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(()),
            Err(FrameError::Io(e)) => return Err(e),
            Err(e) => {
                let msg = match e {
                    FrameError::Idle(d) if !conn.authenticated => format!(
                        "no AUTH within {} s (--frame-timeout): closing the connection",
                        d.as_secs_f64()
                    ),
                    e => e.to_string(),
                };
                // best effort: the client may be gone already
                let _ = err(&mut output, &msg).and_then(|()| output.flush());
                return Ok(());
            }
        };
        let stop = handle(conn, body, &mut output, input)?;
        output.flush()?;
        reader.shrink();
        if stop {
            return Ok(());
        }
    }
}

/// Checks a request against the gate and the policy: `Err(reply, hang up)` if refused.
fn admit(conn: &mut Connection, req: &Request<'_>) -> Result<Option<Vec<u8>>, (String, bool)> {
    if let Request::Auth { client_nonce, mac } = req {
        return match (&conn.gate, conn.authenticated) {
            (Gate::Token { token, nonce }, false) => {
                if token.verify_client(nonce, client_nonce, mac) {
                    conn.authenticated = true;
                    Ok(Some(token.server_mac(nonce, client_nonce).to_vec()))
                } else {
                    Err((
                        "authentication failed: the client's token is not the runner's \
                        (or the answer was for another connection); closing the connection"
                            .to_string(),
                        true,
                    ))
                }
            }
            (Gate::Token { .. }, true) => Err(("already authenticated".to_string(), false)),
            _ => Err((
                "this runner does not authenticate (it was started with --insecure-no-auth \
                or is a private pipe): send requests without AUTH"
                    .to_string(),
                false,
            )),
        };
    }
    if !conn.authenticated {
        return Err((
            "authenticate first: answer the runner's CHALLENGE with AUTH \
            (docs/copapy-run.md, Authentication); closing the connection"
                .to_string(),
            true,
        ));
    }
    let refused = match req {
        Request::Load(_) if !conn.policy.load => Some("LOAD"),
        Request::Write { .. } if !conn.policy.raw_memory => Some("WRITE"),
        Request::Read { .. } if !conn.policy.raw_memory => Some("READ"),
        _ => None,
    };
    match refused {
        Some(what) => Err((
            format!(
                "{what} is disabled: this runner serves a fixed program (--no-load); \
                use SET, GET, RUN, STREAM and VARS by variable name"
            ),
            false,
        )),
        None => Ok(None),
    }
}

fn ok(out: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    out.write_all(&protocol::reply(kind::OK, payload))
}

/// Handles one frame body; returns whether the session ends (STOP, a failed or
/// missing AUTH, or a peer that left during RUN or STREAM).
pub fn handle(
    conn: &mut Connection,
    body: &[u8],
    out: &mut impl Write,
    peer: &mut impl Peer,
) -> io::Result<bool> {
    let req = match protocol::parse(body) {
        Ok(r) => r,
        Err(e) => {
            out.write_all(&protocol::reply(kind::ERR, e.to_string().as_bytes()))?;
            // an unauthenticated client gets no second try
            return Ok(!conn.authenticated);
        }
    };
    match admit(conn, &req) {
        Ok(None) => {}
        Ok(Some(proof)) => {
            ok(out, &proof)?;
            return Ok(false);
        }
        Err((msg, hang_up)) => {
            err(out, &msg)?;
            return Ok(hang_up);
        }
    }
    let session = &mut conn.session;
    let result: Result<Vec<u8>, String> = match req {
        Request::Load(file) => session.load(file).map(|()| Vec::new()),
        Request::Write { offset, bytes } => session.write(offset, bytes).map(|()| Vec::new()),
        Request::Read { offset, size } => session.read(offset, size),
        Request::Run(n) => match session.run_checked(n, || !peer.gone()) {
            Ok(true) => Ok(Vec::new()),
            Ok(false) => return Ok(true), // nobody left to reply to
            Err(e) => Err(e),
        },
        Request::Set { name, bytes } => {
            let bits: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            session.set(name, &bits).map(|()| Vec::new())
        }
        Request::Get(name) => session
            .get(name)
            .map(|bits| bits.iter().flat_map(|b| b.to_le_bytes()).collect()),
        Request::Stream { steps, names } => {
            match names.iter().try_for_each(|n| session.symbol(n).map(|_| ())) {
                Err(e) => Err(e),
                Ok(()) => {
                    let mut failed = None;
                    for _ in 0..steps {
                        if peer.gone() {
                            return Ok(true);
                        }
                        if let Err(e) = session.run(1) {
                            failed = Some(e);
                            break;
                        }
                        let mut row = Vec::new();
                        for n in &names {
                            let bits = session.get(n).unwrap_or_default();
                            row.extend(bits.iter().flat_map(|b| b.to_le_bytes()));
                        }
                        out.write_all(&protocol::reply(kind::DATA, &row))?;
                    }
                    failed.map_or(Ok(Vec::new()), Err)
                }
            }
        }
        Request::Info => Ok(crate::session::info().into_bytes()),
        Request::Vars => session.symbols().map(|s| {
            s.iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes()
        }),
        Request::Periodic { steps, period_us } => {
            match periodic(session, steps, period_us, || !peer.gone()) {
                Ok(Some(report)) => Ok(report),
                Ok(None) => return Ok(true), // nobody left to reply to
                Err(e) => Err(e),
            }
        }
        Request::Stop => {
            ok(out, &[])?;
            return Ok(true);
        }
        Request::Auth { .. } => return Ok(false), // answered by `admit`
    };
    match result {
        Ok(payload) => ok(out, &payload)?,
        Err(msg) => out.write_all(&protocol::reply(kind::ERR, msg.as_bytes()))?,
    }
    Ok(false)
}

/// PERIODIC: `steps` steps one every `period_us` (as `--period`), checking after each
/// that the client is still there; the reply's five `u32` (saturated), or `None` when
/// the client left.
fn periodic(
    session: &mut crate::session::Session,
    steps: u32,
    period_us: u32,
    mut present: impl FnMut() -> bool,
) -> Result<Option<Vec<u8>>, String> {
    if period_us == 0 {
        return Err("period must be at least 1 us".to_string());
    }
    if !session.is_loaded() {
        return Err("no program loaded: send LOAD first".to_string());
    }
    let mut left = false;
    let report = crate::periodic::run_periodic(
        session,
        u64::from(period_us) * 1000,
        crate::periodic::End::Steps(steps.into()),
        |_, _| {},
        || {
            left = !present();
            !left
        },
    );
    if left {
        return Ok(None);
    }
    let late = report.lateness.map_or((0, 0), |l| (l.max, l.mean));
    let fields = [
        report.steps,
        report.overruns,
        report.skipped,
        late.0,
        late.1,
    ];
    Ok(Some(
        fields
            .iter()
            .flat_map(|&v| u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes())
            .collect(),
    ))
}
