//! The exceptions of the n-d core (two bases each, as NumPy's and Copapy's), the one
//! conversion of a shape to a Python tuple and the article of a kind in messages.

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

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

/// `$fn(py)`: the exception class `$name` with the bases `$a` and `$b`, made once.
macro_rules! error_class {
    ($(#[$doc:meta])* $fn:ident, $name:literal, $a:ty, $b:ty, $text:literal) => {
        $(#[$doc])*
        pub fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
            static TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            let bases = [py.get_type::<$a>(), py.get_type::<$b>()];
            error_type(py, &TYPE, $name, bases, $text)
        }
    };
}

error_class!(
    /// `AxisError`: an axis outside the dimensions, a `ValueError` and an `IndexError` as NumPy's.
    axis_error, "AxisError", PyValueError, PyIndexError,
    "An axis outside the dimensions (a ValueError and an IndexError, as NumPy's)."
);

error_class!(
    /// `ElementTypeError`: an element a container cannot hold (a string, a float in an int
    /// array), a `TypeError` as Python and NumPy name wrong types and a `ValueError` as Copapy
    /// raises for it, so programs written for either catch it.
    element_error, "ElementTypeError", PyTypeError, PyValueError,
    "An element a container cannot hold (a TypeError and a ValueError)."
);

/// A shape as a Python tuple.
pub fn tuple<'py>(py: Python<'py>, dims: &[usize]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, dims)
}

/// A kind of container with its article: "a tensor", "an array".
pub fn article(name: &str) -> String {
    let an = name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {name}", if an { "an" } else { "a" })
}
