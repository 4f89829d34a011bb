//! Scheduling the groups of packed math calls ([`crate::pack`]).
//!
//! Each group gets a 16-byte aligned block of four slots before scheduling starts (and
//! a second one for the cosines of `st_pack4_sincos_f`). An operand that only its lane
//! reads (a dot product's sum before its tanh) is given its lane as its slot, so when
//! the registers spill it, it is spilled straight into the block; at the group, the
//! operands still in a register are stored into their lanes and the others (inputs,
//! values read again later) copied there. The stencil then replaces each lane by its
//! result, which lives in that slot from then on, like any spilled value.

use crate::link::Step;
use crate::optimise::{Kind, NodeId};
use crate::pack::{Blocks, Group, PackOp, LANES};
use crate::schedule::Scheduler;
use crate::select::{Class, MissingStencil, Place};

/// Reads of a lane's operand by the lane: one per node computed from it.
fn lane_reads(group: &Group) -> u32 {
    match group.op {
        PackOp::Unary(_) => 1,
        PackOp::SinCos => 2,
    }
}

impl Scheduler<'_> {
    /// Gives every group its blocks, and each operand that only its lane reads that
    /// lane as its slot. `pinned` nodes keep slots of their own (a loop body's carries).
    pub(crate) fn place_pack_blocks(&mut self, is_output: &[bool], pinned: &[bool]) {
        for g in 0..self.groups.len() {
            let lanes = self.array_range(LANES as u32, &[]);
            let cos =
                (self.groups[g].op == PackOp::SinCos).then(|| self.array_range(LANES as u32, &[]));
            self.blocks.push(Blocks { lanes, cos });
            let reads = lane_reads(&self.groups[g]);
            for (k, lane) in self.groups[g].lanes.iter().enumerate() {
                let x = lane.operand;
                let computed = matches!(
                    self.arena.nodes[x as usize].kind,
                    Kind::Unary(..) | Kind::Binary(..) | Kind::Select(..)
                );
                if computed
                    && self.uses[x as usize] == reads
                    && !is_output[x as usize]
                    && !pinned[x as usize]
                    && !self.in_place.contains_key(&x)
                {
                    self.in_place.insert(x, lanes + 4 * k as u32);
                }
            }
        }
    }

    /// Runs group `g`: its operands into their lanes, then the packed stencil.
    pub(crate) fn schedule_pack(&mut self, g: u32) -> Result<(), MissingStencil> {
        let group = &self.groups[g as usize];
        let blocks = self.blocks[g as usize];
        let lanes = group.lanes.clone();
        let op = group.op;
        let reads = lane_reads(group);
        let stencil = self
            .table
            .packs
            .stencil(op)
            .ok_or_else(|| MissingStencil(format!("packed stencil for {op:?}")))?;
        let at = |k: usize| blocks.lanes + 4 * k as u32;
        // operands in a register first: loading the others may evict them, and they are
        // read from their lanes only once all are there
        for (k, lane) in lanes.iter().enumerate() {
            let x = lane.operand;
            if self.slot[x as usize] == at(k) {
                continue; // spilled into its lane already
            }
            let r = match self.place(Class::Float, x) {
                Place::R0 => 0,
                Place::R1 => 1,
                Place::Mem => continue,
            };
            let slot = match self.in_place.get(&x) {
                Some(&hint) if hint == at(k) => self.slot_of(x),
                _ => at(k),
            };
            let store = self.table.store(Class::Float, r)?;
            self.emit(store, Some(slot));
        }
        for (k, lane) in lanes.iter().enumerate() {
            let x = lane.operand;
            if self.slot[x as usize] == at(k) || self.place(Class::Float, x) != Place::Mem {
                continue; // in its lane now
            }
            self.store_scalar_copy(x, at(k))?;
        }
        for lane in &lanes {
            self.uses[lane.operand as usize] -= reads;
        }
        let mut args = [0u32; crate::stencil_db::ARG_HOLES];
        args[0] = blocks.lanes;
        args[1] = blocks.cos.unwrap_or(0);
        self.steps.push(Step {
            args,
            ..Step::new(stencil, None)
        });
        for (k, lane) in lanes.iter().enumerate() {
            self.slot[lane.node as usize] = at(k);
            self.early[lane.node as usize] = true;
            if let (Some(c), Some(cos)) = (lane.cos, blocks.cos) {
                self.slot[c as usize] = cos + 4 * k as u32;
                self.early[c as usize] = true;
            }
        }
        Ok(())
    }

    /// Copies `x`, which is in data memory, into the slot at `at` through a register
    /// (the block is rewritten every run, so constants are copied too).
    fn store_scalar_copy(&mut self, x: NodeId, at: u32) -> Result<(), MissingStencil> {
        let r = match self.load(Class::Float, x)? {
            Place::R0 => 0,
            _ => 1,
        };
        let store = self.table.store(Class::Float, r)?;
        self.emit(store, Some(at));
        Ok(())
    }
}
