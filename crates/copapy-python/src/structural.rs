//! Finding a compiled value by its structure, for `Target.read_value`.
//!
//! Copapy's graph has structural identity: `tg.read_value(a + 1)` with a freshly traced
//! `a + 1` reads what `tg.compile(a + 1)` computed. Our nodes are distinct objects (equal
//! nodes are only merged at compile time), so a value that is not found by node identity
//! is looked up by a structural hash and then confirmed by a structural comparison.
//! Inputs are compared by identity (two `cp.value(1.0)` are two variables), constants by
//! type and bits, operations by operation, type and operands (either operand order for
//! commutative operations, as the optimiser merges them).
//!
//! The index is built on the first lookup that needs it, so compiling and reading by
//! identity cost nothing extra.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use copapy_compiler::array::ArrayOp;
use copapy_compiler::graph::NodeKind;
use copapy_compiler::Value;

/// Structural hashes of compiled values, for lookups of structurally equal values.
pub struct StructuralIndex {
    /// Hash of every node reachable from an indexed value, by node identity. The indexed
    /// values keep these nodes alive, so the identities stay valid.
    memo: FxHashMap<usize, u64>,
    /// Indexed values by hash (collisions are kept side by side).
    by_hash: FxHashMap<u64, Vec<Value>>,
}

impl StructuralIndex {
    /// Indexes `values`: each must stay alive as long as the index (the caller keeps them).
    pub fn new<'a>(values: impl IntoIterator<Item = &'a Value>) -> StructuralIndex {
        let mut index = StructuralIndex {
            memo: FxHashMap::default(),
            by_hash: FxHashMap::default(),
        };
        for v in values {
            let h = structural_hash(v, &mut index.memo);
            let same = index.by_hash.entry(h).or_default();
            if !same.iter().any(|w| w.ptr_eq(v)) {
                same.push(v.clone());
            }
        }
        index
    }

    /// An indexed value structurally equal to `v`, if there is one.
    pub fn find(&self, v: &Value) -> Option<&Value> {
        // the query's own nodes are hashed in a scratch memo seeded lazily from ours
        let mut scratch = FxHashMap::default();
        let h = hash_with(v, &self.memo, &mut scratch);
        let hash = |n: &Value| {
            let id = n.id();
            self.memo.get(&id).or_else(|| scratch.get(&id)).copied()
        };
        self.by_hash
            .get(&h)?
            .iter()
            .find(|w| structurally_equal(v, w, |n| hash(n).expect("both graphs are hashed")))
    }
}

/// The hash of `v` from the hashes of its operands.
fn node_hash(v: &Value, operand_hash: impl Fn(&Value) -> u64) -> u64 {
    let mut h = FxHasher::default();
    std::mem::discriminant(&v.ty()).hash(&mut h);
    match v.kind() {
        NodeKind::Const(bits) => (0u8, bits).hash(&mut h),
        NodeKind::Input { .. } => (1u8, v.id()).hash(&mut h),
        NodeKind::Unary(op, a) => (2u8, op, operand_hash(a)).hash(&mut h),
        NodeKind::Binary(op, a, b) => {
            let (x, y) = (operand_hash(a), operand_hash(b));
            let (x, y) = if op.is_commutative() && y < x {
                (y, x)
            } else {
                (x, y)
            };
            (3u8, op, x, y).hash(&mut h);
        }
        NodeKind::Select(c, a, b) => {
            (4u8, operand_hash(c), operand_hash(a), operand_hash(b)).hash(&mut h)
        }
        // array data is an input: equal only by identity
        NodeKind::Array(n) if matches!(n.op, ArrayOp::Data(_)) => (1u8, v.id()).hash(&mut h),
        NodeKind::Array(n) => {
            (5u8, &n.op, n.len).hash(&mut h);
            n.args.iter().for_each(|a| operand_hash(a).hash(&mut h));
        }
        // a loop's output is equal only to the same output of the same loop
        NodeKind::Loop(l, k) => (6u8, std::sync::Arc::as_ptr(l) as usize, k).hash(&mut h),
    }
    h.finish()
}

/// Hashes `root` and every node below it into `memo` (iteratively: graphs can be deep).
fn structural_hash(root: &Value, memo: &mut FxHashMap<usize, u64>) -> u64 {
    hash_with(root, &FxHashMap::default(), memo)
}

/// Like [`structural_hash`], first consulting `known` (hashes computed earlier).
fn hash_with(root: &Value, known: &FxHashMap<usize, u64>, memo: &mut FxHashMap<usize, u64>) -> u64 {
    let lookup = |memo: &FxHashMap<usize, u64>, v: &Value| {
        known.get(&v.id()).or_else(|| memo.get(&v.id())).copied()
    };
    let mut stack: Vec<(Value, bool)> = vec![(root.clone(), false)];
    while let Some((v, expanded)) = stack.pop() {
        if lookup(memo, &v).is_some() {
            continue;
        }
        if expanded {
            let h = node_hash(&v, |a| lookup(memo, a).expect("operands are hashed first"));
            memo.insert(v.id(), h);
            continue;
        }
        stack.push((v.clone(), true));
        for a in v.operands() {
            if lookup(memo, a).is_none() {
                stack.push((a.clone(), false));
            }
        }
    }
    lookup(memo, root).expect("the root is hashed last")
}

/// Whether `a` and `b` compute the same thing by the rules in the module documentation.
/// `hash` gives the structural hash of every node below either: commutative operands are
/// compared in the order of their hashes (operands with equal hashes in either order).
fn structurally_equal(a: &Value, b: &Value, hash: impl Fn(&Value) -> u64) -> bool {
    let ordered = |x: &Value, y: &Value| -> (Value, Value) {
        if hash(y) < hash(x) {
            (y.clone(), x.clone())
        } else {
            (x.clone(), y.clone())
        }
    };
    let mut seen: FxHashMap<(usize, usize), ()> = FxHashMap::default();
    let mut work: Vec<(Value, Value)> = vec![(a.clone(), b.clone())];
    while let Some((x, y)) = work.pop() {
        if x.ptr_eq(&y) || seen.insert((x.id(), y.id()), ()).is_some() {
            continue;
        }
        if x.ty() != y.ty() {
            return false;
        }
        match (x.kind(), y.kind()) {
            (NodeKind::Const(p), NodeKind::Const(q)) if p == q => {}
            (NodeKind::Unary(o, p), NodeKind::Unary(q_op, q)) if o == q_op => {
                work.push((p.clone(), q.clone()));
            }
            (NodeKind::Binary(o, p1, p2), NodeKind::Binary(q_op, q1, q2)) if o == q_op => {
                let ((p1, p2), (q1, q2)) = if o.is_commutative() {
                    (ordered(p1, p2), ordered(q1, q2))
                } else {
                    ((p1.clone(), p2.clone()), (q1.clone(), q2.clone()))
                };
                work.push((p1, q1));
                work.push((p2, q2));
            }
            (NodeKind::Select(c, p1, p2), NodeKind::Select(d, q1, q2)) => {
                work.push((c.clone(), d.clone()));
                work.push((p1.clone(), q1.clone()));
                work.push((p2.clone(), q2.clone()));
            }
            (NodeKind::Array(p), NodeKind::Array(q))
                if !matches!(p.op, ArrayOp::Data(_))
                    && p.op == q.op
                    && p.len == q.len
                    && p.args.len() == q.args.len() =>
            {
                work.extend(p.args.iter().cloned().zip(q.args.iter().cloned()));
            }
            (NodeKind::Loop(p, j), NodeKind::Loop(q, k))
                if std::sync::Arc::ptr_eq(p, q) && j == k => {}
            // inputs (array data too) are equal only by identity, which ptr_eq checked
            _ => return false,
        }
    }
    true
}
