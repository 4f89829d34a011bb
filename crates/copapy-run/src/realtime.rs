//! Linux realtime setup and the monotonic clock: `SCHED_FIFO`, `mlockall`, absolute sleeps.

use std::io;

/// What realtime setup achieved, for the report printed at start.
pub struct RealtimeReport {
    /// `Ok(priority)` or the reason `SCHED_FIFO` was refused.
    pub fifo: Result<i32, io::Error>,
    /// `Ok` or the reason `mlockall` was refused.
    pub locked: Result<(), io::Error>,
}

/// Locks all memory (no page faults in the loop) and switches this thread to
/// `SCHED_FIFO` at `priority`, each only if permitted.
pub fn enter_realtime(priority: i32) -> RealtimeReport {
    // SAFETY: mlockall has no memory-safety preconditions.
    let locked = if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    // SAFETY: sched_param is plain integers; all-zero is valid. (musl's has more
    // fields than glibc's, so it is not built with a struct literal.)
    let mut param: libc::sched_param = unsafe { core::mem::zeroed() };
    param.sched_priority = priority;
    // SAFETY: `param` is a valid sched_param for the duration of the call; pid 0 is
    // the calling thread.
    let fifo = if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
        Ok(priority)
    } else {
        Err(io::Error::last_os_error())
    };
    RealtimeReport { fifo, locked }
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub fn now_ns() -> u64 {
    // SAFETY: timespec is plain integers (with padding fields on some 32-bit libcs).
    let mut ts: libc::timespec = unsafe { core::mem::zeroed() };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the absolute `CLOCK_MONOTONIC` time `deadline_ns` (no drift: a late
/// wake-up does not shift later deadlines).
pub fn sleep_until(deadline_ns: u64) {
    // SAFETY: as in now_ns.
    let mut ts: libc::timespec = unsafe { core::mem::zeroed() };
    ts.tv_sec = (deadline_ns / 1_000_000_000) as _;
    ts.tv_nsec = (deadline_ns % 1_000_000_000) as _;
    loop {
        // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null
        // with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                core::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}
