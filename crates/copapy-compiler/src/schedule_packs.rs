//! Scheduling the groups of packed math calls ([`crate::pack`]).
//!
//! Each group gets a 16-byte aligned block of four slots before scheduling starts (and
//! a second one for the cosines of `st_pack4_sincos_f`), where the stencil writes its
//! results: each result lives in its lane's slot from then on, like any spilled value.
//!
//! Where the stencil reads the operands, cheapest first:
//!
//! * **A range** (`_v` forms): when every lane's operand is a constant or an input no
//!   other slot holds yet, the group gets a second aligned block of four slots before
//!   scheduling, the inputs live there and the constants' bits are copied there, and
//!   the stencil reads all four with one 16-byte load; four operands that already sit
//!   in four consecutive slots (the same inputs in an earlier group's range) are read
//!   the same way. Only slots no step writes qualify: a 16-byte load of four 4-byte
//!   stores is not forwarded from the store buffer (it waits until they retire), so
//!   spilled values, loop carries and updated states never do. For atan2 and pow the
//!   first and the second operands each get their range (`_vx`, `_vy`, `_v`).
//! * **A register** (`_r0`, `_r1`, `_r0r1`, unary and sincos): an operand still in a
//!   float register (IK's `t1 + t2`) is passed by value; storing it and reading it back
//!   would put a store-to-load forwarding on the chain that waits for the pack. The lanes
//!   are ordered so those operands come first (register 0's, then register 1's), and each
//!   result lives in the slot of the lane it ended up in. So that both register lanes are
//!   used, an operand computed while another lane's operand is in a float register goes
//!   to the other register ([`Scheduler::lane_register`]).
//! * **Its own hole**: each lane reads its slot (an input, a constant, a spilled value),
//!   one 4-byte load; an operand in a register is stored first, into its lane of the
//!   block. An operand that only its lane reads (a dot product's sum before its tanh) is
//!   given its lane as its slot, so a spill lands there too. The second operands of
//!   atan2 and pow without a range are stored or copied into the block.
//!
//! A packed step clobbers every register (its stencil saves nothing around the helper
//! call): before it, a value still needed that lives only in a register is stored to its
//! slot; after it, float register 0 holds lane 0's result and the others nothing, or, of
//! a sin/cos step, float registers 0 and 1 hold the two results of lanes 0 and 1 read
//! first ([`crate::pack_outputs`]).

use crate::link::Step;
use crate::optimise::{Kind, NodeId};
use crate::pack::{Blocks, Form, Group, Lane, PackOp, RegisterLanes, LANES};
use crate::schedule::{Scheduler, NO_SLOT};
use crate::select::{Class, MissingStencil, Place};

/// Reads of a lane's operand by the lane: one per node computed from it.
fn lane_reads(group: &Group) -> u32 {
    match group.op {
        PackOp::Unary(_) | PackOp::Binary(_) => 1,
        PackOp::SinCos => 2,
    }
}

impl Scheduler<'_> {
    /// Gives every group its blocks, its operand ranges where it can have them, and each
    /// operand that only its lane reads that lane as its slot. `pinned` nodes keep slots
    /// of their own (a loop body's carries); `stored` inputs are written by a step (the
    /// states an update copies into at the end of a run).
    pub(crate) fn place_pack_blocks(
        &mut self,
        is_output: &[bool],
        pinned: &[bool],
        stored: &[bool],
    ) {
        for g in 0..self.groups.len() {
            self.order_lanes_by_first_read(g);
            let lanes = self.array_range(LANES as u32, &[]);
            let op = self.groups[g].op;
            let cos = (op == PackOp::SinCos).then(|| self.array_range(LANES as u32, &[]));
            let firsts: Vec<NodeId> = self.groups[g].lanes.iter().map(|l| l.operand).collect();
            let seconds: Vec<NodeId> = self.groups[g]
                .lanes
                .iter()
                .filter_map(|l| l.second)
                .collect();
            let ranges = |s: &mut Self, nodes: &[NodeId]| {
                let form = Form::Ranges {
                    x: true,
                    y: matches!(op, PackOp::Binary(_)),
                };
                let any_range = s.table.packs.stencil_in(op, form).is_some();
                if any_range && !nodes.is_empty() {
                    s.operand_range(nodes, pinned, stored)
                } else {
                    None
                }
            };
            let x_range = ranges(self, &firsts);
            let y_range = ranges(self, &seconds);
            self.blocks.push(Blocks {
                lanes,
                cos,
                x_range,
                y_range,
            });
            let reads = lane_reads(&self.groups[g]);
            if x_range.is_none() && self.has_register_form(op, RegisterLanes::R0R1) {
                for lane in &self.groups[g].lanes {
                    self.lane_group.entry(lane.operand).or_insert(g as u32);
                }
            }
            for (k, lane) in self.groups[g].lanes.iter().enumerate() {
                // the operand that goes into the block: the second one of a binary call
                // (its first is read where it lives)
                let x = match lane.second {
                    Some(_) if y_range.is_some() => continue,
                    Some(y) => y,
                    None => lane.operand,
                };
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

    /// The start of four consecutive slots no step writes that hold `nodes` in order
    /// (lanes beyond them hold zeros), when there can be one: every node a constant (its
    /// bits copied into a new range) or an input without a slot yet (given its lane of
    /// the range), each input once; or four inputs and constants already in consecutive
    /// slots (an earlier group's range).
    fn operand_range(&mut self, nodes: &[NodeId], pinned: &[bool], stored: &[bool]) -> Option<u32> {
        let kind = |n: NodeId| self.arena.nodes[n as usize].kind;
        let fixed = |n: NodeId| {
            matches!(kind(n), Kind::Const(_) | Kind::Input { .. })
                && !pinned[n as usize]
                && !stored[n as usize]
        };
        if !nodes.iter().all(|&n| fixed(n)) {
            return None;
        }
        let first = self.slot[nodes[0] as usize];
        let consecutive = nodes.len() == LANES
            && first != NO_SLOT
            && nodes
                .iter()
                .enumerate()
                .all(|(k, &n)| self.slot[n as usize] == first.wrapping_add(4 * k as u32));
        if consecutive {
            return Some(first);
        }
        let placeable = nodes.iter().enumerate().all(|(k, &n)| match kind(n) {
            Kind::Const(_) => true,
            _ => self.slot[n as usize] == NO_SLOT && !nodes[..k].contains(&n),
        });
        if !placeable {
            return None;
        }
        let start = self.array_range(LANES as u32, &[]);
        for (k, &n) in nodes.iter().enumerate() {
            let at = start + 4 * k as u32;
            let (Kind::Const(bits) | Kind::Input { init: bits }) = kind(n) else {
                unreachable!("checked above")
            };
            self.data[at as usize..at as usize + 4].copy_from_slice(&bits.to_le_bytes());
            if self.slot[n as usize] == NO_SLOT {
                self.slot[n as usize] = at;
            }
        }
        Some(start)
    }

    /// Runs group `g`: the operands where the stencil reads them (their range, their
    /// register, their slot, or stored from a register into the block), then the packed
    /// stencil, which writes the results to the block (`cp_mf`; the cosines to `cp_mf2`).
    pub(crate) fn schedule_pack(&mut self, g: u32) -> Result<(), MissingStencil> {
        let group = &self.groups[g as usize];
        let blocks = self.blocks[g as usize];
        let op = group.op;
        let reads = lane_reads(group);
        let (lanes, form) = match (blocks.x_range, blocks.y_range) {
            (None, None) => {
                let (lanes, regs) = self.register_lanes_first(&group.lanes.clone(), op);
                (lanes, Form::Lanes(regs))
            }
            (x, y) => (
                group.lanes.clone(),
                Form::Ranges {
                    x: x.is_some(),
                    y: y.is_some(),
                },
            ),
        };
        let group = &self.groups[g as usize];
        let wanted = self.kept_results(group, &lanes);
        let (kept, stencil) = match self.table.packs.stencil_kept(op, form, wanted) {
            Some(id) => (wanted, Some(id)),
            // an object without that form: the one keeping the default results
            None => (op.default_kept(), self.table.packs.stencil_in(op, form)),
        };
        let stencil = stencil
            .ok_or_else(|| MissingStencil(format!("packed stencil for {op:?} in {form:?}")))?;
        let by_value = match form {
            Form::Lanes(regs) => regs.count(),
            Form::Ranges { .. } => 0,
        };
        let at = |k: usize| blocks.lanes + 4 * k as u32;
        // the holes of lanes that come from registers are not read
        let mut args = [at(0); crate::stencil_db::ARG_HOLES];
        if let Some(x) = blocks.x_range {
            args[0] = x;
        } else {
            for (k, lane) in lanes.iter().enumerate().skip(by_value) {
                args[k] = match lane.second {
                    // the lane slot is the second operand's: the first is read where it
                    // is or from a slot of its own
                    Some(_) => self.first_operand(lane.operand)?,
                    None => self.lane_operand(lane.operand, at(k))?,
                };
            }
            // a lane no call fills reads another lane's operand (or the block when
            // every operand comes by value); nobody reads its result
            let spare = if lanes.len() > by_value {
                args[by_value]
            } else {
                at(0)
            };
            for arg in args.iter_mut().take(LANES).skip(lanes.len()) {
                *arg = spare;
            }
        }
        if blocks.y_range.is_none() {
            // second operands into their lanes: in a register first (loading the others
            // may evict them)
            self.seconds_into_lanes(&lanes, at)?;
        }
        for lane in &lanes {
            self.uses[lane.operand as usize] -= reads;
            if let Some(y) = lane.second {
                self.uses[y as usize] -= 1;
            }
        }
        // the step clobbers every register
        self.flush_registers()?;
        self.steps.push(Step {
            args,
            slot2: blocks.cos.or(blocks.y_range),
            ..Step::new(stencil, Some(blocks.lanes))
        });
        for (k, lane) in lanes.iter().enumerate() {
            self.slot[lane.node as usize] = at(k);
            self.early[lane.node as usize] = true;
            if let (Some(c), Some(cos)) = (lane.cos, blocks.cos) {
                self.slot[c as usize] = cos + 4 * k as u32;
                self.early[c as usize] = true;
            }
        }
        // the helper returns results in registers: lane 0's, or the two `kept` of a
        // sin/cos step (crate::pack_outputs)
        self.record_kept(&lanes, kept);
        Ok(())
    }

    /// Whether `op`'s packs take operands from registers in `form` (unary and sincos
    /// groups, where the stencil object has that form; binary groups never).
    fn has_register_form(&self, op: PackOp, form: RegisterLanes) -> bool {
        !matches!(op, PackOp::Binary(_))
            && self.table.packs.stencil_in(op, Form::Lanes(form)).is_some()
    }

    /// The lanes in the order the stencil reads them and its register-lane form: a lane
    /// whose operand is in float register 0, then one whose operand is in register 1,
    /// then the others in their order. Binary groups (and objects without the forms) keep
    /// every lane in memory.
    fn register_lanes_first(&self, lanes: &[Lane], op: PackOp) -> (Vec<Lane>, RegisterLanes) {
        let in_register = |r: usize| {
            lanes
                .iter()
                .position(|lane| self.float_register(lane.operand) == Some(r))
        };
        let (r0, r1) = (in_register(0), in_register(1));
        let form = RegisterLanes::of(r0.is_some(), r1.is_some());
        if form == RegisterLanes::None || !self.has_register_form(op, form) {
            return (lanes.to_vec(), RegisterLanes::None);
        }
        let first = [r0, r1];
        let mut order: Vec<Lane> = first.iter().flatten().map(|&k| lanes[k]).collect();
        order.extend(
            (0..lanes.len())
                .filter(|k| !first.contains(&Some(*k)))
                .map(|k| lanes[k]),
        );
        (order, form)
    }

    /// The float register result `n` should go to so its packed call can take it by
    /// value beside another lane's operand: the register that does not hold one, when
    /// the other does. `None` when `n` is no lane operand or no register holds another.
    pub(crate) fn lane_register(&self, n: NodeId) -> Option<usize> {
        let &g = self.lane_group.get(&n)?;
        let lanes = &self.groups[g as usize].lanes;
        let holds_lane = |r: usize| {
            self.regs[Class::Float as usize][r]
                .is_some_and(|(v, _)| v != n && lanes.iter().any(|lane| lane.operand == v))
        };
        match (holds_lane(0), holds_lane(1)) {
            (true, false) => Some(1),
            (false, true) => Some(0),
            _ => None,
        }
    }

    /// The data offset the first operand `x` of a binary call is read from: its slot,
    /// stored there first if it is only in a register.
    fn first_operand(&mut self, x: NodeId) -> Result<u32, MissingStencil> {
        let Some(r) = self.float_register(x).filter(|_| !self.in_memory(x)) else {
            return Ok(self.slot[x as usize]);
        };
        let slot = self.slot_of(x);
        self.store_register(r, slot)?;
        Ok(slot)
    }

    /// Stores or copies the second operands of a binary group into their lanes of the
    /// block (`at(k)`), where the stencil reads them one by one: the ones in a register
    /// first (loading the others may evict them). Lanes may share a second operand (a
    /// constant exponent): each lane gets its copy.
    fn seconds_into_lanes(
        &mut self,
        lanes: &[Lane],
        at: impl Fn(usize) -> u32,
    ) -> Result<(), MissingStencil> {
        let seconds: Vec<(u32, NodeId)> = lanes
            .iter()
            .enumerate()
            .filter_map(|(k, lane)| lane.second.map(|y| (at(k), y)))
            .collect();
        // spilled into its lane already, or stored from a register now
        let mut placed = vec![false; seconds.len()];
        for (done, &(lane, y)) in placed.iter_mut().zip(&seconds) {
            *done = self.slot[y as usize] == lane;
            if let (false, Some(r)) = (*done, self.float_register(y)) {
                self.store_into_lane(y, r, lane)?;
                *done = true;
            }
        }
        for (&(lane, y), _) in seconds.iter().zip(&placed).filter(|(_, &done)| !done) {
            let r = match self.float_register(y) {
                Some(r) => r, // loaded for an earlier lane
                None => usize::from(self.load(Class::Float, y)? != Place::R0),
            };
            self.store_register(r, lane)?;
        }
        Ok(())
    }

    /// The data offset a lane reads its operand `x` from: its slot when it is in data
    /// memory (an input, a constant, a spilled value: no copy); a value only in a
    /// register is stored into its lane `lane` of the block.
    fn lane_operand(&mut self, x: NodeId, lane: u32) -> Result<u32, MissingStencil> {
        match self.float_register(x) {
            Some(r) if !self.in_memory(x) => self.store_into_lane(x, r, lane),
            _ => Ok(self.slot[x as usize]),
        }
    }

    /// Stores `x` from float register `r` into its lane (the lane is its slot when
    /// [`Scheduler::place_pack_blocks`] gave it that one); returns where it went.
    fn store_into_lane(&mut self, x: NodeId, r: usize, lane: u32) -> Result<u32, MissingStencil> {
        // (a value that has a slot already, such as an earlier pack's result, which that
        // pack left in float register 0, is copied into the lane)
        let slot = match self.in_place.get(&x) {
            Some(&hint) if hint == lane && !self.in_memory(x) => self.slot_of(x),
            _ => lane,
        };
        self.store_register(r, slot)?;
        Ok(slot)
    }

    fn float_register(&self, x: NodeId) -> Option<usize> {
        match self.place(Class::Float, x) {
            Place::R0 => Some(0),
            Place::R1 => Some(1),
            Place::Mem => None,
        }
    }

    fn store_register(&mut self, r: usize, slot: u32) -> Result<(), MissingStencil> {
        let store = self.table.store(Class::Float, r)?;
        self.emit(store, Some(slot));
        Ok(())
    }
}
