//! Packing independent scalar math calls into SIMD lanes.
//!
//! A program of scalar values (an MLP's tanh, a vector of up to 64 elements, 256
//! independent `cp.sin` calls) calls one scalar math stencil per value, while the array
//! kernels already compute four lanes at a time on x86_64 and AArch64. This pass groups
//! up to four calls of one unary math function (or of `atan2` or `pow`) whose results
//! none of them needs (no call of the group depends on another, directly or through
//! other nodes) and the scheduler runs each group as one `st_pack4_<op>_f` stencil
//! (`stencils/gen_packs.py`): it reads each lane's operand where it lives
//! ([`crate::schedule_packs`]), writes the results to a 16-byte aligned block of four
//! data slots, and each result lives in its lane's slot. Each
//! lane runs the array kernel's vector body, the same operations as the scalar call, so
//! the results have the scalar call's bits. `sin` and `cos` of one operand (the pairs of
//! [`crate::sincos`]) pack as one lane of `st_pack4_sincos_f`, which writes the cosines
//! to a second block.
//!
//! The arena's order computes operands right before their users, so the calls of a group
//! are usually far apart with their users in between (an MLP adds each tanh into the
//! next layer's sums right away). [`plan`] therefore also gives the scheduler a new
//! evaluation order: it walks the arena order and, while a group is open, postpones
//! every node that depends on one of its calls; when the group is full (or [`WINDOW`]
//! nodes were walked, or [`POSTPONED`] postponed) the group's calls are placed together,
//! then the postponed nodes, which may form the next group; a group no second call joined
//! is undone (the walk goes back to where it opened), so a lone call changes nothing. The order stays topological: a postponed node
//! only waits for nodes before it, and the calls of a group depend on no postponed node.
//! Imported-function calls and loops close the open group first, so they keep their
//! order among themselves (`crate::imports`).
//!
//! Only targets whose stencil object has the packed stencils (x86_64 and AArch64) pack;
//! on the others [`PackTable::is_empty`] and the order is the arena's.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::array::ArrayOp;
use crate::graph::{NodeKind, Op, ScalarType};
use crate::optimise::{Arena, Kind, NodeId};
use crate::pack_kept::Kept;
use crate::stencil_db::StencilId;

/// Calls per packed stencil: four float lanes of SSE2 / NEON.
pub(crate) const LANES: usize = 4;
/// How many nodes a group may stay open for: bounds the work per group and how far
/// postponed nodes move (their operands stay alive meanwhile).
const WINDOW: usize = 512;
/// How many nodes a group may postpone: a long run of nodes computed from its calls is
/// a chain (each call needs the previous result), where no second call will come; a lone
/// call then costs a short walk back, not the whole window.
const POSTPONED: usize = 64;
/// The fused pair's stencil name.
const SINCOS: &str = "st_pack4_sincos_f";

/// What a group computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PackOp {
    /// One unary float function per lane (`st_pack4_<op>_f`).
    Unary(Op),
    /// One binary float function per lane (`st_pack4_atan2_f`, `st_pack4_pow_f`): the
    /// second operands come in the result block.
    Binary(Op),
    /// sin and cos of each lane's operand (`st_pack4_sincos_f`).
    SinCos,
}

impl PackOp {
    /// What its stencil without an output suffix keeps in registers.
    pub(crate) fn default_kept(self) -> Kept {
        match self {
            PackOp::SinCos => Kept::SINCOS[0].1,
            _ => Kept::LANE0,
        }
    }
}

/// One lane of a group: the operand(s) and the node(s) computed from it. For
/// [`PackOp::SinCos`], `node` is the sin and `cos` the cos of `operand`; for
/// [`PackOp::Binary`], `second` is the second operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lane {
    pub operand: NodeId,
    pub second: Option<NodeId>,
    pub node: NodeId,
    pub cos: Option<NodeId>,
}

impl Lane {
    /// The nodes of the lane (one, or the sin and the cos).
    fn nodes(&self) -> impl Iterator<Item = NodeId> {
        std::iter::once(self.node).chain(self.cos)
    }
}

/// Two to four calls computed by one packed stencil.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub op: PackOp,
    pub lanes: Vec<Lane>,
}

/// Which lanes of a unary or sincos packed stencil take their operand from a float
/// register instead of a hole (`stencils/gen_packs.py`, `UNARY_FORMS`): lane 0 from
/// register 0 or 1, or lane 0 from register 0 and lane 1 from register 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RegisterLanes {
    None,
    R0,
    R1,
    R0R1,
}

impl RegisterLanes {
    /// The form for the operands found in register 0 and register 1.
    pub(crate) fn of(in_r0: bool, in_r1: bool) -> RegisterLanes {
        match (in_r0, in_r1) {
            (true, true) => RegisterLanes::R0R1,
            (true, false) => RegisterLanes::R0,
            (false, true) => RegisterLanes::R1,
            (false, false) => RegisterLanes::None,
        }
    }

    /// How many lanes (the first ones) come from registers.
    pub(crate) fn count(self) -> usize {
        match self {
            RegisterLanes::None => 0,
            RegisterLanes::R0 | RegisterLanes::R1 => 1,
            RegisterLanes::R0R1 => 2,
        }
    }
}

/// How a packed stencil reads its lanes (`stencils/gen_packs.py`, `UNARY_FORMS` and
/// `BINARY_FORMS`): one hole per lane, with lanes 0 and 1 possibly from the float
/// registers, or all four operands (of one side of a binary call) with one 16-byte load
/// from a range of four consecutive slots that no step writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Form {
    Lanes(RegisterLanes),
    /// Which operands come from a range: the first (`x`, hole `cp_a0`) and, of atan2
    /// and pow, the second (`y`, hole `cp_mf2`; without it they come in the block).
    Ranges {
        x: bool,
        y: bool,
    },
}

impl Form {
    /// Every form a stencil object may have.
    const ALL: [Form; 7] = [
        Form::Lanes(RegisterLanes::None),
        Form::Lanes(RegisterLanes::R0),
        Form::Lanes(RegisterLanes::R1),
        Form::Lanes(RegisterLanes::R0R1),
        Form::Ranges { x: true, y: false },
        Form::Ranges { x: false, y: true },
        Form::Ranges { x: true, y: true },
    ];

    /// The stencil name's suffix for `op` (a unary stencil's range form is `_v`).
    fn suffix(self, op: PackOp) -> &'static str {
        match (self, op) {
            (Form::Lanes(RegisterLanes::None), _) | (Form::Ranges { x: false, y: false }, _) => "",
            (Form::Lanes(RegisterLanes::R0), _) => "_r0",
            (Form::Lanes(RegisterLanes::R1), _) => "_r1",
            (Form::Lanes(RegisterLanes::R0R1), _) => "_r0r1",
            (Form::Ranges { x: true, y: false }, PackOp::Binary(_)) => "_vx",
            (Form::Ranges { x: false, y: true }, PackOp::Binary(_)) => "_vy",
            (Form::Ranges { .. }, _) => "_v",
        }
    }
}

/// The packed stencils of a stencil object, by operation and form.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackTable {
    unary: FxHashMap<Op, StencilId>,
    binary: FxHashMap<Op, StencilId>,
    sincos: Option<StencilId>,
    /// Every form of every packed stencil the object has, with the results it leaves
    /// in registers ([`crate::pack_outputs`]).
    forms: FxHashMap<(PackOp, Form, Kept), StencilId>,
}

impl PackTable {
    /// Looks up `st_pack4_<op>_f` for every unary and binary float op and
    /// `st_pack4_sincos_f`, each in every form (sin/cos also in every [`Kept`] form).
    pub(crate) fn new(lookup: impl Fn(&str) -> Option<StencilId>) -> PackTable {
        let base = |op: PackOp| match op {
            PackOp::Unary(op) | PackOp::Binary(op) => format!("st_pack4_{}_f", op.stencil_name()),
            PackOp::SinCos => SINCOS.to_string(),
        };
        let ops = Op::UNARY
            .iter()
            .map(|&op| PackOp::Unary(op))
            .chain(Op::BINARY.iter().map(|&op| PackOp::Binary(op)))
            .chain([PackOp::SinCos]);
        let mut table = PackTable::default();
        for op in ops {
            let kept: &[(&str, Kept)] = match op {
                PackOp::SinCos => &Kept::SINCOS,
                _ => &[("", Kept::LANE0)],
            };
            for (form, &(out, kept)) in Form::ALL
                .into_iter()
                .flat_map(|f| kept.iter().map(move |k| (f, k)))
            {
                let Some(id) = lookup(&format!("{}{}{out}", base(op), form.suffix(op))) else {
                    continue;
                };
                table.forms.insert((op, form, kept), id);
                if form == Form::Lanes(RegisterLanes::None) && out.is_empty() {
                    match op {
                        PackOp::Unary(o) => _ = table.unary.insert(o, id),
                        PackOp::Binary(o) => _ = table.binary.insert(o, id),
                        PackOp::SinCos => table.sincos = Some(id),
                    }
                }
            }
        }
        table
    }

    /// Whether the object has no packed stencil (targets without IEEE SIMD floats).
    pub(crate) fn is_empty(&self) -> bool {
        self.unary.is_empty() && self.binary.is_empty() && self.sincos.is_none()
    }

    /// The stencil of a group's operation in `form` leaving its default results in
    /// registers, if the object has it.
    pub(crate) fn stencil_in(&self, op: PackOp, form: Form) -> Option<StencilId> {
        self.stencil_kept(op, form, op.default_kept())
    }

    /// The stencil of a group's operation in `form` keeping `kept`, if the object has it.
    pub(crate) fn stencil_kept(&self, op: PackOp, form: Form, kept: Kept) -> Option<StencilId> {
        self.forms.get(&(op, form, kept)).copied()
    }
}

/// The result of [`plan`]: an evaluation order and the groups placed in it.
pub(crate) struct Packing {
    /// Every node of the arena once, operands before users, each group's nodes
    /// adjacent.
    pub order: Vec<NodeId>,
    pub groups: Vec<Group>,
    /// The group of each node that a group computes (`NO_GROUP` for the others).
    pub group_of: Vec<u32>,
}

pub(crate) const NO_GROUP: u32 = u32::MAX;

/// Where a group's lanes live in data memory ([`crate::schedule_packs`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocks {
    /// The results (the sines of a sin/cos group), and the operands the scheduler
    /// stores (a binary call's second ones without a range).
    pub lanes: u32,
    /// The cosines of a sin/cos group.
    pub cos: Option<u32>,
    /// Four consecutive slots no step writes holding the first operands (inputs,
    /// constants), read with one 16-byte load, when the group has them.
    pub x_range: Option<u32>,
    /// The same for the second operands of atan2 and pow.
    pub y_range: Option<u32>,
}

/// Nodes whose place among the others matters beyond data dependence: imported
/// function calls (trace order) and loops (which may call them).
fn is_barrier(arena: &Arena, n: NodeId) -> bool {
    match arena.nodes[n as usize].kind {
        Kind::Loop(_) => true,
        Kind::Array(i) => matches!(
            arena.arrays[i as usize].node.kind(),
            NodeKind::Array(a) if matches!(a.op, ArrayOp::Call { .. } | ArrayOp::Filled(_))
        ),
        _ => false,
    }
}

/// The walk over the nodes still to place: postponed nodes to walk again first, then
/// the arena's order from `next`.
#[derive(Clone, Default)]
struct Walk {
    replay: VecDeque<NodeId>,
    next: NodeId,
}

impl Walk {
    fn pop(&mut self, count: usize) -> Option<NodeId> {
        if let Some(n) = self.replay.pop_front() {
            return Some(n);
        }
        ((self.next as usize) < count).then(|| {
            self.next += 1;
            self.next - 1
        })
    }

    /// Walks `nodes` (in their order) before everything else.
    fn push_front(&mut self, nodes: Vec<NodeId>) {
        for n in nodes.into_iter().rev() {
            self.replay.push_front(n);
        }
    }
}

/// The group being filled while walking the order.
struct Open {
    op: PackOp,
    /// The node that opened the group.
    first: NodeId,
    lanes: Vec<Lane>,
    postponed: Vec<NodeId>,
    /// Nodes walked since the group opened.
    walked: usize,
    /// The order's length and the walk when the group opened: a group that gets no
    /// second call is undone to there, so a lone call changes nothing.
    mark: (usize, Walk),
}

struct Planner<'a> {
    arena: &'a Arena,
    table: &'a PackTable,
    partners: &'a FxHashMap<NodeId, NodeId>,
    /// Nodes that must keep their own slot (a loop body's placeholders and in-place
    /// carries): never packed.
    fixed: &'a dyn Fn(NodeId) -> bool,
    order: Vec<NodeId>,
    done: Vec<bool>,
    /// Calls that opened a group no other call joined: scheduled alone.
    alone: Vec<bool>,
    /// The open group's nodes and every node computed from them.
    tainted: Vec<bool>,
    tainted_list: Vec<NodeId>,
    groups: Vec<Group>,
    group_of: Vec<u32>,
    walk: Walk,
}

impl Planner<'_> {
    /// The group operation `n` can join, if it is a packable call.
    fn candidate(&self, n: NodeId) -> Option<(PackOp, Lane)> {
        let float = |m: NodeId| self.arena.nodes[m as usize].ty == ScalarType::Float;
        let usable = !(self.fixed)(n) && !self.alone[n as usize] && float(n);
        let (op, x) = match self.arena.nodes[n as usize].kind {
            Kind::Unary(op, x) if usable && float(x) => (op, x),
            Kind::Binary(op, x, y)
                if usable && float(x) && float(y) && self.table.binary.contains_key(&op) =>
            {
                let lane = Lane {
                    operand: x,
                    second: Some(y),
                    node: n,
                    cos: None,
                };
                return Some((PackOp::Binary(op), lane));
            }
            _ => return None,
        };
        if let Some(&p) = self.partners.get(&n) {
            // sin and cos of one operand: one lane of the fused stencil, or left to the
            // scalar fusion when its partner is placed already
            if self.table.sincos.is_none() || self.done[p as usize] || (self.fixed)(p) {
                return None;
            }
            let (sin, cos) = if op == Op::Sin { (n, p) } else { (p, n) };
            let lane = Lane {
                operand: x,
                second: None,
                node: sin,
                cos: Some(cos),
            };
            return Some((PackOp::SinCos, lane));
        }
        self.table.unary.get(&op)?;
        let lane = Lane {
            operand: x,
            second: None,
            node: n,
            cos: None,
        };
        Some((PackOp::Unary(op), lane))
    }

    fn emit(&mut self, n: NodeId) {
        self.done[n as usize] = true;
        self.order.push(n);
    }

    fn taint(&mut self, n: NodeId) {
        self.tainted[n as usize] = true;
        self.tainted_list.push(n);
    }

    fn open(&mut self, n: NodeId, op: PackOp, lane: Lane) -> Open {
        for m in lane.nodes() {
            self.taint(m);
        }
        Open {
            op,
            first: n,
            lanes: vec![lane],
            postponed: Vec::new(),
            walked: 0,
            mark: (self.order.len(), self.walk.clone()),
        }
    }

    /// Places the open group and walks its postponed nodes next; a group of one call is
    /// undone instead (the walk goes back to where it opened, the call stays alone).
    fn close(&mut self, open: Open) {
        for n in self.tainted_list.drain(..) {
            self.tainted[n as usize] = false;
        }
        if open.lanes.len() < 2 {
            let (len, walk) = open.mark;
            for &n in &self.order[len..] {
                self.done[n as usize] = false;
            }
            self.order.truncate(len);
            self.walk = walk;
            self.walk.replay.push_front(open.first);
            self.alone[open.first as usize] = true;
            return;
        }
        let g = self.groups.len() as u32;
        for lane in &open.lanes {
            for n in lane.nodes() {
                self.group_of[n as usize] = g;
                self.emit(n);
            }
        }
        self.groups.push(Group {
            op: open.op,
            lanes: open.lanes,
        });
        self.walk.push_front(open.postponed);
    }

    /// Walks node `n` with group `o` open; gives the group back while it stays open.
    fn step(&mut self, n: NodeId, mut o: Open) -> Option<Open> {
        if is_barrier(self.arena, n) {
            self.walk.replay.push_front(n);
            self.close(o);
            return None;
        }
        o.walked += 1;
        let mut depends = self.tainted[n as usize];
        self.arena
            .for_each_operand(n, |a| depends |= self.tainted[a as usize]);
        if depends {
            // computed from the group's calls (or the partner of one): after them
            self.taint(n);
            o.postponed.push(n);
        } else {
            match self.candidate(n) {
                Some((op, lane)) if op == o.op => {
                    for m in lane.nodes() {
                        self.taint(m);
                    }
                    o.lanes.push(lane);
                }
                _ => self.emit(n),
            }
        }
        if o.lanes.len() == LANES || o.walked >= WINDOW || o.postponed.len() >= POSTPONED {
            self.close(o);
            return None;
        }
        Some(o)
    }
}

/// Chooses the groups of `arena` and an evaluation order that places each group's
/// calls together; without packed stencils, the arena's order and no group.
pub(crate) fn plan(
    arena: &Arena,
    table: &PackTable,
    partners: &FxHashMap<NodeId, NodeId>,
    fixed: &dyn Fn(NodeId) -> bool,
) -> Packing {
    let count = arena.nodes.len();
    if table.is_empty() {
        return Packing {
            order: (0..count as NodeId).collect(),
            groups: Vec::new(),
            group_of: vec![NO_GROUP; count],
        };
    }
    let mut p = Planner {
        arena,
        table,
        partners,
        fixed,
        order: Vec::with_capacity(count),
        done: vec![false; count],
        alone: vec![false; count],
        tainted: vec![false; count],
        tainted_list: Vec::new(),
        groups: Vec::new(),
        group_of: vec![NO_GROUP; count],
        walk: Walk::default(),
    };
    let mut open: Option<Open> = None;
    loop {
        let Some(n) = p.walk.pop(count) else {
            match open.take() {
                // the end: place (or undo) the last group and walk on
                Some(o) => {
                    p.close(o);
                    continue;
                }
                None => break,
            }
        };
        if p.done[n as usize] {
            continue; // a partner placed with its group
        }
        open = match open.take() {
            Some(o) => p.step(n, o),
            None => match p.candidate(n) {
                Some((op, lane)) => Some(p.open(n, op, lane)),
                None => {
                    p.emit(n);
                    None
                }
            },
        };
    }
    debug_assert_eq!(p.order.len(), count, "every node placed once");
    Packing {
        order: p.order,
        groups: p.groups,
        group_of: p.group_of,
    }
}
