//! Whether the other end of a connection has gone: checked between chunks of steps of a
//! long RUN or STREAM, so a client that disconnects stops the work it asked for.
//!
//! `poll` without waiting: a TCP peer that closed or shut down its sending side shows
//! `POLLRDHUP` (even with unread bytes still queued), a reset connection `POLLERR`, and
//! a pipe whose writer closed `POLLHUP`. A client must therefore keep its sending side
//! open until its last reply has arrived (a half-close ends the session).
// The one libc call below needs `unsafe`; it reads nothing but the `pollfd` it is given.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Whether `fd`'s peer has hung up (or the descriptor is unusable).
pub fn hung_up(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN | libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd, count 1, timeout 0 (no waiting).
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    if n < 0 {
        return std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted;
    }
    p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// How often a descriptor is polled at most (the clock is read more often, cheaply).
pub const POLL_EVERY: Duration = Duration::from_millis(10);

/// Polls one descriptor at most every [`POLL_EVERY`].
#[derive(Debug)]
pub struct PeerWatch {
    fd: RawFd,
    last: Instant,
}

impl PeerWatch {
    /// Watches `fd` (which must stay open while this lives).
    pub fn new(fd: RawFd) -> PeerWatch {
        PeerWatch {
            fd,
            last: Instant::now(),
        }
    }

    /// Whether the peer is gone, polling only if [`POLL_EVERY`] has passed.
    pub fn gone(&mut self) -> bool {
        if self.last.elapsed() < POLL_EVERY {
            return false;
        }
        self.last = Instant::now();
        hung_up(self.fd)
    }
}

impl crate::server::Peer for PeerWatch {
    fn gone(&mut self) -> bool {
        PeerWatch::gone(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_closed_tcp_peer_is_seen_even_with_bytes_unread() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().unwrap();
        assert!(!hung_up(server.as_raw_fd()));
        client.write_all(b"pending").unwrap();
        // the bytes arrive and the peer is still there
        let mut tries = 0;
        while server.peek(&mut [0u8; 1]).unwrap() == 0 && tries < 100 {
            tries += 1;
        }
        assert!(!hung_up(server.as_raw_fd()));
        drop(client);
        let mut seen = false;
        for _ in 0..1000 {
            if hung_up(server.as_raw_fd()) {
                seen = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(seen, "the closed peer was never seen");
    }
}
