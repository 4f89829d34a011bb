//! The n-d core every Python container stands on (`tensor`, `vector`, `matrix`, `cp.array`,
//! `quaternion`): NumPy's rules for shapes, axes, reshapes, transposes, broadcasts and
//! static indices (with NumPy's errors), flat-to-nested and nested-to-flat data, and the
//! documented summation order with Copapy's sparse-constant rules. Written once, over two
//! storage modes: a tuple of leaves (values and plain numbers, `nd_gather`, `nd_groups`,
//! `nd_sum`, `nd_dot`) and one contiguous array node (the Python `cp.array` asks for views:
//! offset, shape, strides). The arithmetic of shapes is `shape.rs`'.

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PySlice, PyString, PyTuple, PyType};
use pyo3::{intern, IntoPyObjectExt};

use copapy_compiler::array::MAX_LEN;

use crate::array_ops;
use crate::container::{self, Contents};
use crate::convert::{check_dtype, type_name};
use crate::shape::{self, show};
use crate::value::PyValue;
use crate::walk;

/// An exception class with two bases (pyo3's own exceptions have one), made once.
fn error_type<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
    bases: [Bound<'py, PyType>; 2],
    doc: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    let t = cell.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let ns = PyDict::new(py);
        ns.set_item("__module__", "copapy._core")?;
        ns.set_item("__doc__", doc)?;
        let t = py
            .get_type::<PyType>()
            .call1((name, PyTuple::new(py, bases)?, ns))?;
        Ok(t.cast_into::<PyType>()?.unbind())
    })?;
    Ok(t.bind(py))
}

/// `AxisError`: an axis outside the dimensions, a `ValueError` and an `IndexError` as NumPy's.
pub fn axis_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let bases = [py.get_type::<PyValueError>(), py.get_type::<PyIndexError>()];
    error_type(
        py,
        &TYPE,
        "AxisError",
        bases,
        "An axis outside the dimensions (a ValueError and an IndexError, as NumPy's).",
    )
}

/// `ElementTypeError`: an element a container cannot hold (a string, a float in an int
/// array), a `TypeError` as Python and NumPy name wrong types and a `ValueError` as Copapy
/// raises for it, so programs written for either catch it.
pub fn element_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let bases = [py.get_type::<PyTypeError>(), py.get_type::<PyValueError>()];
    error_type(
        py,
        &TYPE,
        "ElementTypeError",
        bases,
        "An element a container cannot hold (a TypeError and a ValueError).",
    )
}

fn tuple<'py>(py: Python<'py>, dims: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, dims)
}

/// `x` as an index, axis or count, as NumPy takes one: an int or an object with
/// `__index__` (NumPy's integer scalars), never a bool; `None` for anything else.
#[pyfunction]
pub fn nd_plain_int(x: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if x.is_instance_of::<PyBool>() {
        return Ok(None);
    }
    if x.is_instance_of::<PyInt>() {
        return x.extract().map(Some);
    }
    let py = x.py();
    if walk::attr(x.get_type().as_any(), intern!(py, "__index__"))?.is_none() {
        return Ok(None);
    }
    match py.import("operator")?.getattr("index")?.call1((x,)) {
        Ok(i) => i.extract().map(Some),
        Err(e) if e.is_instance_of::<PyTypeError>(py) => Ok(None), // np.bool_ refuses it
        Err(e) => Err(e),
    }
}

/// One dimension as NumPy takes it: an int or anything with `__index__`, not a bool.
#[pyfunction]
pub fn nd_dim(d: &Bound<'_, PyAny>) -> PyResult<i64> {
    if d.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "an integer is required for a dimension, not a bool",
        ));
    }
    nd_plain_int(d)?.ok_or_else(|| {
        PyTypeError::new_err(format!("dimensions must be integers, not {}", type_name(d)))
    })
}

/// Refuses a shape beyond the most elements of one array (`ARRAY_MAX_LEN`), before
/// anything that large is built; a zero dimension does not excuse the others (NumPy).
#[pyfunction]
pub fn nd_check_shape(dims: Vec<usize>) -> PyResult<()> {
    match shape::check_size(&dims, MAX_LEN) {
        Ok(()) => Ok(()),
        Err(n) if !dims.contains(&0) => Err(PyValueError::new_err(format!(
            "an array of {n} elements is too large (at most {MAX_LEN})"
        ))),
        Err(n) => Err(PyValueError::new_err(format!(
            "a shape of {} is too large: its non-zero dimensions multiply to {n} elements, \
             more than the {MAX_LEN} an array can have",
            show(&dims)
        ))),
    }
}

/// The verb of an operation in shape errors.
fn verb(op: &str) -> &str {
    match op {
        "sub" => "subtract",
        "mul" => "multiply",
        "truediv" | "div" => "divide",
        "floordiv" => "floor-divide",
        "mod" => "take the remainder of",
        "pow" => "raise",
        "lt" | "le" | "gt" | "ge" | "eq" | "ne" => "compare",
        "matmul" => "matrix-multiply",
        "dot" => "take the dot product of",
        "cross" => "take the cross product of",
        other => other,
    }
}

fn shape_error(op: &str, kind: &str, a: &[usize], b: &[usize]) -> PyErr {
    PyValueError::new_err(format!(
        "cannot {} {kind} of shapes {} and {}: they do not broadcast",
        verb(op),
        show(a),
        show(b)
    ))
}

/// The one error for operands whose shapes do not fit (raised by the caller).
#[pyfunction]
#[pyo3(name = "nd_shape_error")]
pub fn nd_shape_error_py(
    py: Python<'_>,
    op: &str,
    kind: &str,
    a: Vec<usize>,
    b: Vec<usize>,
) -> Py<PyAny> {
    shape_error(op, kind, &a, &b).into_value(py).into_any()
}

/// NumPy's broadcast of two shapes; a `ValueError` naming `op`, `kind` and both shapes.
#[pyfunction]
#[pyo3(signature = (a, b, op = "combine", kind = "arrays"))]
pub fn nd_broadcast<'py>(
    py: Python<'py>,
    a: Vec<usize>,
    b: Vec<usize>,
    op: &str,
    kind: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    let out = shape::broadcast(&a, &b).ok_or_else(|| shape_error(op, kind, &a, &b))?;
    tuple(py, &out)
}

/// `shape` broadcast to `target` (a `ValueError` naming `what` if it is not), and the
/// strides that read it so: 0 along the repeated dimensions.
#[pyfunction]
pub fn nd_broadcast_strides(
    shape: Vec<usize>,
    target: Vec<usize>,
    what: &str,
) -> PyResult<Vec<isize>> {
    if target.len() < shape.len()
        || shape::broadcast(&shape, &target).as_deref() != Some(&target[..])
    {
        return Err(PyValueError::new_err(format!(
            "cannot broadcast {what} of shape {} to shape {}",
            show(&shape),
            show(&target)
        )));
    }
    Ok(shape::signed(&shape::broadcast_strides(&shape, &target)))
}

/// `axis` (None, an int, or a tuple or list of ints; negatives from the end) as sorted
/// axes, None for all of them; NumPy's errors (`what` names the container).
#[pyfunction]
pub fn nd_axes<'py>(
    axis: &Bound<'py, PyAny>,
    ndim: usize,
    what: &str,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = axis.py();
    if axis.is_none() {
        return Ok(None);
    }
    let items: Vec<Bound<'py, PyAny>> =
        if axis.is_instance_of::<PyTuple>() || axis.is_instance_of::<PyList>() {
            axis.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![axis.clone()]
        };
    let n = ndim as i64;
    let mut out: Vec<usize> = Vec::new();
    for item in &items {
        let a = nd_plain_int(item)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "axis must be None, an int or a tuple of ints, not {}",
                type_name(item)
            ))
        })?;
        if !(-n..n).contains(&a) {
            return Err(PyErr::from_type(
                axis_error(py)?.clone(),
                format!(
                    "axis {a} is out of bounds for {what}: out of range -{n} .. {}",
                    n - 1
                ),
            ));
        }
        let a0 = a.rem_euclid(n) as usize;
        if out.contains(&a0) {
            return Err(PyValueError::new_err(format!(
                "axis {a} is given twice: each axis can be reduced once"
            )));
        }
        out.push(a0);
    }
    out.sort_unstable();
    tuple(py, &out).map(Some)
}

/// The arguments of `reshape`/`transpose`: ints, or one sequence of them.
fn one_or_many<'py>(spec: &Bound<'py, PyTuple>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if spec.len() == 1 {
        let first = spec.get_item(0)?;
        if !first.is_instance_of::<PyInt>() && first.hasattr("__iter__")? {
            return first.try_iter()?.collect();
        }
    }
    Ok(spec.iter().collect())
}

/// `transpose`'s axes (ints, or one sequence of them; none reverses) as a permutation of
/// `range(ndim)`, negatives from the end.
#[pyfunction]
pub fn nd_permutation(axes: &Bound<'_, PyTuple>, ndim: usize, what: &str) -> PyResult<Vec<usize>> {
    let items = one_or_many(axes)?;
    if items.is_empty() {
        return Ok((0..ndim).rev().collect());
    }
    let mut perm = Vec::with_capacity(items.len());
    for a in &items {
        let d = nd_dim(a)?;
        perm.push(if d < 0 { d + ndim as i64 } else { d });
    }
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted != (0..ndim as i64).collect::<Vec<_>>() {
        let given = PyTuple::new(axes.py(), &items)?.repr()?;
        return Err(PyValueError::new_err(format!(
            "axes {given} do not permute the axes of {what}"
        )));
    }
    Ok(perm.into_iter().map(|d| d as usize).collect())
}

/// `shape` with its axes permuted by `perm`, and the strides that read it so.
#[pyfunction]
pub fn nd_transposed(
    py: Python<'_>,
    shape: Vec<usize>,
    perm: Vec<usize>,
) -> PyResult<(Bound<'_, PyTuple>, Vec<isize>)> {
    if perm.iter().any(|&a| a >= shape.len()) {
        return Err(PyValueError::new_err(
            "nd_transposed: an axis beyond the dimensions",
        ));
    }
    let (s, st) = shape::transposed(&shape, &perm);
    Ok((tuple(py, &s)?, shape::signed(&st)))
}

/// NumPy's reshape of `size` elements to `spec` (ints or one sequence of ints; one may be
/// negative, inferred), within the size limit; `what` names the container in errors.
#[pyfunction]
pub fn nd_reshape<'py>(
    spec: &Bound<'py, PyTuple>,
    size: usize,
    what: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    if spec.is_empty() {
        return Err(PyTypeError::new_err(
            "reshape() needs the new shape: ints or one sequence of ints",
        ));
    }
    let dims = one_or_many(spec)?
        .iter()
        .map(nd_dim)
        .collect::<PyResult<Vec<i64>>>()?;
    let out = shape::reshape(&dims, size).map_err(|e| match e {
        shape::ReshapeError::TwoUnknown => PyValueError::new_err(
            "can only specify one unknown dimension (a negative number) in a reshape",
        ),
        shape::ReshapeError::Mismatch => {
            PyValueError::new_err(format!("cannot reshape {what} into shape {}", show(&dims)))
        }
    })?;
    nd_check_shape(out.clone())?;
    tuple(spec.py(), &out)
}

/// A static index (ints and slices, or a tuple of them) of a container of `shape` as a
/// strided view: the flat offset, the shape and the strides of the result (NumPy's rules
/// and errors; `kind` names the container).
#[pyfunction]
pub fn nd_view<'py>(
    key: &Bound<'py, PyAny>,
    shape: Vec<usize>,
    kind: &str,
) -> PyResult<(isize, Bound<'py, PyTuple>, Vec<isize>)> {
    let keys: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    if keys.len() > shape.len() {
        return Err(PyIndexError::new_err(format!(
            "too many indices ({}) for a {kind} of shape {}",
            keys.len(),
            show(&shape)
        )));
    }
    let st = shape::strides(&shape);
    let (mut offset, mut out, mut strides) = (0isize, Vec::new(), Vec::new());
    for (axis, (&n, &s)) in shape.iter().zip(&st).enumerate() {
        let s = s as isize;
        let Some(k) = keys.get(axis) else {
            out.push(n);
            strides.push(s);
            continue;
        };
        if let Ok(sl) = k.cast::<PySlice>() {
            let r = sl.indices(n as isize)?;
            offset += r.start * s;
            out.push(r.slicelength);
            strides.push(r.step * s);
            continue;
        }
        let i = nd_plain_int(k)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{kind} indices must be integers or slices, not {}",
                type_name(k)
            ))
        })?;
        if !(-(n as i64)..n as i64).contains(&i) {
            return Err(PyIndexError::new_err(format!(
                "index {i} is out of range for axis {axis} of size {n}"
            )));
        }
        offset += i.rem_euclid(n as i64) as isize * s;
    }
    Ok((offset, tuple(key.py(), &out)?, strides))
}

/// The leaves of a strided view of `values` (row-major), as a tuple.
#[pyfunction]
pub fn nd_gather<'py>(
    values: &Bound<'py, PyTuple>,
    offset: isize,
    shape: Vec<usize>,
    strides: Vec<isize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let idx = shape::view_indices(offset, &shape, &strides);
    let items = idx
        .into_iter()
        .map(|i| values.get_item(i))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(values.py(), items)
}

/// The leaves of `values` (of `shape`) grouped for a reduction over the sorted `axes`: one
/// tuple per result element, its terms in the documented order of reductions over axes.
#[pyfunction]
pub fn nd_groups<'py>(
    values: &Bound<'py, PyTuple>,
    shape: Vec<usize>,
    axes: Vec<usize>,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    if axes.iter().any(|&a| a >= shape.len()) {
        return Err(PyValueError::new_err(
            "nd_groups: an axis beyond the dimensions",
        ));
    }
    let (groups, _) = shape::reduction_groups(&shape, &axes);
    groups
        .into_iter()
        .map(|g| {
            let items = g
                .into_iter()
                .map(|i| values.get_item(i))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(values.py(), items)
        })
        .collect()
}

/// Row-major items as nested lists of `shape` (the one item itself for `()`).
#[pyfunction]
pub fn nd_nest(py: Python<'_>, items: Vec<Py<PyAny>>, shape: Vec<usize>) -> PyResult<Py<PyAny>> {
    container::nest(py, items, &shape)
}

fn is_traced(x: &Bound<'_, PyAny>) -> bool {
    x.is_exact_instance_of::<PyValue>()
}

fn is_leaf(x: &Bound<'_, PyAny>) -> bool {
    x.is_instance_of::<PyValue>() || x.is_instance_of::<PyInt>() || x.is_instance_of::<PyFloat>()
}

/// `x` as a leaf (a value or a Python number), NumPy scalars and 0-d arrays as the Python
/// numbers they stand for; `None` if it is not a scalar.
#[pyfunction]
pub fn nd_scalar<'py>(x: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    if is_leaf(x) {
        return Ok(Some(x.clone()));
    }
    let py = x.py();
    let Some(shape) = walk::attr(x, intern!(py, "shape"))? else {
        return Ok(None);
    };
    let zero_d = shape.cast::<PyTuple>().is_ok_and(|t| t.is_empty());
    if !zero_d || !x.hasattr(intern!(py, "item"))? {
        return Ok(None);
    }
    check_dtype(x)?; // a datetime64's item() would be a day count
    let item = match x.call_method0(intern!(py, "item")) {
        Ok(i) => i,
        Err(e) if e.is_instance_of::<PyTypeError>(py) || e.is_instance_of::<PyValueError>(py) => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    if is_leaf(&item) {
        return Ok(Some(item));
    }
    // a longdouble stays one: its float64 rounding, as NumPy's float()
    let kind: Option<char> = x.getattr("dtype")?.getattr("kind")?.extract().ok();
    if kind == Some('f') {
        return Ok(Some(PyFloat::new(py, item.extract::<f64>()?).into_any()));
    }
    Ok(None)
}

/// The leaves and shape of a container source: a leaf, a NumPy scalar or array, a
/// container of leaves (`__copapy__`), or rectangular nested iterables; `what` names the
/// container in the error for anything else.
#[pyfunction]
pub fn nd_flatten<'py>(
    source: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<(Vec<Bound<'py, PyAny>>, Bound<'py, PyTuple>)> {
    let mut out = Vec::new();
    let shape = flatten_into(source, what, &mut out)?;
    Ok((out, tuple(source.py(), &shape)?))
}

fn flatten_into<'py>(
    x: &Bound<'py, PyAny>,
    what: &str,
    out: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<Vec<usize>> {
    if is_leaf(x) {
        out.push(x.clone());
        return Ok(vec![]);
    }
    if let Some(c) = container::describe(x)? {
        if let Contents::Sequence(leaves) = c.get().contents() {
            out.extend(leaves.bind(x.py()).iter());
            return Ok(c.get().shape().to_vec());
        }
    }
    if let Some(s) = nd_scalar(x)? {
        out.push(s);
        return Ok(vec![]);
    }
    let py = x.py();
    let mut x = x.clone();
    if x.hasattr(intern!(py, "tolist"))? && x.hasattr(intern!(py, "shape"))? {
        check_dtype(&x)?; // NumPy data (or cp.array): before tolist()
        x = x.call_method0(intern!(py, "tolist"))?;
    }
    let message = format!(
        "{what} elements must be copapy values or numbers, not {}",
        type_name(&x)
    );
    let error = element_error(py)?.clone();
    let not_elements = || PyErr::from_type(error.clone(), message.clone());
    if x.is_instance_of::<PyString>() || x.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(not_elements());
    }
    let _level = walk::enter(&x, what)?;
    let items: Vec<Bound<'py, PyAny>> =
        walk::iterate(&x, not_elements)?.collect::<PyResult<_>>()?;
    if items.iter().all(is_leaf) {
        let n = items.len();
        out.extend(items);
        return Ok(vec![n]);
    }
    let mut sub: Option<Vec<usize>> = None;
    for item in &items {
        let s = flatten_into(item, what, out)?;
        match &sub {
            Some(first) if *first != s => {
                return Err(PyValueError::new_err(format!(
                    "ragged nested sequence: its rows have shapes {} and {}",
                    show(first),
                    show(&s)
                )))
            }
            Some(_) => {}
            None => sub = Some(s),
        }
    }
    let mut shape = vec![items.len()];
    shape.extend(sub.unwrap_or_default());
    Ok(shape)
}

/// `fold` (a Python callable; `+` when None) over the terms in the documented order.
#[pyfunction]
#[pyo3(signature = (terms, fold = None))]
pub fn nd_tree_fold<'py>(
    terms: Vec<Bound<'py, PyAny>>,
    fold: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let r = match &fold {
        Some(f) => shape::tree_fold(terms, |a, b| f.call1((a, b))),
        None => shape::tree_fold(terms, |a, b| a.add(b)),
    }?;
    r.ok_or_else(|| PyValueError::new_err("a fold needs at least one term"))
}

fn tree_sum<'py>(py: Python<'py>, terms: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    match shape::tree_fold(terms, |a, b| a.add(b))? {
        Some(s) => Ok(s),
        None => 0i32.into_bound_py_any(py),
    }
}

fn is_float_value(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(x.getattr(intern!(x.py(), "dtype"))?.extract::<String>()? == "float")
}

/// The tree sum of the traced terms plus the Python sum of the constant terms (added once,
/// last; a constant 0 is left out when that keeps the type, as the optimiser would).
fn combine<'py>(
    py: Python<'py>,
    traced: Vec<Bound<'py, PyAny>>,
    consts: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    if consts.is_empty() {
        return tree_sum(py, traced);
    }
    let mut c = 0i32.into_bound_py_any(py)?;
    for k in consts {
        c = c.add(k)?;
    }
    if traced.is_empty() {
        return Ok(c);
    }
    let s = tree_sum(py, traced)?;
    if c.eq(0)? && (!c.is_exact_instance_of::<PyFloat>() || is_float_value(&s)?) {
        return Ok(s);
    }
    s.add(c)
}

/// Sum of values and numbers in the documented order: traced terms by the tree, numbers
/// in Python, their sum added once at the end.
#[pyfunction]
pub fn nd_sum<'py>(py: Python<'py>, terms: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let (traced, consts): (Vec<_>, Vec<_>) = terms.into_iter().partition(is_traced);
    combine(py, traced, consts)
}

/// Sum of the products `a[i] * b[i]` in the documented order. A constant factor 0 drops
/// its term and a constant 1 keeps the other factor (when that keeps its type), so sparse
/// constant matrices cost only their non-zero entries.
#[pyfunction]
pub fn nd_dot<'py>(
    py: Python<'py>,
    a: Vec<Bound<'py, PyAny>>,
    b: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (mut traced, mut consts) = (Vec::new(), Vec::new());
    for (x, y) in a.into_iter().zip(b) {
        let (x, y) = match (is_traced(&x), is_traced(&y)) {
            (true, true) => {
                traced.push(x.mul(y)?);
                continue;
            }
            (false, false) => {
                consts.push(x.mul(y)?);
                continue;
            }
            (true, false) => (y, x),
            (false, true) => (x, y),
        };
        // x is a number, y a traced value
        let dtype: String = y.getattr(intern!(py, "dtype"))?.extract()?;
        if x.eq(0)? {
            let zero = if dtype == "float" {
                0.0f64.into_bound_py_any(py)?
            } else {
                0i32.into_bound_py_any(py)?
            };
            consts.push(x.mul(zero)?);
        } else if x.eq(1)? && (!x.is_exact_instance_of::<PyFloat>() || dtype == "float") {
            traced.push(if dtype == "bool" { y.mul(1)? } else { y });
        } else {
            traced.push(y.mul(x)?);
        }
    }
    combine(py, traced, consts)
}

/// The promoted type of leaves, as NumPy promotes: float over int over bool ('float' for
/// no leaves).
#[pyfunction]
pub fn nd_dtype(leaves: Vec<Bound<'_, PyAny>>) -> PyResult<&'static str> {
    let (mut int, mut boolean) = (false, false);
    for x in &leaves {
        let kind = if is_traced(x) {
            x.cast::<PyValue>()?.get().value().ty().name()
        } else if x.is_instance_of::<PyBool>() {
            "bool"
        } else if x.is_instance_of::<PyInt>() {
            "int"
        } else {
            "float"
        };
        match kind {
            "int" => int = true,
            "bool" => boolean = true,
            _ => return Ok("float"),
        }
    }
    Ok(if int || !boolean {
        if int {
            "int"
        } else {
            "float"
        }
    } else {
        "bool"
    })
}

/// `leaves` if every one is a value or a Python number, else a tuple with NumPy scalars as
/// Python numbers; an `ElementTypeError` naming `what` and the first other element.
#[pyfunction]
pub fn nd_check_leaves<'py>(
    leaves: &Bound<'py, PyTuple>,
    what: &str,
) -> PyResult<Bound<'py, PyTuple>> {
    if leaves.iter().all(|x| is_leaf(&x)) {
        return Ok(leaves.clone());
    }
    let py = leaves.py();
    let mut out = Vec::with_capacity(leaves.len());
    for (i, x) in leaves.iter().enumerate() {
        let s = nd_scalar(&x)?.ok_or_else(|| {
            let msg = format!(
                "{what} elements must be copapy values or numbers; element {i} is a {}",
                type_name(&x)
            );
            element_error(py).map_or_else(|e| e, |t| PyErr::from_type(t.clone(), msg))
        })?;
        out.push(s);
    }
    PyTuple::new(py, out)
}

/// `all` (`all = True`) or `any` of leaves: constants are settled here, traced leaves become
/// `x != 0` combined pairwise with `&` (all) or `|` (any): a bool, or a traced bool value.
#[pyfunction]
pub fn nd_truth<'py>(
    py: Python<'py>,
    leaves: Vec<Bound<'py, PyAny>>,
    all: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let mut traced = Vec::new();
    for x in leaves {
        if is_traced(&x) {
            traced.push(x.rich_compare(0, pyo3::basic::CompareOp::Ne)?);
        } else if x.is_truthy()? != all {
            return Ok(PyBool::new(py, !all).to_owned().into_any()); // a zero decides all()
        }
    }
    while traced.len() > 1 {
        let mut next = Vec::with_capacity(traced.len() / 2 + 1);
        let mut it = traced.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) if all => a.bitand(b)?,
                Some(b) => a.bitor(b)?,
                None => a,
            });
        }
        traced = next;
    }
    match traced.pop() {
        Some(t) => Ok(t),
        None => Ok(PyBool::new(py, all).to_owned().into_any()),
    }
}

/// The default `pack_threshold`: vectors and tensors with more traced elements than this
/// compute through array stencils.
pub const PACK_THRESHOLD: i64 = 64;

/// How many traced elements `con` may have before it packs: 0 for `packed=True`, never
/// (None) for `packed=False`, else its class's `pack_threshold` (Copapy's class attribute;
/// None never packs).
#[pyfunction]
pub fn nd_pack_threshold(con: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let py = con.py();
    if let Some(p) = walk::attr(con, intern!(py, "_packed"))?.filter(|p| !p.is_none()) {
        return Ok(p.is_truthy()?.then_some(0));
    }
    match walk::attr(con.get_type().as_any(), intern!(py, "pack_threshold"))? {
        None => Ok(Some(PACK_THRESHOLD)),
        Some(limit) => limit.extract(),
    }
}

/// The array already holding `con`'s elements (`con._arr`), if any.
fn packed_node<'py>(con: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(walk::attr(con, intern!(con.py(), "_arr"))?.filter(|n| !n.is_none()))
}

/// Whether an operation on `con` (`n` elements, default all) should take the array path:
/// it already is an array's elements, or it has more elements than its threshold.
#[pyfunction]
#[pyo3(signature = (con, n = None))]
pub fn nd_wants_pack(con: &Bound<'_, PyAny>, n: Option<usize>) -> PyResult<bool> {
    if packed_node(con)?.is_some() {
        return Ok(true);
    }
    let Some(limit) = nd_pack_threshold(con)? else {
        return Ok(false);
    };
    let n = match n {
        Some(n) => n,
        None => con.getattr(intern!(con.py(), "values"))?.len()?,
    };
    Ok(n as i64 > limit)
}

/// The packing switch: the array holding `con`'s elements (kept on `con._arr` once
/// gathered; input values are placed inside it, so gathering costs no code) if they are
/// more than its threshold (`force`: any number) of traced values of one dtype, not bool;
/// else None.
#[pyfunction]
#[pyo3(signature = (con, force = false))]
pub fn nd_pack<'py>(con: &Bound<'py, PyAny>, force: bool) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = con.py();
    if let Some(node) = packed_node(con)? {
        return Ok(Some(node));
    }
    let values = con.getattr(intern!(py, "values"))?.cast_into::<PyTuple>()?;
    let limit = if force && !values.is_empty() {
        Some(0)
    } else {
        nd_pack_threshold(con)?
    };
    let Some(limit) = limit else { return Ok(None) };
    if values.len() as i64 <= limit {
        return Ok(None);
    }
    let mut elements = Vec::with_capacity(values.len());
    let mut dtype = None;
    for x in values.iter() {
        let Ok(v) = x.cast_into_exact::<PyValue>() else {
            return Ok(None);
        };
        let ty = v.get().value().ty();
        if ty == copapy_compiler::ScalarType::Bool || dtype.is_some_and(|d| d != ty) {
            return Ok(None);
        }
        dtype = Some(ty);
        elements.push(v);
    }
    let Some(ty) = dtype else { return Ok(None) };
    let node = match array_ops::array_of_elements(py, elements.clone())? {
        Some(node) => node,
        None => array_ops::array_pack(
            py,
            ty.name(),
            elements.into_iter().map(|v| v.into_any()).collect(),
        )?,
    };
    let node = node.into_bound(py).into_any();
    con.setattr(intern!(py, "_arr"), &node)?;
    Ok(Some(node))
}

/// Registers the core's functions in `copapy._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AxisError", axis_error(m.py())?)?;
    m.add("ElementTypeError", element_error(m.py())?)?;
    m.add_function(wrap_pyfunction!(nd_plain_int, m)?)?;
    m.add_function(wrap_pyfunction!(nd_dim, m)?)?;
    m.add_function(wrap_pyfunction!(nd_check_shape, m)?)?;
    m.add_function(wrap_pyfunction!(nd_shape_error_py, m)?)?;
    m.add_function(wrap_pyfunction!(nd_broadcast, m)?)?;
    m.add_function(wrap_pyfunction!(nd_broadcast_strides, m)?)?;
    m.add_function(wrap_pyfunction!(nd_axes, m)?)?;
    m.add_function(wrap_pyfunction!(nd_permutation, m)?)?;
    m.add_function(wrap_pyfunction!(nd_transposed, m)?)?;
    m.add_function(wrap_pyfunction!(nd_reshape, m)?)?;
    m.add_function(wrap_pyfunction!(nd_view, m)?)?;
    m.add_function(wrap_pyfunction!(nd_gather, m)?)?;
    m.add_function(wrap_pyfunction!(nd_groups, m)?)?;
    m.add_function(wrap_pyfunction!(nd_nest, m)?)?;
    m.add_function(wrap_pyfunction!(nd_scalar, m)?)?;
    m.add_function(wrap_pyfunction!(nd_flatten, m)?)?;
    m.add_function(wrap_pyfunction!(nd_tree_fold, m)?)?;
    m.add_function(wrap_pyfunction!(nd_sum, m)?)?;
    m.add_function(wrap_pyfunction!(nd_dot, m)?)?;
    m.add_function(wrap_pyfunction!(nd_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(nd_check_leaves, m)?)?;
    m.add_function(wrap_pyfunction!(nd_truth, m)?)?;
    m.add("PACK_THRESHOLD", PACK_THRESHOLD)?;
    m.add_function(wrap_pyfunction!(nd_pack_threshold, m)?)?;
    m.add_function(wrap_pyfunction!(nd_wants_pack, m)?)?;
    m.add_function(wrap_pyfunction!(nd_pack, m)?)?;
    Ok(())
}
