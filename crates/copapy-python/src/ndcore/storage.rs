//! The storage switch: a container's contents as a tuple of leaves (values and plain
//! numbers, `tensor`/`vector`/`matrix`) or as one contiguous array node (`cp.array`), and
//! the methods every container has that only move elements (views, reshapes, element
//! access). Results keep the container's storage mode; the container makes them with its
//! own hooks: `_like(leaves, shape)` (a vector stays a vector while 1-D),
//! `_from_node(node, shape)` (a tensor aliasing an array's elements) and
//! `_of(node, shape, dtype)` (an array).

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use copapy_compiler::trace::TraceError;
use copapy_compiler::{array, Value};

use super::errors::{article, tuple};
use super::leaves::is_traced;
use super::shapes::{nd_broadcast_strides, nd_permutation, nd_plain_int, nd_reshape};
use crate::array_ops::PyArrayNode;
use crate::container;
use crate::convert::type_name;
use crate::shape::{self, show};
use crate::value::PyValue;

/// What a container holds.
pub enum Contents<'py> {
    /// Values and plain numbers in row-major order.
    Leaves(Bound<'py, PyTuple>),
    /// One array node, seen with the container's dtype ('byte' and 'bool' are stored as ints).
    Array { node: Value, dtype: String },
}

/// A container, its contents and its shape.
pub struct Nd<'py> {
    pub con: Bound<'py, PyAny>,
    pub contents: Contents<'py>,
    pub shape: Vec<usize>,
}

/// A graph builder's result, its error as Python's `TypeError`.
pub fn built(r: Result<Value, TraceError>) -> PyResult<Value> {
    r.map_err(|e| PyTypeError::new_err(e.message))
}

/// Structural array operation `name` (a row of the compiler's kernel table:
/// `array_kernels.rs`) of `operands` with the integer `params` its shape rule takes.
pub fn kernel(name: &str, operands: &[Value], params: &[i64]) -> PyResult<Value> {
    built(copapy_compiler::array_build::build(name, operands, params))
}

/// A traced scalar for a graph value.
pub fn scalar(py: Python<'_>, v: Value) -> PyResult<Bound<'_, PyAny>> {
    Ok(Bound::new(py, PyValue::from_graph(v))?.into_any())
}

impl<'py> Nd<'py> {
    /// The contents of `con`: an array node (`_cp_node`) or a tuple of leaves (`values`).
    pub fn of(con: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = con.py();
        let shape = con.getattr(intern!(py, "shape"))?.extract()?;
        // a tensor (vector, quaternion) holds leaves, anything else is an array: a class
        // test, as a missing attribute would cost an exception on every call
        let contents = if con.is_instance(container::registry()?.matrix.bind(py))? {
            Contents::Leaves(con.getattr(intern!(py, "values"))?.cast_into::<PyTuple>()?)
        } else {
            Contents::Array {
                node: con
                    .getattr(intern!(py, "_cp_node"))?
                    .cast::<PyArrayNode>()?
                    .get()
                    .value()
                    .clone(),
                dtype: con.getattr(intern!(py, "dtype"))?.extract()?,
            }
        };
        Ok(Nd {
            con: con.clone(),
            contents,
            shape,
        })
    }

    pub fn py(&self) -> Python<'py> {
        self.con.py()
    }

    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// The container's kind in messages.
    pub fn kind(&self) -> &'static str {
        match self.contents {
            Contents::Leaves(_) => "tensor",
            Contents::Array { .. } => "array",
        }
    }

    /// "a tensor of shape (2, 3)", "an array of shape (4,)".
    pub fn what(&self) -> String {
        format!("{} of shape {}", article(self.kind()), show(&self.shape))
    }

    /// A container of this kind holding `leaves` with `shape`.
    pub fn leaves(
        &self,
        leaves: Vec<Bound<'py, PyAny>>,
        shape: &[usize],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py();
        let t = PyTuple::new(py, leaves)?;
        self.con
            .call_method1(intern!(py, "_like"), (t, tuple(py, shape)?))
    }

    /// A container around array `node`: an array of `dtype` (the node's when None), or a
    /// tensor whose elements alias the node.
    pub fn node(
        &self,
        node: Value,
        shape: &[usize],
        dtype: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py();
        let n = Bound::new(py, PyArrayNode::new(node))?;
        let shape = tuple(py, shape)?;
        match self.contents {
            Contents::Leaves(_) => self.con.call_method1(intern!(py, "_from_node"), (n, shape)),
            Contents::Array { .. } => self.con.call_method1(intern!(py, "_of"), (n, shape, dtype)),
        }
    }

    /// The flat element `k`: a leaf, or a value aliasing the array (no code).
    pub fn element(&self, k: usize) -> PyResult<Bound<'py, PyAny>> {
        match &self.contents {
            Contents::Leaves(t) => t.get_item(k),
            Contents::Array { node, .. } => {
                scalar(self.py(), built(array::element(node, k as u32))?)
            }
        }
    }

    /// Every element in row-major order.
    pub fn elements(&self) -> PyResult<Vec<Bound<'py, PyAny>>> {
        match &self.contents {
            Contents::Leaves(t) => Ok(t.iter().collect()),
            Contents::Array { .. } => (0..self.size()).map(|k| self.element(k)).collect(),
        }
    }

    /// The strided view (`offset`, `shape`, `strides` over the flat elements) as a new
    /// container: leaves gathered, or one strided-copy stencil (size-1 dimensions dropped,
    /// contiguous ones merged; none for the same elements; element by element past four).
    pub fn view(
        &self,
        offset: isize,
        shape: &[usize],
        strides: &[isize],
    ) -> PyResult<Bound<'py, PyAny>> {
        let Contents::Array { node, dtype } = &self.contents else {
            let idx = shape::view_indices(offset, shape, strides);
            let items = idx
                .into_iter()
                .map(|k| self.element(k))
                .collect::<PyResult<_>>()?;
            return self.leaves(items, shape);
        };
        let dims = shape::merged(shape, strides);
        let out = if offset == 0 && dims == [(self.size(), 1)] {
            node.clone()
        } else if dims.len() <= 4 {
            let mut params = vec![offset as i64];
            params.extend(dims.iter().flat_map(|&(n, s)| [n as i64, s as i64]));
            kernel("strided", std::slice::from_ref(node), &params)?
        } else {
            let elements = shape::view_indices(offset, shape, strides)
                .into_iter()
                .map(|k| built(array::element(node, k as u32)))
                .collect::<PyResult<Vec<_>>>()?;
            built(array::pack(node.ty(), &elements))?
        };
        self.node(out, shape, Some(dtype))
    }

    /// The container with its axes permuted by `perm` (itself for the identity).
    pub fn permuted(&self, perm: &[usize]) -> PyResult<Bound<'py, PyAny>> {
        if perm.iter().enumerate().all(|(i, &d)| i == d) {
            return Ok(self.con.clone());
        }
        let (s, st) = shape::transposed(&self.shape, perm);
        self.view(0, &s, &shape::signed(&st))
    }

    /// The same elements with another shape (no code).
    pub fn reshaped(&self, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
        match &self.contents {
            Contents::Leaves(t) => self.leaves(t.iter().collect(), shape),
            Contents::Array { node, dtype } => self.node(node.clone(), shape, Some(dtype)),
        }
    }
}

/// `transpose(*axes)`: the axes permuted (reversed if none are given), as NumPy.
#[pyfunction]
pub fn nd_transpose<'py>(
    con: &Bound<'py, PyAny>,
    axes: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let perm = nd_permutation(axes, nd.shape.len(), &nd.what())?;
    nd.permuted(&perm)
}

/// `reshape(*shape)`: NumPy's reshape (one dimension may be negative, inferred).
#[pyfunction]
pub fn nd_reshape_to<'py>(
    con: &Bound<'py, PyAny>,
    spec: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let what = match nd.contents {
        Contents::Leaves(_) => nd.what(),
        Contents::Array { .. } => format!("an array of size {}", nd.size()),
    };
    let dims: Vec<usize> = nd_reshape(spec, nd.size(), &what)?.extract()?;
    if dims.is_empty() && nd.kind() == "array" {
        return Err(PyValueError::new_err(
            "an array needs at least one dimension: use a[0] or .element(0) for its one element",
        ));
    }
    nd.reshaped(&dims)
}

/// `flatten()`: the elements as a 1-D container, row-major (no code).
#[pyfunction]
pub fn nd_flat<'py>(con: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    nd.reshaped(&[nd.size()])
}

/// `broadcast_to(shape)`: the elements repeated to `shape` by NumPy's rules.
#[pyfunction]
pub fn nd_broadcast_to<'py>(
    con: &Bound<'py, PyAny>,
    target: Vec<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let strides = nd_broadcast_strides(nd.shape.clone(), target.clone(), &article(nd.kind()))?;
    nd.view(0, &target, &strides)
}

/// `item()`: the only element of a container with one element.
#[pyfunction]
pub fn nd_item<'py>(con: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    if nd.size() != 1 {
        return Err(PyValueError::new_err(format!(
            "item() needs {} with one element, this one has shape {}",
            article(nd.kind()),
            show(&nd.shape)
        )));
    }
    nd.element(0)
}

/// `tolist()`: the elements as nested lists (the element itself for a 0-d container).
#[pyfunction]
pub fn nd_tolist(con: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let nd = Nd::of(con)?;
    let items = nd.elements()?.into_iter().map(Bound::unbind).collect();
    container::nest(nd.py(), items, &nd.shape)
}

/// `element(i)`: the element at flat index `i` of the row-major order (negative from the end).
#[pyfunction]
pub fn nd_element<'py>(
    con: &Bound<'py, PyAny>,
    index: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let Some(i) = nd_plain_int(index)? else {
        return Err(PyTypeError::new_err(format!(
            "element() takes an int flat index, not {}",
            type_name(index)
        )));
    };
    let Some(k) = shape::position(i, nd.size()) else {
        return Err(PyIndexError::new_err(format!(
            "index {i} is out of range for {} elements",
            nd.size()
        )));
    };
    nd.element(k)
}

/// `get_values(data)`: flat element data (one number per element) nested as lists of the shape.
#[pyfunction]
pub fn nd_get_values(con: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let nd = Nd::of(con)?;
    let flat: Vec<Py<PyAny>> = data
        .try_iter()?
        .map(|x| x.map(Bound::unbind))
        .collect::<PyResult<_>>()?;
    if flat.len() != nd.size() {
        return Err(PyValueError::new_err(format!(
            "get_values needs {} elements for shape {}, got {}",
            nd.size(),
            show(&nd.shape),
            flat.len()
        )));
    }
    container::nest(nd.py(), flat, &nd.shape)
}

/// `map(func)`: `func(x)` for each element `x`, in a container of the same shape (an
/// array's results are gathered into a new array).
#[pyfunction]
pub fn nd_map<'py>(
    con: &Bound<'py, PyAny>,
    func: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let out = nd
        .elements()?
        .into_iter()
        .map(|x| func.call1((x,)))
        .collect::<PyResult<Vec<_>>>()?;
    match nd.contents {
        Contents::Leaves(_) => nd.leaves(out, &nd.shape),
        Contents::Array { .. } => {
            let a = con.get_type().call1((PyList::new(nd.py(), out)?,))?;
            a.call_method1(intern!(nd.py(), "reshape"), (tuple(nd.py(), &nd.shape)?,))
        }
    }
}

/// `homogenize()`: if any element is traced, the plain numbers become `cp.value` inputs too
/// (an array's elements are values already).
#[pyfunction]
pub fn nd_homogenize<'py>(con: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    let Contents::Leaves(t) = &nd.contents else {
        return Ok(con.clone());
    };
    if !t.iter().any(|x| is_traced(&x)) {
        return Ok(con.clone());
    }
    let value = nd.py().get_type::<PyValue>();
    let out = t
        .iter()
        .map(|x| {
            if is_traced(&x) {
                Ok(x)
            } else {
                value.call1((x,))
            }
        })
        .collect::<PyResult<Vec<_>>>()?;
    nd.leaves(out, &nd.shape)
}
