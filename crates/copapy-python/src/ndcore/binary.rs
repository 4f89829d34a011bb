//! Element-wise binary operators of every container over both storage modes, broadcast as
//! NumPy: an array computes with one array stencil (`**` with an int constant as the scalar
//! rule's multiplications); leaves element by element with Python's operator, so two plain
//! numbers give a plain number (Copapy's constant folding), unless the container packs
//! (`pack.rs`): then one array stencil too, its result a container aliasing the array.

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString};

use copapy_compiler::{array, Op, ScalarType, Value};

use super::errors::tuple;
use super::leaves::{is_leaf, nd_scalar};
use super::pack::{nd_pack, nd_wants_pack};
use super::shapes::nd_broadcast;
use super::storage::{built, Contents, Nd};
use crate::array_ops::{operand, PyArrayNode};
use crate::container::registry;
use crate::shape;
use crate::walk;

/// The op table's name of an operator (Python's spelling accepted: 'truediv', 'lshift').
fn op_name(name: &str) -> &str {
    match name {
        "truediv" => "div",
        "lshift" => "shl",
        "rshift" => "shr",
        other => other,
    }
}

/// `a op b` by Python's operator (a traced value's builds a node; numbers fold).
fn apply<'py>(
    op: &str,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::basic::CompareOp::*;
    match op {
        "add" => a.add(b),
        "sub" => a.sub(b),
        "mul" => a.mul(b),
        "div" => a.div(b),
        "floordiv" => a.floor_div(b),
        "mod" => a.rem(b),
        "pow" => a.pow(b, a.py().None()),
        "and" => a.bitand(b),
        "or" => a.bitor(b),
        "xor" => a.bitxor(b),
        "shl" => a.lshift(b),
        "shr" => a.rshift(b),
        "lt" => a.rich_compare(b, Lt),
        "le" => a.rich_compare(b, Le),
        "gt" => a.rich_compare(b, Gt),
        "ge" => a.rich_compare(b, Ge),
        "eq" => a.rich_compare(b, Eq),
        "ne" => a.rich_compare(b, Ne),
        _ => Err(PyValueError::new_err(format!("unknown operator '{op}'"))),
    }
}

/// `(own, other)` in the operator's order: swapped when `reflected` (`other op con`).
fn ordered<T>(own: T, other: T, reflected: bool) -> (T, T) {
    if reflected {
        (other, own)
    } else {
        (own, other)
    }
}

/// The array node of `x` when it is a `cp.array`.
fn node_of(x: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    Ok(match walk::attr(x, intern!(x.py(), "_cp_node"))? {
        Some(n) => Some(n.cast::<PyArrayNode>()?.get().value().clone()),
        None => None,
    })
}

/// `x ** n` for an int constant `n`, as the scalar rule does it (README, "Powers"):
/// multiplications left to right for `|n| < 8` (Copapy's order), square and multiply above,
/// `1 / x ** -n` for negative `n`, ones for `n == 0`; so an int array stays int (wrapping)
/// and a float one gets the scalar bits, not `powf`'s.
fn power(x: &Value, dtype: &str, n: i64) -> PyResult<Value> {
    let mul = |a: &Value, b: &Value| built(array::binary(Op::Mul, a, b));
    if n == 0 {
        let len = array::len_of(x).unwrap_or(0) as usize;
        let (ty, one) = match x.ty() {
            ScalarType::Float => (ScalarType::Float, 1.0f32.to_bits()),
            _ => (ScalarType::Int, 1),
        };
        return built(array::data(ty, vec![one; len]));
    }
    let mut base = if dtype == "bool" {
        mul(x, &Value::constant(ScalarType::Int, 1))?
    } else {
        x.clone()
    };
    let mut m = n.unsigned_abs();
    let acc = if m < 8 {
        let mut acc = base.clone();
        for _ in 1..m {
            acc = mul(&acc, &base)?;
        }
        acc
    } else {
        let mut acc: Option<Value> = None;
        loop {
            if m & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(a) => mul(&a, &base)?,
                });
            }
            m >>= 1;
            if m == 0 {
                break;
            }
            base = mul(&base, &base)?;
        }
        acc.unwrap_or(base)
    };
    if n > 0 {
        return Ok(acc);
    }
    built(array::binary(
        Op::Div,
        &Value::constant(ScalarType::Float, 1.0f32.to_bits()),
        &acc,
    ))
}

fn array_binary<'py>(
    nd: &Nd<'py>,
    node: &Value,
    dtype: &str,
    op: &str,
    other: &Bound<'py, PyAny>,
    reflected: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    let Some(code) = Op::from_name(op).filter(|o| Op::BINARY.contains(o)) else {
        return Err(PyValueError::new_err(format!(
            "unknown array operation '{op}'"
        )));
    };
    if let Some(b) = node_of(other)? {
        let bshape: Vec<usize> = other.getattr(intern!(py, "shape"))?.extract()?;
        if bshape != nd.shape {
            let shape: Vec<usize> =
                nd_broadcast(py, nd.shape.clone(), bshape.clone(), op, "arrays")?.extract()?;
            let a = nd
                .con
                .call_method1(intern!(py, "broadcast_to"), (tuple(py, &shape)?,))?;
            let b = other.call_method1(intern!(py, "broadcast_to"), (tuple(py, &shape)?,))?;
            return nd_binary(&a, &b, op, reflected);
        }
        let (x, y) = ordered(node.clone(), b, reflected);
        return nd.node(built(array::binary(code, &x, &y))?, &nd.shape, None);
    }
    let Some(s) = nd_scalar(other)? else {
        // nested sequences and NumPy data become an array first, as NumPy takes them;
        // another container decides by its own reflected method
        if other.hasattr(intern!(py, "__copapy__"))? || !is_data(other)? {
            return Ok(py.NotImplemented().into_bound(py));
        }
        let b = nd.con.get_type().call1((other,))?;
        return array_binary(nd, node, dtype, op, &b, reflected);
    };
    if code == Op::Pow && !reflected && is_int_constant(&s) {
        return nd.node(power(node, dtype, s.extract()?)?, &nd.shape, None);
    }
    let s = operand(&s)?;
    let (x, y) = ordered(node.clone(), s, reflected);
    nd.node(built(array::binary(code, &x, &y))?, &nd.shape, None)
}

/// Leaves `op` other (a leaf or a container of leaves of the same shape) as one array
/// stencil, when `con` packs (and `other` too, if a container).
fn packed<'py>(
    nd: &Nd<'py>,
    op: &str,
    other: &Bound<'py, PyAny>,
    reflected: bool,
) -> PyResult<Option<Value>> {
    let Some(code) = Op::from_name(op).filter(|o| Op::BINARY.contains(o) && *o != Op::Pow) else {
        return Ok(None);
    };
    let Some(a) = nd_pack(&nd.con, false)? else {
        return Ok(None);
    };
    let b = if is_leaf(other) {
        operand(other)?
    } else {
        match nd_pack(other, false)? {
            Some(b) => b.cast::<PyArrayNode>()?.get().value().clone(),
            None => return Ok(None),
        }
    };
    let a = a.cast::<PyArrayNode>()?.get().value().clone();
    let (x, y) = ordered(a, b, reflected);
    built(array::binary(code, &x, &y)).map(Some)
}

fn leaves_binary<'py>(
    nd: &Nd<'py>,
    op: &str,
    other: &Bound<'py, PyAny>,
    reflected: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    // the class of the result (a vector only between vectors and sequences), its hooks
    let kind = nd.con.call_method1(intern!(py, "_result_kind"), (other,))?;
    let like = |vals: Vec<Bound<'py, PyAny>>, shape: &[usize]| {
        kind.call_method1(
            intern!(py, "_like"),
            (
                &nd.con,
                pyo3::types::PyTuple::new(py, vals)?,
                tuple(py, shape)?,
            ),
        )
    };
    let tensor = registry()?.matrix.clone_ref(py).into_bound(py);
    let is_tensor = other.is_instance(&tensor)?;
    let same_shape = is_tensor
        && other
            .getattr(intern!(py, "shape"))?
            .extract::<Vec<usize>>()?
            == nd.shape;
    if nd_wants_pack(&nd.con, None)? && (is_leaf(other) || same_shape) {
        if let Some(node) = packed(nd, op, other, reflected)? {
            let n = Bound::new(py, PyArrayNode::new(node))?;
            return kind.call_method1(intern!(py, "_from_node"), (n, tuple(py, &nd.shape)?));
        }
    }
    let a: Vec<_> = nd.elements()?;
    if is_leaf(other) {
        let out = a
            .iter()
            .map(|x| {
                let (l, r) = ordered(x, other, reflected);
                apply(op, l, r)
            })
            .collect::<PyResult<_>>()?;
        return like(out, &nd.shape);
    }
    let other = if is_tensor {
        other.clone()
    } else {
        if walk::attr(other, intern!(py, "values"))?.is_some() {
            return Ok(py.NotImplemented().into_bound(py)); // a quaternion: its reflected method decides
        }
        if let Some(s) = nd_scalar(other)? {
            return leaves_binary(nd, op, &s, reflected);
        }
        if !is_data(other)? {
            return Ok(py.NotImplemented().into_bound(py));
        }
        tensor.call1((other,))?
    };
    let o = Nd::of(&other)?;
    let b = o.elements()?;
    let what = if kind.is(&tensor) {
        "tensors"
    } else {
        "vectors"
    };
    let (sa, sb) = (&nd.shape, &o.shape);
    let shape: Vec<usize> = if sa == sb {
        sa.clone()
    } else {
        let (l, r) = ordered(sa, sb, reflected);
        nd_broadcast(py, l.clone(), r.clone(), op, what)?.extract()?
    };
    let spread = |vals: Vec<Bound<'py, PyAny>>, from: &[usize]| -> Vec<Bound<'py, PyAny>> {
        if from == shape {
            return vals;
        }
        let st = shape::signed(&shape::broadcast_strides(from, &shape));
        shape::view_indices(0, &shape, &st)
            .into_iter()
            .map(|k| vals[k].clone())
            .collect()
    };
    let (a, b) = (spread(a, sa), spread(b, sb));
    let out = a
        .iter()
        .zip(&b)
        .map(|(x, y)| {
            let (l, r) = ordered(x, y, reflected);
            apply(op, l, r)
        })
        .collect::<PyResult<_>>()?;
    like(out, &shape)
}

/// `con op other` (`other op con` if `reflected`) element by element, broadcast as NumPy;
/// `NotImplemented` for an operand it cannot take (Python then asks the other one).
#[pyfunction]
pub fn nd_binary<'py>(
    con: &Bound<'py, PyAny>,
    other: &Bound<'py, PyAny>,
    op: &str,
    reflected: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let op = op_name(op);
    match &nd.contents {
        Contents::Array { node, dtype } => array_binary(&nd, node, dtype, op, other, reflected),
        Contents::Leaves(_) => leaves_binary(&nd, op, other, reflected),
    }
}

/// `-x`, `abs(x)` (`op`: 'neg', 'abs'): one array stencil, or leaf by leaf.
#[pyfunction]
pub fn nd_unary<'py>(con: &Bound<'py, PyAny>, op: &str) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let Some(code) = Op::from_name(op).filter(|o| Op::UNARY.contains(o)) else {
        return Err(PyValueError::new_err(format!(
            "unknown array function '{op}'"
        )));
    };
    match &nd.contents {
        Contents::Array { node, .. } => nd.node(built(array::unary(code, node))?, &nd.shape, None),
        Contents::Leaves(t) => {
            let out = t
                .iter()
                .map(|x| match op {
                    "neg" => x.neg(),
                    "abs" => x.abs(),
                    _ => Err(PyValueError::new_err(format!("'{op}' takes an array"))),
                })
                .collect::<PyResult<_>>()?;
            nd.leaves(out, &nd.shape)
        }
    }
}

/// Whether `x` may be nested data (an iterable, not text).
fn is_data(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(!x.is_instance_of::<PyString>()
        && !x.is_instance_of::<PyBytes>()
        && x.hasattr(intern!(x.py(), "__iter__"))?)
}

/// Whether `x` is an int constant (not a bool): `**`'s integer power rule.
fn is_int_constant(x: &Bound<'_, PyAny>) -> bool {
    x.is_instance_of::<PyInt>() && !x.is_instance_of::<PyBool>()
}
