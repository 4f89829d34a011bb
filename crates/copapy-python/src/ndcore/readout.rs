//! The truth value, `all`, `any` and `to_numpy` of every container over both storage modes.

use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::{article, tuple};
use super::leaves::{is_traced, truth};
use super::storage::{Contents, Nd};
use crate::array_ops::PyArrayNode;
use crate::convert::type_name;

/// `bool(con)`, NumPy's rule: the truth value of the one element, ambiguous for none or
/// more (use `len()`, `.any()` or `.all()`). A traced element has no truth value while
/// tracing, nor has an array's (its elements are values on the target: an array of numbers
/// is an input `Target.write_value` changes), so those are the `TypeError` pointing to
/// `cp.iif`, as a traced scalar's.
#[pyfunction]
pub fn nd_bool(con: &Bound<'_, PyAny>) -> PyResult<bool> {
    let nd = Nd::of(con)?;
    let kind = type_name(con);
    let traced = match &nd.contents {
        Contents::Leaves(t) => t.iter().any(|x| is_traced(&x)),
        Contents::Array { .. } => true,
    };
    if traced {
        let (what, why) = match nd.contents {
            Contents::Leaves(_) => (format!("{} of traced values", article(&kind)), ""),
            Contents::Array { .. } => (
                article(&kind),
                ": its elements are values on the target (an array of numbers is an input, \
                 which Target.write_value changes)",
            ),
        };
        return Err(PyTypeError::new_err(format!(
            "the truth value of {what} is not known while tracing{why}; use \
             cp.iif(condition, true_result, false_result) to choose between values (with \
             .all() or .any() to combine the elements of a condition)"
        )));
    }
    match nd.size() {
        1 => nd.element(0)?.is_truthy(),
        0 => Err(PyValueError::new_err(format!(
            "the truth value of an empty {kind} is ambiguous; use len() to test for elements"
        ))),
        _ => Err(PyValueError::new_err(format!(
            "the truth value of {} with more than one element is ambiguous; use .any() or \
             .all()",
            article(&kind)
        ))),
    }
}

/// `all()` (`all = true`) or `any()`: whether every (any) element is non-zero. Leaves
/// settle their constants while tracing and combine `x != 0` of the traced ones pairwise
/// (a bool, or a traced bool value); an array is one compare and one reduction.
#[pyfunction]
pub fn nd_all<'py>(con: &Bound<'py, PyAny>, all: bool) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let py = nd.py();
    match nd.contents {
        Contents::Leaves(_) => truth(py, nd.elements()?, all),
        Contents::Array { .. } => {
            let nonzero = con.rich_compare(0, CompareOp::Ne)?;
            let which = if all {
                intern!(py, "min")
            } else {
                intern!(py, "max")
            };
            nonzero.call_method0(which)?.rich_compare(0, CompareOp::Ne)
        }
    }
}

/// `to_numpy(target)`: the elements as a NumPy array. Without a target, the constants of a
/// container of plain numbers; with one, the current contents there (float32, int32, bool,
/// or uint8 for a byte array): an array in one bulk read.
#[pyfunction]
#[pyo3(signature = (con, target = None))]
pub fn nd_to_numpy<'py>(
    con: &Bound<'py, PyAny>,
    target: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let py = nd.py();
    let np = py.import(intern!(py, "numpy"))?;
    let shape = tuple(py, &nd.shape)?;
    let (Contents::Array { node, dtype }, Some(target)) = (&nd.contents, target) else {
        let Some(target) = target else {
            if matches!(nd.contents, Contents::Array { .. }) {
                return Err(PyTypeError::new_err(
                    "an array's contents are on a target: a.to_numpy(tg) with the Target it was \
                     compiled for",
                ));
            }
            return np.call_method1(intern!(py, "asarray"), (con,));
        };
        let read = target.call_method1(intern!(py, "read_value"), (con,))?;
        let dtype = match nd_dtype_name(con)?.as_str() {
            "float" => "float32",
            "int" => "int32",
            _ => "bool",
        };
        let out = np.call_method1(intern!(py, "asarray"), (read, dtype))?;
        return out.call_method1(intern!(py, "reshape"), (shape,));
    };
    let handle = Bound::new(py, PyArrayNode::new(node.clone()))?;
    let raw = target.call_method1(intern!(py, "_read_array"), (handle.as_any(),))?;
    let raw = raw.cast_into::<PyBytes>()?;
    let bytes = raw.as_bytes();
    let n = nd.size();
    let (fmt, bytes) = if copapy_compiler::array::is_bytes(node) {
        ("uint8", PyBytes::new(py, &bytes[..n.min(bytes.len())]))
    } else {
        let le = if node.ty() == copapy_compiler::ScalarType::Float {
            "<f4"
        } else {
            "<i4"
        };
        (le, raw.clone())
    };
    let flat = np.call_method1(intern!(py, "frombuffer"), (bytes, fmt))?;
    let out = flat.call_method1(intern!(py, "reshape"), (shape,))?;
    let want = match dtype.as_str() {
        "bool" => "bool",
        _ if fmt == "uint8" => "uint8",
        _ if fmt == "<f4" => "float32",
        _ => "int32",
    };
    if want == "bool" {
        return out.call_method1(intern!(py, "__ne__"), (0,));
    }
    out.call_method1(intern!(py, "astype"), (want,)) // native byte order, a copy we own
}

fn nd_dtype_name(con: &Bound<'_, PyAny>) -> PyResult<String> {
    con.getattr(intern!(con.py(), "dtype"))?.extract()
}
