//! Scheduling and register allocation: from the arena to a list of stencil steps.
//!
//! Stencils pass values in four physical registers: two for floats and two for ints,
//! called r0 and r1 in each class. Operands can also be read straight from data memory
//! (one operand, or both through the `mm` stencils), so operations need no separate load
//! unless a target's object lacks a form. The scheduler walks the arena in order
//! (operands right before their users) and tracks which value each register holds:
//!
//! * an operand already in a register is used from there, never loaded again;
//! * a result goes to the register whose value is dead, or else already in memory, or
//!   else (after storing it) the one loaded longest ago;
//! * values live in memory only when they must: inputs, constants, outputs, values the
//!   user still holds (so `read_value` can read them), and values spilled because a
//!   register was needed while they still had users.
//!
//! Every data slot is 4 bytes; the data image holds the initial value of inputs and
//! constants and zero for computed values. An array is a range of slots starting at a
//! 16-byte boundary (SIMD loads); its operation is one step whose `args` are the
//! result, the operands (scalar operands are stored to memory first) and a slot holding
//! the element count. Array steps keep the registers (their stencils save them). A
//! computed array nobody reads any more gives its range to the next computed array of
//! the same length, so a loop of temporaries (`(v1 + i) @ v2` for ten i) needs one range,
//! not ten: less data to load and fewer cache lines touched per run.

use rustc_hash::FxHashMap;

use crate::array::ArrayOp;
use crate::graph::{NodeKind, Op};
use crate::link::Step;
use crate::optimise::{Arena, Kind, NodeId};
use crate::select::{Class, MissingStencil, Place, StencilTable};

/// The scheduled program before linking.
pub struct Schedule {
    pub steps: Vec<Step>,
    /// Initial data image.
    pub data: Vec<u8>,
    /// Data offset of each arena node that has a slot (`u32::MAX` if none).
    pub slot: Vec<u32>,
    /// The loops among the steps, inner ones included ([`crate::loops`]).
    pub loops: Vec<LoopSpan>,
    /// The imported functions the program calls, with their table entries.
    pub imports: Vec<crate::imports::ImportSlot>,
}

/// Where a loop is among a program's steps: the body is `head..back`, `back` the
/// back-edge step; the body runs `trips` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopSpan {
    pub head: usize,
    pub back: usize,
    pub trips: u32,
}

pub(crate) const NO_SLOT: u32 = u32::MAX;

pub(crate) struct Scheduler<'a> {
    pub(crate) arena: &'a Arena,
    pub(crate) table: &'a StencilTable,
    pub(crate) steps: Vec<Step>,
    pub(crate) data: Vec<u8>,
    pub(crate) slot: Vec<u32>,
    /// Remaining reads of each node by later operations.
    pub(crate) uses: Vec<u32>,
    /// regs[class][r] = (node, step index when it arrived)
    pub(crate) regs: [[Option<(NodeId, usize)>; 2]; 2],
    /// Slot holding each element count used by an array step, shared.
    pub(crate) counts: FxHashMap<u32, u32>,
    /// Nodes whose slots must survive the run: outputs and values the user holds.
    pub(crate) keep: Vec<bool>,
    /// Arrays whose memory a scalar aliases (an element), so it is never reused.
    pub(crate) aliased: Vec<bool>,
    /// Free ranges of dead computed arrays, by element count.
    pub(crate) free: FxHashMap<u32, Vec<u32>>,
    /// Arrays whose range went back to `free`: an operation that reads one array twice
    /// (`q * q`) releases it twice, and a range freed twice would be handed to two live
    /// arrays at once.
    pub(crate) freed: Vec<bool>,
    /// Element-wise operations computed inside the dot product that is their only
    /// reader (no step of their own, no memory).
    pub(crate) fused: Vec<bool>,
    /// Range of each gathered array (`ArrayOp::Pack`) reserved before scheduling, with
    /// its input elements already living in it.
    pub(crate) pack_start: FxHashMap<NodeId, u32>,
    /// The carried slots of each loop node, where its outputs live after it.
    pub(crate) loop_slots: FxHashMap<NodeId, Vec<u32>>,
    /// The loops scheduled so far.
    pub(crate) loops: Vec<LoopSpan>,
    /// Computed nodes whose slot, once they need one, is the given one (a loop body's
    /// next carries that can be updated in place).
    pub(crate) in_place: FxHashMap<NodeId, u32>,
    /// Imports called so far, each with its import-table entry.
    pub(crate) imports: Vec<crate::imports::ImportSlot>,
    /// The buffers of each call with array arguments, by argument (`NO_SLOT` for a
    /// scalar argument): where `ArrayOp::Filled` finds the call's results.
    pub(crate) call_buffers: FxHashMap<NodeId, Vec<u32>>,
    /// sin/cos nodes with a partner of the same operand not scheduled yet
    /// ([`crate::sincos`]); a partner computed early is in `early`.
    pub(crate) sincos: FxHashMap<NodeId, NodeId>,
    /// Nodes already computed into their slot by an earlier fused step.
    pub(crate) early: Vec<bool>,
    /// Groups of math calls computed by one packed stencil ([`crate::pack`]), the
    /// group of each node they compute and their data blocks.
    pub(crate) groups: Vec<crate::pack::Group>,
    pub(crate) group_of: Vec<u32>,
    pub(crate) blocks: Vec<crate::pack::Blocks>,
    /// The group each operand of a unary or sincos group with register lanes goes into
    /// ([`Scheduler::lane_register`]).
    pub(crate) lane_group: FxHashMap<NodeId, u32>,
    /// Where the order first reads each result of a group ([`crate::pack_outputs`]).
    pub(crate) pack_reads: FxHashMap<NodeId, u32>,
    /// Float products computed by the add or sub that reads them ([`crate::muladd`]).
    pub(crate) deferred: Vec<bool>,
    /// When each value is read next ([`crate::next_use`]).
    pub(crate) next_use: crate::next_use::NextUse,
}

impl Scheduler<'_> {
    pub(crate) fn slot_of(&mut self, n: NodeId) -> u32 {
        let s = self.slot[n as usize];
        if s != NO_SLOT {
            return s;
        }
        if let Some(&at) = self.in_place.get(&n) {
            // a loop body's next carry, stored straight into its carried slot
            self.slot[n as usize] = at;
            return at;
        }
        let offset = self.data.len() as u32;
        let init = match self.arena.nodes[n as usize].kind {
            Kind::Const(bits) | Kind::Input { init: bits } => bits,
            _ => 0,
        };
        self.data.extend_from_slice(&init.to_le_bytes());
        self.slot[n as usize] = offset;
        offset
    }

    pub(crate) fn in_memory(&self, n: NodeId) -> bool {
        self.slot[n as usize] != NO_SLOT
    }

    pub(crate) fn place(&self, class: Class, n: NodeId) -> Place {
        let regs = &self.regs[class as usize];
        if regs[0].map(|(v, _)| v) == Some(n) {
            Place::R0
        } else if regs[1].map(|(v, _)| v) == Some(n) {
            Place::R1
        } else {
            Place::Mem
        }
    }

    pub(crate) fn emit(&mut self, stencil: crate::stencil_db::StencilId, slot: Option<u32>) {
        self.steps.push(Step::new(stencil, slot));
    }

    /// Cost of overwriting register `r`: 0 free, 1 drops a cached copy, 2 needs a store.
    fn eviction_cost(&self, class: Class, r: usize) -> u32 {
        match self.regs[class as usize][r] {
            None => 0,
            Some((v, _)) if self.uses[v as usize] == 0 => 0,
            Some((v, _)) if self.in_memory(v) => 1,
            Some(_) => 2,
        }
    }

    /// Picks a register of `class` to overwrite and stores its value first if it is
    /// still needed and not in memory.
    fn claim(&mut self, class: Class) -> Result<usize, MissingStencil> {
        let (c0, c1) = (self.eviction_cost(class, 0), self.eviction_cost(class, 1));
        // both still needed: evict the one read again later (crate::next_use)
        let next = |r: usize| {
            self.regs[class as usize][r].map_or(u32::MAX, |(v, _)| self.next_use.after(v))
        };
        let r = if c0 != c1 {
            usize::from(c1 < c0)
        } else if c0 > 0 && next(0) != next(1) {
            usize::from(next(1) > next(0))
        } else {
            // evict the value that has waited longest
            let age = |r: usize| self.regs[class as usize][r].map_or(0, |(_, t)| t);
            usize::from(age(1) < age(0))
        };
        self.evict(class, r)
    }

    /// The register for the result `n` of class `class`: the one a packed call wants it
    /// in ([`Scheduler::lane_register`]), else the one [`Scheduler::claim`] picks.
    pub(crate) fn claim_for(&mut self, n: NodeId, class: Class) -> Result<usize, MissingStencil> {
        match self.lane_register(n) {
            Some(r) if class == Class::Float => self.evict(class, r),
            _ => self.claim(class),
        }
    }

    /// The result register of `op` once [`Scheduler::claim_for`] chose `dst`: the other
    /// one when `op` is not commutative, its right operand `py` is in `dst`, and
    /// overwriting either register costs nothing. x86_64's two-operand `subss`/`divss`
    /// must copy the left operand aside to put `a - b` where `b` is (3 instructions, 1
    /// in the other register); a negation absorbed into a sum (`crate::signs`) makes
    /// such differences common.
    fn spare_right_operand(
        &self,
        n: NodeId,
        op: Op,
        (px, py): (Place, Place),
        dst: usize,
        (class, result_class): (Class, Class),
    ) -> usize {
        let free = |r: usize| self.eviction_cost(class, r) == 0;
        let other = 1 - dst;
        if op.is_commutative()
            || class != result_class
            || py != Place::reg(dst)
            || px == py
            || self.lane_register(n).is_some()
            || !free(dst)
            || !free(other)
        {
            return dst;
        }
        other
    }

    /// Frees register `r` of `class`, storing its value first if it is still needed and
    /// not in memory.
    fn evict(&mut self, class: Class, r: usize) -> Result<usize, MissingStencil> {
        if self.eviction_cost(class, r) == 2 {
            let (v, _) = self.regs[class as usize][r].expect("occupied");
            let slot = self.slot_of(v);
            let store = self.table.store(class, r)?;
            self.emit(store, Some(slot));
        }
        Ok(r)
    }

    /// Loads `n` (which is in memory) into a register of `class`.
    pub(crate) fn load(&mut self, class: Class, n: NodeId) -> Result<Place, MissingStencil> {
        let r = self.claim(class)?;
        let slot = self.slot[n as usize];
        debug_assert!(
            slot != NO_SLOT,
            "value {n} is neither in a register nor in memory"
        );
        let load = self.table.copy(class, Place::Mem, r)?;
        self.emit(load, Some(slot));
        self.set_reg(class, r, n);
        Ok(Place::reg(r))
    }

    pub(crate) fn set_reg(&mut self, class: Class, r: usize, n: NodeId) {
        // a value lives in at most one register of its class
        let other = &mut self.regs[class as usize][1 - r];
        if other.map(|(v, _)| v) == Some(n) {
            *other = None;
        }
        self.regs[class as usize][r] = Some((n, self.steps.len()));
    }

    /// Makes sure the memory operand (if any) has a slot and returns it.
    fn mem_slot(&mut self, places: &[(Place, NodeId)]) -> Option<u32> {
        places
            .iter()
            .find(|(p, _)| *p == Place::Mem)
            .map(|&(_, n)| self.slot[n as usize])
    }

    fn schedule_node(&mut self, n: NodeId, is_output: bool) -> Result<(), MissingStencil> {
        let node = self.arena.nodes[n as usize];
        let result_class = Class::of(node.ty);
        if let Some(&g) = self
            .group_of
            .get(n as usize)
            .filter(|&&g| g != crate::pack::NO_GROUP)
        {
            // computed by its group's packed stencil, by the group's first node
            if !self.early[n as usize] {
                self.schedule_pack(g)?;
            }
            return Ok(());
        }
        match node.kind {
            Kind::Const(_) | Kind::Input { .. } => {
                // live in memory from the start
                self.slot_of(n);
                return Ok(());
            }
            Kind::Unary(_, _) if self.early[n as usize] => return Ok(()),
            Kind::Unary(op, x)
                if self.sincos.contains_key(&n)
                    && self.table.sincos(op == Op::Cos, Place::R0, 0).is_some() =>
            {
                let px = self.place(Class::Float, x);
                let partner = self.sincos[&n];
                // the partner's use of x is spent now: it is never scheduled again
                self.uses[x as usize] -= 2;
                self.sincos.remove(&partner);
                self.early[partner as usize] = true;
                let slot = self.mem_slot(&[(px, x)]);
                let dst = self.claim(Class::Float)?;
                let slot2 = self.slot_of(partner);
                let stencil = self
                    .table
                    .sincos(op == Op::Cos, px, dst)
                    .ok_or_else(|| MissingStencil(format!("st_sincos_f for {px:?}")))?;
                self.steps.push(Step {
                    slot2: Some(slot2),
                    ..Step::new(stencil, slot)
                });
                self.set_reg(Class::Float, dst, n);
            }
            Kind::Unary(op, x) => {
                let class = Class::of(self.arena.nodes[x as usize].ty);
                let px = self.place(class, x);
                self.uses[x as usize] -= 1;
                let slot = self.mem_slot(&[(px, x)]);
                let dst = self.claim_for(n, result_class)?;
                let stencil = self.table.unary(op, class, px, dst)?;
                self.emit(stencil, slot);
                self.set_reg(result_class, dst, n);
            }
            Kind::Binary(Op::Mul, p, q) if self.deferred[n as usize] => {
                if self.keep_deferred(p, q) {
                    return Ok(()); // computed by the sum that reads it (crate::muladd)
                }
                self.deferred[n as usize] = false;
                self.schedule_binary(n, Op::Mul, p, q)?;
            }
            Kind::Binary(op, x, y) => {
                if !self.schedule_fused(n, op, x, y)? {
                    self.schedule_binary(n, op, x, y)?;
                }
            }
            Kind::Array(index) => {
                self.schedule_array(n, index)?;
                return Ok(());
            }
            Kind::Loop(index) => return self.schedule_loop(n, index),
            Kind::LoopOut(run, k) => {
                // the loop left it in its carried slot
                self.uses[run as usize] -= 1;
                self.slot[n as usize] = self.loop_slots[&run][k as usize];
                return Ok(());
            }
            Kind::Select(c, x, y) => {
                let pc = match self.place(Class::Int, c) {
                    Place::Mem => self.load(Class::Int, c)?,
                    p => p,
                };
                let mut px = self.place(Class::Float, x);
                let mut py = self.place(Class::Float, y);
                if px == Place::Mem && py == Place::Mem {
                    px = self.load(Class::Float, x)?;
                }
                if x == y {
                    py = px;
                }
                for operand in [c, x, y] {
                    self.uses[operand as usize] -= 1;
                }
                let slot = self.mem_slot(&[(px, x), (py, y)]);
                let dst = self.claim_for(n, Class::Float)?;
                let stencil = self.table.select(pc as usize, px, py, dst)?;
                self.emit(stencil, slot);
                self.set_reg(Class::Float, dst, n);
            }
        }
        self.finish(n, result_class, is_output)
    }

    /// `n = x op y` for a binary op: operands where they are (both from memory through
    /// the `mm` stencils when the object has them, else the left one loaded first).
    pub(crate) fn schedule_binary(
        &mut self,
        n: NodeId,
        op: Op,
        x: NodeId,
        y: NodeId,
    ) -> Result<(), MissingStencil> {
        let result_class = Class::of(self.arena.nodes[n as usize].ty);
        let class = Class::of(self.arena.nodes[x as usize].ty);
        let mut px = self.place(class, x);
        let mut py = self.place(class, y);
        if px == Place::Mem && py == Place::Mem {
            if let Some(both) = self.table.binary_from_memory(op, class) {
                // both operands straight from memory: one stencil, two slots
                self.uses[x as usize] -= 1;
                self.uses[y as usize] -= 1;
                let dst = self.claim_for(n, result_class)?;
                self.steps.push(Step {
                    slot2: Some(self.slot[y as usize]),
                    ..Step::new(both[dst], Some(self.slot[x as usize]))
                });
                self.set_reg(result_class, dst, n);
                return Ok(());
            }
            // one operand must come from a register: load the left one
            px = self.load(class, x)?;
            if x == y {
                py = px;
            }
        }
        self.uses[x as usize] -= 1;
        self.uses[y as usize] -= 1;
        let slot = self.mem_slot(&[(px, x), (py, y)]);
        let dst = self.claim_for(n, result_class)?;
        let dst = self.spare_right_operand(n, op, (px, py), dst, (class, result_class));
        let stencil = self.table.binary(op, class, px, py, dst)?;
        self.emit(stencil, slot);
        self.set_reg(result_class, dst, n);
        Ok(())
    }

    /// A 16-byte aligned range of `len` slots holding `init` (zeros if empty).
    pub(crate) fn array_range(&mut self, len: u32, init: &[u32]) -> u32 {
        let start = self.data.len().next_multiple_of(16);
        self.data.resize(start, 0);
        if init.is_empty() {
            self.data.resize(start + len as usize * 4, 0);
        } else {
            self.data.extend(init.iter().flat_map(|b| b.to_le_bytes()));
        }
        start as u32
    }

    /// Input variables gathered into an array get their slot inside the array's range,
    /// so gathering them costs no code and writing them writes the array (an input in
    /// two arrays lives in the first). Such arrays are never reused.
    fn place_packed_inputs(&mut self) {
        let arena = self.arena;
        for n in 0..arena.nodes.len() as NodeId {
            let Kind::Array(i) = arena.nodes[n as usize].kind else {
                continue;
            };
            let entry = &arena.arrays[i as usize];
            let NodeKind::Array(node) = entry.node.kind() else {
                continue;
            };
            if node.op != ArrayOp::Pack {
                continue;
            }
            let mut start = None;
            for (k, &e) in entry.args.iter().enumerate() {
                let Kind::Input { init } = arena.nodes[e as usize].kind else {
                    continue;
                };
                if self.slot[e as usize] != NO_SLOT {
                    continue;
                }
                let s = *start.get_or_insert_with(|| self.array_range(node.len, &[]));
                let at = s + 4 * k as u32;
                self.data[at as usize..at as usize + 4].copy_from_slice(&init.to_le_bytes());
                self.slot[e as usize] = at;
            }
            if let Some(s) = start {
                self.pack_start.insert(n, s);
                self.aliased[n as usize] = true;
            }
        }
    }

    /// A range for a computed array of `len` elements: a dead one's, or a new one.
    fn result_range(&mut self, len: u32) -> u32 {
        match self.free.get_mut(&len).and_then(Vec::pop) {
            Some(start) => start,
            None => self.array_range(len, &[]),
        }
    }

    /// Gives the range of array operand `a` back if nothing reads it any more.
    pub(crate) fn release(&mut self, a: NodeId) {
        let Kind::Array(i) = self.arena.nodes[a as usize].kind else {
            return;
        };
        let NodeKind::Array(node) = self.arena.arrays[i as usize].node.kind() else {
            return;
        };
        let computed = !matches!(node.op, ArrayOp::Data(_) | ArrayOp::Element(_)) && node.len > 0;
        if computed
            && self.uses[a as usize] == 0
            && !self.keep[a as usize]
            && !self.aliased[a as usize]
            && !self.freed[a as usize]
        {
            self.freed[a as usize] = true;
            self.free
                .entry(node.slots())
                .or_default()
                .push(self.slot[a as usize]);
        }
    }

    /// The slot of the int constant `n`, one per distinct count.
    pub(crate) fn count_slot(&mut self, n: u32) -> u32 {
        if let Some(&s) = self.counts.get(&n) {
            return s;
        }
        let s = self.data.len() as u32;
        self.data.extend_from_slice(&n.to_le_bytes());
        self.counts.insert(n, s);
        s
    }

    /// Makes sure scalar `x` has its slot written: a value only in a register is stored.
    pub(crate) fn store_if_needed(&mut self, x: NodeId) -> Result<u32, MissingStencil> {
        if !self.in_memory(x) {
            let class = Class::of(self.arena.nodes[x as usize].ty);
            let r = match self.place(class, x) {
                Place::R0 => 0,
                Place::R1 => 1,
                Place::Mem => unreachable!("value {x} is neither in a register nor in memory"),
            };
            let slot = self.slot_of(x);
            let store = self.table.store(class, r)?;
            self.emit(store, Some(slot));
        }
        Ok(self.slot[x as usize])
    }

    fn schedule_array(&mut self, n: NodeId, index: u32) -> Result<(), MissingStencil> {
        let arena = self.arena;
        let entry = &arena.arrays[index as usize];
        let NodeKind::Array(node) = entry.node.kind() else {
            unreachable!("arena arrays hold array nodes")
        };
        if self.fused[n as usize] {
            return Ok(()); // computed by the dot product that reads it
        }
        if self.early[n as usize] {
            return Ok(()); // computed with its sin/cos partner (crate::sincos)
        }
        if let ArrayOp::Call { name, signature } = &node.op {
            return self.schedule_call(n, &entry.args, name, signature);
        }
        if let ArrayOp::Filled(k) = node.op {
            self.schedule_filled(n, entry.args[0], k);
            return Ok(());
        }
        if node.op != ArrayOp::Pack {
            // a gather reads its elements one by one (below): the ones still to come
            // must keep their uses, or loading one could evict another unsaved
            for &a in &entry.args {
                self.uses[a as usize] -= 1;
            }
        }
        if let (true, Some(&x)) = (node.op.is_row("dot"), entry.args.first()) {
            if self.fused[x as usize] {
                return self.fused_dot(n, x, entry.args[1]);
            }
        }
        if let (ArrayOp::Unary(op), Some(&partner)) = (&node.op, self.sincos.get(&n)) {
            if let Ok(stencil) = self.table.array(crate::array_stencils::SINCOS_STENCIL) {
                let x = entry.args[0];
                return self.fused_sincos_array(n, partner, *op == Op::Cos, x, stencil);
            }
        }
        match &node.op {
            // a loop body's placeholder for an array before the loop has its range
            ArrayOp::Data(_) if self.slot[n as usize] != NO_SLOT => {}
            ArrayOp::Data(init) => {
                self.slot[n as usize] = self.array_range(node.slots(), init);
            }
            ArrayOp::Element(k) => {
                self.aliased[entry.args[0] as usize] = true;
                self.slot[n as usize] = self.slot[entry.args[0] as usize] + 4 * k;
            }
            ArrayOp::Pack => {
                let has_const = entry
                    .args
                    .iter()
                    .any(|&e| matches!(arena.nodes[e as usize].kind, Kind::Const(_)));
                let start = match self.pack_start.get(&n) {
                    Some(&s) => s,
                    // constant elements go into the initial data image, not through a
                    // step: a range another array wrote (or writes, in an earlier run)
                    // would have lost them, so it is fresh and never given back
                    None if has_const => {
                        self.aliased[n as usize] = true;
                        self.array_range(node.len, &[])
                    }
                    None => self.result_range(node.len),
                };
                self.slot[n as usize] = start;
                for (k, &e) in entry.args.iter().enumerate() {
                    let at = start + 4 * k as u32;
                    self.uses[e as usize] -= 1;
                    if self.slot[e as usize] == at {
                        continue; // an input placed here before scheduling
                    }
                    self.store_scalar_at(e, at)?;
                }
            }
            op => {
                let types: Vec<_> = entry
                    .args
                    .iter()
                    .map(|&a| arena.nodes[a as usize].ty)
                    .collect();
                let name =
                    crate::array_stencils::stencil_name(node, &types).expect("an array operation");
                let stencil = self.table.array(&name)?;
                let mut args = [0u32; crate::stencil_db::ARG_HOLES];
                for (k, &a) in entry.args.iter().enumerate() {
                    args[k + 1] = match arena.nodes[a as usize].kind {
                        Kind::Array(i)
                            if crate::array::len_of(&arena.arrays[i as usize].node).is_some() =>
                        {
                            self.slot[a as usize]
                        }
                        _ => self.store_if_needed(a)?,
                    };
                }
                // the kernel's row (crate::array_kernels) says whether the result is a
                // scalar and where its parameter array goes
                let kernel = op.kernel();
                args[0] = if kernel.is_some_and(|k| k.scalar) {
                    self.slot_of(n)
                } else {
                    let start = self.result_range(node.slots());
                    self.slot[n as usize] = start;
                    start
                };
                let len = entry
                    .args
                    .iter()
                    .find_map(|&a| self.array_len(a))
                    .expect("an array operand");
                let mut count_hole_taken = false;
                if let (Some(hole), Some(prm)) =
                    (kernel.and_then(|k| k.params), op.params(len, node.len))
                {
                    args[hole as usize] = self.array_range(prm.len() as u32, &prm);
                    count_hole_taken = hole == crate::stencil_db::ARG_COUNT;
                }
                if !count_hole_taken {
                    args[crate::stencil_db::ARG_COUNT as usize] = self.count_slot(len);
                }
                self.steps.push(Step {
                    args,
                    ..Step::new(stencil, None)
                });
                for &a in &entry.args {
                    self.release(a);
                }
            }
        }
        Ok(())
    }

    /// sin and cos of float array `x` in one step: `n` and its partner get result ranges.
    fn fused_sincos_array(
        &mut self,
        n: NodeId,
        partner: NodeId,
        cos_first: bool,
        x: NodeId,
        stencil: crate::stencil_db::StencilId,
    ) -> Result<(), MissingStencil> {
        // the partner's read of x is spent here too: it is never scheduled again
        self.uses[x as usize] -= 1;
        self.sincos.remove(&partner);
        self.early[partner as usize] = true;
        let len = self.array_len(x).expect("an array operand");
        let (first, second) = (self.result_range(len), self.result_range(len));
        self.slot[n as usize] = first;
        self.slot[partner as usize] = second;
        let (sin_at, cos_at) = if cos_first {
            (second, first)
        } else {
            (first, second)
        };
        let mut args = [0u32; crate::stencil_db::ARG_HOLES];
        args[0] = sin_at;
        args[1] = self.slot[x as usize];
        args[2] = cos_at;
        args[crate::stencil_db::ARG_COUNT as usize] = self.count_slot(len);
        self.steps.push(Step {
            args,
            ..Step::new(stencil, None)
        });
        self.release(x);
        Ok(())
    }

    /// `sum((p op q) * y)` for the fused element-wise node `x = p op q`, one step.
    fn fused_dot(&mut self, n: NodeId, x: NodeId, y: NodeId) -> Result<(), MissingStencil> {
        let arena = self.arena;
        let Kind::Array(i) = arena.nodes[x as usize].kind else {
            unreachable!("only array nodes are fused")
        };
        let producer = &arena.arrays[i as usize];
        let NodeKind::Array(node) = producer.node.kind() else {
            unreachable!("arena arrays hold array nodes")
        };
        let ArrayOp::Binary(op, form) = node.op else {
            unreachable!("only element-wise binary nodes are fused")
        };
        let stencil = self
            .table
            .array(&crate::array_stencils::fused_dot_name(op, form))?;
        let mut args = [0u32; crate::stencil_db::ARG_HOLES];
        for (k, &a) in producer.args.iter().enumerate() {
            self.uses[a as usize] -= 1;
            args[k + 1] = if self.is_array(a) {
                self.slot[a as usize]
            } else {
                self.store_if_needed(a)?
            };
        }
        args[3] = self.slot[y as usize];
        args[0] = self.slot_of(n);
        args[crate::stencil_db::ARG_COUNT as usize] = self.count_slot(node.len);
        self.steps.push(Step {
            args,
            ..Step::new(stencil, None)
        });
        for &a in producer.args.iter().chain([&y]) {
            self.release(a);
        }
        Ok(())
    }

    /// Puts scalar `e` into the slot at `at`: a constant into the initial data image,
    /// anything else stored from its register (loaded first if it is only in memory).
    pub(crate) fn store_scalar_at(&mut self, e: NodeId, at: u32) -> Result<(), MissingStencil> {
        let class = Class::of(self.arena.nodes[e as usize].ty);
        if let Kind::Const(bits) = self.arena.nodes[e as usize].kind {
            self.data[at as usize..at as usize + 4].copy_from_slice(&bits.to_le_bytes());
            return Ok(());
        }
        let r = match self.place(class, e) {
            Place::R0 => 0,
            Place::R1 => 1,
            Place::Mem => match self.load(class, e)? {
                Place::R0 => 0,
                _ => 1,
            },
        };
        let store = self.table.store(class, r)?;
        self.emit(store, Some(at));
        Ok(())
    }

    /// Whether node `a` is an array (not a scalar, nor a scalar computed from arrays).
    pub(crate) fn is_array(&self, a: NodeId) -> bool {
        self.array_len(a).is_some()
    }

    /// The element count of array node `a` (an array operation's, or an array a loop
    /// carried); `None` for a scalar.
    pub(crate) fn array_len(&self, a: NodeId) -> Option<u32> {
        match self.arena.nodes[a as usize].kind {
            Kind::Array(i) => crate::array::len_of(&self.arena.arrays[i as usize].node),
            Kind::LoopOut(run, k) => {
                let Kind::Loop(l) = self.arena.nodes[run as usize].kind else {
                    return None;
                };
                crate::array::len_of(&self.arena.loops[l as usize].body.carries[k as usize])
            }
            _ => None,
        }
    }

    /// Stores a freshly computed output (or held intermediate) right away.
    fn finish(
        &mut self,
        n: NodeId,
        result_class: Class,
        is_output: bool,
    ) -> Result<(), MissingStencil> {
        if is_output && !self.in_memory(n) {
            let r = match self.place(result_class, n) {
                Place::R0 => 0,
                _ => 1,
            };
            let slot = self.slot_of(n);
            let store = self.table.store(result_class, r)?;
            self.emit(store, Some(slot));
        }
        Ok(())
    }
}

/// Which element-wise nodes are fused into the dot product reading them: float add,
/// sub or mul arrays read only by that dot's left (or, swapped, right) operand and not
/// needed afterwards, when the stencil object has the fused form.
fn fusable(arena: &Arena, uses: &[u32], keep: &[bool], table: &StencilTable) -> Vec<bool> {
    let mut fused = vec![false; arena.nodes.len()];
    for entry in &arena.arrays {
        let NodeKind::Array(node) = entry.node.kind() else {
            continue;
        };
        if !node.op.is_row("dot") || entry.node.ty() != crate::graph::ScalarType::Float {
            continue;
        }
        let x = entry.args[0];
        let Kind::Array(i) = arena.nodes[x as usize].kind else {
            continue;
        };
        let NodeKind::Array(producer) = arena.arrays[i as usize].node.kind() else {
            continue;
        };
        if let ArrayOp::Binary(op, form) = producer.op {
            let fits = crate::array_stencils::FUSED_DOT_OPS.contains(&op)
                && producer.len > 0
                && uses[x as usize] == 1
                && !keep[x as usize]
                && table
                    .array(&crate::array_stencils::fused_dot_name(op, form))
                    .is_ok();
            fused[x as usize] |= fits;
        }
    }
    fused
}

/// Schedules every node of `arena` and stores every output to its slot.
pub fn schedule(arena: &Arena, table: &StencilTable) -> Result<Schedule, MissingStencil> {
    schedule_onto(arena, table, Vec::new(), Vec::new(), &[], &[])
}

/// Like [`schedule`], appending to `steps` and the data image `data`, with the nodes
/// of `preset` already living at the given data offsets (a loop body's placeholders)
/// and those of `in_place` stored at theirs once computed.
pub(crate) fn schedule_onto(
    arena: &Arena,
    table: &StencilTable,
    mut steps: Vec<Step>,
    data: Vec<u8>,
    preset: &[(NodeId, u32)],
    in_place: &[(NodeId, u32)],
) -> Result<Schedule, MissingStencil> {
    let count = arena.nodes.len();
    let mut uses = vec![0u32; count];
    for n in 0..count as NodeId {
        arena.for_each_operand(n, |a| uses[a as usize] += 1);
    }
    let mut is_output = vec![false; count];
    for &o in &arena.outputs {
        is_output[o as usize] = true;
    }
    for &(_, o) in &arena.exposed {
        is_output[o as usize] = true;
    }
    let fused = fusable(arena, &uses, &is_output, table);
    steps.reserve(count + count / 4);
    let mut slot = vec![NO_SLOT; count];
    let mut pinned = vec![false; count];
    for &(n, at) in preset {
        slot[n as usize] = at;
        pinned[n as usize] = true;
    }
    for &(n, _) in in_place {
        pinned[n as usize] = true;
    }
    let mut stored = vec![false; count];
    for &n in &arena.stored {
        stored[n as usize] = true;
    }
    let deferred = if table.has_fused() {
        crate::muladd::deferrable(arena, &uses, &is_output, &pinned)
    } else {
        vec![false; count]
    };
    let sincos = crate::sincos::partners(arena);
    let packing = crate::pack::plan(arena, &table.packs, &sincos, &|n| pinned[n as usize]);
    let mut s = Scheduler {
        arena,
        table,
        steps,
        data,
        slot,
        loop_slots: FxHashMap::default(),
        loops: Vec::new(),
        in_place: in_place.iter().copied().collect(),
        uses,
        regs: [[None; 2]; 2],
        counts: FxHashMap::default(),
        fused,
        pack_start: FxHashMap::default(),
        keep: is_output.clone(),
        aliased: vec![false; count],
        free: FxHashMap::default(),
        freed: vec![false; count],
        imports: Vec::new(),
        call_buffers: FxHashMap::default(),
        sincos,
        early: vec![false; count],
        groups: packing.groups,
        group_of: packing.group_of,
        blocks: Vec::new(),
        lane_group: FxHashMap::default(),
        pack_reads: FxHashMap::default(),
        next_use: crate::next_use::NextUse::new(arena, &packing.order, &deferred),
        deferred,
    };
    s.note_first_reads(&packing.order);
    s.place_packed_inputs();
    s.place_pack_blocks(&is_output, &pinned, &stored);
    for (at, n) in packing.order.into_iter().enumerate() {
        s.next_use.now = at as u32;
        s.schedule_node(n, is_output[n as usize])?;
    }
    Ok(Schedule {
        steps: s.steps,
        data: s.data,
        slot: s.slot,
        loops: s.loops,
        imports: s.imports,
    })
}

#[cfg(test)]
mod tests {
    //! Checks the register allocation by executing the schedule on an abstract machine
    //! that interprets stencil names, and comparing with evaluating the arena directly.

    use super::*;
    use crate::fold;
    use crate::graph::{Op, ScalarType, Value};
    use crate::optimise::build_arena;
    use crate::stencil_db::StencilId;
    use crate::trace;

    struct Machine {
        names: Vec<String>,
    }

    impl Machine {
        fn table(&self) -> StencilTable {
            StencilTable::from_lookup(|name| {
                self.names
                    .iter()
                    .position(|n| n == name)
                    .map(|i| StencilId(i as u32))
            })
        }

        /// Every name the scheduler may ask for.
        fn new() -> Machine {
            let mut names = Vec::new();
            let places = ["r0", "r1", "m"];
            for cls in ["f", "i"] {
                for op in Op::BINARY {
                    for x in places {
                        for y in places {
                            for d in ["r0", "r1"] {
                                names.push(format!("st_{}_{cls}_{x}{y}_{d}", op.stencil_name()));
                            }
                        }
                    }
                }
                for op in Op::UNARY.iter().map(|o| o.stencil_name()).chain(["copy"]) {
                    for x in places {
                        for d in ["r0", "r1"] {
                            names.push(format!("st_{op}_{cls}_{x}_{d}"));
                        }
                    }
                }
                for r in ["r0", "r1"] {
                    names.push(format!("st_store_{cls}_{r}"));
                }
            }
            for c in ["r0", "r1"] {
                for x in places {
                    for y in places {
                        for d in ["r0", "r1"] {
                            names.push(format!("st_select_f_{c}{x}{y}_{d}"));
                        }
                    }
                }
            }
            // packed math: every float math function and the sin/cos pair in every form
            // (stencils/gen_packs.py)
            for op in math() {
                for form in ["", "_r0", "_r1", "_r0r1", "_v"] {
                    names.push(format!("st_pack4_{}_f{form}", op.stencil_name()));
                }
            }
            for op in [Op::Atan2, Op::Pow] {
                for form in ["", "_vx", "_vy", "_v"] {
                    names.push(format!("st_pack4_{}_f{form}", op.stencil_name()));
                }
            }
            for form in ["", "_r0", "_r1", "_r0r1", "_v"] {
                for kept in ["", "_s0s1", "_c0c1", "_s0c1", "_s1c0", "_s1c1"] {
                    names.push(format!("st_pack4_sincos_f{form}{kept}"));
                }
            }
            // multiply-add superinstructions (crate::muladd) with at most one operand in
            // a register, so the scheduler also meets places without a stencil
            for fused in crate::graph::Fused::ALL {
                let arity = fused.arity() as u32;
                for combo in 0..3usize.pow(arity) {
                    let codes: Vec<&str> = (0..arity)
                        .rev()
                        .map(|k| places[combo / 3usize.pow(k) % 3])
                        .collect();
                    if codes.iter().filter(|c| **c != "m").count() > 1 {
                        continue;
                    }
                    for d in ["r0", "r1"] {
                        let name = fused.stencil_name();
                        names.push(format!("st_{name}_f_{}_{d}", codes.concat()));
                    }
                }
            }
            Machine { names }
        }

        fn run(&self, steps: &[Step], data: &mut [u8]) {
            let mut regs = [[0u32; 2]; 2];
            let op_of = |name: &str| {
                Op::BINARY
                    .iter()
                    .chain(Op::UNARY.iter())
                    .copied()
                    .find(|o| o.stencil_name() == name)
            };
            for step in steps {
                let name = &self.names[step.stencil.0 as usize];
                if let Some(op) = name.strip_prefix("st_pack4_") {
                    let (op, form) = op.split_once("_f").expect("st_pack4_<op>_f<form>");
                    run_pack(op, form, &mut regs, step, data);
                    continue;
                }
                let parts: Vec<&str> = name.split('_').collect();
                if let Some(r) = run_fused(&parts, &regs, step, data) {
                    regs[0][usize::from(parts[4] == "r1")] = r;
                    continue;
                }
                let cls = usize::from(parts[2] == "i");
                let ty = if cls == 0 {
                    ScalarType::Float
                } else {
                    ScalarType::Int
                };
                let mem = |data: &[u8]| step.slot.map(|s| crate::compile::read_bits(data, s));
                let fetch = |p: &str, regs: &[[u32; 2]; 2], data: &[u8]| match p {
                    "r0" => regs[cls][0],
                    "r1" => regs[cls][1],
                    "m2" => crate::compile::read_bits(data, step.slot2.expect("second slot")),
                    _ => mem(data).expect("memory operand needs a slot"),
                };
                if parts[1] == "store" {
                    let r = usize::from(parts[3] == "r1");
                    let o = step.slot.unwrap() as usize;
                    data[o..o + 4].copy_from_slice(&regs[cls][r].to_le_bytes());
                    continue;
                }
                let dst = usize::from(parts[4] == "r1");
                let srcs = parts[3];
                let split = |s: &str| -> Vec<String> {
                    let mut out = Vec::new();
                    let mut rest = s;
                    while !rest.is_empty() {
                        let n = if rest.starts_with('m') { 1 } else { 2 };
                        out.push(rest[..n].to_string());
                        rest = &rest[n..];
                    }
                    out
                };
                let mut srcs = split(srcs);
                if srcs.len() == 2 && srcs[0] == "m" && srcs[1] == "m" {
                    srcs[1] = "m2".to_string();
                }
                let (result, result_cls) = if parts[1] == "select" {
                    let cond = regs[1][usize::from(srcs[0] == "r1")];
                    let (x, y) = (fetch(&srcs[1], &regs, data), fetch(&srcs[2], &regs, data));
                    (fold::select(cond, x, y), 0)
                } else if parts[1] == "copy" {
                    (fetch(&srcs[0], &regs, data), cls)
                } else {
                    let op = op_of(parts[1]).unwrap();
                    if srcs.len() == 1 {
                        let r = unary_or_math(op, ty, fetch(&srcs[0], &regs, data));
                        (r, if op == Op::IntToFloat { 0 } else { cls })
                    } else {
                        let (x, y) = (fetch(&srcs[0], &regs, data), fetch(&srcs[1], &regs, data));
                        let r = binary_or_math(op, ty, x, y);
                        (r, if op.is_comparison() { 1 } else { cls })
                    }
                };
                regs[result_cls][dst] = result;
            }
        }
    }

    /// The math functions the machine stands in for (their bits exist only as stencil
    /// code): any function of the bits serves to check where values go.
    fn math() -> Vec<Op> {
        Op::UNARY
            .into_iter()
            .filter(|&op| op != Op::IntToFloat && fold::unary(op, ScalarType::Float, 0).is_none())
            .collect()
    }

    fn unary_or_math(op: Op, ty: ScalarType, x: u32) -> u32 {
        fold::unary(op, ty, x).unwrap_or_else(|| {
            let k = math().iter().position(|&m| m == op).expect("a math op") as u32;
            x.rotate_left(k + 1) ^ 0x5a5a_0000
        })
    }

    /// What a packed step's registers hold after it where the program must not look:
    /// a value no computation gives, so a schedule that reads one fails.
    const CLOBBERED: u32 = 0x7fb0_0dd1;

    /// `st_pack4_<op>_f<form>`: lane `k` reads the slot at `args[k]` (all four before any
    /// result is written, as the helper gathers them), or float register 0 / 1 (`_r0`,
    /// `_r1`, `_r0r1`), or the four consecutive slots at `args[0]` (`_v`, `_vx`); the
    /// second operands of atan2 and pow come from the result block, or the four slots at
    /// `slot2` (`_v`, `_vy`). The results go to the block at `slot` (the cosines of
    /// `sincos` to the block at `slot2`). Every register is clobbered, except that float
    /// register 0 holds lane 0's result, or, of `sincos`, registers 0 and 1 the results
    /// its name's last suffix keeps (`_c0c1`: lane 0's and lane 1's cosines; none: lane
    /// 0's sine and cosine).
    fn run_pack(op: &str, form: &str, regs: &mut [[u32; 2]; 2], step: &Step, data: &mut [u8]) {
        let kept = ["_s0s1", "_c0c1", "_s0c1", "_s1c0", "_s1c1"]
            .into_iter()
            .find(|k| form.ends_with(k));
        let form = form.strip_suffix(kept.unwrap_or("")).unwrap_or(form);
        let by_value = match form {
            "_r0" => vec![regs[0][0]],
            "_r1" => vec![regs[0][1]],
            "_r0r1" => vec![regs[0][0], regs[0][1]],
            _ => vec![],
        };
        let read = |at: u32| crate::compile::read_bits(data, at);
        let xs: Vec<u32> = (0..4)
            .map(|k| match (by_value.get(k), form) {
                (Some(&v), _) => v,
                (None, "_v" | "_vx") => read(step.args[0] + 4 * k as u32),
                (None, _) => read(step.args[k]),
            })
            .collect();
        let block = |b: Option<u32>, k: usize| b.expect("a block") + 4 * k as u32;
        let y = |k: usize| match form {
            "_v" | "_vy" => read(block(step.slot2, k)),
            _ => read(block(step.slot, k)),
        };
        let binary = [Op::Atan2, Op::Pow]
            .into_iter()
            .find(|b| b.stencil_name() == op);
        let ys: Vec<u32> = (0..4).map(|k| binary.map_or(0, |_| y(k))).collect();
        let mut first = 0;
        let mut results = [[0u32; 2]; 2]; // [sine or result, cosine][lane 0 or 1]
        for (k, &x) in xs.iter().enumerate() {
            let (r, cos) = if op == "sincos" {
                let c = unary_or_math(Op::Cos, ScalarType::Float, x);
                (unary_or_math(Op::Sin, ScalarType::Float, x), Some(c))
            } else if let Some(b) = binary {
                (binary_math(b, x, ys[k]), None)
            } else {
                let op = math().into_iter().find(|m| m.stencil_name() == op).unwrap();
                (unary_or_math(op, ScalarType::Float, x), None)
            };
            if k == 0 {
                first = r;
            }
            if k < 2 {
                results[0][k] = r;
                results[1][k] = cos.unwrap_or(CLOBBERED);
            }
            let o = block(step.slot, k) as usize;
            data[o..o + 4].copy_from_slice(&r.to_le_bytes());
            if let Some(c) = cos {
                let o = block(step.slot2, k) as usize;
                data[o..o + 4].copy_from_slice(&c.to_le_bytes());
            }
        }
        *regs = [[first, CLOBBERED], [CLOBBERED, CLOBBERED]];
        if op == "sincos" {
            let pick =
                |name: &[u8]| results[usize::from(name[0] == b'c')][usize::from(name[1] - b'0')];
            let kept = kept.unwrap_or("_s0c0").as_bytes();
            regs[0] = [pick(&kept[1..3]), pick(&kept[3..5])];
        }
    }

    /// A multiply-add superinstruction `st_<fused>_f_<places>_<dst>`: operand `k` from
    /// its register or the slot at `args[k]`, each operation rounded as its own.
    fn run_fused(parts: &[&str], regs: &[[u32; 2]; 2], step: &Step, data: &[u8]) -> Option<u32> {
        let fused = crate::graph::Fused::ALL
            .into_iter()
            .find(|f| f.stencil_name() == parts[1])?;
        let mut rest = parts[3];
        let mut v = Vec::new();
        while !rest.is_empty() {
            let (code, tail) = rest.split_at(if rest.starts_with('m') { 1 } else { 2 });
            v.push(match code {
                "r0" => regs[0][0],
                "r1" => regs[0][1],
                _ => crate::compile::read_bits(data, step.args[v.len()]),
            });
            rest = tail;
        }
        let f = |op, x, y| fold::binary(op, ScalarType::Float, x, y).unwrap();
        use crate::graph::Fused as F;
        Some(match fused {
            F::Mul2Add => f(Op::Add, f(Op::Mul, v[0], v[1]), f(Op::Mul, v[2], v[3])),
            F::Mul2Sub => f(Op::Sub, f(Op::Mul, v[0], v[1]), f(Op::Mul, v[2], v[3])),
            F::AddMul => f(Op::Add, v[0], f(Op::Mul, v[1], v[2])),
            F::SubMul => f(Op::Sub, v[0], f(Op::Mul, v[1], v[2])),
            F::MulSub => f(Op::Sub, f(Op::Mul, v[0], v[1]), v[2]),
        })
    }

    /// atan2 and pow on the machine: any function of both operands' bits.
    fn binary_math(op: Op, x: u32, y: u32) -> u32 {
        x.rotate_left(3) ^ y.rotate_left(if op == Op::Pow { 7 } else { 11 }) ^ 0x0a5a_5000
    }

    fn binary_or_math(op: Op, ty: ScalarType, x: u32, y: u32) -> u32 {
        fold::binary(op, ty, x, y).unwrap_or_else(|| binary_math(op, x, y))
    }

    fn evaluate(arena: &Arena) -> Vec<u32> {
        let mut v = vec![0u32; arena.nodes.len()];
        for (i, n) in arena.nodes.iter().enumerate() {
            v[i] = match n.kind {
                Kind::Const(b) | Kind::Input { init: b } => b,
                Kind::Unary(op, a) => unary_or_math(op, arena.nodes[a as usize].ty, v[a as usize]),
                Kind::Binary(op, a, b) => {
                    binary_or_math(op, arena.nodes[a as usize].ty, v[a as usize], v[b as usize])
                }
                Kind::Select(c, a, b) => fold::select(v[c as usize], v[a as usize], v[b as usize]),
                Kind::Array(_) | Kind::Loop(_) | Kind::LoopOut(..) => {
                    unreachable!("these tests trace no arrays or loops")
                }
            };
        }
        v
    }

    /// Deterministic xorshift, so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_programs_compute_what_the_graph_says() {
        let machine = Machine::new();
        let table = machine.table();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let float_ops = [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Lt, Op::Eq];
        let int_ops = [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::FloorDiv,
            Op::Mod,
            Op::Xor,
            Op::Shr,
            Op::Ge,
        ];
        let mut packed = 0;
        for round in 0..300 {
            // zeros among the inputs, so conditions of selects go both ways
            let mut pool: Vec<Value> = (0..4)
                .map(|k| Value::input(ScalarType::Float, ((k as f32 - 1.0) * 1.5).to_bits()))
                .chain((0..3).map(|k| Value::input(ScalarType::Int, (k * 7 - 7) as u32)))
                .collect();
            for _ in 0..(5 + rng.pick(40)) {
                let a = pool[rng.pick(pool.len())].clone();
                let b = pool[rng.pick(pool.len())].clone();
                let v = match rng.pick(9) {
                    0 => trace::unary(Op::Neg, &a),
                    // math calls, packed when independent ones meet (crate::pack)
                    7 | 8 if a.ty() == ScalarType::Float => {
                        let math = math();
                        trace::unary(math[rng.pick(math.len())], &a)
                    }
                    6 => {
                        let c = pool[rng.pick(pool.len())].clone();
                        trace::select(&c, &a, &b)
                    }
                    1 => trace::unary(Op::Sqrt, &trace::unary(Op::Abs, &a).unwrap()),
                    2 | 3 if a.ty() == ScalarType::Float || b.ty() == ScalarType::Float => {
                        trace::binary(float_ops[rng.pick(float_ops.len())], &a, &b)
                    }
                    _ => {
                        let op = int_ops[rng.pick(int_ops.len())];
                        if a.ty() == ScalarType::Float || b.ty() == ScalarType::Float {
                            trace::binary(Op::Mul, &a, &b)
                        } else {
                            trace::binary(op, &a, &b)
                        }
                    }
                };
                pool.push(v.unwrap());
            }
            let outputs: Vec<Value> = (0..1 + rng.pick(8))
                .map(|_| pool[7 + rng.pick(pool.len() - 7)].clone())
                .collect();
            packed += check_program(&machine, &table, &outputs, round).len();
        }
        assert!(packed > 0, "no packed step in 300 programs");
    }

    /// The multiply-add steps (crate::muladd) of the schedule of `outputs`.
    fn fused_steps(machine: &Machine, outputs: &[Value]) -> usize {
        let sched = schedule(&build_arena(outputs), &machine.table()).unwrap();
        sched
            .steps
            .iter()
            .filter(|s| {
                let name = &machine.names[s.stencil.0 as usize];
                crate::graph::Fused::ALL
                    .iter()
                    .any(|f| name.starts_with(&format!("st_{}_", f.stencil_name())))
            })
            .count()
    }

    /// Runs the schedule of `outputs` on the machine and compares every output with
    /// evaluating the arena; returns the number of packed steps.
    fn check_program(
        machine: &Machine,
        table: &StencilTable,
        outputs: &[Value],
        round: usize,
    ) -> Vec<String> {
        let arena = build_arena(outputs);
        let expected = evaluate(&arena);
        let sched = schedule(&arena, table).unwrap();
        let mut data = sched.data.clone();
        machine.run(&sched.steps, &mut data);
        for &o in &arena.outputs {
            let got = crate::compile::read_bits(&data, sched.slot[o as usize]);
            let want = expected[o as usize];
            let same = got == want
                || (arena.nodes[o as usize].ty == ScalarType::Float
                    && f32::from_bits(got).is_nan()
                    && f32::from_bits(want).is_nan());
            if !same {
                for (i, n) in arena.nodes.iter().enumerate() {
                    eprintln!("node {i}: {:?} slot {}", n.kind, sched.slot[i] as i64);
                }
                for st in &sched.steps {
                    eprintln!(
                        "{} slot {:?} slot2 {:?} args {:?}",
                        machine.names[st.stencil.0 as usize], st.slot, st.slot2, st.args
                    );
                }
            }
            assert!(
                same,
                "round {round}: output {o} got {got:#x}, want {want:#x}"
            );
        }
        sched
            .steps
            .iter()
            .map(|s| machine.names[s.stencil.0 as usize].clone())
            .filter(|name| name.starts_with("st_pack4_"))
            .collect()
    }

    /// `inputs` float inputs `k * step + from`, then the constants `first` and `first + 1`.
    fn float_leaves(inputs: usize, step: f32, from: f32, first: f32) -> Vec<Value> {
        let input = |k: usize| Value::input(ScalarType::Float, (k as f32 * step + from).to_bits());
        let constant = |k: usize| Value::constant(ScalarType::Float, (k as f32 + first).to_bits());
        (0..inputs).map(input).chain((0..2).map(constant)).collect()
    }

    #[test]
    fn random_sums_of_products_fuse_and_compute_what_the_graph_says() {
        // products read once by a sum (crate::muladd), their factors in memory or just
        // computed (registers), some read again, some sums kept as outputs; the machine
        // has the forms with at most one register operand, so others fall back
        let machine = Machine::new();
        let table = machine.table();
        let mut rng = Rng(0x6a09_e667_f3bc_c908);
        let mut fused = 0;
        for round in 0..300 {
            let mut pool = float_leaves(5, 1.25, -2.5, 0.5);
            let fresh = pool.len();
            for _ in 0..(4 + rng.pick(40)) {
                let mut pick = || pool[rng.pick(pool.len())].clone();
                let (a, b, c, d) = (pick(), pick(), pick(), pick());
                let mul = |x: &Value, y: &Value| trace::binary(Op::Mul, x, y).unwrap();
                let sum = [Op::Add, Op::Sub][rng.pick(2)];
                let v = match rng.pick(6) {
                    0 | 1 => trace::binary(sum, &mul(&a, &b), &mul(&c, &d)),
                    2 => trace::binary(sum, &a, &mul(&b, &c)),
                    3 => trace::binary(sum, &mul(&a, &b), &c),
                    4 => trace::binary(sum, &a, &b),
                    _ => trace::unary(Op::Neg, &a),
                };
                pool.push(v.unwrap());
            }
            let outputs: Vec<Value> = (0..1 + rng.pick(6))
                .map(|_| pool[fresh + rng.pick(pool.len() - fresh)].clone())
                .collect();
            check_program(&machine, &table, &outputs, round);
            fused += fused_steps(&machine, &outputs);
        }
        assert!(
            fused >= 300,
            "only {fused} multiply-add steps in 300 programs"
        );
    }

    #[test]
    fn random_math_programs_pack_and_compute_what_the_graph_says() {
        // few math functions and many calls, so independent calls of one function meet
        // (crate::pack): operands computed or not, read again or not, inputs and
        // constants (read as ranges), sin and cos pairs, atan2 and pow, calls of calls,
        // and int conditions alive across packs (which clobber every register)
        let machine = Machine::new();
        let table = machine.table();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let math = [Op::Tanh, Op::Sin, Op::Cos];
        let mut packed = Vec::new();
        for round in 0..1200 {
            let mut pool = float_leaves(6, 0.75, -2.0, 1.5);
            let fresh = pool.len();
            for _ in 0..(4 + rng.pick(60)) {
                let a = pool[rng.pick(pool.len())].clone();
                let b = pool[rng.pick(pool.len())].clone();
                let v = match rng.pick(10) {
                    0..=2 => trace::unary(math[rng.pick(math.len())], &a),
                    8 | 9 => {
                        // sin and cos of one operand: a lane of the fused step, whose
                        // results later nodes read from its registers or its slots
                        if let Ok(sin) = trace::unary(Op::Sin, &a) {
                            pool.push(sin);
                        }
                        trace::unary(Op::Cos, &a)
                    }
                    3 => trace::binary(Op::Add, &a, &b),
                    4 => trace::binary(Op::Mul, &a, &b),
                    5 => trace::binary([Op::Pow, Op::Atan2][rng.pick(2)], &a, &b),
                    6 => {
                        // a fresh input: lanes of its own, so ranges form
                        let x = Value::input(ScalarType::Float, (rng.pick(9) as f32).to_bits());
                        let y = Value::input(ScalarType::Float, (rng.pick(9) as f32).to_bits());
                        match rng.pick(3) {
                            0 => trace::unary(math[rng.pick(math.len())], &x),
                            1 => trace::binary(Op::Pow, &x, &y),
                            _ => trace::binary(Op::Atan2, &x, &b),
                        }
                    }
                    _ => {
                        let c = trace::binary(Op::Lt, &a, &b).unwrap();
                        trace::select(&c, &b, &a)
                    }
                };
                let Ok(v) = v else { continue };
                pool.push(v);
            }
            if pool.len() == fresh {
                continue;
            }
            let outputs: Vec<Value> = (0..1 + rng.pick(12))
                .map(|_| pool[fresh + rng.pick(pool.len() - fresh)].clone())
                .collect();
            packed.extend(check_program(&machine, &table, &outputs, round));
        }
        assert!(
            packed.len() >= 600,
            "only {} packed steps in 1200 programs",
            packed.len()
        );
        // every form of the stencils (schedule_packs.rs): operands by value, in ranges,
        // from their holes
        let unary = |n: &&String| !n.contains("pow") && !n.contains("atan2");
        for form in ["_r0", "_r1", "_r0r1", "_v"] {
            let n = packed
                .iter()
                .filter(unary)
                .filter(|n| n.ends_with(form))
                .count();
            assert!(n >= 5, "{n} unary packed steps in form {form}: {packed:?}");
        }
        for form in ["_f", "_vx", "_vy", "_v"] {
            let n = packed
                .iter()
                .filter(|n| !unary(n))
                .filter(|n| n.ends_with(form))
                .count();
            assert!(n >= 3, "{n} binary packed steps in form {form}: {packed:?}");
        }
        // every pair of results a sin/cos step keeps in registers (crate::pack_outputs),
        // read from there or (after the registers were reused, or across a later
        // pack) from their slots
        for kept in ["_s0s1", "_c0c1", "_s0c1", "_s1c0", "_s1c1"] {
            let n = packed.iter().filter(|n| n.ends_with(kept)).count();
            assert!(
                n >= 5,
                "{n} sin/cos packed steps keeping {kept}: {packed:?}"
            );
        }
        let holes = packed
            .iter()
            .filter(unary)
            .filter(|n| n.ends_with("_f"))
            .count();
        assert!(
            holes >= 5,
            "{holes} unary packed steps reading every lane from its hole"
        );
    }
}
