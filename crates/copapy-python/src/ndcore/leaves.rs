//! The storage mode of leaves (values and plain numbers): views gathered, reductions
//! grouped, nested data flattened and nested again, elements checked and promoted.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple};

use super::errors::{element_error, tuple};
use crate::container::{self, Contents};
use crate::convert::{check_dtype, type_name};
use crate::shape::show;
use crate::value::PyValue;
use crate::walk;

/// Row-major items as nested lists of `shape` (the one item itself for `()`).
#[pyfunction]
pub fn nd_nest(py: Python<'_>, items: Vec<Py<PyAny>>, shape: Vec<usize>) -> PyResult<Py<PyAny>> {
    container::nest(py, items, &shape)
}

pub(crate) fn is_traced(x: &Bound<'_, PyAny>) -> bool {
    x.is_exact_instance_of::<PyValue>()
}

pub(crate) fn is_leaf(x: &Bound<'_, PyAny>) -> bool {
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
                          // its own shape, which nested lists lose along an empty dimension
        let shape = x.getattr(intern!(py, "shape"))?.extract::<Vec<usize>>();
        if let (Ok(shape), true) = (shape, x.hasattr(intern!(py, "reshape"))?) {
            let flat = x.call_method1(intern!(py, "reshape"), (-1,))?;
            let items: Vec<_> = flat
                .call_method0(intern!(py, "tolist"))?
                .try_iter()?
                .collect::<PyResult<_>>()?;
            if items.iter().all(is_leaf) {
                out.extend(items);
                return Ok(shape);
            } // else elements to convert (a long double's float64 rounding) or refuse, one by one
        }
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
pub fn truth<'py>(
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
