//! Array values: `n` contiguous data slots, and operations that compile to one stencil
//! per operation whatever `n` is.
//!
//! An array is a graph node like a scalar (a [`NodeKind::Array`]); its [`ArrayNode`]
//! says what it is (stored data, gathered scalars, or the result of an element-wise
//! operation) and its length. Reductions (the sum and dot rows of [`kernel`]) and [`element`] give
//! ordinary scalar values, so scalar code can use them directly.
//!
//! Type rules are those of the scalar operations: each constructor asks
//! [`crate::trace`] what the scalar operation would do with operands of the element
//! types (promotion to float, result type, errors), so arrays and scalars cannot
//! disagree. The scheduler gives every array a 16-byte aligned range of slots and
//! emits one `st_arr_*` step per operation (see `stencils/README.md`).

use crate::array_kernels::{self, Len, Operand, Ty};
use crate::graph::{NodeKind, Op, ScalarType, Value};
use crate::kernel_params;
use crate::trace::{self, TraceError};

pub use crate::graph::{ArrayNode, ArrayOp, Form};

pub use crate::graph::MAX_LEN;

fn err(message: String) -> TraceError {
    TraceError { message }
}

fn node(ty: ScalarType, op: ArrayOp, args: Vec<Value>, len: u32) -> Value {
    let bytes = false;
    let n = ArrayNode {
        op,
        args,
        len,
        bytes,
    };
    Value::new(ty, NodeKind::Array(Box::new(n)))
}

fn byte_node(op: ArrayOp, args: Vec<Value>, len: u32) -> Value {
    let n = ArrayNode {
        op,
        args,
        len,
        bytes: true,
    };
    Value::new(ScalarType::Int, NodeKind::Array(Box::new(n)))
}

/// The array node that gives `v`'s length and storage: its own, or for an array a loop
/// carried, that carry's placeholder.
fn storage(v: &Value) -> Option<&ArrayNode> {
    match v.kind() {
        NodeKind::Array(a) => Some(a),
        NodeKind::Loop(l, k) => match l.carries[*k as usize].kind() {
            NodeKind::Array(a) => Some(a),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `v` is an array stored one byte per element.
pub fn is_bytes(v: &Value) -> bool {
    storage(v).is_some_and(|a| a.bytes)
}

/// The 4-byte data slots array `v` occupies, `None` for a scalar.
pub fn slots_of(v: &Value) -> Option<u32> {
    storage(v).filter(|a| a.len > 0).map(ArrayNode::slots)
}

/// A new array node (for operations built in other modules, such as `crate::imports`).
pub(crate) fn new_node(ty: ScalarType, op: ArrayOp, args: Vec<Value>, len: u32) -> Value {
    node(ty, op, args, len)
}

/// `v` as operations read it: byte storage widened to int32 elements (the `widen_b`
/// row, one loop stencil), anything else as it is.
fn wide(v: &Value) -> Result<Value, TraceError> {
    match v.kind() {
        NodeKind::Array(a) if a.bytes => kernel("widen_b", std::slice::from_ref(v), &[]),
        _ => Ok(v.clone()),
    }
}

/// A new input byte array (one byte per element in data memory) holding `values`.
pub fn data_bytes(values: &[u8]) -> Result<Value, TraceError> {
    let len = checked_len(values.len())?;
    let words = values
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    Ok(byte_node(ArrayOp::Data(words), Vec::new(), len))
}

/// Array `a` stored as bytes: each element clamped to 0..255 by the `tobyte` rule
/// (floats toward 0, NaN 0), one loop stencil (the `narrow` row); none for an array
/// already stored so.
pub fn to_bytes(a: &Value) -> Result<Value, TraceError> {
    len_of(a).ok_or_else(|| err("to_bytes() of an array needs an array".into()))?;
    if is_bytes(a) {
        return Ok(a.clone());
    }
    kernel("narrow", std::slice::from_ref(a), &[])
}

pub(crate) fn checked_len(n: usize) -> Result<u32, TraceError> {
    if n == 0 {
        return Err(err("an array needs at least one element".into()));
    }
    if n > MAX_LEN {
        return Err(err(format!(
            "an array of {n} elements is too large (at most {MAX_LEN})"
        )));
    }
    Ok(n as u32)
}

/// A new input array of `ty` holding the bit patterns `init`.
pub fn data(ty: ScalarType, init: Vec<u32>) -> Result<Value, TraceError> {
    let len = checked_len(init.len())?;
    Ok(node(ty, ArrayOp::Data(init), Vec::new(), len))
}

/// The scalars `elements` gathered into an array of `ty` (ints become floats for a
/// float array; a float element in an int array is an error).
pub fn pack(ty: ScalarType, elements: &[Value]) -> Result<Value, TraceError> {
    let len = checked_len(elements.len())?;
    let mut args = Vec::with_capacity(elements.len());
    for (i, e) in elements.iter().enumerate() {
        args.push(match (ty, e.ty()) {
            (ScalarType::Float, _) => trace::to_float(e),
            (_, ScalarType::Float) => {
                return Err(err(format!(
                    "element {i} is a float value, which a {} array cannot hold: \
                     use dtype='float' or convert it explicitly",
                    ty.name()
                )))
            }
            _ => e.clone(),
        });
    }
    Ok(node(ty, ArrayOp::Pack, args, len))
}

/// The number of elements of `v` if it is an array, `None` for a scalar.
pub fn len_of(v: &Value) -> Option<u32> {
    storage(v).filter(|a| a.len > 0).map(|a| a.len)
}

/// Element `k` of array `a`: a scalar read from the array's memory.
pub fn element(a: &Value, k: u32) -> Result<Value, TraceError> {
    let a = &wide(a)?;
    let len = len_of(a).ok_or_else(|| err("element() needs an array".into()))?;
    if k >= len {
        return Err(err(format!(
            "element {k} is out of range for an array of {len} elements"
        )));
    }
    Ok(node(a.ty(), ArrayOp::Element(k), vec![a.clone()], 0))
}

/// A scalar stand-in of the element type of `v`, to ask the scalar rules about it.
fn probe(v: &Value) -> Value {
    Value::input(v.ty(), 0)
}

/// `v` converted to float: an element-wise conversion for arrays, as scalars do.
fn to_float(v: &Value) -> Value {
    if v.ty() == ScalarType::Float {
        return v.clone();
    }
    match len_of(v) {
        Some(len) => node(
            ScalarType::Float,
            ArrayOp::Unary(Op::IntToFloat),
            vec![v.clone()],
            len,
        ),
        None => trace::to_float(v),
    }
}

/// Operands converted as the scalar operation converts them (the type its operand
/// node ends up with), and the result type.
fn promoted(op: Op, a: &Value, b: &Value) -> Result<(Value, Value, ScalarType), TraceError> {
    let r = trace::binary(op, &probe(a), &probe(b))?;
    let float_operands = match r.kind() {
        NodeKind::Binary(_, x, _) => x.ty() == ScalarType::Float,
        _ => r.ty() == ScalarType::Float,
    };
    if float_operands {
        Ok((to_float(a), to_float(b), r.ty()))
    } else {
        Ok((a.clone(), b.clone(), r.ty()))
    }
}

fn same_len(a: &Value, b: &Value, what: &str) -> Result<u32, TraceError> {
    match (len_of(a), len_of(b)) {
        (Some(x), Some(y)) if x != y => Err(err(format!(
            "cannot {what} arrays of {x} and {y} elements: the lengths must match"
        ))),
        (Some(x), _) | (_, Some(x)) => Ok(x),
        (None, None) => Err(err(format!("{what} needs at least one array operand"))),
    }
}

/// Element-wise `a op b`; each operand is an array or a scalar broadcast to every
/// element, at least one is an array, arrays have the same length.
pub fn binary(op: Op, a: &Value, b: &Value) -> Result<Value, TraceError> {
    let a = &wide(a)?;
    let b = &wide(b)?;
    if !Op::BINARY.contains(&op) {
        return Err(err(format!("{op:?} is not a binary operation")));
    }
    let len = same_len(a, b, op.stencil_name())?;
    let (a, b, ty) = promoted(op, a, b)?;
    let form = Form::of(len_of(&a).is_some(), len_of(&b).is_some());
    Ok(node(ty, ArrayOp::Binary(op, form), vec![a, b], len))
}

/// Element-wise `op(a)` for a unary operation.
pub fn unary(op: Op, a: &Value) -> Result<Value, TraceError> {
    let a = &wide(a)?;
    let len = len_of(a).ok_or_else(|| err(format!("{op:?} needs an array")))?;
    let r = trace::unary(op, &probe(a))?;
    if op == Op::IntToFloat {
        return Ok(to_float(a));
    }
    let a = match r.kind() {
        NodeKind::Unary(_, x) if x.ty() == ScalarType::Float => to_float(a),
        _ => a.clone(),
    };
    Ok(node(r.ty(), ArrayOp::Unary(op), vec![a], len))
}

/// Array `a` converted element-wise to `ty` by the rules of [`trace::cast`], one loop
/// stencil (or none when it already has the type).
pub fn cast(a: &Value, ty: ScalarType) -> Result<Value, TraceError> {
    let a = &wide(a)?;
    len_of(a).ok_or_else(|| err("cast() of an array needs an array".into()))?;
    match (a.ty(), ty) {
        (from, to) if from == to => Ok(a.clone()),
        (_, ScalarType::Float) => Ok(to_float(a)),
        (ScalarType::Float, ScalarType::Int) => unary(Op::FloatToInt, a),
        // bool + 0 is the int 0/1
        (_, ScalarType::Int) => binary(Op::Add, a, &Value::constant(ScalarType::Int, 0)),
        (from, ScalarType::Bool) => binary(Op::Ne, a, &Value::constant(from, 0)),
    }
}

/// Element-wise `cond ? x : y` with a bool or int array condition; `x`, `y` arrays or
/// scalars, never leaking the value not chosen. The result type is the scalar select's:
/// float if either side is (the other converted), bool if both are bool, else int.
/// The kernel selects 32-bit patterns by masks, so int and bool sides pass unchanged.
pub fn select(cond: &Value, x: &Value, y: &Value) -> Result<Value, TraceError> {
    let cond = &wide(cond)?;
    let x = &wide(x)?;
    let y = &wide(y)?;
    let len = len_of(cond)
        .ok_or_else(|| err("the condition of an array select must be an array".into()))?;
    if cond.ty() == ScalarType::Float {
        return Err(err(
            "the condition of iif must be a bool or int array, got a float array: compare it, e.g. x > 0".into(),
        ));
    }
    for v in [x, y] {
        if let Some(n) = len_of(v) {
            if n != len {
                return Err(err(format!(
                    "cannot select between arrays of {n} elements with a condition of {len}: the lengths must match"
                )));
            }
        }
    }
    let (x, y, ty) = if x.ty() == ScalarType::Float || y.ty() == ScalarType::Float {
        (to_float(x), to_float(y), ScalarType::Float)
    } else if x.ty() == ScalarType::Bool && y.ty() == ScalarType::Bool {
        (x.clone(), y.clone(), ScalarType::Bool)
    } else {
        (x.clone(), y.clone(), ScalarType::Int)
    };
    let form = Form::of(len_of(&x).is_some(), len_of(&y).is_some());
    Ok(node(
        ty,
        ArrayOp::Select(form),
        vec![cond.clone(), x, y],
        len,
    ))
}

/// The `strided` row: a copy of the elements of `a` picked by up to four (size, stride)
/// dimensions from `offset` (the adjoints' transposes and broadcasts).
pub fn strided(a: &Value, offset: i64, dims: &[(u32, i64)]) -> Result<Value, TraceError> {
    kernel(
        "strided",
        std::slice::from_ref(a),
        &walk_params(&[offset], dims),
    )
}

/// The `gather` row: a walk of `a` from the runtime int `offset` clamped to `[lo, hi]`.
pub fn gather(
    a: &Value,
    offset: &Value,
    lo: i64,
    hi: i64,
    dims: &[(u32, i64)],
) -> Result<Value, TraceError> {
    let operands = [a.clone(), offset.clone()];
    kernel("gather", &operands, &walk_params(&[lo, hi], dims))
}

/// The `scatter_add` row, the adjoint of a walk: `g` added into `len` zeros where the
/// stored walk `[lo, hi, n0..n3, s0..s3]` from `offset` reads.
pub fn scatter_add(
    g: &Value,
    offset: &Value,
    walk: [i32; 10],
    len: u32,
) -> Result<Value, TraceError> {
    let mut prm: Vec<i64> = walk.iter().map(|&x| i64::from(x)).collect();
    prm.push(i64::from(len));
    kernel("scatter_add", &[g.clone(), offset.clone()], &prm)
}

/// The flat parameters of a walk: the offsets, then the (size, stride) pairs.
fn walk_params(offsets: &[i64], dims: &[(u32, i64)]) -> Vec<i64> {
    let pairs = dims.iter().flat_map(|&(n, s)| [i64::from(n), s]);
    offsets.iter().copied().chain(pairs).collect()
}

/// Row `name` of [`crate::array_kernels::KERNELS`] applied to `operands` with the integer
/// parameters `prm`, checked by the row's [`crate::array_kernels::Rule`]: the parameters
/// by their kind ([`kernel_params`], which also stores them as the node's words), every
/// operand's length the product of the words its rule names (or the length `N` all such
/// operands share), int operands ints, byte operands bytes, a walk inside the array it
/// walks; the result gets the rule's length and element type (operands promoted as the
/// scalar product promotes them, or converted to float, where the rule says so). Byte
/// arrays are read widened, as by every operation, except by the widening itself.
pub fn kernel(name: &str, operands: &[Value], prm: &[i64]) -> Result<Value, TraceError> {
    let (row, k) = array_kernels::row_index(name)
        .map(|i| (i, &array_kernels::KERNELS[usize::from(i)]))
        .ok_or_else(|| err(format!("unknown array operation {name:?}")))?;
    let rule = &k.rule;
    let words = kernel_params::store(name, rule.params, prm)?;
    if operands.len() != rule.operands.len() {
        return Err(err(format!(
            "{name} takes {} operands ({}), got {}",
            rule.operands.len(),
            k.shape,
            operands.len()
        )));
    }
    let ops = operands
        .iter()
        .zip(rule.operands)
        .map(|(v, want)| match want {
            Operand::Bytes(_) => Ok(v.clone()),
            _ => wide(v),
        })
        .collect::<Result<Vec<Value>, TraceError>>()?;
    let product = |at: &[usize]| {
        at.iter()
            .fold(1u64, |p, &i| p.saturating_mul(u64::from(words[i])))
    };
    let mut n: Option<u32> = None;
    for (i, (v, want)) in ops.iter().zip(rule.operands).enumerate() {
        let (Operand::Array(l) | Operand::IntArray(l) | Operand::Bytes(l)) = *want else {
            if len_of(v).is_some() || v.ty() == ScalarType::Float {
                return Err(err(format!(
                    "{name}: operand {i} must be an int or bool value (an index), not {}",
                    describe(v)
                )));
            }
            continue;
        };
        let have = len_of(v).ok_or_else(|| {
            err(format!(
                "{name}: operand {i} must be an array ({}), not {}",
                k.shape,
                describe(v)
            ))
        })?;
        if matches!(want, Operand::IntArray(_)) && v.ty() != ScalarType::Int {
            return Err(err(format!(
                "{name}: operand {i} must be an int array, not {}",
                describe(v)
            )));
        }
        if matches!(want, Operand::Bytes(_)) && !is_bytes(v) {
            return Err(err(format!(
                "{name}: operand {i} must be a byte array, not {}",
                describe(v)
            )));
        }
        match l {
            Len::N => match n {
                Some(m) if m != have => {
                    return Err(err(format!(
                        "{name} of arrays of {m} and {have} elements: the lengths must match"
                    )))
                }
                _ => n = Some(have),
            },
            Len::Prm(at) if u64::from(have) != product(at) => {
                return Err(err(format!(
                "{name} with parameters {prm:?} ({}) needs operand {i} of {} elements, got {have}",
                k.shape,
                product(at)
            )))
            }
            Len::Prm(_) => {}
            Len::Scalar => return Err(err(format!("{name}: operand {i} has no length"))),
        }
    }
    kernel_params::check_reach(name, rule.params, &words, len_of(&ops[0]).unwrap_or(0))?;
    let len = match rule.result {
        Len::Scalar => 0,
        Len::N => n.ok_or_else(|| err(format!("{name}: the result has no length")))?,
        Len::Prm(at) => checked_len(usize::try_from(product(at)).unwrap_or(usize::MAX))?,
    };
    let (args, ty) = match rule.ty {
        Ty::Operand => (ops.clone(), ops[0].ty()),
        Ty::Int => (ops, ScalarType::Int),
        Ty::Sum if ops[0].ty() == ScalarType::Float => (ops, ScalarType::Float),
        Ty::Sum => (ops, ScalarType::Int),
        Ty::Float => {
            if ops.iter().any(|v| v.ty() != ScalarType::Float) {
                return Err(err(format!(
                    "{name}() needs float arrays: convert them with to_float"
                )));
            }
            (ops, ScalarType::Float)
        }
        Ty::ToFloat => {
            let converted = ops
                .iter()
                .map(|v| match len_of(v) {
                    Some(_) => to_float(v),
                    None => v.clone(),
                })
                .collect();
            (converted, ScalarType::Float)
        }
        Ty::Product => {
            let (a, b, ty) = promoted(Op::Mul, &ops[0], &ops[1])?;
            (vec![a, b], ty)
        }
        Ty::Bytes => {
            let op = ArrayOp::Kernel { row, prm: words };
            return Ok(byte_node(op, ops, len));
        }
    };
    Ok(node(ty, ArrayOp::Kernel { row, prm: words }, args, len))
}

/// `v` for an error message: "an array of n elements" or "a float value".
fn describe(v: &Value) -> String {
    match len_of(v) {
        Some(n) => format!("an array of {n} elements"),
        None => format!("a {} value", v.ty().name()),
    }
}

/// Whether `v` is an array stored as data (an input the user can write).
pub fn is_data(v: &Value) -> bool {
    matches!(v.kind(), NodeKind::Array(a) if matches!(a.op, ArrayOp::Data(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn farr(n: usize) -> Value {
        data(ScalarType::Float, vec![0; n]).unwrap()
    }

    #[test]
    fn int_array_plus_float_scalar_is_a_float_array() {
        let a = data(ScalarType::Int, vec![1, 2, 3]).unwrap();
        let s = Value::input(ScalarType::Float, 0);
        let r = binary(Op::Add, &a, &s).unwrap();
        assert_eq!(r.ty(), ScalarType::Float);
        assert_eq!(len_of(&r), Some(3));
        let NodeKind::Array(n) = r.kind() else {
            panic!()
        };
        assert_eq!(n.op, ArrayOp::Binary(Op::Add, Form::AS));
        assert_eq!(n.args[0].ty(), ScalarType::Float);
    }

    #[test]
    fn lengths_must_match_and_bitwise_floats_are_errors() {
        assert!(binary(Op::Add, &farr(3), &farr(4)).is_err());
        assert!(binary(Op::And, &farr(3), &farr(3)).is_err());
        assert!(kernel("dot", &[farr(2), farr(2)], &[]).is_ok());
        assert!(kernel("dot", &[farr(2), farr(3)], &[]).is_err());
        assert!(element(&farr(2), 2).is_err());
        assert!(data(ScalarType::Float, vec![]).is_err());
    }

    #[test]
    fn gathers_and_row_reductions_check_their_shapes() {
        let i = Value::input(ScalarType::Int, 0);
        // offsets 0..=4 of 2-element rows of stride 1 read at most element 5
        assert!(gather(&farr(6), &i, 0, 4, &[(2, 1)]).is_ok());
        assert!(gather(&farr(5), &i, 0, 4, &[(2, 1)]).is_err());
        assert!(gather(
            &farr(6),
            &Value::input(ScalarType::Float, 0),
            0,
            0,
            &[(2, 1)]
        )
        .is_err());
        assert!(kernel("rows_min", &[farr(6)], &[2, 3]).is_ok());
        assert!(kernel("rows_min", &[farr(6)], &[4, 2]).is_err());
        assert!(kernel("rows_min", &[farr(6)], &[0, 6]).is_err());
        assert!(kernel("rows_min", &[farr(6)], &[-2, -3]).is_err());
        assert!(kernel("solve", &[farr(9), farr(6)], &[3, 2]).is_ok());
        assert!(kernel("solve", &[farr(9), farr(5)], &[3, 2]).is_err());
        let ints = data(ScalarType::Int, vec![0; 4]).unwrap();
        assert!(kernel("solve", &[ints, farr(2)], &[2, 1]).is_err());
        let d = kernel("det", &[farr(9)], &[3]).unwrap();
        assert_eq!((d.ty(), len_of(&d)), (ScalarType::Float, None));
        assert!(kernel("det", &[farr(8)], &[3]).is_err());
        assert!(kernel("det", &[farr(9)], &[3, 1]).is_err());
        assert!(kernel("strided", &[farr(9)], &[]).is_err());
        let s = kernel("argsort", &[farr(4)], &[]).unwrap();
        assert_eq!((s.ty(), len_of(&s)), (ScalarType::Int, Some(4)));
    }

    #[test]
    fn comparisons_give_bool_arrays() {
        let r = binary(Op::Lt, &farr(5), &Value::input(ScalarType::Int, 0)).unwrap();
        assert_eq!(r.ty(), ScalarType::Bool);
    }
}
