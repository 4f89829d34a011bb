//! Reading frames without trusting their length prefix: the body buffer grows as bytes
//! arrive (never to the declared length up front), every byte held is charged to a
//! budget shared by all sessions, and reads are bounded by an idle timeout (before a
//! frame starts) and a frame timeout (from its first byte to its last).
#![forbid(unsafe_code)]

use std::fmt;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes read per `read` call into the body.
const CHUNK: usize = 16 << 10;
/// A session keeps a body buffer up to this size between frames; a larger one is freed
/// (and given back to the budget) after its frame is handled.
pub const KEEP_BYTES: usize = 64 << 10;

/// Bytes that all sessions together may hold in frame buffers.
#[derive(Clone, Debug)]
pub struct Budget(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    used: AtomicUsize,
    limit: usize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Budget {
        Budget(Arc::new(Shared {
            used: AtomicUsize::new(0),
            limit,
        }))
    }

    /// No limit (a single private session, e.g. the stdio pipe).
    pub fn unlimited() -> Budget {
        Budget::new(usize::MAX)
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.0.used.load(Ordering::Relaxed)
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.0.limit
    }

    fn take(&self, n: usize) -> bool {
        self.0
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                u.checked_add(n).filter(|&t| t <= self.0.limit)
            })
            .is_ok()
    }

    fn give_back(&self, n: usize) {
        self.0.used.fetch_sub(n, Ordering::AcqRel);
    }
}

/// Where reads come from: a socket bounds each read with a timeout; other streams
/// (pipes, in-memory) wait as long as it takes.
pub trait ReadTimeout {
    /// Bounds the next read (`None`: no bound).
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
}

/// Limits for one frame.
#[derive(Clone, Copy, Debug)]
pub struct FrameLimits {
    /// Largest body accepted.
    pub max_frame: usize,
    /// Longest wait for the first byte of a frame.
    pub idle: Option<Duration>,
    /// Longest time from a frame's first byte to its last.
    pub frame: Option<Duration>,
}

/// Why no frame was read.
#[derive(Debug)]
pub enum FrameError {
    /// The length prefix is 0 or above the limit: the stream cannot be split any more.
    BadLength {
        /// The prefix.
        len: u32,
        /// The limit.
        max: usize,
    },
    /// Holding the next bytes would pass the runner's total buffer budget.
    OverBudget {
        /// The budget in bytes.
        limit: usize,
    },
    /// No frame started within the idle timeout.
    Idle(Duration),
    /// A frame did not complete within the frame timeout.
    Slow(Duration),
    /// The stream ended inside a frame, or failed.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::BadLength { len, max } => write!(
                f,
                "bad frame length {len}: must be 1 to {max}; closing the connection"
            ),
            FrameError::OverBudget { limit } => write!(
                f,
                "the runner's frame buffers are full ({limit} bytes for all sessions, \
                 --max-buffered): closing the connection; retry later or send smaller frames"
            ),
            FrameError::Idle(d) => write!(
                f,
                "no request for {} s (--idle-timeout): closing the connection",
                d.as_secs_f64()
            ),
            FrameError::Slow(d) => write!(
                f,
                "a frame took longer than {} s to arrive (--frame-timeout): closing the connection",
                d.as_secs_f64()
            ),
            FrameError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reads frames one at a time from a byte stream.
#[derive(Debug)]
pub struct FrameReader {
    body: Vec<u8>,
    budget: Budget,
    /// Bytes of `budget` this reader holds (the body's reserved capacity).
    held: usize,
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl FrameReader {
    /// A reader charging its buffer to `budget`.
    pub fn new(budget: Budget) -> FrameReader {
        FrameReader {
            body: Vec::new(),
            budget,
            held: 0,
        }
    }

    /// Bytes this reader holds now.
    pub fn held(&self) -> usize {
        self.held
    }

    fn grow(&mut self, want: usize) -> Result<(), FrameError> {
        let extra = (self.body.len() + want).saturating_sub(self.held);
        if extra == 0 {
            return Ok(());
        }
        if !self.budget.take(extra) {
            return Err(FrameError::OverBudget {
                limit: self.budget.limit(),
            });
        }
        self.held += extra;
        self.body.reserve_exact(self.held - self.body.len());
        Ok(())
    }

    /// Frees a buffer grown beyond [`KEEP_BYTES`] by a large frame.
    pub fn shrink(&mut self) {
        if self.held > KEEP_BYTES {
            self.body = Vec::new();
            self.budget.give_back(self.held);
            self.held = 0;
        }
    }

    /// The next frame's body; `Ok(None)` when the stream ends between frames.
    pub fn next<R: Read + ReadTimeout>(
        &mut self,
        input: &mut R,
        limits: &FrameLimits,
    ) -> Result<Option<&[u8]>, FrameError> {
        let mut header = [0u8; 4];
        let mut have = 0;
        let mut started: Option<Instant> = None;
        // each read gets what is left of its deadline; an elapsed deadline is a timeout
        let bound = |started: Option<Instant>, input: &mut R| -> Result<(), FrameError> {
            let timeout = match (started, limits.frame) {
                (None, _) => limits.idle,
                (Some(_), None) => None,
                (Some(t0), Some(d)) => match d.checked_sub(t0.elapsed()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(FrameError::Slow(d)),
                },
            };
            input.set_read_timeout(timeout).map_err(FrameError::Io)
        };
        let expired = |started: Option<Instant>| match started {
            None => FrameError::Idle(limits.idle.unwrap_or_default()),
            Some(_) => FrameError::Slow(limits.frame.unwrap_or_default()),
        };
        while have < 4 {
            bound(started, input)?;
            match input.read(&mut header[have..]) {
                Ok(0) if have == 0 => return Ok(None),
                Ok(0) => return Err(FrameError::Io(io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => {
                    started.get_or_insert_with(Instant::now);
                    have += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(expired(started)),
                Err(e) => return Err(FrameError::Io(e)),
            }
        }
        let len = u32::from_le_bytes(header);
        let max = limits.max_frame;
        if len == 0 || len as usize > max {
            return Err(FrameError::BadLength { len, max });
        }
        let len = len as usize;
        self.body.clear();
        let mut chunk = [0u8; CHUNK];
        while self.body.len() < len {
            let left = len - self.body.len();
            if self.body.len() == self.held {
                // double what arrived so far (at least one chunk), never past the frame
                self.grow(left.min(self.held.max(CHUNK)))?;
            }
            let room = (self.held - self.body.len()).min(CHUNK).min(left);
            bound(started, input)?;
            match input.read(&mut chunk[..room]) {
                Ok(0) => return Err(FrameError::Io(io::ErrorKind::UnexpectedEof.into())),
                Ok(n) => self.body.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if timed_out(&e) => return Err(expired(started)),
                Err(e) => return Err(FrameError::Io(e)),
            }
        }
        Ok(Some(&self.body))
    }
}

impl Drop for FrameReader {
    fn drop(&mut self) {
        self.budget.give_back(self.held);
    }
}

/// An in-memory stream (and any other without timeouts).
impl ReadTimeout for &[u8] {
    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, like a slow network.
    struct Trickle<'a> {
        bytes: &'a [u8],
        sizes: core::iter::Cycle<core::slice::Iter<'a, usize>>,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = (*self.sizes.next().unwrap())
                .min(buf.len())
                .min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    impl ReadTimeout for Trickle<'_> {
        fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
            Ok(())
        }
    }

    const LIMITS: FrameLimits = FrameLimits {
        max_frame: 64 << 20,
        idle: None,
        frame: None,
    };

    fn framed(bodies: &[Vec<u8>]) -> Vec<u8> {
        let mut s = Vec::new();
        for b in bodies {
            s.extend((b.len() as u32).to_le_bytes());
            s.extend(b);
        }
        s
    }

    #[test]
    fn frames_come_back_whole_however_the_bytes_are_cut() {
        let bodies: Vec<Vec<u8>> = [1usize, 3, 5000, 70_000, 2, 300_000]
            .iter()
            .enumerate()
            .map(|(k, &n)| (0..n).map(|i| (i * 7 + k) as u8).collect())
            .collect();
        let stream = framed(&bodies);
        for sizes in [&[1usize][..], &[3, 1, 4096, 2], &[usize::MAX]] {
            let mut input = Trickle {
                bytes: &stream,
                sizes: sizes.iter().cycle(),
            };
            let budget = Budget::new(1 << 20);
            let mut r = FrameReader::new(budget.clone());
            for b in &bodies {
                assert_eq!(r.next(&mut input, &LIMITS).unwrap(), Some(&b[..]));
                assert!(
                    r.held() <= 2 * b.len() + CHUNK,
                    "{} for {}",
                    r.held(),
                    b.len()
                );
                r.shrink();
            }
            assert!(r.next(&mut input, &LIMITS).unwrap().is_none());
            assert_eq!(budget.used(), r.held());
            drop(r);
            assert_eq!(budget.used(), 0);
        }
    }

    #[test]
    fn a_huge_length_prefix_costs_only_the_bytes_that_arrive() {
        let mut stream = (64u32 << 20).to_le_bytes().to_vec();
        stream.extend([9u8; 10]);
        let budget = Budget::new(usize::MAX);
        let mut r = FrameReader::new(budget.clone());
        let mut input = &stream[..];
        let e = r.next(&mut input, &LIMITS).unwrap_err();
        assert!(matches!(e, FrameError::Io(ref e) if e.kind() == io::ErrorKind::UnexpectedEof));
        assert!(r.held() <= CHUNK, "{}", r.held());
        assert_eq!(budget.used(), r.held());
    }

    #[test]
    fn lengths_past_the_limit_and_the_shared_budget_are_refused() {
        let mut r = FrameReader::new(Budget::unlimited());
        let limits = FrameLimits {
            max_frame: 100,
            ..LIMITS
        };
        for len in [0u32, 101, u32::MAX] {
            let bytes = len.to_le_bytes();
            let e = r.next(&mut &bytes[..], &limits).unwrap_err();
            assert!(matches!(e, FrameError::BadLength { .. }), "{e}");
        }
        let budget = Budget::new(3 * CHUNK);
        let stream = framed(&[vec![1; 2 * CHUNK]]);
        let mut a = FrameReader::new(budget.clone());
        assert!(a.next(&mut &stream[..], &LIMITS).unwrap().is_some());
        let mut b = FrameReader::new(budget.clone());
        let e = b.next(&mut &stream[..], &LIMITS).unwrap_err();
        assert!(e.to_string().contains("--max-buffered"), "{e}");
        a.shrink(); // 2 chunks is below KEEP_BYTES: kept
        drop(a);
        assert!(b.next(&mut &stream[..], &LIMITS).unwrap().is_some());
    }
}
