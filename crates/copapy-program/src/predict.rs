//! Target prediction of format version [`PREDICTED_TARGETS_VERSION`]'s compact patches.
//!
//! Two patterns cost version 7 most of its patch bytes. AArch64 loads two operands as
//! `ADRP a; ADRP b; LDR a; LDR b`, so the second half of a pair (`LO12`) rarely follows its
//! first half (`ADRP`) and version 7's "same target as the previous patch" misses. And a dot
//! product reads two arrays in turn (activation, weight, activation, ...), so a target is
//! near the one written two patches before, not the one just before. Version 8 therefore:
//!
//! - predicts the target of a pair's second half (`LO12` after `ADRP` or `AUIPC`, `MOVT`
//!   after `MOVW`) as the oldest first half of its base not yet met by a second half (up to
//!   [`PENDING`] wait; a fifth pushes the oldest out), and any other patch's as the
//!   previous target of its base: a patch whose target and addend are the predicted ones is
//!   written *implied* (one number);
//! - counts every other target from one of the last two targets written out for its base,
//!   whichever gives the smaller number (a selector bit says which).

use crate::{Base, Encoding};

/// The format version whose compact patches predict targets this way.
pub use crate::format::PREDICTED_TARGETS_VERSION;

/// First halves of pairs a base keeps waiting for their second halves.
pub const PENDING: usize = 4;

/// Which half of an instruction pair a patch encoding fills, if any.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Half {
    First,
    Second,
    Single,
}

fn half(encoding: Encoding) -> Half {
    use Encoding::*;
    match encoding {
        A64AdrPage21 | ArmMovwAbs | ThumbMovwAbs | RvHi20 => Half::First,
        A64Lo12Scale0 | A64Lo12Scale1 | A64Lo12Scale2 | A64Lo12Scale3 | A64Lo12Scale4
        | ArmMovtAbs | ThumbMovtAbs | RvLo12I | RvLo12S => Half::Second,
        _ => Half::Single,
    }
}

/// The targets one base's prediction depends on.
#[derive(Clone, Copy, Debug, Default)]
struct BaseTargets {
    previous: u32,
    /// The last two targets written out, newest first.
    written: [u32; 2],
    /// Targets of first halves still waiting, oldest first.
    pending: [u32; PENDING],
    waiting: u8,
}

impl BaseTargets {
    /// The oldest waiting first half's target, removed from the queue.
    fn pop(&mut self) -> Option<u32> {
        if self.waiting == 0 {
            return None;
        }
        let [a, b, c, d] = self.pending;
        self.pending = [b, c, d, 0];
        self.waiting -= 1;
        Some(a)
    }

    fn push(&mut self, target: u32) {
        if usize::from(self.waiting) == PENDING {
            self.pop();
        }
        if let Some(slot) = self.pending.get_mut(usize::from(self.waiting)) {
            *slot = target;
        }
        self.waiting += 1;
    }
}

/// What encoder and decoder both know of the patches so far (every field starts at 0).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Targets([BaseTargets; 2]);

impl Targets {
    fn of(&mut self, base: Base) -> &mut BaseTargets {
        match base {
            Base::Code => &mut self.0[0],
            Base::Data => &mut self.0[1],
        }
    }

    /// The target the next patch of `encoding` on `base` is predicted to have; a pair's
    /// second half takes its first half out of the queue (call once per patch).
    pub(crate) fn predict(&mut self, base: Base, encoding: Encoding) -> u32 {
        let b = self.of(base);
        let waiting = if half(encoding) == Half::Second {
            b.pop()
        } else {
            None
        };
        waiting.unwrap_or(b.previous)
    }

    /// The two targets a written-out target step may count from (selector 0 and 1).
    pub(crate) fn written(&mut self, base: Base) -> [u32; 2] {
        self.of(base).written
    }

    /// Records the patch just coded: its target, written out or implied.
    pub(crate) fn record(&mut self, base: Base, encoding: Encoding, target: u32, written: bool) {
        let b = self.of(base);
        b.previous = target;
        if written {
            b.written = [target, b.written[0]];
        }
        if half(encoding) == Half::First {
            b.push(target);
        }
    }
}
