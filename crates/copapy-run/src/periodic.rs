//! The fixed-period loop: absolute deadlines on the monotonic clock, per-step timing in
//! constant memory (`stats::Histogram`), and an end given as a step count or as a
//! wall-clock duration.
#![forbid(unsafe_code)]

use crate::realtime::{now_ns, sleep_until};
use crate::session::Session;
use crate::stats::{Histogram, Summary};

/// When a periodic run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// After this many steps.
    Steps(u64),
    /// When the next deadline would be more than this many ns after the start:
    /// a wall-clock bound, whatever the overruns.
    After(u64),
}

/// Results of a periodic run.
pub struct PeriodicReport {
    /// Steps run.
    pub steps: u64,
    /// Time from wake-up to the end of the step (the program run plus the per-step hook).
    pub step: Option<Summary>,
    /// How late each wake-up was after its deadline.
    pub lateness: Option<Summary>,
    /// Steps that ended after the next deadline (that deadline is then skipped).
    pub overruns: u64,
    /// Deadlines skipped because of overruns.
    pub skipped: u64,
}

/// Longest single sleep: a longer wait asks `keep_going` between slices of this.
pub const SLICE_NS: u64 = 10_000_000;

/// Runs one step every `period_ns`, the first one period from now, until `end`, or
/// until `keep_going` (asked before each step's wait and every [`SLICE_NS`] of it, e.g.
/// whether a client is still connected) says no. `after` runs after each step (e.g.
/// streaming outputs) and counts towards the step time.
pub fn run_periodic(
    session: &mut Session,
    period_ns: u64,
    end: End,
    mut after: impl FnMut(&Session, u64),
    mut keep_going: impl FnMut() -> bool,
) -> PeriodicReport {
    // allocated here, so the loop itself never allocates
    let (mut step_ns, mut late_ns) = (Histogram::new(), Histogram::new());
    let (mut overruns, mut skipped) = (0u64, 0u64);
    let start = now_ns();
    let mut deadline = start.saturating_add(period_ns);
    let mut k = 0u64;
    loop {
        let more = match end {
            End::Steps(n) => k < n,
            End::After(d) => deadline <= start.saturating_add(d),
        };
        if !more {
            break;
        }
        if !wait_until(deadline, &mut keep_going) {
            break;
        }
        let woke = now_ns();
        session.step();
        after(session, k);
        let done = now_ns();
        late_ns.record(woke.saturating_sub(deadline));
        step_ns.record(done.saturating_sub(woke));
        k += 1;
        deadline += period_ns;
        if done > deadline {
            overruns += 1;
            let missed = (done - deadline) / period_ns + 1;
            skipped += missed;
            deadline += missed * period_ns;
        }
    }
    PeriodicReport {
        steps: k,
        step: step_ns.summary(),
        lateness: late_ns.summary(),
        overruns,
        skipped,
    }
}

/// Sleeps until `deadline` (ns), in slices of at most [`SLICE_NS`]; false, at once, when
/// `keep_going` says no before a slice.
fn wait_until(deadline: u64, keep_going: &mut impl FnMut() -> bool) -> bool {
    loop {
        if !keep_going() {
            return false;
        }
        let now = now_ns();
        if deadline <= now.saturating_add(SLICE_NS) {
            sleep_until(deadline);
            return true;
        }
        sleep_until(now + SLICE_NS);
    }
}
