//! The fixed-period loop: absolute deadlines on the monotonic clock, per-step timing.
#![forbid(unsafe_code)]

use crate::realtime::{now_ns, sleep_until};
use crate::session::Session;
use crate::stats::Summary;

/// Results of a periodic run.
pub struct PeriodicReport {
    /// Time from wake-up to the end of the step (the program run plus the per-step hook).
    pub step: Option<Summary>,
    /// How late each wake-up was after its deadline.
    pub lateness: Option<Summary>,
    /// Steps that ended after the next deadline (that deadline is then skipped).
    pub overruns: u64,
    /// Deadlines skipped because of overruns.
    pub skipped: u64,
}

/// Runs `steps` steps, one every `period_ns`, starting one period from now. `after`
/// runs after each step (e.g. streaming outputs) and counts towards the step time.
pub fn run_periodic(
    session: &mut Session,
    period_ns: u64,
    steps: u64,
    mut after: impl FnMut(&Session, u64),
) -> PeriodicReport {
    // Preallocated, so the loop itself never allocates.
    let mut step_ns = Vec::with_capacity(steps as usize);
    let mut late_ns = Vec::with_capacity(steps as usize);
    let (mut overruns, mut skipped) = (0u64, 0u64);
    let mut deadline = now_ns() + period_ns;
    for k in 0..steps {
        sleep_until(deadline);
        let woke = now_ns();
        session.step();
        after(session, k);
        let done = now_ns();
        late_ns.push(woke.saturating_sub(deadline));
        step_ns.push(done - woke);
        deadline += period_ns;
        if done > deadline {
            overruns += 1;
            let missed = (done - deadline) / period_ns + 1;
            skipped += missed;
            deadline += missed * period_ns;
        }
    }
    PeriodicReport {
        step: Summary::of(&mut step_ns),
        lateness: Summary::of(&mut late_ns),
        overruns,
        skipped,
    }
}
