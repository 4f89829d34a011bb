//! Reverse-mode differentiation as a graph transform (`cp.grad`).
//!
//! [`grad`] walks the traced graph below `y` once (iteratively: traced loops make graphs
//! hundreds of thousands of nodes deep), keeps only the float nodes on a path from `y` to
//! one of the `wrt` values, and propagates adjoints from `y` down in reverse topological
//! order. Every adjoint is built with [`crate::trace`], so the gradient is an ordinary
//! traced graph: constants fold, identities apply (`g * 1`, `x * 0`), equal subexpressions
//! merge when compiled, and it can itself be differentiated again or used in a later
//! `grad` call (gradient descent unrolled in a traced loop).
//!
//! The adjoint of a `wrt` value is the *total* derivative of `y` with respect to it: paths
//! that reach it through another `wrt` value count too (as Copapy and PyTorch do).
//!
//! Derivative rules, with `g` the adjoint of the result `r`:
//!
//! | operation | to `a` | to `b` |
//! | --- | --- | --- |
//! | `a + b`, `a - b` | `g` | `g`, `-g` |
//! | `a * b` | `g * b` | `g * a` |
//! | `a / b` | `g / b` | `-(g / b) * r` |
//! | `-a` | `-g` | |
//! | `abs(a)` | `g * float(sign(a))` (0 at 0: a subgradient) | |
//! | `sqrt(a)` | `g * (0.5 / r)` | |
//! | `sin(a)`, `cos(a)` | `g * cos(a)`, `-(g * sin(a))` | |
//! | `tan(a)` | `g * (1 + r * r)` | |
//! | `asin(a)`, `acos(a)` | `g / sqrt(1 - a * a)`, its negation | |
//! | `atan(a)` | `g / (1 + a * a)` | |
//! | `exp(a)`, `log(a)` | `g * r`, `g / a` | |
//! | `atan2(a, b)` | `(g / (a*a + b*b)) * b` | `-((g / (a*a + b*b)) * a)` |
//! | `pow(a, b)` | `g * (b * pow(a, b - 1))` | `g * (r * log(a))` |
//! | `a // b` (float) | 0 | 0 |
//! | `a % b` (float) | `g` | `-(g * (a // b))` |
//! | `minimum(a, b)` | `iif(a < b or a != a, g, 0)` | `iif(a < b or a != a, 0, g)` |
//! | `maximum(a, b)` | `iif(a > b or a != a, g, 0)` | `iif(a > b or a != a, 0, g)` |
//! | `iif(c, a, b)` | `iif(c, g, 0)` | `iif(c, 0, g)` (nothing to `c`) |
//!
//! Array nodes: a sum or dot product broadcasts `g`; `A @ B` sends `G Bᵀ` and `Aᵀ G`;
//! a strided copy or runtime gather sends `g` back by a scatter-add to the positions it
//! read (a broadcast source gets the sum of its copies' adjoints, added in row-major
//! order); `min()`/`max()` (whole array or per row) send `g` to the first element equal to
//! the result, or the first NaN when it is NaN (`argmin`/`argmax`'s choice, a subgradient
//! on ties). `sort` sends `g` back through the inverse of its permutation (ties: each
//! element gets the adjoint of the position it was sorted to).
//!
//! `minimum`/`maximum` send the gradient to the operand they return (NumPy semantics:
//! `a` when it wins or is NaN, else `b`), so on a tie it goes to `b`. Integer constant
//! powers are multiplications after tracing, so the product rule covers them. Comparisons,
//! bitwise operations and everything int- or bool-valued are piecewise constant: no
//! gradient flows through them, nor through an int-to-float conversion.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::array::{self, ArrayOp};
use crate::array_kernels::Adjoint;
use crate::graph::{NodeKind, Op, ScalarType, Value, KERNEL_PARAMS};
use crate::trace::{self, TraceError};
use crate::window;

const ONE: f32 = 1.0;

fn fconst(x: f32) -> Value {
    Value::constant(ScalarType::Float, x.to_bits())
}

fn is_zero(v: &Value) -> bool {
    v.ty() == ScalarType::Float && v.const_bits().is_some_and(|b| b & 0x7fff_ffff == 0)
}

/// The operands of a float node that a gradient flows into (float operands only).
fn differentiable_operands(v: &Value) -> impl Iterator<Item = &Value> {
    let none: &[Value] = &[];
    let (first, second, rest): (Option<&Value>, Option<&Value>, &[Value]) = match v.kind() {
        _ if v.ty() != ScalarType::Float => (None, None, none),
        NodeKind::Const(_) | NodeKind::Input { .. } => (None, None, none),
        NodeKind::Unary(op, _) | NodeKind::Binary(op, _, _) if !op.is_differentiable() => {
            (None, None, none)
        }
        NodeKind::Unary(_, a) => (Some(a), None, none),
        NodeKind::Binary(_, a, b) => (Some(a), Some(b), none),
        NodeKind::Select(_, a, b) => (Some(a), Some(b), none),
        NodeKind::Array(n) => match n.op {
            ArrayOp::Unary(op) | ArrayOp::Binary(op, _) if !op.is_differentiable() => {
                (None, None, none)
            }
            _ => (None, None, &n.args[..]),
        },
        // reached, so that `propagate` can say that loops are not differentiated yet
        NodeKind::Loop(l, _) => (None, None, &l.operands[..]),
    };
    first
        .into_iter()
        .chain(second)
        .chain(rest.iter())
        .filter(|o| o.ty() == ScalarType::Float)
}

fn describe(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Float => "a float",
        ScalarType::Int => "an int",
        ScalarType::Bool => "a bool",
    }
}

/// The derivatives of `y` with respect to each value of `wrt`, as traced values.
///
/// `y` must be a float value and every `wrt` entry a float value. An entry that `y` does
/// not depend on (or depends on only through int or bool operations) gets the constant 0.
pub fn grad(y: &Value, wrt: &[Value]) -> Result<Vec<Value>, TraceError> {
    if y.ty() != ScalarType::Float {
        return Err(TraceError {
            message: format!(
                "cp.grad needs a float value to differentiate, got {} value; int and bool \
                 values are piecewise constant and have no gradient",
                y.ty().name()
            ),
        });
    }
    for (i, w) in wrt.iter().enumerate() {
        if w.ty() != ScalarType::Float {
            return Err(TraceError {
                message: format!(
                    "cannot differentiate with respect to {} value (entry {i}): gradients exist \
                     only for float values; create the variable as cp.value(x, 'float')",
                    describe(w.ty())
                ),
            });
        }
    }
    let targets: FxHashSet<usize> = wrt.iter().map(Value::id).collect();
    // Nodes older than every wrt value cannot depend on any of them: the walk stops
    // there, so a gradient inside a traced loop costs its own step, not all before it.
    let oldest = wrt.iter().map(Value::seq).min().unwrap_or(u64::MAX);

    // Post-order of the float nodes below y: every operand before its users. References
    // suffice (y keeps every node below it alive), which saves two atomic operations per
    // node: in a traced loop each call walks everything traced before it.
    let mut order: Vec<&Value> = Vec::new();
    let mut relevant: Vec<bool> = Vec::new();
    let mut index: FxHashMap<usize, usize> = FxHashMap::default();
    let mut stack: Vec<(&Value, bool)> = vec![(y, false)];
    while let Some((v, expanded)) = stack.pop() {
        if !expanded {
            if index.contains_key(&v.id()) {
                continue;
            }
            stack.push((v, true));
            for o in differentiable_operands(v) {
                if o.seq() >= oldest && !index.contains_key(&o.id()) {
                    stack.push((o, false));
                }
            }
            continue;
        }
        if index.contains_key(&v.id()) {
            continue;
        }
        let reaches = targets.contains(&v.id())
            || differentiable_operands(v).any(|o| index.get(&o.id()).is_some_and(|&k| relevant[k]));
        index.insert(v.id(), order.len());
        order.push(v);
        relevant.push(reaches);
    }

    let mut adjoint: Vec<Option<Value>> = vec![None; order.len()];
    let root = index[&y.id()];
    if relevant[root] {
        adjoint[root] = Some(fconst(ONE));
    }
    // a loop's outputs are differentiated together, once the last of them is reached
    let mut loop_outputs_left: FxHashMap<usize, usize> = FxHashMap::default();
    for (i, v) in order.iter().enumerate() {
        if let (true, NodeKind::Loop(l, _)) = (relevant[i], v.kind()) {
            *loop_outputs_left
                .entry(Arc::as_ptr(l) as usize)
                .or_default() += 1;
        }
    }
    let mut loop_adjoints: FxHashMap<usize, Vec<Option<Value>>> = FxHashMap::default();
    for i in (0..order.len()).rev() {
        if !relevant[i] {
            continue;
        }
        if let NodeKind::Loop(l, k) = order[i].kind() {
            let key = Arc::as_ptr(l) as usize;
            let outs = loop_adjoints
                .entry(key)
                .or_insert_with(|| vec![None; l.carries.len()]);
            outs[*k as usize] = adjoint[i].clone();
            let left = loop_outputs_left.get_mut(&key).expect("counted above");
            *left -= 1;
            if *left == 0 {
                let outs = loop_adjoints.remove(&key).unwrap_or_default();
                let sends = crate::loop_grad::loop_adjoint(l, &outs, grad)?;
                let mut acc = Accumulator {
                    index: &index,
                    relevant: &relevant,
                    adjoint: &mut adjoint,
                };
                for (operand, g) in l.operands.iter().zip(sends) {
                    if let Some(g) = g {
                        acc.send(operand, || Ok(g))?;
                    }
                }
            }
            continue;
        }
        let Some(g) = adjoint[i].take() else {
            continue;
        };
        let node = order[i];
        let mut acc = Accumulator {
            index: &index,
            relevant: &relevant,
            adjoint: &mut adjoint,
        };
        propagate(node, &g, &mut acc)?;
        adjoint[i] = Some(g);
    }

    Ok(wrt
        .iter()
        .map(|w| {
            index
                .get(&w.id())
                .and_then(|&i| adjoint[i].clone())
                .unwrap_or_else(|| zero_like(w))
        })
        .collect())
}

/// The gradient of something `y` does not depend on: 0.0, or an array of zeros.
fn zero_like(w: &Value) -> Value {
    match array::len_of(w) {
        Some(len) => {
            array::data(ScalarType::Float, vec![0; len as usize]).unwrap_or_else(|_| fconst(0.0))
        }
        None => fconst(0.0),
    }
}

struct Accumulator<'a> {
    index: &'a FxHashMap<usize, usize>,
    relevant: &'a [bool],
    adjoint: &'a mut [Option<Value>],
}

impl Accumulator<'_> {
    /// Whether a gradient sent to `v` can reach a `wrt` value.
    fn wants(&self, v: &Value) -> bool {
        v.ty() == ScalarType::Float && self.index.get(&v.id()).is_some_and(|&i| self.relevant[i])
    }

    /// Adds `contribution()` to the adjoint of `v`, building it only when `v` needs it.
    fn send(
        &mut self,
        v: &Value,
        contribution: impl FnOnce() -> Result<Value, TraceError>,
    ) -> Result<(), TraceError> {
        if !self.wants(v) {
            return Ok(());
        }
        let mut c = contribution()?;
        if is_zero(&c) {
            return Ok(());
        }
        if array::len_of(&c).is_some() && array::len_of(v).is_none() {
            // a scalar broadcast over an array gets the sum of its elements' adjoints
            c = row("sum", &[c], &[])?;
        }
        let slot = &mut self.adjoint[self.index[&v.id()]];
        *slot = Some(match slot.take() {
            None => c,
            Some(prev) => add(&prev, &c)?,
        });
        Ok(())
    }
}

/// `a op b` for scalars, or element-wise when either is an array: the rules below are
/// written once for both.
fn bin(op: Op, a: &Value, b: &Value) -> Result<Value, TraceError> {
    if array::len_of(a).is_some() || array::len_of(b).is_some() {
        array::binary(op, a, b)
    } else {
        trace::binary(op, a, b)
    }
}
fn add(a: &Value, b: &Value) -> Result<Value, TraceError> {
    bin(Op::Add, a, b)
}
fn sub(a: &Value, b: &Value) -> Result<Value, TraceError> {
    bin(Op::Sub, a, b)
}
fn mul(a: &Value, b: &Value) -> Result<Value, TraceError> {
    bin(Op::Mul, a, b)
}
fn div(a: &Value, b: &Value) -> Result<Value, TraceError> {
    bin(Op::Div, a, b)
}
fn neg(a: &Value) -> Result<Value, TraceError> {
    call(Op::Neg, a)
}
fn call(op: Op, a: &Value) -> Result<Value, TraceError> {
    if array::len_of(a).is_some() {
        array::unary(op, a)
    } else {
        trace::unary(op, a)
    }
}
/// 1, 0 or -1 (0 for NaN) as a float, element-wise for arrays.
fn sign_of(a: &Value) -> Result<Value, TraceError> {
    if array::len_of(a).is_some() {
        let zero = fconst(0.0);
        let s = array::binary(Op::Sub, &bin(Op::Gt, a, &zero)?, &bin(Op::Lt, a, &zero)?)?;
        return array::unary(Op::IntToFloat, &s);
    }
    Ok(trace::to_float(&trace::sign(a)?))
}
fn square(a: &Value) -> Result<Value, TraceError> {
    mul(a, a)
}

/// `g` where `cond`, else 0, and the other way round.
fn split(cond: &Value, g: &Value) -> Result<(Value, Value), TraceError> {
    let zero = fconst(0.0);
    if array::len_of(cond).is_some() {
        return Ok((
            array::select(cond, g, &zero)?,
            array::select(cond, &zero, g)?,
        ));
    }
    Ok((
        trace::select(cond, g, &zero)?,
        trace::select(cond, &zero, g)?,
    ))
}

/// Sends the adjoint `g` of node `r` to its operands.
fn propagate(r: &Value, g: &Value, acc: &mut Accumulator<'_>) -> Result<(), TraceError> {
    match r.kind() {
        NodeKind::Const(_) | NodeKind::Input { .. } => Ok(()),
        NodeKind::Array(n) => propagate_array(r, n, g, acc),
        NodeKind::Unary(op, a) => unary_rule(*op, a, r, g, acc),
        NodeKind::Binary(op, a, b) => binary_rule(*op, a, b, r, g, acc),
        NodeKind::Select(c, a, b) => select_rule(c, a, b, g, acc),
        NodeKind::Loop(..) => Err(TraceError {
            message: "cp.grad through a cp.fori_loop / cp.scan (with respect to values from \
                      before the loop or captured by its body) is not supported yet: call \
                      cp.grad inside the body, or unroll the loop (unroll=True)"
                .to_string(),
        }),
    }
}

/// `r = op(a)`: scalars, or arrays element by element.
fn unary_rule(
    op: Op,
    a: &Value,
    r: &Value,
    g: &Value,
    acc: &mut Accumulator<'_>,
) -> Result<(), TraceError> {
    {
        {
            let a = a.clone();
            let op = &op;
            match op {
                Op::Neg => acc.send(&a, || neg(g)),
                Op::Abs => acc.send(&a, || mul(g, &sign_of(&a)?)),
                Op::Sqrt => acc.send(&a, || mul(g, &div(&fconst(0.5), r)?)),
                Op::Sin => acc.send(&a, || mul(g, &call(Op::Cos, &a)?)),
                Op::Cos => acc.send(&a, || neg(&mul(g, &call(Op::Sin, &a)?)?)),
                Op::Tan => acc.send(&a, || mul(g, &add(&fconst(ONE), &square(r)?)?)),
                Op::Asin | Op::Acos => acc.send(&a, || {
                    let root = call(Op::Sqrt, &sub(&fconst(ONE), &square(&a)?)?)?;
                    let d = div(g, &root)?;
                    if *op == Op::Acos {
                        neg(&d)
                    } else {
                        Ok(d)
                    }
                }),
                Op::Atan => acc.send(&a, || div(g, &add(&fconst(ONE), &square(&a)?)?)),
                Op::Exp => acc.send(&a, || mul(g, r)),
                Op::Log => acc.send(&a, || div(g, &a)),
                Op::Tanh => acc.send(&a, || mul(g, &sub(&fconst(ONE), &square(r)?)?)),
                // int source (or not a float operation): no gradient
                _ => Ok(()),
            }
        }
    }
}

/// `r = a op b`: scalars, or arrays element by element (a scalar operand broadcast).
fn binary_rule(
    op: Op,
    a: &Value,
    b: &Value,
    r: &Value,
    g: &Value,
    acc: &mut Accumulator<'_>,
) -> Result<(), TraceError> {
    {
        {
            let (a, b) = (a.clone(), b.clone());
            let op = &op;
            match op {
                Op::Add => {
                    acc.send(&a, || Ok(g.clone()))?;
                    acc.send(&b, || Ok(g.clone()))
                }
                Op::Sub => {
                    acc.send(&a, || Ok(g.clone()))?;
                    acc.send(&b, || neg(g))
                }
                Op::Mul => {
                    acc.send(&a, || mul(g, &b))?;
                    acc.send(&b, || mul(g, &a))
                }
                Op::Div => {
                    let g_over_b = div(g, &b)?;
                    acc.send(&a, || Ok(g_over_b.clone()))?;
                    acc.send(&b, || neg(&mul(&g_over_b, r)?))
                }
                Op::Mod => {
                    acc.send(&a, || Ok(g.clone()))?;
                    acc.send(&b, || neg(&mul(g, &bin(Op::FloorDiv, &a, &b)?)?))
                }
                Op::Atan2 => {
                    if !acc.wants(&a) && !acc.wants(&b) {
                        return Ok(());
                    }
                    let g_over_d = div(g, &add(&square(&a)?, &square(&b)?)?)?;
                    acc.send(&a, || mul(&g_over_d, &b))?;
                    acc.send(&b, || neg(&mul(&g_over_d, &a)?))
                }
                Op::Pow => {
                    acc.send(&a, || {
                        let lower = sub(&b, &fconst(ONE))?;
                        let p = bin(Op::Pow, &a, &lower)?;
                        mul(g, &mul(&b, &p)?)
                    })?;
                    acc.send(&b, || mul(g, &mul(r, &call(Op::Log, &a)?)?))
                }
                Op::Min | Op::Max => {
                    if !acc.wants(&a) && !acc.wants(&b) {
                        return Ok(());
                    }
                    let cmp = if *op == Op::Min { Op::Lt } else { Op::Gt };
                    let wins = bin(cmp, &a, &b)?;
                    let nan = bin(Op::Ne, &a, &a)?;
                    let takes_a = bin(Op::Or, &wins, &nan)?;
                    let (ga, gb) = split(&takes_a, g)?;
                    acc.send(&a, || Ok(ga))?;
                    acc.send(&b, || Ok(gb))
                }
                // FloorDiv and everything not float-valued: piecewise constant
                _ => Ok(()),
            }
        }
    }
}

/// `r = c ? a : b`: scalars, or arrays element by element.
fn select_rule(
    c: &Value,
    a: &Value,
    b: &Value,
    g: &Value,
    acc: &mut Accumulator<'_>,
) -> Result<(), TraceError> {
    if !acc.wants(a) && !acc.wants(b) {
        return Ok(());
    }
    let (ga, gb) = split(c, g)?;
    acc.send(a, || Ok(ga))?;
    acc.send(b, || Ok(gb))
}

/// An array of `len` copies of the float scalar `g` (the adjoint of a sum's operand).
fn broadcast(g: &Value, len: u32) -> Result<Value, TraceError> {
    let ones = array::data(ScalarType::Float, vec![ONE.to_bits(); len as usize])?;
    array::binary(Op::Mul, &ones, g)
}

/// A float array of `len` elements that is `g` at `index` (a value) and 0 elsewhere.
fn one_hot(g: &Value, index: &Value, len: u32) -> Result<Value, TraceError> {
    let positions = array::data(ScalarType::Int, (0..len).collect())?;
    array::select(&array::binary(Op::Eq, &positions, index)?, g, &fconst(0.0))
}

/// The column of the first element of each row of `x` (`rows x cols`) that equals the
/// row's extreme `r` (a scalar or a `rows` array), or is NaN when `r` is: the element
/// `np.argmin` / `np.argmax` picks, which gets the whole gradient (a subgradient on
/// ties). An int array of `rows` elements.
fn first_extreme(x: &Value, r: &Value, rows: u32, cols: u32) -> Result<Value, TraceError> {
    let at = if array::len_of(r).is_some() {
        array::strided(r, 0, &[(rows, 1), (cols, 0)])?
    } else {
        r.clone()
    };
    let hit = array::binary(
        Op::Or,
        &array::binary(Op::Eq, x, &at)?,
        &array::binary(Op::Ne, x, x)?,
    )?;
    // a missed column counts as `cols` more, so the row minimum is the first hit
    let cols_at = array::data(
        ScalarType::Int,
        (0..rows * cols).map(|k| k % cols).collect(),
    )?;
    let miss = array::binary(Op::Eq, &hit, &Value::constant(ScalarType::Int, 0))?;
    let penalty = array::binary(Op::Mul, &miss, &Value::constant(ScalarType::Int, cols))?;
    row(
        "rows_min",
        &[array::binary(Op::Add, &cols_at, &penalty)?],
        &[rows, cols],
    )
}

/// `kernel` of `args` and the sizes `prm`: a row-backed operation built by an adjoint.
fn row(name: &str, args: &[Value], prm: &[u32]) -> Result<Value, TraceError> {
    let prm: Vec<i64> = prm.iter().map(|&x| i64::from(x)).collect();
    array::kernel(name, args, &prm)
}

/// The adjoint rules of the rows on [`ArrayOp::Kernel`] (their [`Adjoint`]), each a
/// composition of other rows: `r` is the result, `g` its adjoint.
fn kernel_rule(
    rule: Adjoint,
    prm: [u32; KERNEL_PARAMS],
    r: &Value,
    args: &[Value],
    g: &Value,
    acc: &mut Accumulator<'_>,
) -> Result<(), TraceError> {
    let len = array::len_of(&args[0]).unwrap_or(0);
    match rule {
        Adjoint::None => Ok(()),
        Adjoint::Broadcast => acc.send(&args[0], || broadcast(g, len)),
        Adjoint::Products => {
            acc.send(&args[0], || array::binary(Op::Mul, &args[1], g))?;
            acc.send(&args[1], || array::binary(Op::Mul, &args[0], g))
        }
        Adjoint::FirstExtreme => acc.send(&args[0], || {
            let first = first_extreme(&args[0], r, 1, len)?;
            one_hot(g, &array::element(&first, 0)?, len)
        }),
        Adjoint::FirstExtremePerRow => acc.send(&args[0], || {
            let [rows, cols, ..] = prm;
            let first = first_extreme(&args[0], r, rows, cols)?;
            let cols_at = array::data(
                ScalarType::Int,
                (0..rows * cols).map(|k| k % cols).collect(),
            )?;
            let wide = [(rows, 1), (cols, 0)];
            let hit = array::binary(Op::Eq, &cols_at, &array::strided(&first, 0, &wide)?)?;
            array::select(&hit, &array::strided(g, 0, &wide)?, &fconst(0.0))
        }),
        Adjoint::ClampedOneHot => {
            // the element the clamped index reads: wrapped once, then clamped
            let i = &args[1];
            let n_i = Value::constant(ScalarType::Int, len);
            let zero = Value::constant(ScalarType::Int, 0);
            let wrapped = trace::binary(
                Op::Add,
                i,
                &trace::binary(Op::Mul, &trace::binary(Op::Lt, i, &zero)?, &n_i)?,
            )?;
            let last = Value::constant(ScalarType::Int, len - 1);
            let clamped = trace::binary(Op::Min, &trace::binary(Op::Max, &wrapped, &zero)?, &last)?;
            acc.send(&args[0], || one_hot(g, &clamped, len))
        }
        Adjoint::Unsort => acc.send(&args[0], || {
            // r[k] = x[p[k]] with p the sorting permutation, so dx[p[k]] = g[k]: g at
            // the inverse permutation, which is p's own argsort
            let p = row("argsort", &args[..1], &[])?;
            row("take", &[g.clone(), row("argsort", &[p], &[])?], &[])
        }),
        Adjoint::Untake => acc.send(&args[0], || {
            row("take", &[g.clone(), row("argsort", &args[1..2], &[])?], &[])
        }),
        Adjoint::MatMul => {
            // dA = G Bᵀ, dB = Aᵀ G, the transposes as strided copies
            let [m, k, p, ..] = prm;
            let (a, b) = (&args[0], &args[1]);
            acc.send(a, || {
                let bt = array::strided(b, 0, &[(p, 1), (k, i64::from(p))])?;
                row("matmul", &[g.clone(), bt], &[m, p, k])
            })?;
            acc.send(b, || {
                let at = array::strided(a, 0, &[(k, 1), (m, i64::from(k))])?;
                row("matmul", &[at, g.clone()], &[k, m, p])
            })
        }
        Adjoint::Det => acc.send(&args[0], || {
            // d det(A) / dA = det(A) A⁻ᵀ, A⁻ᵀ as the solve of Aᵀ with the identity
            let n = prm[0];
            let at = array::strided(&args[0], 0, &[(n, 1), (n, i64::from(n))])?;
            let eye = (0..n * n)
                .map(|k| if k % (n + 1) == 0 { 1f32.to_bits() } else { 0 })
                .collect();
            let inv_t = row(
                "solve",
                &[at, array::data(ScalarType::Float, eye)?],
                &[n, n],
            )?;
            array::binary(Op::Mul, &inv_t, &mul(g, r)?)
        }),
        Adjoint::ScatterWalk => {
            // the walk from its constant offset, as a scatter's clamped walk
            let off = prm[0] as i32;
            let mut walk = [off; 10];
            for (w, &x) in walk[2..].iter_mut().zip(&prm[1..9]) {
                *w = x as i32;
            }
            let at = Value::constant(ScalarType::Int, prm[0]);
            acc.send(&args[0], || array::scatter_add(g, &at, walk, len))
        }
        Adjoint::ScatterClamped => {
            let walk: [i32; 10] = std::array::from_fn(|i| prm[i] as i32);
            acc.send(&args[0], || array::scatter_add(g, &args[1], walk, len))
        }
        Adjoint::GatherBack => acc.send(&args[0], || {
            let signed = |i: usize| i64::from(prm[i] as i32);
            let dims: Vec<(u32, i64)> = (0..4).map(|d| (prm[2 + d], signed(6 + d))).collect();
            array::gather(g, &args[1], signed(0), signed(1), &dims)
        }),
        Adjoint::Conv2d => {
            acc.send(&args[0], || window::conv2d_dx(&args[1], g, &prm))?;
            acc.send(&args[1], || window::conv2d_dw(&args[0], g, &prm))?;
            acc.send(&args[2], || window::conv2d_dbias(g, &prm))
        }
        Adjoint::AvgPool => acc.send(&args[0], || window::avgpool_dx(g, &prm)),
        Adjoint::MaxPool => acc.send(&args[0], || window::maxpool_dx(&args[0], r, g, &prm)),
        Adjoint::Solve => {
            // x = A⁻¹B: dB = A⁻ᵀG (a solve with the transpose), dA = -dB xᵀ
            let [n, cols, ..] = prm;
            let (a, b) = (&args[0], &args[1]);
            if !acc.wants(a) && !acc.wants(b) {
                return Ok(());
            }
            let at = array::strided(a, 0, &[(n, 1), (n, i64::from(n))])?;
            let gb = row("solve", &[at, g.clone()], &[n, cols])?;
            acc.send(a, || {
                let xt = array::strided(r, 0, &[(cols, 1), (n, i64::from(cols))])?;
                row("matmul", &[array::unary(Op::Neg, &gb)?, xt], &[n, cols, n])
            })?;
            acc.send(b, || Ok(gb.clone()))
        }
    }
}

/// The rules of array nodes: element-wise operations share the scalar rules; sums,
/// dot products, gathers and elements move adjoints between arrays and scalars.
fn propagate_array(
    r: &Value,
    n: &array::ArrayNode,
    g: &Value,
    acc: &mut Accumulator<'_>,
) -> Result<(), TraceError> {
    let args = &n.args;
    match n.op {
        // ints only: no gradient flows
        ArrayOp::Data(_) => Ok(()),
        // an imported function is opaque: its result is a measurement, no gradient flows
        ArrayOp::Call { .. } | ArrayOp::Filled(_) => Ok(()),
        ArrayOp::Unary(op) => unary_rule(op, &args[0], r, g, acc),
        ArrayOp::Binary(op, _) => binary_rule(op, &args[0], &args[1], r, g, acc),
        ArrayOp::Select(_) => select_rule(&args[0], &args[1], &args[2], g, acc),
        ArrayOp::Kernel { prm, .. } => match n.op.kernel() {
            Some(k) => kernel_rule(k.rule.adjoint, prm, r, args, g, acc),
            None => Ok(()),
        },
        ArrayOp::Pack => {
            for (k, e) in args.iter().enumerate() {
                acc.send(e, || array::element(g, k as u32))?;
            }
            Ok(())
        }
        ArrayOp::Element(k) => {
            let len = array::len_of(&args[0]).unwrap_or(0);
            let at = Value::constant(ScalarType::Int, k);
            acc.send(&args[0], || one_hot(g, &at, len))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold;

    fn input(x: f32) -> Value {
        Value::input(ScalarType::Float, x.to_bits())
    }

    /// Evaluates a graph on the host where every op can be folded or has a std equivalent.
    fn eval(v: &Value) -> f32 {
        let mut memo: FxHashMap<usize, u32> = FxHashMap::default();
        let mut stack = vec![(v.clone(), false)];
        while let Some((n, expanded)) = stack.pop() {
            if memo.contains_key(&n.id()) {
                continue;
            }
            let children: Vec<Value> = match n.kind() {
                NodeKind::Const(_) | NodeKind::Input { .. } => vec![],
                NodeKind::Unary(_, a) => vec![a.clone()],
                NodeKind::Binary(_, a, b) => vec![a.clone(), b.clone()],
                NodeKind::Select(c, a, b) => vec![c.clone(), a.clone(), b.clone()],
                NodeKind::Array(n) => n.args.clone(),
                NodeKind::Loop(l, _) => l.operands.clone(),
            };
            if !expanded {
                stack.push((n.clone(), true));
                for c in children {
                    stack.push((c, false));
                }
                continue;
            }
            let bits = match n.kind() {
                NodeKind::Const(b) => *b,
                NodeKind::Input { init } => *init,
                NodeKind::Unary(op, a) => {
                    let x = memo[&a.id()];
                    fold::unary(*op, a.ty(), x).unwrap_or_else(|| {
                        let f = f32::from_bits(x);
                        match op {
                            Op::Sin => f.sin(),
                            Op::Cos => f.cos(),
                            Op::Log => f.ln(),
                            Op::Exp => f.exp(),
                            Op::Tanh => f.tanh(),
                            _ => panic!("no host evaluation of {op:?}"),
                        }
                        .to_bits()
                    })
                }
                NodeKind::Binary(op, a, b) => {
                    let (x, y) = (memo[&a.id()], memo[&b.id()]);
                    fold::binary(*op, a.ty(), x, y).unwrap_or_else(|| {
                        let (x, y) = (f32::from_bits(x), f32::from_bits(y));
                        match op {
                            Op::Pow => x.powf(y),
                            Op::Atan2 => x.atan2(y),
                            _ => panic!("no host evaluation of {op:?}"),
                        }
                        .to_bits()
                    })
                }
                NodeKind::Select(c, a, b) => {
                    fold::select(memo[&c.id()], memo[&a.id()], memo[&b.id()])
                }
                NodeKind::Array(_) | NodeKind::Loop(..) => {
                    panic!("no host evaluation of array operations or loops")
                }
            };
            memo.insert(n.id(), bits);
        }
        f32::from_bits(memo[&v.id()])
    }

    fn b(op: Op, x: &Value, y: &Value) -> Value {
        trace::binary(op, x, y).unwrap()
    }

    #[test]
    fn product_and_quotient() {
        let (x, y) = (input(3.0), input(-2.0));
        let f = b(Op::Div, &b(Op::Mul, &x, &x), &y); // x^2 / y
        let g = grad(&f, &[x.clone(), y.clone()]).unwrap();
        assert_eq!(eval(&g[0]), 2.0 * 3.0 / -2.0);
        assert_eq!(eval(&g[1]), -9.0 / 4.0);
    }

    #[test]
    fn negation_and_subtraction_flip_the_sign() {
        let x = input(1.5);
        let f = b(Op::Sub, &fconst(2.0), &trace::unary(Op::Neg, &x).unwrap()); // 2 - (-x)
        assert_eq!(eval(&grad(&f, std::slice::from_ref(&x)).unwrap()[0]), 1.0);
        let h = trace::unary(Op::Neg, &b(Op::Mul, &x, &x)).unwrap();
        assert_eq!(eval(&grad(&h, &[x]).unwrap()[0]), -3.0);
    }

    #[test]
    fn atan2_takes_y_first() {
        let (y, x) = (input(1.0), input(2.0));
        let f = b(Op::Atan2, &y, &x);
        let g = grad(&f, &[y, x]).unwrap();
        assert!((eval(&g[0]) - 2.0 / 5.0).abs() < 1e-6);
        assert!((eval(&g[1]) + 1.0 / 5.0).abs() < 1e-6);
    }

    #[test]
    fn unrelated_and_constant_gradients_fold() {
        let (x, z) = (input(1.0), input(2.0));
        let f = b(Op::Mul, &x, &fconst(3.0));
        let g = grad(&f, &[x, z]).unwrap();
        assert_eq!(g[0].const_bits(), Some(3.0f32.to_bits()));
        assert_eq!(g[1].const_bits(), Some(0));
        // y itself
        let w = input(5.0);
        assert_eq!(
            grad(&w, std::slice::from_ref(&w)).unwrap()[0].const_bits(),
            Some(1.0f32.to_bits())
        );
    }

    #[test]
    fn int_paths_stop_the_gradient() {
        let x = input(2.5);
        let i = b(Op::FloorDiv, &x, &fconst(1.0));
        let as_int = b(Op::Lt, &x, &fconst(3.0)); // bool
        let f = b(Op::Add, &i, &trace::to_float(&as_int));
        assert_eq!(grad(&f, &[x]).unwrap()[0].const_bits(), Some(0));
    }

    #[test]
    fn int_and_bool_values_are_errors() {
        let x = input(1.0);
        let n = Value::input(ScalarType::Int, 3);
        let err = grad(&n, std::slice::from_ref(&x)).unwrap_err();
        assert!(
            err.message.contains("needs a float value"),
            "{}",
            err.message
        );
        let f = b(Op::Mul, &x, &trace::to_float(&n));
        let err = grad(&f, &[x, n]).unwrap_err();
        assert!(
            err.message.contains("with respect to an int value"),
            "{}",
            err.message
        );
    }

    #[test]
    fn total_derivative_through_another_wrt_value() {
        let x = input(0.5);
        let s = trace::unary(Op::Sin, &x).unwrap();
        let f = b(Op::Mul, &s, &x); // x sin x
        let g = grad(&f, &[x.clone(), s.clone()]).unwrap();
        let want = 0.5f32.sin() + 0.5 * 0.5f32.cos();
        assert!((eval(&g[0]) - want).abs() < 1e-6);
        assert_eq!(eval(&g[1]), 0.5);
    }

    #[test]
    fn deep_graphs_do_not_overflow_the_stack() {
        let x = input(1.0);
        let mut acc = x.clone();
        for _ in 0..200_000 {
            acc = b(
                Op::Add,
                &b(Op::Mul, &acc, &fconst(1.0000001)),
                &fconst(1e-7),
            );
        }
        // every local derivative is a constant, so the whole gradient folds
        let g = grad(&acc, std::slice::from_ref(&x)).unwrap();
        assert!(g[0].const_bits().is_some());
        let y = input(1.0);
        let mut acc = y.clone();
        for _ in 0..200_000 {
            acc = b(Op::Mul, &acc, &y);
        }
        let g = grad(&acc, std::slice::from_ref(&y)).unwrap();
        drop(acc);
        drop(g);
    }

    #[test]
    fn gradient_of_a_gradient() {
        let x = input(0.7);
        let f = trace::unary(Op::Sin, &b(Op::Mul, &x, &x)).unwrap(); // sin(x^2)
        let d1 = grad(&f, std::slice::from_ref(&x)).unwrap().remove(0);
        let d2 = grad(&d1, std::slice::from_ref(&x)).unwrap().remove(0);
        let x2 = 0.49f32;
        let want = 2.0 * x2.cos() - 4.0 * x2 * x2.sin();
        assert!((eval(&d2) - want).abs() < 1e-5, "{} vs {want}", eval(&d2));
    }
}
