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

/// Encodings that fill the first half of an instruction pair, as bits by encoding number
/// (a mask, not a `match`: a firmware runner carries this code).
const FIRST_HALVES: u32 = bits(&[
    Encoding::A64AdrPage21,
    Encoding::ArmMovwAbs,
    Encoding::ThumbMovwAbs,
    Encoding::RvHi20,
]);
/// Encodings that fill the second half of a pair.
const SECOND_HALVES: u32 = bits(&[
    Encoding::A64Lo12Scale0,
    Encoding::A64Lo12Scale1,
    Encoding::A64Lo12Scale2,
    Encoding::A64Lo12Scale3,
    Encoding::A64Lo12Scale4,
    Encoding::ArmMovtAbs,
    Encoding::ThumbMovtAbs,
    Encoding::RvLo12I,
    Encoding::RvLo12S,
]);

const fn bits(encodings: &[Encoding]) -> u32 {
    let mut mask = 0;
    let mut i = 0;
    while i < encodings.len() {
        mask |= 1 << encodings[i] as u32;
        i += 1;
    }
    mask
}

fn is_in(mask: u32, encoding: Encoding) -> bool {
    mask.checked_shr(encoding as u32).unwrap_or(0) & 1 == 1
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

/// What encoder and decoder both know of the patches so far (every target starts at 0).
/// Without `pairs` (version 7) nothing waits and every target counts as written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Targets {
    bases: [BaseTargets; 2],
    pairs: bool,
}

impl Targets {
    /// The state before the first patch; `pairs`: version 8's pair prediction.
    pub(crate) fn new(pairs: bool) -> Targets {
        Targets {
            bases: [BaseTargets::default(); 2],
            pairs,
        }
    }

    fn of(&mut self, base: Base) -> &mut BaseTargets {
        match base {
            Base::Code => &mut self.bases[0],
            Base::Data => &mut self.bases[1],
        }
    }

    /// The target the next patch of `encoding` on `base` is predicted to have; a pair's
    /// second half takes its first half out of the queue (call once per patch).
    pub(crate) fn predict(&mut self, base: Base, encoding: Encoding) -> u32 {
        let pairs = self.pairs;
        let b = self.of(base);
        let waiting = if pairs && is_in(SECOND_HALVES, encoding) {
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

    /// Records the patch just coded: its target, written out or implied. A first half
    /// waits for its second unless `waits` is false (version 10's pair record has both).
    pub(crate) fn record(
        &mut self,
        base: Base,
        encoding: Encoding,
        target: u32,
        written: bool,
        waits: bool,
    ) {
        let pairs = self.pairs;
        let b = self.of(base);
        b.previous = target;
        if written {
            b.written = [target, b.written[0]];
        }
        if pairs && waits && is_in(FIRST_HALVES, encoding) {
            b.push(target);
        }
    }
}
