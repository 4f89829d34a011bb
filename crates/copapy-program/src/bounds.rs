//! The instruction bounds a program file carries (format version 4, see
//! [`crate::format::BOUNDS_VERSION`]): how many instructions one run executes.
//!
//! The section is [`BOUNDS_BYTES`] bytes after the symbol records: `flags: u32` (bit 0:
//! unbounded, every other bit 0), `fewest: u64`, `most: u64`. An unbounded program
//! stores both counts as 0, so every program has exactly one encoding.

use crate::FormatError;

/// Size of the instruction-bounds section.
pub const BOUNDS_BYTES: usize = 20;
/// Flag bit: some step has no static bound.
const UNBOUNDED: u32 = 1;

/// What is wrong with an instruction-bounds section (a byte, so [`FormatError`] stays
/// small: its size is copied wherever a firmware runner passes an error along).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundsProblem {
    /// The fewest count exceeds the most.
    FewestAboveMost,
    /// The unbounded flag is set but a count is not 0.
    CountsWhenUnbounded,
    /// A flag bit other than bit 0 is set.
    UnknownFlags,
}

impl BoundsProblem {
    /// What the message says.
    pub const fn describe(self) -> &'static str {
        match self {
            BoundsProblem::FewestAboveMost => "say more instructions at fewest than at most",
            BoundsProblem::CountsWhenUnbounded => "say unbounded but carry counts",
            BoundsProblem::UnknownFlags => "have unknown flag bits",
        }
    }
}

/// Instructions one run of a program executes, as the compiler bounded them from the
/// stencil build's control-flow analysis (`docs/determinism.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstructionBounds {
    /// At least `fewest` and at most `most` instructions (equal when the program is
    /// branch-free).
    Known {
        /// The shortest path through one run.
        fewest: u64,
        /// The longest path through one run.
        most: u64,
    },
    /// A step has no static bound (a loop kernel whose trip count the stencil build
    /// does not bound).
    Unbounded,
}

impl InstructionBounds {
    /// The section's bytes.
    pub fn to_bytes(self) -> [u8; BOUNDS_BYTES] {
        let (flags, fewest, most) = match self {
            InstructionBounds::Known { fewest, most } => (0, fewest, most),
            InstructionBounds::Unbounded => (UNBOUNDED, 0, 0),
        };
        let fields = flags.to_le_bytes().into_iter();
        let fields = fields.chain(fewest.to_le_bytes()).chain(most.to_le_bytes());
        let mut out = [0; BOUNDS_BYTES];
        for (o, b) in out.iter_mut().zip(fields) {
            *o = b;
        }
        out
    }

    /// Reads and checks the section (shorter than [`BOUNDS_BYTES`]: unknown flags).
    /// Written for a small firmware runner: one length check, then fixed-index reads
    /// (no slice copies, whose length panics would pull in `core::fmt`).
    pub fn from_bytes(bytes: &[u8]) -> Result<InstructionBounds, FormatError> {
        let problem = match bytes.first_chunk::<BOUNDS_BYTES>() {
            Some(b) => {
                let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
                let wide = |at: usize| word(at) as u64 | (word(at + 4) as u64) << 32;
                let (flags, fewest, most) = (word(0), wide(4), wide(12));
                match flags {
                    0 if fewest <= most => return Ok(InstructionBounds::Known { fewest, most }),
                    0 => BoundsProblem::FewestAboveMost,
                    // counts on an unbounded program would give it a second encoding
                    UNBOUNDED if fewest | most == 0 => return Ok(InstructionBounds::Unbounded),
                    UNBOUNDED => BoundsProblem::CountsWhenUnbounded,
                    _ => BoundsProblem::UnknownFlags,
                }
            }
            None => BoundsProblem::UnknownFlags,
        };
        Err(FormatError::BadInstructionBounds { problem })
    }

    /// Refuses bounds whose fewest count exceeds the most.
    pub fn check(self) -> Result<(), FormatError> {
        match self {
            InstructionBounds::Known { fewest, most } if fewest > most => {
                Err(FormatError::BadInstructionBounds {
                    problem: BoundsProblem::FewestAboveMost,
                })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn round_trip_and_refusals() {
        for b in [
            InstructionBounds::Known {
                fewest: 40,
                most: 40,
            },
            InstructionBounds::Known {
                fewest: 0,
                most: u64::MAX,
            },
            InstructionBounds::Unbounded,
        ] {
            assert_eq!(InstructionBounds::from_bytes(&b.to_bytes()), Ok(b));
        }
        let bad = InstructionBounds::Known {
            fewest: 41,
            most: 40,
        };
        let e = bad.check().unwrap_err();
        assert_eq!(InstructionBounds::from_bytes(&bad.to_bytes()), Err(e));
        assert!(
            format!("{e}").contains("say more instructions at fewest than at most"),
            "{e}"
        );
        let mut b = InstructionBounds::Unbounded.to_bytes();
        b[4] = 1;
        let e = InstructionBounds::from_bytes(&b).unwrap_err();
        assert!(format!("{e}").contains("unbounded but carry counts"), "{e}");
        let mut b = InstructionBounds::Unbounded.to_bytes();
        b[0] = 2;
        let e = InstructionBounds::from_bytes(&b).unwrap_err();
        assert!(format!("{e}").contains("unknown flag bits"), "{e}");
    }
}
