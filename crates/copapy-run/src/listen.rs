//! `copapy-run --listen`: the frame protocol over TCP, one thread and one session per
//! connection, with authentication, a loopback-only default, a cap on sessions, a
//! shared budget for frame buffers, and timeouts (see "Security" in
//! `docs/copapy-run.md`).
#![forbid(unsafe_code)]

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::auth::{random_bytes, Gate, Token};
use crate::frames::{Budget, FrameLimits, FrameReader, ReadTimeout};
use crate::peer::PeerWatch;
use crate::protocol::{self, kind};
use crate::server::{serve, Connection, Peer, Policy};
use crate::session::Session;

/// Default for `--max-sessions`.
pub const DEFAULT_MAX_SESSIONS: usize = 16;
/// Default for `--max-buffered`: all sessions' frame buffers together.
pub const DEFAULT_MAX_BUFFERED: usize = 256 << 20;
/// Default for `--idle-timeout`.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(3600);
/// Default for `--frame-timeout` (also the time a new connection has to authenticate,
/// and the longest a reply may wait for a client that does not read).
pub const DEFAULT_FRAME: Duration = Duration::from_secs(30);

/// What `--listen` serves and how.
#[derive(Clone, Debug)]
pub struct Listen {
    /// Address to bind.
    pub addr: String,
    /// The program file each session starts with.
    pub program: Option<Vec<u8>>,
    /// The shared secret; `None` only with `--insecure-no-auth`.
    pub token: Option<Token>,
    /// `--allow-remote`: bind addresses beyond loopback.
    pub allow_remote: bool,
    /// The requests allowed (`--no-load`).
    pub policy: Policy,
    /// Sessions served at once; more connections get an ERR and are closed.
    pub max_sessions: usize,
    /// Bytes of frame buffers for all sessions together.
    pub max_buffered: usize,
    /// Frame size and timeouts.
    pub limits: FrameLimits,
}

/// Refuses addresses reachable from other machines unless `allow_remote`.
pub fn check_address(addr: &str, allow_remote: bool) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?
        .collect();
    if let Some(far) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        if !allow_remote {
            return Err(format!(
                "refusing to listen on {addr} ({}): other machines could reach it, and a \
                 session runs machine code with this runner's privileges. Listen on \
                 127.0.0.1 or [::1], or pass --allow-remote (clients still need the token)",
                far.ip()
            ));
        }
    }
    Ok(addrs)
}

/// A TCP connection's reading half: timeouts on the socket, and a watch on its peer.
struct TcpInput {
    reader: BufReader<TcpStream>,
    watch: PeerWatch,
}

impl Read for TcpInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl ReadTimeout for TcpInput {
    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.reader.get_ref().set_read_timeout(t)
    }
}

impl Peer for TcpInput {
    fn gone(&mut self) -> bool {
        self.watch.gone()
    }
}

/// Counts a session while it lives.
struct Seat(Arc<AtomicUsize>);

impl Drop for Seat {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn take_seat(active: &Arc<AtomicUsize>, max: usize) -> Option<Seat> {
    active
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        })
        .ok()
        .map(|_| Seat(active.clone()))
}

fn refuse(mut stream: TcpStream, msg: &str) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(&protocol::reply(kind::ERR, msg.as_bytes()));
}

fn session_for(program: Option<&[u8]>) -> Session {
    let mut session = Session::new();
    if let Some(bytes) = program {
        let _ = session.load(bytes); // checked before listening
    }
    session
}

fn serve_tcp(stream: TcpStream, o: &Listen, gate: Gate, budget: Budget) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_write_timeout(o.limits.frame)?;
    let mut input = TcpInput {
        watch: PeerWatch::new(stream.as_raw_fd()),
        reader: BufReader::new(stream.try_clone()?),
    };
    let mut conn = Connection::new(session_for(o.program.as_deref()), o.policy, gate);
    let mut reader = FrameReader::new(budget);
    serve(
        &mut conn,
        &mut input,
        BufWriter::new(stream),
        &mut reader,
        &o.limits,
    )
}

/// Binds and serves until the process ends; prints `listening on ADDR` first.
pub fn listen(o: Listen) -> Result<(), String> {
    if let Some(bytes) = &o.program {
        Session::new().load(bytes)?; // refuse a bad file before accepting clients
    }
    let addrs = check_address(&o.addr, o.allow_remote)?;
    let listener =
        TcpListener::bind(&addrs[..]).map_err(|e| format!("cannot listen on {}: {e}", o.addr))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    if o.token.is_none() {
        eprintln!(
            "copapy-run: WARNING: --insecure-no-auth: anyone who can connect to {local} can \
             run machine code as this user"
        );
    }
    println!("listening on {local}");
    io::stdout().flush().map_err(|e| e.to_string())?;
    let o = Arc::new(o);
    let budget = Budget::new(o.max_buffered);
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let stream = match conn {
            Ok(s) => s,
            Err(_) => {
                // e.g. out of descriptors: wait instead of spinning on the error
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let Some(seat) = take_seat(&active, o.max_sessions) else {
            refuse(
                stream,
                &format!(
                    "too many sessions: this runner serves {} at once (--max-sessions); \
                     try again when one ends",
                    o.max_sessions
                ),
            );
            continue;
        };
        let gate = match &o.token {
            None => Gate::Open,
            Some(token) => match random_bytes() {
                Ok(nonce) => Gate::Token {
                    token: token.clone(),
                    nonce,
                },
                Err(e) => {
                    refuse(
                        stream,
                        &format!("the runner has no randomness for a challenge: {e}"),
                    );
                    continue;
                }
            },
        };
        let (o, budget) = (o.clone(), budget.clone());
        let spawned = std::thread::Builder::new()
            .name("copapy-session".into())
            .spawn(move || {
                let _seat = seat;
                let _ = serve_tcp(stream, &o, gate, budget);
            });
        if spawned.is_err() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_without_allow_remote() {
        assert!(check_address("127.0.0.1:0", false).is_ok());
        assert!(check_address("[::1]:0", false).is_ok());
        let e = check_address("0.0.0.0:0", false).unwrap_err();
        assert!(e.contains("--allow-remote"), "{e}");
        assert!(check_address("0.0.0.0:0", true).is_ok());
        assert!(check_address("nonsense", false).is_err());
    }

    #[test]
    fn seats_are_capped_and_given_back() {
        let active = Arc::new(AtomicUsize::new(0));
        let a = take_seat(&active, 2).unwrap();
        let _b = take_seat(&active, 2).unwrap();
        assert!(take_seat(&active, 2).is_none());
        drop(a);
        assert!(take_seat(&active, 2).is_some());
    }
}
