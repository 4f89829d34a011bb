//! The container protocol: how `vector`, `tensor`, `quaternion`, `cp.array` and user
//! classes hand their contents to the Rust core.
//!
//! A container class defines one method, `__copapy__(self)`, returning a [`PyContainer`]
//! (`copapy._core.Container`): a small descriptor made by one of three constructors.
//!
//! - `Container.element(leaf, rebuild=None)`: one value (or number) in a wrapper.
//! - `Container.sequence(leaves, shape=None, rebuild=None)`: values and numbers in
//!   row-major order; `shape` (default `(len(leaves),)`) multiplies out to their count.
//! - `Container.array(node, shape=None, dtype=None, rebuild=None)`: an `ArrayNode` (the
//!   elements stored contiguously) seen with `shape` and `dtype` (`'float' 'int' 'bool'
//!   'byte'`, default the node's).
//!
//! `rebuild` makes a container of the same kind from new contents: a number (element),
//! a tuple of numbers or values in leaf order (sequence), an `ArrayNode` (array). Without
//! it results come back as plain numbers and nested lists.
//!
//! Every path of the binding that meets a container goes through [`describe`]:
//! `Target.compile` (compile the leaves or the node), `names=`/`updates=` (symbol
//! shapes), `read_value` (numbers, rebuilt; arrays as nested lists, as Copapy returns
//! them), `write_value` (data checked against the shape), `@cp.jit` results (nested
//! lists; arrays as NumPy arrays) and `cp.grad` (gradients rebuilt). An object whose class
//! has no `__copapy__` is not a container, and gets the error of whatever it is instead.
//!
//! Rust never imports copapy's Python modules: the few Python callables it needs (the
//! classes `@cp.jit` builds from NumPy arguments, the data conversions of `write_value`)
//! the package hands over once at import with [`register_containers`].

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use copapy_compiler::{array, ScalarType};

use crate::array_ops::PyArrayNode;
use crate::convert::{to_python, type_name};
use crate::shape::show;
use crate::walk;

/// Element type of an array container as Python names it: storage is float, int or bool
/// slots; `Byte` is stored as int (0 to 255).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Float,
    Int,
    Bool,
    Byte,
}

impl Dtype {
    fn parse(name: &str) -> PyResult<Dtype> {
        match name {
            "float" => Ok(Dtype::Float),
            "int" => Ok(Dtype::Int),
            "bool" => Ok(Dtype::Bool),
            "byte" => Ok(Dtype::Byte),
            other => Err(PyValueError::new_err(format!(
                "unknown array dtype '{other}': use 'float', 'int', 'bool' or 'byte'"
            ))),
        }
    }

    fn of_storage(ty: ScalarType) -> Dtype {
        match ty {
            ScalarType::Float => Dtype::Float,
            ScalarType::Int => Dtype::Int,
            ScalarType::Bool => Dtype::Bool,
        }
    }

    /// The name `cp.array` uses.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Float => "float",
            Dtype::Int => "int",
            Dtype::Bool => "bool",
            Dtype::Byte => "byte",
        }
    }

    /// How an element of `storage` slots reads back: bool arrays as bools, whatever the
    /// slot type, everything else as stored.
    pub fn read_type(self, storage: ScalarType) -> ScalarType {
        if self == Dtype::Bool {
            ScalarType::Bool
        } else {
            storage
        }
    }
}

/// What a container holds.
pub enum Contents {
    /// One value or number.
    Element(Py<PyAny>),
    /// Values and numbers in row-major order.
    Sequence(Py<PyTuple>),
    /// Contiguous elements of one array node.
    Array { node: Py<PyArrayNode>, dtype: Dtype },
}

/// The descriptor a container's `__copapy__` returns (see the module documentation).
#[pyclass(module = "copapy._core", name = "Container", frozen)]
pub struct PyContainer {
    contents: Contents,
    shape: Vec<usize>,
    rebuild: Option<Py<PyAny>>,
}

impl PyContainer {
    pub fn contents(&self) -> &Contents {
        &self.contents
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Whether the container gave a rebuild callable.
    pub fn has_rebuild(&self) -> bool {
        self.rebuild.is_some()
    }

    /// `rebuild(contents)` if the container gave a rebuild callable, else `None`.
    pub fn rebuild<'py>(
        &self,
        py: Python<'py>,
        contents: Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.rebuild {
            Some(f) => Ok(Some(f.bind(py).call1((contents,))?)),
            None => Ok(None),
        }
    }
}

/// `shape` as dimensions whose product is `count`; the default is one dimension.
fn checked_shape(shape: Option<Vec<usize>>, count: usize, what: &str) -> PyResult<Vec<usize>> {
    let Some(shape) = shape else {
        return Ok(vec![count]);
    };
    // results are nested as deep as the shape: keep within the bound of every walk
    if shape.len() > walk::MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "a container shape may have at most {} dimensions, got {}",
            walk::MAX_DEPTH,
            shape.len()
        )));
    }
    let product = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if product != Some(count) {
        return Err(PyValueError::new_err(format!(
            "Container.{what}: shape {} does not match its {count} elements",
            show(&shape)
        )));
    }
    Ok(shape)
}

fn checked_rebuild(rebuild: Option<Bound<'_, PyAny>>) -> PyResult<Option<Py<PyAny>>> {
    match rebuild {
        Some(f) if f.is_none() => Ok(None),
        Some(f) if !f.is_callable() => Err(PyTypeError::new_err(format!(
            "Container rebuild must be callable (or None), got a {}",
            type_name(&f)
        ))),
        f => Ok(f.map(Bound::unbind)),
    }
}

#[pymethods]
impl PyContainer {
    /// A container of one value or number (`rebuild(number)` makes it again).
    #[staticmethod]
    #[pyo3(signature = (leaf, rebuild = None))]
    fn element(leaf: Bound<'_, PyAny>, rebuild: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(PyContainer {
            contents: Contents::Element(leaf.unbind()),
            shape: Vec::new(),
            rebuild: checked_rebuild(rebuild)?,
        })
    }

    /// A container of values and numbers (a list or tuple, row-major) of `shape`
    /// (`rebuild(tuple)` makes it again from as many items).
    #[staticmethod]
    #[pyo3(signature = (leaves, shape = None, rebuild = None))]
    fn sequence(
        leaves: Bound<'_, PyAny>,
        shape: Option<Vec<usize>>,
        rebuild: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let leaves = match leaves.cast_into::<PyTuple>() {
            Ok(t) => t,
            Err(e) => {
                let obj = e.into_inner();
                let list = obj.cast::<PyList>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "Container.sequence takes the leaves as a tuple or list, got a {}",
                        type_name(&obj)
                    ))
                })?;
                list.to_tuple()
            }
        };
        Ok(PyContainer {
            shape: checked_shape(shape, leaves.len(), "sequence")?,
            contents: Contents::Sequence(leaves.unbind()),
            rebuild: checked_rebuild(rebuild)?,
        })
    }

    /// A container of the elements of an array node, seen with `shape` and `dtype`
    /// (`rebuild(node)` makes it again around another node of the same length).
    #[staticmethod]
    #[pyo3(signature = (node, shape = None, dtype = None, rebuild = None))]
    fn array(
        node: Bound<'_, PyAny>,
        shape: Option<Vec<usize>>,
        dtype: Option<&str>,
        rebuild: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let node = node.cast_into::<PyArrayNode>().map_err(|e| {
            PyTypeError::new_err(format!(
                "Container.array takes an ArrayNode (what cp.array holds), got a {}",
                type_name(&e.into_inner())
            ))
        })?;
        let storage = node.get().value().ty();
        let dtype = match dtype {
            Some(name) => Dtype::parse(name)?,
            None => Dtype::of_storage(storage),
        };
        // a float array stores float bits; every other dtype is stored as integers
        if (dtype == Dtype::Float) != (storage == ScalarType::Float) {
            return Err(PyValueError::new_err(format!(
                "Container.array: a {} node cannot be seen as a {} array",
                storage.name(),
                dtype.name()
            )));
        }
        let len = array::len_of(node.get().value()).unwrap_or(1) as usize;
        Ok(PyContainer {
            shape: checked_shape(shape, len, "array")?,
            contents: Contents::Array {
                node: node.unbind(),
                dtype,
            },
            rebuild: checked_rebuild(rebuild)?,
        })
    }

    /// `'element'`, `'sequence'` or `'array'`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.contents {
            Contents::Element(_) => "element",
            Contents::Sequence(_) => "sequence",
            Contents::Array { .. } => "array",
        }
    }

    /// The dimensions (`()` for an element).
    #[getter(shape)]
    fn py_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    /// The values and numbers (one for an element); `None` for an array.
    #[getter]
    fn leaves<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match &self.contents {
            Contents::Element(leaf) => Ok(Some(PyTuple::new(py, [leaf.clone_ref(py)])?)),
            Contents::Sequence(t) => Ok(Some(t.bind(py).clone())),
            Contents::Array { .. } => Ok(None),
        }
    }

    /// The array node; `None` unless the kind is `'array'`.
    #[getter]
    fn node(&self, py: Python<'_>) -> Option<Py<PyArrayNode>> {
        match &self.contents {
            Contents::Array { node, .. } => Some(node.clone_ref(py)),
            _ => None,
        }
    }

    /// The array's dtype name; `None` unless the kind is `'array'`.
    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        match &self.contents {
            Contents::Array { dtype, .. } => Some(dtype.name()),
            _ => None,
        }
    }

    /// The callable that makes the container again from new contents, or `None`.
    #[getter(rebuild)]
    fn py_rebuild(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.rebuild.as_ref().map(|f| f.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "Container(kind='{}', shape={})",
            self.kind(),
            show(&self.shape)
        )
    }
}

/// `obj`'s descriptor if its class takes part in the protocol, `None` if it does not.
/// A `__copapy__` that raises, or returns anything but a `Container`, is an error.
pub fn describe<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyContainer>>> {
    // the builtins never do: no attribute lookup on the common paths
    if obj.is_exact_instance_of::<PyList>()
        || obj.is_exact_instance_of::<PyTuple>()
        || obj.is_exact_instance_of::<PyFloat>()
        || obj.is_exact_instance_of::<PyInt>()
        || obj.is_exact_instance_of::<PyBool>()
        || obj.is_exact_instance_of::<PyDict>()
        || obj.is_exact_instance_of::<PyString>()
        || obj.is_exact_instance_of::<PyBytes>()
    {
        return Ok(None);
    }
    let py = obj.py();
    // looked up on the class, as Python looks up special methods
    let Some(method) = walk::attr(obj.get_type().as_any(), intern!(py, "__copapy__"))? else {
        return Ok(None);
    };
    let d = method.call1((obj,))?;
    d.cast_into::<PyContainer>().map(Some).map_err(|e| {
        PyTypeError::new_err(format!(
            "{}.__copapy__() must return a copapy._core.Container (made with \
             Container.element, Container.sequence or Container.array), got a {}",
            type_name(obj),
            type_name(&e.into_inner())
        ))
    })
}

/// The Python callables the binding needs from the package (see [`register_containers`]).
pub struct Registry {
    /// `array(node, shape, dtype)`: a `cp.array` around a node.
    pub array: Py<PyAny>,
    /// `vector(list)`: a `cp.vector`.
    pub vector: Py<PyAny>,
    /// `matrix(nested_list)`: a 2-D `cp.tensor`.
    pub matrix: Py<PyAny>,
    /// `flatten(data, shape, what) -> list`: the numbers of `data`, checked against `shape`.
    pub flatten: Py<PyAny>,
}

static REGISTRY: Mutex<Option<Arc<Registry>>> = Mutex::new(None);

/// The registered callables, or an error saying how to get them.
pub fn registry() -> PyResult<Arc<Registry>> {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| {
            PyRuntimeError::new_err(
                "copapy's containers are not registered: import copapy (its import calls \
                 copapy._core.register_containers) before using copapy._core directly",
            )
        })
}

/// Called once by `copapy` at import: the callables that build copapy's containers
/// (`@cp.jit` traces NumPy arguments as `array`, `vector` or `matrix`) and convert
/// `write_value` data of sequences (`flatten`; an array's is `ndcore::nd_encode`). A later call
/// replaces them (a reloaded package).
#[pyfunction]
#[pyo3(signature = (*, array, vector, matrix, flatten))]
pub fn register_containers(
    array: Bound<'_, PyAny>,
    vector: Bound<'_, PyAny>,
    matrix: Bound<'_, PyAny>,
    flatten: Bound<'_, PyAny>,
) -> PyResult<()> {
    let named = [
        ("array", &array),
        ("vector", &vector),
        ("matrix", &matrix),
        ("flatten", &flatten),
    ];
    for (name, f) in named {
        if !f.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "register_containers: {name} must be callable, got a {}",
                type_name(f)
            )));
        }
    }
    let registry = Registry {
        array: array.unbind(),
        vector: vector.unbind(),
        matrix: matrix.unbind(),
        flatten: flatten.unbind(),
    };
    *REGISTRY.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(registry));
    Ok(())
}

/// `items` (row-major) split into rows of `shape`: `innermost` makes a row of the last
/// dimension from items, `outer` a row of rows. The one place the binding nests flat data
/// (read values, jit results, symbol reads); a 0-d or 1-D shape is one innermost row.
pub fn nest_rows<T, R, E>(
    items: Vec<T>,
    shape: &[usize],
    innermost: &mut impl FnMut(Vec<T>) -> Result<R, E>,
    outer: &mut impl FnMut(Vec<R>) -> Result<R, E>,
) -> Result<R, E> {
    if shape.len() <= 1 {
        return innermost(items);
    }
    let inner: usize = shape[1..].iter().product();
    let mut it = items.into_iter();
    let rows = (0..shape[0])
        .map(|_| {
            nest_rows(
                it.by_ref().take(inner).collect(),
                &shape[1..],
                innermost,
                outer,
            )
        })
        .collect::<Result<Vec<_>, E>>()?;
    outer(rows)
}

/// `items` (row-major) as nested lists of `shape`; the one item itself for shape `()`.
pub fn nest(py: Python<'_>, items: Vec<Py<PyAny>>, shape: &[usize]) -> PyResult<Py<PyAny>> {
    if shape.is_empty() {
        return Ok(items.into_iter().next().unwrap_or_else(|| py.None()));
    }
    let mut list = |v: Vec<Py<PyAny>>| Ok(PyList::new(py, v)?.into_any().unbind());
    let mut rows = |v: Vec<Py<PyAny>>| Ok(PyList::new(py, v)?.into_any().unbind());
    nest_rows(items, shape, &mut list, &mut rows)
}

/// Little-endian 4-byte elements of type `ty` (an array read) as nested lists of `shape`,
/// each list filled straight from the bytes.
pub fn nest_words(
    py: Python<'_>,
    raw: &[u8],
    ty: ScalarType,
    shape: &[usize],
) -> PyResult<Py<PyAny>> {
    if shape.len() <= 1 {
        let items = raw
            .chunks_exact(4)
            .map(|w| to_python(py, ty, u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
        return Ok(PyList::new(py, items)?.into_any().unbind());
    }
    let inner = 4 * shape[1..].iter().product::<usize>();
    let rows = (0..shape[0])
        .map(|r| {
            let part = raw.get(r * inner..(r + 1) * inner).unwrap_or(&[]);
            nest_words(py, part, ty, &shape[1..])
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, rows)?.into_any().unbind())
}
