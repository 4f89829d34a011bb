//! Scheduling and register allocation: from the arena to a list of stencil steps.
//!
//! Stencils pass values in four physical registers: two for floats and two for ints,
//! called r0 and r1 in each class. Operands can also be read straight from data memory,
//! so most operations need no separate load. The scheduler walks the arena in order
//! (operands right before their users) and tracks which value each register holds:
//!
//! * an operand already in a register is used from there, never loaded again;
//! * a result goes to the register whose value is dead, or else already in memory, or
//!   else (after storing it) the one loaded longest ago;
//! * values live in memory only when they must: inputs, constants, outputs, and values
//!   spilled because a register was needed while they still had users.
//!
//! Every data slot is 4 bytes; the data image holds the initial value of inputs and
//! constants and zero for computed values.

use crate::graph::ScalarType;
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
}

const NO_SLOT: u32 = u32::MAX;

struct Scheduler<'a> {
    arena: &'a Arena,
    table: &'a StencilTable,
    steps: Vec<Step>,
    data: Vec<u8>,
    slot: Vec<u32>,
    /// Remaining reads of each node (outputs hold one extra, released at the end).
    uses: Vec<u32>,
    /// regs[class][r] = (node, step index when it arrived)
    regs: [[Option<(NodeId, usize)>; 2]; 2],
}

impl Scheduler<'_> {
    fn slot_of(&mut self, n: NodeId) -> u32 {
        let s = self.slot[n as usize];
        if s != NO_SLOT {
            return s;
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

    fn in_memory(&self, n: NodeId) -> bool {
        self.slot[n as usize] != NO_SLOT
    }

    fn place(&self, class: Class, n: NodeId) -> Place {
        let regs = &self.regs[class as usize];
        if regs[0].map(|(v, _)| v) == Some(n) {
            Place::R0
        } else if regs[1].map(|(v, _)| v) == Some(n) {
            Place::R1
        } else {
            Place::Mem
        }
    }

    fn emit(&mut self, stencil: crate::stencil_db::StencilId, slot: Option<u32>) {
        self.steps.push(crate::link::Step { stencil, slot });
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
        let r = if c0 != c1 {
            usize::from(c1 < c0)
        } else {
            // evict the value that has waited longest
            let age = |r: usize| self.regs[class as usize][r].map_or(0, |(_, t)| t);
            usize::from(age(1) < age(0))
        };
        if self.eviction_cost(class, r) == 2 {
            let (v, _) = self.regs[class as usize][r].expect("occupied");
            let slot = self.slot_of(v);
            let store = self.table.store(class, r)?;
            self.emit(store, Some(slot));
        }
        Ok(r)
    }

    fn set_reg(&mut self, class: Class, r: usize, n: NodeId) {
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
        match node.kind {
            Kind::Const(_) | Kind::Input { .. } => {
                // live in memory from the start
                self.slot_of(n);
                return Ok(());
            }
            Kind::Unary(op, x) => {
                let class = Class::of(self.arena.nodes[x as usize].ty);
                let px = self.place(class, x);
                self.uses[x as usize] -= 1;
                let slot = self.mem_slot(&[(px, x)]);
                let dst = self.claim(result_class)?;
                let stencil = self.table.unary(op, class, px, dst)?;
                self.emit(stencil, slot);
                self.set_reg(result_class, dst, n);
            }
            Kind::Binary(op, x, y) => {
                let class = Class::of(self.arena.nodes[x as usize].ty);
                let mut px = self.place(class, x);
                let mut py = self.place(class, y);
                if px == Place::Mem && py == Place::Mem {
                    // one operand must come from a register: load the left one
                    let r = self.claim(class)?;
                    let slot = self.slot[x as usize];
                    let load = self.table.copy(class, Place::Mem, r)?;
                    self.emit(load, Some(slot));
                    self.set_reg(class, r, x);
                    px = Place::reg(r);
                    if x == y {
                        py = px;
                    }
                }
                self.uses[x as usize] -= 1;
                self.uses[y as usize] -= 1;
                let slot = self.mem_slot(&[(px, x), (py, y)]);
                let dst = self.claim(result_class)?;
                let stencil = self.table.binary(op, class, px, py, dst)?;
                self.emit(stencil, slot);
                self.set_reg(result_class, dst, n);
            }
        }
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

/// Schedules every node of `arena` and stores every output to its slot.
pub fn schedule(arena: &Arena, table: &StencilTable) -> Result<Schedule, MissingStencil> {
    let count = arena.nodes.len();
    let mut uses = vec![0u32; count];
    for node in &arena.nodes {
        match node.kind {
            Kind::Unary(_, a) => uses[a as usize] += 1,
            Kind::Binary(_, a, b) => {
                uses[a as usize] += 1;
                uses[b as usize] += 1;
            }
            _ => {}
        }
    }
    let mut is_output = vec![false; count];
    for &o in &arena.outputs {
        is_output[o as usize] = true;
    }
    let mut s = Scheduler {
        arena,
        table,
        steps: Vec::with_capacity(count + count / 4),
        data: Vec::with_capacity(count * 4),
        slot: vec![NO_SLOT; count],
        uses,
        regs: [[None; 2]; 2],
    };
    for n in 0..count as NodeId {
        s.schedule_node(n, is_output[n as usize])?;
    }
    Ok(Schedule { steps: s.steps, data: s.data, slot: s.slot })
}

/// Size in bytes of one data slot of `ty` (all scalar types are 32-bit).
pub const fn slot_size(_ty: ScalarType) -> u32 {
    4
}
