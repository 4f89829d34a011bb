//! Array values: `n` contiguous data slots, and operations that compile to one stencil
//! per operation whatever `n` is.
//!
//! An array is a graph node like a scalar (a [`NodeKind::Array`]); its [`ArrayNode`]
//! says what it is (stored data, gathered scalars, or the result of an element-wise
//! operation) and its length. Reductions ([`sum`], [`dot`]) and [`element`] give
//! ordinary scalar values, so scalar code can use them directly.
//!
//! Type rules are those of the scalar operations: each constructor asks
//! [`crate::trace`] what the scalar operation would do with operands of the element
//! types (promotion to float, result type, errors), so arrays and scalars cannot
//! disagree. The scheduler gives every array a 16-byte aligned range of slots and
//! emits one `st_arr_*` step per operation (see `stencils/README.md`).

use crate::graph::{NodeKind, Op, ScalarType, Value};
use crate::trace::{self, TraceError};

pub use crate::graph::{ArrayNode, ArrayOp, Form};

/// Largest number of elements of one array: offsets stay far inside the 4 GiB of
/// the program format.
pub const MAX_LEN: usize = 1 << 26;

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

/// `v` as operations read it: byte storage widened to int32 elements (one loop
/// stencil), anything else as it is.
/// A new array node (for operations built in other modules, such as `crate::window`).
pub(crate) fn new_node(ty: ScalarType, op: ArrayOp, args: Vec<Value>, len: u32) -> Value {
    node(ty, op, args, len)
}

fn wide(v: &Value) -> Value {
    match v.kind() {
        NodeKind::Array(a) if a.bytes => {
            node(ScalarType::Int, ArrayOp::Widen, vec![v.clone()], a.len)
        }
        _ => v.clone(),
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
/// (floats toward 0, NaN 0), one loop stencil.
pub fn to_bytes(a: &Value) -> Result<Value, TraceError> {
    let len = len_of(a).ok_or_else(|| err("to_bytes() of an array needs an array".into()))?;
    if is_bytes(a) {
        return Ok(a.clone());
    }
    Ok(byte_node(ArrayOp::Narrow, vec![a.clone()], len))
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
    let a = &wide(a);
    let len = len_of(a).ok_or_else(|| err("element() needs an array".into()))?;
    if k >= len {
        return Err(err(format!(
            "element {k} is out of range for an array of {len} elements"
        )));
    }
    Ok(node(a.ty(), ArrayOp::Element(k), vec![a.clone()], 0))
}

/// Element `index` of array `a`, chosen at run time (an int or bool value): negative
/// indices count from the end once, then the index is clamped to the array.
pub fn index(a: &Value, index: &Value) -> Result<Value, TraceError> {
    let a = &wide(a);
    let index = &wide(index);
    len_of(a).ok_or_else(|| err("indexing at run time needs an array".into()))?;
    if len_of(index).is_some() || index.ty() == ScalarType::Float {
        return Err(err(format!(
            "an array index must be an int or bool value, not {}",
            if len_of(index).is_some() {
                "an array".to_string()
            } else {
                format!("a {} value", index.ty().name())
            }
        )));
    }
    Ok(node(
        a.ty(),
        ArrayOp::Index,
        vec![a.clone(), index.clone()],
        0,
    ))
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
    let a = &wide(a);
    let b = &wide(b);
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
    let a = &wide(a);
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
    let a = &wide(a);
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
    let cond = &wide(cond);
    let x = &wide(x);
    let y = &wide(y);
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

/// Sum of the elements of `a` (float, or int for int and bool arrays), in the fixed
/// order.
pub fn sum(a: &Value) -> Result<Value, TraceError> {
    let a = &wide(a);
    len_of(a).ok_or_else(|| err("sum() needs an array".into()))?;
    let ty = match a.ty() {
        ScalarType::Float => ScalarType::Float,
        _ => ScalarType::Int,
    };
    Ok(node(ty, ArrayOp::Sum, vec![a.clone()], 0))
}

/// The smallest (`Op::Min`) or largest (`Op::Max`) element of `a`.
pub fn extreme(op: Op, a: &Value) -> Result<Value, TraceError> {
    let a = &wide(a);
    len_of(a).ok_or_else(|| err("min() and max() need an array".into()))?;
    if !matches!(op, Op::Min | Op::Max) {
        return Err(err(format!("{op:?} is not a reduction")));
    }
    Ok(node(a.ty(), ArrayOp::Reduce(op), vec![a.clone()], 0))
}

/// The matrix product of `a` (`m x k`, row-major) and `b` (`k x p`).
pub fn matmul(a: &Value, b: &Value, m: u32, k: u32, p: u32) -> Result<Value, TraceError> {
    let a = &wide(a);
    let b = &wide(b);
    let (la, lb) = (len_of(a), len_of(b));
    let (mk, kp) = (m as u64 * k as u64, k as u64 * p as u64);
    if la.map(u64::from) != Some(mk) || lb.map(u64::from) != Some(kp) {
        return Err(err(format!(
            "matmul of {m}x{k} and {k}x{p} needs arrays of {mk} and {kp} elements"
        )));
    }
    let len = checked_len(m as usize * p as usize)?;
    let (a, b, ty) = promoted(Op::Mul, a, b)?;
    Ok(node(ty, ArrayOp::MatMul { m, k, p }, vec![a, b], len))
}

/// A copy of elements of `a` picked by up to four (size, stride) dimensions from
/// `offset` (slices, transposes, broadcasts); every picked index must be inside `a`.
pub fn strided(a: &Value, offset: i64, dims: &[(u32, i64)]) -> Result<Value, TraceError> {
    let a = &wide(a);
    let n = len_of(a).ok_or_else(|| err("a strided copy needs an array".into()))? as i64;
    if dims.len() > 4 {
        return Err(err(format!(
            "a strided copy has at most 4 dimensions, got {}",
            dims.len()
        )));
    }
    let (mut lo, mut hi) = (offset, offset);
    let mut count: usize = 1;
    for &(size, stride) in dims {
        if size == 0 {
            return Err(err("a strided copy needs at least one element".into()));
        }
        let reach = (size as i64 - 1) * stride;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
        count = count.saturating_mul(size as usize);
    }
    if lo < 0 || hi >= n {
        return Err(err(format!(
            "a strided copy would read elements {lo}..={hi} of an array of {n}"
        )));
    }
    let len = checked_len(count)?;
    let mut prm = [0i32, 1, 1, 1, 1, 0, 0, 0, 0];
    prm[0] = offset as i32;
    let pad = 4 - dims.len();
    for (d, &(size, stride)) in dims.iter().enumerate() {
        prm[1 + pad + d] = size as i32;
        prm[5 + pad + d] = stride as i32;
    }
    Ok(node(a.ty(), ArrayOp::Strided(prm), vec![a.clone()], len))
}

/// `a` sorted (NumPy's stable ascending order, NaNs last), or with `argsort` the int
/// indices that sort it.
pub fn sort(a: &Value, argsort: bool) -> Result<Value, TraceError> {
    let a = &wide(a);
    let len = len_of(a).ok_or_else(|| err("sort() needs an array".into()))?;
    let ty = if argsort { ScalarType::Int } else { a.ty() };
    Ok(node(ty, ArrayOp::Sort { argsort }, vec![a.clone()], len))
}

/// The smallest (`Op::Min`) or largest (`Op::Max`) element of each row of `a`, a
/// row-major `rows x cols` array.
pub fn rows_extreme(op: Op, a: &Value, rows: u32, cols: u32) -> Result<Value, TraceError> {
    let a = &wide(a);
    let len = len_of(a).ok_or_else(|| err("min() and max() need an array".into()))?;
    if !matches!(op, Op::Min | Op::Max) {
        return Err(err(format!("{op:?} is not a reduction")));
    }
    if rows as u64 * cols as u64 != u64::from(len) || rows == 0 {
        return Err(err(format!(
            "{rows} rows of {cols} elements do not make an array of {len}"
        )));
    }
    Ok(node(
        a.ty(),
        ArrayOp::Rows { op, rows, cols },
        vec![a.clone()],
        rows,
    ))
}

/// Checks up to four (size, stride) dimensions read from any offset in `[lo, hi]` stay
/// inside an array of `n` elements; the parameters `[lo, hi, n0..n3, s0..s3]` and the
/// number of elements.
fn walk_params(
    n: i64,
    lo: i64,
    hi: i64,
    dims: &[(u32, i64)],
) -> Result<([i32; 10], u32), TraceError> {
    if dims.len() > 4 || dims.is_empty() {
        return Err(err(format!(
            "a gather has 1 to 4 dimensions, got {}",
            dims.len()
        )));
    }
    if lo > hi {
        return Err(err(format!("the offset range {lo}..={hi} is empty")));
    }
    let (mut low, mut high) = (lo, hi);
    let mut count: usize = 1;
    for &(size, stride) in dims {
        if size == 0 {
            return Err(err("a gather needs at least one element".into()));
        }
        let reach = (size as i64 - 1) * stride;
        if reach < 0 {
            low += reach;
        } else {
            high += reach;
        }
        count = count.saturating_mul(size as usize);
    }
    if low < 0 || high >= n {
        return Err(err(format!(
            "a gather would read elements {low}..={high} of an array of {n}"
        )));
    }
    let len = checked_len(count)?;
    let mut prm = [lo as i32, hi as i32, 1, 1, 1, 1, 0, 0, 0, 0];
    let pad = 4 - dims.len();
    for (d, &(size, stride)) in dims.iter().enumerate() {
        prm[2 + pad + d] = size as i32;
        prm[6 + pad + d] = stride as i32;
    }
    Ok((prm, len))
}

fn int_offset(offset: &Value) -> Result<(), TraceError> {
    if len_of(offset).is_some() || offset.ty() == ScalarType::Float {
        return Err(err(
            "the offset of a gather must be an int or bool value".into()
        ));
    }
    Ok(())
}

/// A copy of elements of `a` picked by up to four (size, stride) dimensions from the
/// runtime int `offset`, clamped to `[lo, hi]` (every offset in that range must keep the
/// picked elements inside `a`): sub-arrays at runtime indices.
pub fn gather(
    a: &Value,
    offset: &Value,
    lo: i64,
    hi: i64,
    dims: &[(u32, i64)],
) -> Result<Value, TraceError> {
    let a = &wide(a);
    let n = len_of(a).ok_or_else(|| err("a gather needs an array".into()))?;
    int_offset(offset)?;
    let (prm, len) = walk_params(i64::from(n), lo, hi, dims)?;
    Ok(node(
        a.ty(),
        ArrayOp::Gather(prm),
        vec![a.clone(), offset.clone()],
        len,
    ))
}

/// The adjoint of [`gather`] (or of a strided copy, with `lo == hi` the offset): a float
/// array of `len` elements, zero except where the gather reads, which get the sum of
/// the elements of `g` read from there.
pub fn scatter_add(
    g: &Value,
    offset: &Value,
    prm: [i32; 10],
    len: u32,
) -> Result<Value, TraceError> {
    let g = &wide(g);
    let glen = len_of(g).ok_or_else(|| err("a scatter needs an array".into()))?;
    int_offset(offset)?;
    let dims: Vec<(u32, i64)> = (0..4)
        .map(|d| (prm[2 + d] as u32, i64::from(prm[6 + d])))
        .collect();
    let (checked, count) =
        walk_params(i64::from(len), i64::from(prm[0]), i64::from(prm[1]), &dims)?;
    if count != glen || checked != prm {
        return Err(err(format!(
            "a scatter of {count} positions cannot take an array of {glen} elements"
        )));
    }
    let mut full = [0i32; 11];
    full[..10].copy_from_slice(&prm);
    full[10] = checked_len(len as usize)? as i32;
    let g = to_float(g);
    Ok(node(
        ScalarType::Float,
        ArrayOp::ScatterAdd(full),
        vec![g, offset.clone()],
        len,
    ))
}

/// `x` at the positions `perm` (an int array, a permutation of `x`'s indices): the
/// adjoint of a sort sends the gradient back through it.
pub fn take(x: &Value, perm: &Value) -> Result<Value, TraceError> {
    let x = &wide(x);
    let n = len_of(x).ok_or_else(|| err("take() needs an array".into()))?;
    let len = len_of(perm).ok_or_else(|| err("take() needs an index array".into()))?;
    if perm.ty() != ScalarType::Int || len != n {
        return Err(err(format!(
            "take() needs an int permutation of {n} indices"
        )));
    }
    Ok(node(
        x.ty(),
        ArrayOp::Take,
        vec![x.clone(), perm.clone()],
        len,
    ))
}

/// The solution of `a @ x = b` for a float `n x n` matrix `a` and float `n x r`
/// right-hand sides `b` (both row-major): one elimination stencil.
pub fn solve(a: &Value, b: &Value, n: u32, r: u32) -> Result<Value, TraceError> {
    let (la, lb) = (len_of(a), len_of(b));
    let (nn, nr) = (n as u64 * n as u64, n as u64 * r as u64);
    if n == 0 || r == 0 || la.map(u64::from) != Some(nn) || lb.map(u64::from) != Some(nr) {
        return Err(err(format!(
            "solve of a {n}x{n} matrix and {n}x{r} right-hand sides needs arrays of {nn} and {nr} elements"
        )));
    }
    if a.ty() != ScalarType::Float || b.ty() != ScalarType::Float {
        return Err(err(
            "solve() needs float arrays: convert them with to_float".into(),
        ));
    }
    let len = checked_len(nr as usize)?;
    Ok(node(
        ScalarType::Float,
        ArrayOp::Solve { n, r },
        vec![a.clone(), b.clone()],
        len,
    ))
}

/// The determinant of a float `n x n` matrix `a` (row-major): one elimination stencil.
pub fn det(a: &Value, n: u32) -> Result<Value, TraceError> {
    let nn = n as u64 * n as u64;
    if n == 0 || len_of(a).map(u64::from) != Some(nn) {
        return Err(err(format!(
            "det of a {n}x{n} matrix needs an array of {nn} elements"
        )));
    }
    if a.ty() != ScalarType::Float {
        return Err(err(
            "det() needs a float array: convert it with to_float".into()
        ));
    }
    Ok(node(
        ScalarType::Float,
        ArrayOp::Det { n },
        vec![a.clone()],
        0,
    ))
}

/// Sum of `a[k] * b[k]` over two arrays of the same length, in the fixed order.
pub fn dot(a: &Value, b: &Value) -> Result<Value, TraceError> {
    let a = &wide(a);
    let b = &wide(b);
    if len_of(a).is_none() || len_of(b).is_none() {
        return Err(err("dot() needs two arrays".into()));
    }
    same_len(a, b, "take the dot product of")?;
    let (a, b, ty) = promoted(Op::Mul, a, b)?;
    Ok(node(ty, ArrayOp::Dot, vec![a, b], 0))
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
        assert!(dot(&farr(2), &farr(2)).is_ok());
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
        assert!(rows_extreme(Op::Min, &farr(6), 2, 3).is_ok());
        assert!(rows_extreme(Op::Min, &farr(6), 4, 2).is_err());
        assert!(rows_extreme(Op::Add, &farr(6), 2, 3).is_err());
        assert!(solve(&farr(9), &farr(6), 3, 2).is_ok());
        assert!(solve(&farr(9), &farr(5), 3, 2).is_err());
        let ints = data(ScalarType::Int, vec![0; 4]).unwrap();
        assert!(solve(&ints, &farr(2), 2, 1).is_err());
        let d = det(&farr(9), 3).unwrap();
        assert_eq!((d.ty(), len_of(&d)), (ScalarType::Float, None));
        assert!(det(&farr(8), 3).is_err());
        let s = sort(&farr(4), true).unwrap();
        assert_eq!((s.ty(), len_of(&s)), (ScalarType::Int, Some(4)));
    }

    #[test]
    fn comparisons_give_bool_arrays() {
        let r = binary(Op::Lt, &farr(5), &Value::input(ScalarType::Int, 0)).unwrap();
        assert_eq!(r.ty(), ScalarType::Bool);
    }
}
