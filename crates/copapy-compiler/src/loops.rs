//! Fixed-trip-count loops (`cp.fori_loop`, `cp.scan`) whose machine code holds the body once.
//!
//! Tracing: the body is called once on placeholder inputs (the int counter and one per
//! carried value, [`placeholders`]); [`make_loop`] then cuts the traced body out of the
//! graph. Every node the body computed from the placeholders is copied into the loop's
//! own graph ([`LoopNode`]); every value it read that does not depend on them (made
//! before the loop, or from such values only) becomes a *capture*: computed once before
//! the loop, read by the body from its slot. The outer graph sees one
//! [`NodeKind::Loop`] node per carried value, whose operands are the initial carries and
//! the captured values.
//!
//! Code (`Scheduler::schedule_loop`), in this order:
//!
//! ```text
//! operands stored, registers flushed (the body starts with empty registers)
//! carry[k] = init[k]          one load and one store per carried value, every run
//! counter  = start
//! head:  body                 scheduled as a program of its own: its placeholders
//!                             live in the carried slots, the counter and the captures'
//!                             slots; its temporaries in slots of its own (the same
//!                             every iteration)
//!        carry[k] = next[k]   after all of the body, so each next value is computed
//!                             from this iteration's carries
//!        st_loop_i_mm         counter += 1; back to head unless counter == start + trips
//! ```
//!
//! After the loop the registers are empty and output `k` of the loop is the slot of
//! carry `k`. Data memory does not depend on the trip count; nested loops are loops in
//! a body. [`LoopSpan`]s record where each loop is, for the instruction bounds.

use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::array::ArrayOp;
use crate::graph::{ArrayNode, LoopNode, NodeKind, ScalarType, Value};
use crate::link::Step;
use crate::optimise::{build_arena, Arena, Kind, NodeId};
use crate::schedule::{schedule_onto, Scheduler};
use crate::select::{Class, MissingStencil, Place};
use crate::trace::TraceError;

pub use crate::schedule::LoopSpan;

/// Creation numbers of every placeholder made by [`placeholders`], so that a value
/// computed inside a body and used outside it is reported, not compiled with a
/// placeholder's zero.
fn registry() -> &'static Mutex<FxHashSet<u64>> {
    static SET: OnceLock<Mutex<FxHashSet<u64>>> = OnceLock::new();
    SET.get_or_init(|| Mutex::new(FxHashSet::default()))
}

/// A placeholder like `v`: an input of its type, or an array of its length and storage.
fn placeholder_like(v: &Value) -> Value {
    match crate::array::slots_of(v) {
        Some(slots) => Value::new(
            v.ty(),
            NodeKind::Array(Box::new(ArrayNode {
                op: ArrayOp::Data(vec![0; slots as usize]),
                args: Vec::new(),
                len: crate::array::len_of(v).unwrap_or(0),
                bytes: crate::array::is_bytes(v),
            })),
        ),
        None => Value::input(v.ty(), 0),
    }
}

/// The placeholders a body is traced on: the int counter, then one per initial carried
/// value, of its type (and length, for an array).
pub fn placeholders(inits: &[Value]) -> (Value, Vec<Value>) {
    let index = Value::input(ScalarType::Int, 0);
    let carries: Vec<Value> = inits.iter().map(placeholder_like).collect();
    let mut set = registry().lock().unwrap_or_else(|e| e.into_inner());
    set.insert(index.seq());
    set.extend(carries.iter().map(Value::seq));
    (index, carries)
}

/// Whether `v` is a counter or carry placeholder of a loop body.
pub fn is_placeholder(v: &Value) -> bool {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&v.seq())
}

/// Whether `v` was computed inside a loop body (depends on a body's placeholders).
pub fn inside_a_body(v: &Value) -> bool {
    let mut seen = FxHashSet::default();
    let mut stack = vec![v.clone()];
    while let Some(n) = stack.pop() {
        if !seen.insert(n.id()) {
            continue;
        }
        if is_placeholder(&n) {
            return true;
        }
        stack.extend(n.operands().into_iter().cloned());
    }
    false
}

fn error(message: String) -> TraceError {
    TraceError { message }
}

/// Copies the nodes of a graph that depend on given leaves, sharing the rest: a walk in
/// post-order that skips everything made before the oldest such leaf.
struct Copier {
    first: u64,
    /// Node -> its copy (depends on a leaf) or `None` (does not).
    status: FxHashMap<usize, Option<Value>>,
    /// Inner loops already copied (their outputs share one copy).
    loops: FxHashMap<usize, Arc<LoopNode>>,
}

impl Copier {
    fn new(first: u64) -> Copier {
        Copier {
            first,
            status: FxHashMap::default(),
            loops: FxHashMap::default(),
        }
    }

    /// Visits everything `root` depends on (iteratively: bodies can be deep). `start`
    /// gives the replacement of each leaf to follow; an operand that depends on none
    /// becomes `keep(operand)` in the copies.
    fn visit(
        &mut self,
        root: &Value,
        start: &dyn Fn(&Value) -> Option<Value>,
        keep: &mut dyn FnMut(&Value) -> Value,
    ) {
        let mut stack = vec![(root.clone(), false)];
        while let Some((v, expanded)) = stack.pop() {
            if self.status.contains_key(&v.id()) {
                continue;
            }
            if let Some(to) = start(&v) {
                self.status.insert(v.id(), Some(to));
                continue;
            }
            if v.seq() < self.first {
                self.status.insert(v.id(), None);
                continue;
            }
            if !expanded {
                stack.push((v.clone(), true));
                for o in v.operands() {
                    stack.push((o.clone(), false));
                }
                continue;
            }
            let status = &self.status;
            let variant = v
                .operands()
                .iter()
                .any(|o| matches!(status.get(&o.id()), Some(Some(_))));
            let copy = variant.then(|| {
                rebuild_with(
                    &v,
                    &mut |o| match status.get(&o.id()) {
                        Some(Some(c)) => c.clone(),
                        _ => keep(o),
                    },
                    &mut self.loops,
                )
            });
            self.status.insert(v.id(), copy);
        }
    }

    /// `v`'s copy, or `keep(v)` if it depends on no followed leaf (visited first).
    fn result(&self, v: &Value, keep: &mut dyn FnMut(&Value) -> Value) -> Value {
        match self.status.get(&v.id()) {
            Some(Some(c)) => c.clone(),
            _ => keep(v),
        }
    }
}

/// What a loop body reads that the loop does not change: each becomes a capture.
#[derive(Default)]
struct Captures {
    /// Captured outer node -> its placeholder in the body.
    captured: FxHashMap<usize, Value>,
    captures: Vec<Value>,
    outer: Vec<Value>,
}

impl Captures {
    /// The body's stand-in for invariant `v`: constants as they are, anything else a
    /// placeholder that the loop's operands fill in.
    fn capture(&mut self, v: &Value) -> Value {
        if v.const_bits().is_some() {
            return v.clone();
        }
        if let Some(p) = self.captured.get(&v.id()) {
            return p.clone();
        }
        let p = placeholder_like(v);
        self.captured.insert(v.id(), p.clone());
        self.captures.push(p.clone());
        self.outer.push(v.clone());
        p
    }
}

/// A copy of `v` (not a leaf) whose operands are `operand(each)`; the outputs of one
/// inner loop share one copy of it (`loops`, by the loop's address).
pub(crate) fn rebuild_with(
    v: &Value,
    operand: &mut dyn FnMut(&Value) -> Value,
    loops: &mut FxHashMap<usize, Arc<LoopNode>>,
) -> Value {
    let kind = match v.kind() {
        NodeKind::Unary(op, a) => NodeKind::Unary(*op, operand(a)),
        NodeKind::Binary(op, a, b) => NodeKind::Binary(*op, operand(a), operand(b)),
        NodeKind::Select(c, a, b) => NodeKind::Select(operand(c), operand(a), operand(b)),
        NodeKind::Array(n) => NodeKind::Array(Box::new(ArrayNode {
            op: n.op.clone(),
            args: n.args.iter().map(&mut *operand).collect(),
            len: n.len,
            bytes: n.bytes,
        })),
        NodeKind::Loop(l, k) => {
            let key = Arc::as_ptr(l) as usize;
            let inner = match loops.get(&key) {
                Some(inner) => inner.clone(),
                None => {
                    let operands = l.operands.iter().map(&mut *operand).collect();
                    let inner = Arc::new(LoopNode {
                        trips: l.trips,
                        start: l.start,
                        index: l.index.clone(),
                        carries: l.carries.clone(),
                        captures: l.captures.clone(),
                        nexts: l.nexts.clone(),
                        operands,
                    });
                    loops.insert(key, inner.clone());
                    inner
                }
            };
            NodeKind::Loop(inner, *k)
        }
        NodeKind::Const(_) | NodeKind::Input { .. } => unreachable!("leaves are never copied"),
    };
    Value::new(v.ty(), kind)
}

/// Which of `leaves` the graph below `roots` reads.
pub(crate) fn leaves_read(roots: &[Value], leaves: &[Value]) -> Vec<bool> {
    let first = leaves.iter().map(Value::seq).min().unwrap_or(u64::MAX);
    let mut seen = FxHashSet::default();
    let mut found = FxHashSet::default();
    let mut stack: Vec<&Value> = roots.iter().collect();
    while let Some(v) = stack.pop() {
        if v.seq() < first || !seen.insert(v.id()) {
            continue;
        }
        found.insert(v.id());
        stack.extend(v.operands());
    }
    leaves.iter().map(|l| found.contains(&l.id())).collect()
}

/// `roots` with each leaf `from` of `pairs` replaced by its `to`: the nodes that depend
/// on one are copied, the rest shared.
pub(crate) fn substitute(roots: &[Value], pairs: &[(Value, Value)]) -> Vec<Value> {
    // nothing made before the oldest replaced leaf can depend on it
    let first = pairs
        .iter()
        .map(|(from, _)| from.seq())
        .min()
        .unwrap_or(u64::MAX);
    let map: FxHashMap<usize, Value> = pairs
        .iter()
        .map(|(from, to)| (from.id(), to.clone()))
        .collect();
    let start = |v: &Value| map.get(&v.id()).cloned();
    let mut keep = |v: &Value| v.clone();
    let mut copier = Copier::new(first);
    for root in roots {
        copier.visit(root, &start, &mut keep);
    }
    roots.iter().map(|r| copier.result(r, &mut keep)).collect()
}

fn describe_shape(v: &Value) -> String {
    match crate::array::len_of(v) {
        Some(n) => format!("an array of {n} elements"),
        None => "a scalar".to_string(),
    }
}

/// The outputs of the loop that runs `nexts = body(index, carries)` `trips` times from
/// `inits`, the counter counting from `start`: one value per carry.
///
/// `index` and `carries` are the [`placeholders`] the body was traced on; `nexts` what
/// it returned. Carries are scalars; each next value has its carry's type.
pub fn make_loop(
    trips: u32,
    start: i32,
    index: &Value,
    carries: &[Value],
    inits: &[Value],
    nexts: &[Value],
) -> Result<Vec<Value>, TraceError> {
    if trips == 0 {
        return Err(error("a loop needs at least one trip".to_string()));
    }
    if start.checked_add_unsigned(trips).is_none() {
        return Err(error(format!(
            "the loop counter would overflow an int32: {start} + {trips} trips"
        )));
    }
    if carries.len() != inits.len() || carries.len() != nexts.len() {
        return Err(error(format!(
            "the loop has {} carried values but {} initial and {} next values",
            carries.len(),
            inits.len(),
            nexts.len()
        )));
    }
    for (k, ((c, i), n)) in carries.iter().zip(inits).zip(nexts).enumerate() {
        let shape = |v: &Value| (crate::array::len_of(v), crate::array::is_bytes(v));
        if shape(c) != shape(i) || shape(c) != shape(n) {
            return Err(error(format!(
                "carried value {k} changes its shape: the loop received {} and the body \
                 returned {}; return the same shape it received",
                describe_shape(i),
                describe_shape(n)
            )));
        }
        if crate::array::is_bytes(c) {
            return Err(error(format!(
                "carried value {k} is a byte array: carry it as an int array (cp.to_int)"
            )));
        }
        if c.ty() != i.ty() || c.ty() != n.ty() {
            return Err(error(format!(
                "carried value {k} starts as {} and the body returns {}: return the same \
                 type it received",
                i.ty().name(),
                n.ty().name()
            )));
        }
    }
    let first_seq = carries
        .iter()
        .map(Value::seq)
        .chain([index.seq()])
        .min()
        .expect("the counter is a placeholder");
    let followed: FxHashSet<usize> = carries.iter().chain([index]).map(Value::id).collect();
    let follow = |v: &Value| followed.contains(&v.id()).then(|| v.clone());
    let mut copier = Copier::new(first_seq);
    let mut captures = Captures::default();
    let mut body_nexts = Vec::with_capacity(nexts.len());
    for n in nexts {
        copier.visit(n, &follow, &mut |o| captures.capture(o));
        body_nexts.push(copier.result(n, &mut |o| captures.capture(o)));
    }
    // a call traced in the body but not reading a carry would otherwise be captured as
    // loop-invariant and run once instead of once per trip
    let traced_in_body: Vec<Value> = body_nexts.iter().chain(&captures.outer).cloned().collect();
    if !crate::imports::calls_traced_since(&traced_in_body, first_seq).is_empty() {
        return Err(error(
            "the loop body calls an imported function (cp.extern): calls inside a compiled \
             loop are not supported yet; call it before or after the loop, or unroll the \
             loop (unroll=True)"
                .to_string(),
        ));
    }
    let mut operands = inits.to_vec();
    operands.extend(captures.outer);
    let node = Arc::new(LoopNode {
        trips,
        start,
        index: index.clone(),
        carries: carries.to_vec(),
        captures: captures.captures,
        nexts: body_nexts,
        operands,
    });
    Ok((0..carries.len() as u32)
        .map(|k| Value::new(carries[k as usize].ty(), NodeKind::Loop(node.clone(), k)))
        .collect())
}

impl Scheduler<'_> {
    /// Stores every register value still needed that is not in memory, then forgets
    /// the registers: code before and after a loop head must agree on them, and a
    /// packed math step clobbers them (crate::schedule_packs).
    pub(crate) fn flush_registers(&mut self) -> Result<(), MissingStencil> {
        for class in [Class::Float, Class::Int] {
            for r in 0..2 {
                if let Some((v, _)) = self.regs[class as usize][r] {
                    if self.uses[v as usize] > 0 && !self.in_memory(v) {
                        let slot = self.slot_of(v);
                        let store = self.table.store(class, r)?;
                        self.emit(store, Some(slot));
                    }
                }
            }
        }
        self.regs = [[None; 2]; 2];
        Ok(())
    }

    /// Schedules loop node `n` (`Arena::loops[index]`), see the module documentation.
    pub(crate) fn schedule_loop(&mut self, n: NodeId, index: u32) -> Result<(), MissingStencil> {
        let arena = self.arena;
        let entry = &arena.loops[index as usize];
        let l = &entry.body;
        let mut operand_slots = Vec::with_capacity(entry.args.len());
        for &a in &entry.args {
            self.uses[a as usize] -= 1;
            operand_slots.push(self.store_if_needed(a)?);
        }
        self.flush_registers()?;
        let kinds: Vec<Carried> = l.carries.iter().map(Carried::of).collect();
        let mut carry_slots = Vec::with_capacity(l.carries.len());
        for (k, &kind) in kinds.iter().enumerate() {
            let at = kind.new_place(&mut self.data);
            copy_value(
                &mut self.steps,
                &mut self.data,
                self.table,
                kind,
                operand_slots[k],
                at,
            )?;
            carry_slots.push(at);
        }
        let counter = self.new_slot();
        let start = self.count_slot(l.start as u32);
        let end = self.count_slot(l.start.wrapping_add_unsigned(l.trips) as u32);
        copy_slot(&mut self.steps, self.table, Class::Int, start, counter)?;

        let head = self.steps.len();
        let body = build_arena(&l.nexts);
        let captured = &operand_slots[l.carries.len()..];
        let preset: Vec<(NodeId, u32)> = body
            .inputs
            .iter()
            .filter_map(|(v, id)| {
                let at = if v.ptr_eq(&l.index) {
                    counter
                } else if let Some(k) = l.carries.iter().position(|c| c.ptr_eq(v)) {
                    carry_slots[k]
                } else {
                    captured[l.captures.iter().position(|c| c.ptr_eq(v))?]
                };
                Some((*id, at))
            })
            .collect();
        let in_place = updated_in_place(&body, &preset, &carry_slots, &kinds);
        let steps = std::mem::take(&mut self.steps);
        let data = std::mem::take(&mut self.data);
        let sched = schedule_onto(&body, self.table, steps, data, &preset, &in_place)?;
        self.steps = sched.steps;
        self.data = sched.data;
        self.loops.extend(sched.loops);
        let nexts: Vec<u32> = body
            .outputs
            .iter()
            .map(|&o| sched.slot[o as usize])
            .collect();
        copy_into_states(
            &mut self.steps,
            &mut self.data,
            self.table,
            &kinds,
            &nexts,
            &carry_slots,
        )?;

        if self.steps.len() == head {
            // nothing changes from one trip to the next: one run is all of them
            self.loop_slots.insert(n, carry_slots);
            return Ok(());
        }
        let mut back = Step {
            slot2: Some(end),
            ..Step::new(self.table.loop_back()?, Some(counter))
        };
        back.args[0] = head as u32;
        self.steps.push(back);
        self.loops.push(LoopSpan {
            head,
            back: self.steps.len() - 1,
            trips: l.trips,
        });
        self.loop_slots.insert(n, carry_slots);
        Ok(())
    }

    /// A fresh zero-initialised 4-byte slot.
    fn new_slot(&mut self) -> u32 {
        let at = self.data.len() as u32;
        self.data.extend_from_slice(&[0; 4]);
        at
    }
}

/// The next carries that can be stored straight into their carried slot when computed,
/// saving the copy after the body: a scalar computed by the body (not a leaf), the next
/// value of one carry only, after which nothing reads that carry's old value (every
/// reader comes before it in the body's order, which is the order of the steps, and no
/// carry's next value is that old value).
fn updated_in_place(
    body: &Arena,
    preset: &[(NodeId, u32)],
    carry_slots: &[u32],
    kinds: &[Carried],
) -> Vec<(NodeId, u32)> {
    let mut last_read = vec![0 as NodeId; body.nodes.len()];
    for m in 0..body.nodes.len() as NodeId {
        body.for_each_operand(m, |a| last_read[a as usize] = last_read[a as usize].max(m));
    }
    let mut out = Vec::new();
    for (k, &o) in body.outputs.iter().enumerate() {
        let computed = matches!(
            body.nodes[o as usize].kind,
            Kind::Unary(..) | Kind::Binary(..) | Kind::Select(..)
        );
        let once = body.outputs.iter().filter(|&&p| p == o).count() == 1;
        let old = preset
            .iter()
            .find(|&&(_, at)| at == carry_slots[k])
            .map(|&(p, _)| p);
        // (another carry's next value being this carry's old one is a read after the body)
        let unread_after =
            old.is_none_or(|p| last_read[p as usize] <= o && !body.outputs.contains(&p));
        if computed && once && unread_after && matches!(kinds[k], Carried::Scalar(_)) {
            out.push((o, carry_slots[k]));
        }
    }
    out
}

/// Appends `data[dst] = data[src]` through register 0 of `class`.
pub(crate) fn copy_slot(
    steps: &mut Vec<Step>,
    table: &crate::select::StencilTable,
    class: Class,
    src: u32,
    dst: u32,
) -> Result<(), MissingStencil> {
    let load = table.copy(class, Place::Mem, 0)?;
    let store = table.store(class, 0)?;
    steps.push(Step::new(load, Some(src)));
    steps.push(Step::new(store, Some(dst)));
    Ok(())
}

/// What a loop carries (or a state update copies): a scalar of a register class, or an
/// array of that many elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Carried {
    Scalar(Class),
    Array(u32),
}

impl Carried {
    pub(crate) fn of(v: &Value) -> Carried {
        match crate::array::len_of(v) {
            Some(n) => Carried::Array(n),
            None => Carried::Scalar(Class::of(v.ty())),
        }
    }

    /// A fresh zeroed place for one: a 4-byte slot, or a 16-byte aligned range.
    fn new_place(self, data: &mut Vec<u8>) -> u32 {
        let (align, len) = match self {
            Carried::Scalar(_) => (4, 4),
            Carried::Array(n) => (16, 4 * n as usize),
        };
        let at = data.len().next_multiple_of(align);
        data.resize(at + len, 0);
        at as u32
    }
}

/// Appends `dst = src` for `what`: a load and a store, or one strided copy of the array.
fn copy_value(
    steps: &mut Vec<Step>,
    data: &mut Vec<u8>,
    table: &crate::select::StencilTable,
    what: Carried,
    src: u32,
    dst: u32,
) -> Result<(), MissingStencil> {
    let n = match what {
        Carried::Scalar(class) => return copy_slot(steps, table, class, src, dst),
        Carried::Array(n) => n,
    };
    // `st_arr_strided` with offset 0, one axis of n elements, stride 1, and its count
    let prm = Carried::Array(9).new_place(data);
    for (k, word) in [0, n, 1, 1, 1, 1, 0, 0, 0].into_iter().enumerate() {
        let at = prm as usize + 4 * k;
        data[at..at + 4].copy_from_slice(&word.to_le_bytes());
    }
    let count = Carried::Scalar(Class::Int).new_place(data);
    data[count as usize..count as usize + 4].copy_from_slice(&n.to_le_bytes());
    let mut args = [0u32; crate::stencil_db::ARG_HOLES];
    args[0] = dst;
    args[1] = src;
    args[2] = prm;
    args[crate::stencil_db::ARG_COUNT as usize] = count;
    steps.push(Step {
        args,
        ..Step::new(table.array("st_arr_strided")?, None)
    });
    Ok(())
}

/// Copies each `sources[k]` into `states[k]` (of kind `kinds[k]`) as if all at once:
/// a source that is another state's place is staged in a new place of `data` first, so
/// `{x: y, y: x}` swaps.
pub(crate) fn copy_into_states(
    steps: &mut Vec<Step>,
    data: &mut Vec<u8>,
    table: &crate::select::StencilTable,
    kinds: &[Carried],
    sources: &[u32],
    states: &[u32],
) -> Result<(), MissingStencil> {
    let mut sources = sources.to_vec();
    for k in 0..sources.len() {
        if states.contains(&sources[k]) && sources[k] != states[k] {
            let spare = kinds[k].new_place(data);
            copy_value(steps, data, table, kinds[k], sources[k], spare)?;
            sources[k] = spare;
        }
    }
    for k in 0..sources.len() {
        if sources[k] != states[k] {
            copy_value(steps, data, table, kinds[k], sources[k], states[k])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Op;
    use crate::trace::binary;

    fn f(x: f32) -> Value {
        Value::constant(ScalarType::Float, x.to_bits())
    }

    #[test]
    fn invariant_work_is_captured_once_and_the_body_keeps_the_rest() {
        let w = Value::input(ScalarType::Float, 0);
        let init = Value::input(ScalarType::Float, 0);
        let (index, carries) = placeholders(std::slice::from_ref(&init));
        // w * 2 is computed inside the body but reads nothing the loop changes
        let twice = binary(Op::Mul, &w, &f(2.0)).unwrap();
        let next = binary(Op::Mul, &carries[0], &twice).unwrap();
        let outs = make_loop(5, 0, &index, &carries, std::slice::from_ref(&init), &[next]).unwrap();
        let NodeKind::Loop(l, 0) = outs[0].kind() else {
            panic!("a loop output")
        };
        assert_eq!(l.captures.len(), 1);
        assert!(l.operands[1].ptr_eq(&twice));
        assert!(l.operands[0].ptr_eq(&init));
        // the body multiplies the carry by the capture's placeholder, a copy of its own
        let NodeKind::Binary(Op::Mul, a, b) = l.nexts[0].kind() else {
            panic!("the body's multiplication")
        };
        assert!(a.ptr_eq(&l.carries[0]) && b.ptr_eq(&l.captures[0]));
        assert!(is_placeholder(&l.carries[0]) && !is_placeholder(&w));
    }

    #[test]
    fn mismatched_loops_are_refused() {
        let init = Value::input(ScalarType::Float, 0);
        let (index, carries) = placeholders(std::slice::from_ref(&init));
        let as_int = Value::input(ScalarType::Int, 0);
        let err = make_loop(
            3,
            0,
            &index,
            &carries,
            std::slice::from_ref(&init),
            &[as_int],
        )
        .unwrap_err();
        assert!(err.message.contains("type"), "{}", err.message);
        let err = make_loop(
            0,
            0,
            &index,
            &carries,
            std::slice::from_ref(&init),
            &carries,
        )
        .unwrap_err();
        assert!(err.message.contains("at least one trip"));
        let err = make_loop(3, i32::MAX, &index, &carries, &[init], &carries).unwrap_err();
        assert!(err.message.contains("overflow"));
    }

    #[test]
    fn substitution_copies_only_what_depends_on_the_replaced_leaves() {
        let x = Value::input(ScalarType::Float, 0);
        let y = Value::input(ScalarType::Float, 0);
        let shared = binary(Op::Mul, &y, &y).unwrap();
        let root = binary(Op::Add, &x, &shared).unwrap();
        let z = Value::input(ScalarType::Float, 0);
        let out = substitute(&[root], &[(x.clone(), z.clone())]);
        let NodeKind::Binary(Op::Add, a, b) = out[0].kind() else {
            panic!("an addition")
        };
        assert!(a.ptr_eq(&z) && b.ptr_eq(&shared));
        assert_eq!(leaves_read(&out, &[x, y, z]), vec![false, true, true]);
    }
}
