//! Which results of a packed sin/cos step stay in the float registers.
//!
//! A packed step writes its results to their slots (the sines to the group's block, the
//! cosines to the second one), and a reader right after the step would read one back
//! through a store-to-load forwarding, on the chain that waited for the step (IK's
//! `l1 * c1` and `l2 * c12` right after its `st_pack4_sincos_f`). The sin/cos helper
//! therefore also returns lanes 0 and 1 of both vectors in two float registers
//! (`stencils/gen_packs.py`, `SINCOS_KEPT`), and each form of the stencil leaves two of
//! those four results in float registers a and b: `""` the sine and the cosine of lane
//! 0, `_s0s1`, `_c0c1`, `_s0c1`, `_s1c0`, `_s1c1` the others (after the operands'
//! suffix: `st_pack4_sincos_f_r0_c0c1`). The pairs are unordered for the scheduler
//! (every reader takes either register), so each pair has one form.
//!
//! The scheduler keeps the results read first: before scheduling, the lanes of each
//! sin/cos group are ordered by when the evaluation order first reads their results
//! (so those results land in lanes 0 and 1 unless a register operand claims the lane),
//! and the step keeps the two results of lanes 0 and 1 read first. Of the two, the one
//! read first is recorded as the older register value, so the operation that reads it
//! (and leaves it in its slot) overwrites it rather than the other kept result.
//! Unary, atan2 and pow steps leave lane 0's result in register a, as their helper
//! returns one vector.

use crate::optimise::NodeId;
use crate::pack::{Group, Lane, PackOp, NO_GROUP};
use crate::pack_kept::{Kept, Out, C0, C1, S0, S1};
use crate::schedule::Scheduler;
use crate::select::Class;

impl Out {
    /// The node this result is, in `lanes` (`None` past the lanes or for the cosine of a
    /// lane without one).
    fn node(self, lanes: &[Lane]) -> Option<NodeId> {
        let lane = lanes.get(self.lane as usize)?;
        if self.cos {
            lane.cos
        } else {
            Some(lane.node)
        }
    }
}

impl Scheduler<'_> {
    /// Notes where the evaluation order `order` first reads each result of a sin/cos
    /// group (its position in `order`); results nobody reads stay absent.
    pub(crate) fn note_first_reads(&mut self, order: &[NodeId]) {
        let (groups, group_of) = (&self.groups, &self.group_of);
        let sincos = |a: NodeId| {
            let g = group_of[a as usize];
            g != NO_GROUP && groups[g as usize].op == PackOp::SinCos
        };
        for (at, &n) in order.iter().enumerate() {
            let reads = &mut self.pack_reads;
            self.arena.for_each_operand(n, |a| {
                if sincos(a) {
                    reads.entry(a).or_insert(at as u32);
                }
            });
        }
    }

    /// When the order first reads `n` (`u32::MAX`: never).
    fn first_read(&self, n: NodeId) -> u32 {
        self.pack_reads.get(&n).copied().unwrap_or(u32::MAX)
    }

    /// Orders the lanes of sin/cos group `g` by when their results are first read, so
    /// the ones read first get lanes 0 and 1, whose results a step can keep.
    pub(crate) fn order_lanes_by_first_read(&mut self, g: usize) {
        if self.groups[g].op != PackOp::SinCos {
            return;
        }
        let mut lanes = std::mem::take(&mut self.groups[g].lanes);
        lanes.sort_by_key(|lane| {
            let cos = lane.cos.map_or(u32::MAX, |c| self.first_read(c));
            self.first_read(lane.node).min(cos)
        });
        self.groups[g].lanes = lanes;
    }

    /// The results a step of `group` running `lanes` (in the stencil's order) keeps in
    /// registers: for sin/cos, the two of lanes 0 and 1 read first that a form keeps.
    pub(crate) fn kept_results(&self, group: &Group, lanes: &[Lane]) -> Kept {
        if group.op != PackOp::SinCos {
            return Kept::LANE0;
        }
        let mut outs: Vec<(u32, Out)> = [S0, C0, S1, C1]
            .into_iter()
            .filter_map(|o| o.node(lanes).map(|n| (self.first_read(n), o)))
            .collect();
        // stable: among results nobody reads again, lane 0's sine and cosine (the
        // form without moves) come first
        outs.sort_by_key(|&(at, _)| at);
        match outs.as_slice() {
            [(_, x), (_, y), ..] => Kept::sincos_of(*x, *y).unwrap_or(group.op.default_kept()),
            _ => group.op.default_kept(),
        }
    }

    /// Records what the step of `lanes` left in the float registers (every other
    /// register holds nothing): of two kept results, the one read first arrived
    /// earlier, so the operation that reads it (and leaves it in its slot) overwrites
    /// it, not the other.
    pub(crate) fn record_kept(&mut self, lanes: &[Lane], kept: Kept) {
        let now = self.steps.len();
        let node = |o: Out| o.node(lanes).expect("a kept result of a lane the step has");
        let a = node(kept.a);
        let regs = &mut self.regs[Class::Float as usize];
        regs[0] = Some((a, now));
        if let Some(b) = kept.b.map(node) {
            let a_first = self.first_read(a) <= self.first_read(b);
            let regs = &mut self.regs[Class::Float as usize];
            regs[0] = Some((a, now - usize::from(a_first)));
            regs[1] = Some((b, now - usize::from(!a_first)));
        }
    }
}
