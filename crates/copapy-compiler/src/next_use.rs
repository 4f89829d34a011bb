//! When each value is read next, for choosing which register to overwrite.
//!
//! With two registers per class, a new value often displaces one that is still needed,
//! which then costs a store now and a load later. When both candidates cost the same,
//! the one read again later should go (Belady's rule): the store is then off the
//! critical chain and the value read soon stays in its register. IK's gradient shows
//! why: its step keeps `ey` for the error at the very end while the x-side gradient
//! term is added to the y-side one a few steps later; evicting the term put a store and
//! a reload (~10 cycles of store forwarding) on the chain of every gradient step.

use crate::graph::Op;
use crate::optimise::{Arena, Kind, NodeId};

/// The positions (in the scheduling order) at which each node is read.
pub(crate) struct NextUse {
    reads: Vec<Vec<u32>>,
    /// Position of the node being scheduled.
    pub(crate) now: u32,
}

impl NextUse {
    /// Reads of each node by the nodes of `order`; a deferred product's factors are
    /// read where the sum that computes it is ([`crate::muladd`]).
    pub(crate) fn new(arena: &Arena, order: &[NodeId], deferred: &[bool]) -> NextUse {
        let count = arena.nodes.len();
        let mut at = vec![u32::MAX; count];
        for (i, &n) in order.iter().enumerate() {
            at[n as usize] = i as u32;
            if let Kind::Binary(Op::Add | Op::Sub, x, y) = arena.nodes[n as usize].kind {
                for v in [x, y] {
                    if deferred[v as usize] {
                        at[v as usize] = i as u32;
                    }
                }
            }
        }
        let mut reads = vec![Vec::new(); count];
        for &n in order {
            let when = at[n as usize];
            arena.for_each_operand(n, |a| reads[a as usize].push(when));
        }
        for r in &mut reads {
            r.sort_unstable();
        }
        NextUse { reads, now: 0 }
    }

    /// The position of the first read of `v` after the node being scheduled
    /// (`u32::MAX` if none).
    pub(crate) fn after(&self, v: NodeId) -> u32 {
        let r = &self.reads[v as usize];
        r.get(r.partition_point(|&p| p <= self.now))
            .copied()
            .unwrap_or(u32::MAX)
    }
}
