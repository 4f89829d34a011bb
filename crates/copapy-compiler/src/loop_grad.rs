//! Gradients through loops: backpropagation through time over a static tape.
//!
//! For a loop `c[t+1] = F(i, c[t], p)` (`i = start + t`, `p` the captured values) whose
//! outputs `c[T]` received the adjoints `g`, [`loop_adjoint`] builds two more loops:
//!
//! 1. the *tape*: the forward loop again, recording each trip's carries `c[t]` in one
//!    `T`-element array per carried value (`T * len` for a carried array of `len`;
//!    trip `t` written by a branch-free select over the tape), so its size is fixed when
//!    the program is compiled;
//! 2. the *reverse* loop, `t = T-1 … 0`: it reads `c[t]` from the tape, recomputes the
//!    body `F` on it and sends the adjoints back with one vector-Jacobian product,
//!    `grad(Σ_j g_j · F_j(i, x, q), [x, q])` at `x = c[t]`, `q = p`: the carried adjoints
//!    `g` become that gradient's `x` part, the captured values' adjoints accumulate its
//!    `q` part.
//!
//! The adjoints of the initial carries are the reverse loop's carried adjoints at the end,
//! those of the captured values its accumulators. Int and bool carries are taped (the
//! body reads them) but carry no adjoint. The results are ordinary traced values, so
//! they are optimised, compiled and differentiated again like any other.

use crate::array;
use crate::graph::{LoopNode, Op, ScalarType, Value};
use crate::loops::{make_loop, placeholders, substitute};
use crate::trace::{self, TraceError};

fn int(x: i64) -> Value {
    Value::constant(ScalarType::Int, x as i32 as u32)
}

fn zero_like(v: &Value) -> Result<Value, TraceError> {
    match array::len_of(v) {
        Some(n) => array::data(v.ty(), vec![0; n as usize]),
        None => Ok(Value::constant(v.ty(), 0)),
    }
}

/// Reverse-mode gradient of a scalar with respect to values: `crate::autodiff::grad`,
/// passed in because the body's vector-Jacobian product is itself a gradient (autodiff
/// calls this module for loops, so this module does not import it back).
pub(crate) type Gradient = fn(&Value, &[Value]) -> Result<Vec<Value>, TraceError>;

/// The adjoints of `l`'s operands (initial carries, then captured values) given the
/// adjoints `outs` of its outputs (`None`: zero); `None` where the operand gets nothing.
pub(crate) fn loop_adjoint(
    l: &LoopNode,
    outs: &[Option<Value>],
    grad: Gradient,
) -> Result<Vec<Option<Value>>, TraceError> {
    let n = l.carries.len();
    let act = active_carries(l, outs);
    let trips = l.trips;
    let inits = &l.operands[..n];
    let captured = &l.operands[n..];
    let float_carries: Vec<usize> = act
        .iter()
        .copied()
        .filter(|&j| l.carries[j].ty() == ScalarType::Float)
        .collect();
    let float_captures: Vec<usize> = (0..l.captures.len())
        .filter(|&m| l.captures[m].ty() == ScalarType::Float)
        .collect();
    let mut result = vec![None; l.operands.len()];
    if float_carries.is_empty() || outs.iter().all(Option::is_none) {
        return Ok(result);
    }

    // 1. the tape: c[t] for t < T, one array per carried value (`T * len` elements for
    // an array of `len`, trip t's copy at t * len)
    let width = |j: usize| array::len_of(&l.carries[j]).unwrap_or(1);
    let na = act.len();
    let mut tape_inits: Vec<Value> = act.iter().map(|&j| inits[j].clone()).collect();
    for &j in &act {
        let size = trips as usize * width(j) as usize;
        tape_inits.push(array::data(l.carries[j].ty(), vec![0; size])?);
    }
    let (idx, holders) = placeholders(&tape_inits);
    let mut pairs: Vec<(Value, Value)> = vec![(l.index.clone(), idx.clone())];
    for (a, &j) in act.iter().enumerate() {
        pairs.push((l.carries[j].clone(), holders[a].clone()));
    }
    pairs.extend(l.captures.iter().cloned().zip(captured.iter().cloned()));
    let active_nexts: Vec<Value> = act.iter().map(|&j| l.nexts[j].clone()).collect();
    let mut nexts = substitute(&active_nexts, &pairs);
    let t = trace::binary(Op::Sub, &idx, &int(i64::from(l.start)))?;
    for (a, &j) in act.iter().enumerate() {
        let w = width(j);
        // the trip each tape element belongs to
        let rows = array::data(ScalarType::Int, (0..trips * w).map(|e| e / w).collect())?;
        let here = array::binary(Op::Eq, &rows, &t)?;
        let value = match array::len_of(&holders[a]) {
            // the carried array repeated once per trip (stride 0 over the trips)
            Some(_) => array::strided(&holders[a], 0, &[(trips, 0), (w, 1)])?,
            None => holders[a].clone(),
        };
        nexts.push(array::select(&here, &value, &holders[na + a])?);
    }
    let taped = make_loop(trips, l.start, &idx, &holders, &tape_inits, &nexts)?;
    let tapes = &taped[na..];

    // 2. the reverse loop over the tape
    let mut rev_inits = Vec::new();
    for &j in &float_carries {
        rev_inits.push(match &outs[j] {
            Some(g) => g.clone(),
            None => zero_like(&l.carries[j])?,
        });
    }
    for &m in &float_captures {
        rev_inits.push(zero_like(&captured[m])?);
    }
    let (ridx, rholders) = placeholders(&rev_inits);
    let nf = float_carries.len();
    // fresh leaves to differentiate with respect to, replaced by the tape's values after
    let (xi, xs) = placeholders(&l.carries);
    let qs: Vec<Value> = float_captures
        .iter()
        .map(|&m| {
            placeholders(std::slice::from_ref(&l.captures[m]))
                .1
                .remove(0)
        })
        .collect();
    let mut pairs: Vec<(Value, Value)> = vec![(l.index.clone(), xi.clone())];
    pairs.extend(l.carries.iter().cloned().zip(xs.iter().cloned()));
    for (k, &m) in float_captures.iter().enumerate() {
        pairs.push((l.captures[m].clone(), qs[k].clone()));
    }
    for m in (0..l.captures.len()).filter(|m| !float_captures.contains(m)) {
        pairs.push((l.captures[m].clone(), captured[m].clone()));
    }
    let body = substitute(&l.nexts, &pairs);
    let mut objective: Option<Value> = None;
    for (k, &j) in float_carries.iter().enumerate() {
        let term = match array::len_of(&body[j]) {
            Some(_) => array::kernel("dot", &[rholders[k].clone(), body[j].clone()], &[])?,
            None => trace::binary(Op::Mul, &rholders[k], &body[j])?,
        };
        objective = Some(match objective {
            None => term,
            Some(acc) => trace::binary(Op::Add, &acc, &term)?,
        });
    }
    let objective = objective.expect("a float carry");
    let wrt: Vec<Value> = float_carries
        .iter()
        .map(|&j| xs[j].clone())
        .chain(qs.iter().cloned())
        .collect();
    let vjp = grad(&objective, &wrt)?;
    let mut rev_nexts = vjp[..nf].to_vec();
    for (k, g) in vjp[nf..].iter().enumerate() {
        rev_nexts.push(add(&rholders[nf + k], g)?);
    }
    // run s reads trip t = T-1-s of the tape
    let t = trace::binary(Op::Sub, &int(i64::from(trips) - 1), &ridx)?;
    let mut back: Vec<(Value, Value)> = vec![(
        xi.clone(),
        trace::binary(Op::Add, &t, &int(i64::from(l.start)))?,
    )];
    for (a, &j) in act.iter().enumerate() {
        let w = width(j);
        let taped = match array::len_of(&l.carries[j]) {
            Some(_) => {
                let at = trace::binary(Op::Mul, &t, &int(i64::from(w)))?;
                let last = i64::from(trips - 1) * i64::from(w);
                array::gather(&tapes[a], &at, 0, last, &[(w, 1)])?
            }
            None => array::kernel("index", &[tapes[a].clone(), t.clone()], &[])?,
        };
        back.push((xs[j].clone(), taped));
    }
    for (k, &m) in float_captures.iter().enumerate() {
        back.push((qs[k].clone(), captured[m].clone()));
    }
    let rev_nexts = substitute(&rev_nexts, &back);
    let adjoints = make_loop(trips, 0, &ridx, &rholders, &rev_inits, &rev_nexts)?;
    for (k, &j) in float_carries.iter().enumerate() {
        result[j] = Some(adjoints[k].clone());
    }
    for (k, &m) in float_captures.iter().enumerate() {
        result[n + m] = Some(adjoints[nf + k].clone());
    }
    Ok(result)
}

fn add(a: &Value, b: &Value) -> Result<Value, TraceError> {
    if array::len_of(a).is_some() || array::len_of(b).is_some() {
        array::binary(Op::Add, a, b)
    } else {
        trace::binary(Op::Add, a, b)
    }
}

/// The carries the gradient needs: every scalar one, and an array one whose output has
/// an adjoint or that such a carry's next value reads (a `cp.scan` stack of outputs
/// nobody differentiates is left out, so it needs no tape).
fn active_carries(l: &LoopNode, outs: &[Option<Value>]) -> Vec<usize> {
    let n = l.carries.len();
    let mut active: Vec<bool> = (0..n)
        .map(|j| array::len_of(&l.carries[j]).is_none() || outs[j].is_some())
        .collect();
    loop {
        let roots: Vec<Value> = (0..n)
            .filter(|&j| active[j])
            .map(|j| l.nexts[j].clone())
            .collect();
        let read = crate::loops::leaves_read(&roots, &l.carries);
        let mut changed = false;
        for j in 0..n {
            if !active[j] && read[j] {
                active[j] = true;
                changed = true;
            }
        }
        if !changed {
            return (0..n).filter(|&j| active[j]).collect();
        }
    }
}
