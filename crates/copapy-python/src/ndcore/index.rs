//! Indexing, written once for every container (`tensor`, `matrix`, `vector`, `quaternion`,
//! `cp.array`) and both storage modes: NumPy's basic indexing (ints, slices with any step,
//! tuples of them, `...` and `None`) and runtime indices (`cp.value`s of int or bool dtype).
//!
//! An index is first resolved against the shape into one pick per position ([`Pick`]), then
//! into a [`Selection`]: the strided view the static positions give and, in axis order, what
//! each picked axis adds to the flat offset. Static selections are views (a gather of leaves,
//! one strided copy of an array); runtime ones read one array (a container of leaves gathers
//! its elements into one, once: [`nd_lookup`]) with one `index` stencil for an element or one
//! `gather` stencil for a sub-array. A runtime index wraps once if negative and is then
//! clamped to its axis, so a lookup never reads outside the array.
//!
//! What an index of every axis gives: the element itself for a `vector` (and `quaternion`)
//! and an array (NumPy's and Copapy's `v[i]`), a 0-d tensor for a `tensor` (Copapy's rule).

use pyo3::exceptions::{
    PyIndexError, PyNotImplementedError, PyOverflowError, PyTypeError, PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyInt, PySlice, PyTuple};

use copapy_compiler::{Op, Value};

use super::errors::article;
use super::leaves::nd_dtype;
use super::pack::nd_pack;
use super::shapes::nd_plain_int;
use super::storage::{kernel, scalar, Contents, Nd};
use crate::array_ops::{array_elements, array_pack, operand, PyArrayNode};
use crate::container;
use crate::convert::type_name;
use crate::shape::{self, show};
use crate::value::{self, PyValue};

/// One position of an index, resolved against the axis it reads (`NewAxis` reads none).
#[derive(Debug, Clone, PartialEq)]
pub enum Pick<T> {
    /// A plain int, wrapped into `0..n`.
    At(usize),
    /// A slice as `slice.indices` gives it: the first position, the step and the count.
    Range {
        start: isize,
        step: isize,
        len: usize,
    },
    /// A runtime index (wrapped once if negative and clamped to the axis at run time).
    Runtime(T),
    /// `None` (`np.newaxis`): a new axis of length 1.
    NewAxis,
}

/// What one picked axis adds to the flat offset of the selection.
#[derive(Debug, Clone, PartialEq)]
pub enum Term<T> {
    /// A known amount (an int's position or a slice's start, times the axis' stride).
    Static(isize),
    /// A runtime index with the length and the stride of its axis.
    Runtime(T, usize, isize),
}

/// An index applied to a row-major shape.
#[derive(Debug, PartialEq)]
pub struct Selection<T> {
    /// The result's shape and its strides over the flat elements.
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    /// What each picked axis adds to the flat offset, in axis order.
    pub terms: Vec<Term<T>>,
    /// Every axis is picked by an int or a runtime index (no slice, no new axis): one element.
    pub element: bool,
}

impl<T> Selection<T> {
    /// The flat offset of the first element from the static terms alone.
    pub fn offset(&self) -> isize {
        self.terms
            .iter()
            .map(|t| match t {
                Term::Static(at) => *at,
                Term::Runtime(..) => 0,
            })
            .sum()
    }

    /// The largest offset the runtime indices can reach (the smallest is [`Self::offset`]).
    pub fn highest(&self) -> isize {
        let reach: isize = self
            .terms
            .iter()
            .map(|t| match t {
                Term::Runtime(_, n, stride) => (*n as isize - 1) * stride,
                Term::Static(_) => 0,
            })
            .sum();
        self.offset() + reach
    }

    pub fn has_runtime(&self) -> bool {
        self.terms.iter().any(|t| matches!(t, Term::Runtime(..)))
    }
}

/// The selection of `picks` (one per axis of `shape`, in order, with new axes among them).
pub fn select<T>(picks: Vec<Pick<T>>, shape: &[usize]) -> Selection<T> {
    let st = shape::strides(shape);
    let mut sel = Selection {
        shape: Vec::new(),
        strides: Vec::new(),
        terms: Vec::new(),
        element: true,
    };
    let mut axis = 0;
    for pick in picks {
        let stride = st.get(axis).map_or(0, |&s| s as isize);
        match pick {
            Pick::NewAxis => {
                sel.shape.push(1);
                sel.strides.push(0);
                sel.element = false;
                continue;
            }
            Pick::At(i) => sel.terms.push(Term::Static(i as isize * stride)),
            Pick::Range { start, step, len } => {
                sel.terms.push(Term::Static(start * stride));
                sel.shape.push(len);
                sel.strides.push(step * stride);
                sel.element = false;
            }
            Pick::Runtime(v) => sel.terms.push(Term::Runtime(v, shape[axis], stride)),
        }
        axis += 1;
    }
    sel
}

/// One position of an index at `axis` of a container `con` of `shape`.
fn pick<'py>(
    item: &Bound<'py, PyAny>,
    axis: usize,
    shape: &[usize],
    con: &Bound<'py, PyAny>,
) -> PyResult<Pick<Bound<'py, PyAny>>> {
    let py = item.py();
    let name = || type_name(con);
    let n = shape[axis];
    if let Ok(sl) = item.cast::<PySlice>() {
        for bound in ["start", "stop", "step"] {
            if sl.getattr(bound)?.is_instance_of::<PyValue>() {
                return Err(PyTypeError::new_err(
                    "slice bounds must be plain integers: a runtime (value) index selects one \
                     position of a dimension, e.g. a[i] or a[i, :]",
                ));
            }
        }
        let r = sl.indices(n as isize)?;
        return Ok(Pick::Range {
            start: r.start,
            step: r.step,
            len: r.slicelength,
        });
    }
    if let Ok(v) = item.cast::<PyValue>() {
        if v.get().value().ty().name() == "float" {
            return Err(PyTypeError::new_err(format!(
                "{} indices must be int or bool values, not float values: convert the \
                 index with cp.cast(i, int)",
                name()
            )));
        }
        if n == 0 {
            return Err(PyIndexError::new_err(format!(
                "a runtime index cannot pick from axis {axis} of {}: it has length 0",
                article(&name())
            )));
        }
        return Ok(Pick::Runtime(item.clone()));
    }
    let out_of_range = || {
        let of = if shape.len() == 1 {
            format!("{} of length {n}", article(&name()))
        } else {
            format!("axis {axis} of size {n}")
        };
        let shown = item
            .str()
            .map_or_else(|_| "?".to_string(), |s| s.to_string());
        PyIndexError::new_err(format!("index {shown} is out of range for {of}"))
    };
    let i = match nd_plain_int(item) {
        Ok(Some(i)) => i,
        // an int beyond 64 bits is out of range of every axis
        Err(e) if e.is_instance_of::<PyOverflowError>(py) => return Err(out_of_range()),
        Err(e) => return Err(e),
        Ok(None) => {
            let hint = if item.hasattr(intern!(py, "__len__"))? {
                ": index arrays (lists, arrays) are not supported, index one position at a time"
            } else {
                ""
            };
            return Err(PyTypeError::new_err(format!(
                "{} indices must be integers or slices, not {} (int cp.values, None and ... \
                 work too){hint}",
                name(),
                type_name(item)
            )));
        }
    };
    shape::position(i, n).map(Pick::At).ok_or_else(out_of_range)
}

/// The picks of `key` (one position, or a tuple of them) for a container of `shape`:
/// `...` stands for as many whole axes as the other positions leave, and the axes after
/// the last position are taken whole.
pub fn picks<'py>(
    key: &Bound<'py, PyAny>,
    shape: &[usize],
    con: &Bound<'py, PyAny>,
) -> PyResult<Vec<Pick<Bound<'py, PyAny>>>> {
    let py = key.py();
    let items: Vec<Bound<'py, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let ellipsis = py.Ellipsis();
    let ellipses = items.iter().filter(|k| k.is(&ellipsis)).count();
    if ellipses > 1 {
        return Err(PyIndexError::new_err(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let positions = items.len() - ellipses - items.iter().filter(|k| k.is_none()).count();
    if positions > shape.len() {
        return Err(PyIndexError::new_err(format!(
            "too many indices ({positions}) for {} of shape {}",
            article(&type_name(con)),
            show(shape)
        )));
    }
    let whole = |n: usize| Pick::Range {
        start: 0,
        step: 1,
        len: n,
    };
    let mut out = Vec::with_capacity(items.len() + shape.len());
    let mut axis = 0;
    for item in &items {
        if item.is_none() {
            out.push(Pick::NewAxis);
        } else if item.is(&ellipsis) {
            for _ in 0..shape.len() - positions {
                out.push(whole(shape[axis]));
                axis += 1;
            }
        } else {
            out.push(pick(item, axis, shape, con)?);
            axis += 1;
        }
    }
    out.extend(shape[axis..].iter().map(|&n| whole(n)));
    Ok(out)
}

/// Whether an index of every axis gives the element itself (a vector, a quaternion, an
/// array) rather than a 0-d container (a tensor, as Copapy's).
fn gives_elements(nd: &Nd<'_>) -> PyResult<bool> {
    match nd.contents {
        Contents::Array { .. } => Ok(true),
        Contents::Leaves(_) => nd
            .con
            .is_instance(container::registry()?.vector.bind(nd.py())),
    }
}

/// A runtime index wrapped once if negative, then clamped to `0 .. n - 1`.
fn clamp<'py>(i: &Bound<'py, PyAny>, n: usize) -> PyResult<Bound<'py, PyAny>> {
    let py = i.py();
    let wrapped = i.add(i.rich_compare(0, CompareOp::Lt)?.mul(n)?)?;
    let zero = PyInt::new(py, 0).into_any();
    let low = value::math_binary(py, &wrapped, &zero, Op::Max, "max")?;
    let last = PyInt::new(py, n as i64 - 1).into_any();
    Ok(value::math_binary(py, low.bind(py), &last, Op::Min, "min")?.into_bound(py))
}

/// `acc + term` at trace time: a known amount, or the runtime index (clamped when `clamped`)
/// times its stride.
fn add_term<'py>(
    acc: Bound<'py, PyAny>,
    term: &Term<Bound<'py, PyAny>>,
    clamped: bool,
) -> PyResult<Bound<'py, PyAny>> {
    match term {
        Term::Static(at) => acc.add(*at),
        Term::Runtime(i, n, stride) => {
            let k = if clamped { clamp(i, *n)? } else { i.clone() };
            acc.add(k.mul(*stride)?)
        }
    }
}

/// The array of a container of leaves for a runtime index: its packed array, or its leaves
/// gathered into one (numbers and values, promoted float > int > bool), kept on `con._arr`.
#[pyfunction]
pub fn nd_lookup<'py>(con: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = con.py();
    if let Some(node) = nd_pack(con, false)? {
        return Ok(node);
    }
    let leaves: Vec<Bound<'py, PyAny>> = con
        .getattr(intern!(py, "values"))?
        .try_iter()?
        .collect::<PyResult<_>>()?;
    let dtype = nd_dtype(leaves.clone())?;
    let node = array_pack(py, dtype, leaves)?.into_bound(py).into_any();
    con.setattr(intern!(py, "_arr"), &node)?;
    Ok(node)
}

/// A selection with runtime indices: one `index` stencil for an element, one `gather`
/// (its offset computed at run time) for a sub-container.
fn runtime<'py>(
    nd: &Nd<'py>,
    sel: Selection<Bound<'py, PyAny>>,
    elements: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    if !sel.element && sel.shape.contains(&0) {
        return empty(nd, &sel.shape);
    }
    // checked before a container of leaves gathers its lookup array: a failed index changes nothing
    let dims = shape::merged(&sel.shape, &sel.strides);
    if dims.len() > 4 {
        return Err(PyNotImplementedError::new_err(format!(
            "a runtime-indexed sub-array of shape {} has more than 4 non-contiguous \
             dimensions: index it in two steps",
            show(&sel.shape)
        )));
    }
    let (node, dtype) = match &nd.contents {
        Contents::Array { node, dtype } => (node.clone(), Some(dtype.as_str())),
        Contents::Leaves(_) => (operand(&nd_lookup(&nd.con)?)?, None),
    };
    let zero = PyInt::new(py, 0).into_any();
    if sel.element {
        // the stencil clamps the flat index of a 1-D container itself
        let clamped = nd.shape.len() > 1;
        let mut flat = zero;
        for term in sel.terms.iter().rev() {
            flat = add_term(flat, term, clamped)?;
        }
        let x = scalar(py, kernel("index", &[node, operand(&flat)?], &[])?)?;
        return if elements {
            Ok(x)
        } else {
            nd.leaves(vec![x], &[])
        };
    }
    let mut offset = zero;
    for term in &sel.terms {
        offset = add_term(offset, term, true)?;
    }
    let mut params = vec![sel.offset() as i64, sel.highest() as i64];
    params.extend(dims.iter().flat_map(|&(n, s)| [n as i64, s as i64]));
    let out = kernel("gather", &[node, operand(&offset)?], &params)?;
    match dtype {
        Some(_) => nd.node(out, &sel.shape, dtype),
        None => aliasing(nd, out, &sel.shape),
    }
}

/// A container of leaves of `nd`'s kind (its `_like`: a quaternion's slice is a vector)
/// whose elements alias array `node` (no code), packed by it.
fn aliasing<'py>(nd: &Nd<'py>, node: Value, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    let py = nd.py();
    let node = Bound::new(py, PyArrayNode::new(node))?;
    let leaves = array_elements(py, &node)?
        .into_iter()
        .map(|x| x.into_bound(py).into_any())
        .collect();
    let out = nd.leaves(leaves, shape)?;
    out.setattr(intern!(py, "_arr"), node)?;
    Ok(out)
}

/// A selection of no elements: an empty container of leaves (as NumPy's), an error for an
/// array (arrays have at least one element).
fn empty<'py>(nd: &Nd<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    match nd.contents {
        Contents::Leaves(_) => nd.leaves(Vec::new(), shape),
        Contents::Array { .. } => Err(PyValueError::new_err(
            "the slice selects no elements: arrays cannot be empty",
        )),
    }
}

/// `con[key]` of a container (`elements`: an index of every axis gives the element).
fn get<'py>(nd: &Nd<'py>, key: &Bound<'py, PyAny>, elements: bool) -> PyResult<Bound<'py, PyAny>> {
    if nd.shape.is_empty() {
        return Err(PyTypeError::new_err(format!(
            "a 0-d {} cannot be indexed: use .item() for its element",
            type_name(&nd.con)
        )));
    }
    let sel = select(picks(key, &nd.shape, &nd.con)?, &nd.shape);
    if sel.has_runtime() {
        return runtime(nd, sel, elements);
    }
    if sel.element && elements {
        return nd.element(sel.offset() as usize);
    }
    if sel.shape.contains(&0) {
        return empty(nd, &sel.shape);
    }
    nd.view(sel.offset(), &sel.shape, &sel.strides)
}

/// `v[i]` of a vector (or quaternion: 1-D, its leaves its elements) with an int `i` in
/// range, the common case while tracing, without resolving a selection; None for anything
/// else (a bool, an int beyond 64 bits or out of range), which the general path takes.
fn vector_element<'py>(
    con: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = con.py();
    let Ok(i) = key.cast_exact::<PyInt>() else {
        return Ok(None);
    };
    if !con.is_instance(container::registry()?.vector.bind(py))? {
        return Ok(None);
    }
    let values = con.getattr(intern!(py, "values"))?.cast_into::<PyTuple>()?;
    match i
        .extract()
        .ok()
        .and_then(|i| shape::position(i, values.len()))
    {
        Some(k) => values.get_item(k).map(Some),
        None => Ok(None),
    }
}

/// `con[key]`: NumPy's basic indexing and runtime indices, for every container.
#[pyfunction]
pub fn nd_getitem<'py>(
    con: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(x) = vector_element(con, key)? {
        return Ok(x);
    }
    let nd = Nd::of(con)?;
    let elements = gives_elements(&nd)?;
    get(&nd, key, elements)
}

/// `get_scalar(*key)`: the element at one index per dimension (a value for a runtime one).
#[pyfunction]
pub fn nd_get_scalar<'py>(
    con: &Bound<'py, PyAny>,
    key: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let nd = Nd::of(con)?;
    if key.len() != nd.shape.len() {
        return Err(PyIndexError::new_err(format!(
            "get_scalar needs {} indices for shape {}, got {}",
            nd.shape.len(),
            show(&nd.shape),
            key.len()
        )));
    }
    get(&nd, key.as_any(), true)
}

/// `iter(con)`: the elements of a 1-D vector or array, else the sub-containers along the
/// first axis (a 1-D tensor's are 0-d tensors, as Copapy's).
#[pyfunction]
pub fn nd_iter<'py>(con: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = con.py();
    let nd = Nd::of(con)?;
    let Some(&n) = nd.shape.first() else {
        return Err(PyTypeError::new_err(format!(
            "iteration over a 0-d {}",
            type_name(con)
        )));
    };
    if let Contents::Leaves(t) = &nd.contents {
        if nd.shape.len() == 1 && gives_elements(&nd)? {
            return Ok(t.try_iter()?.into_any());
        }
    }
    let builtins = py.import(intern!(py, "builtins"))?;
    let positions = builtins.getattr(intern!(py, "range"))?.call1((n,))?;
    let get = con.getattr(intern!(py, "__getitem__"))?;
    builtins
        .getattr(intern!(py, "map"))?
        .call1((get, positions))
}

/// `len(con)`: the length of the first axis.
#[pyfunction]
pub fn nd_len(con: &Bound<'_, PyAny>) -> PyResult<usize> {
    let shape: Vec<usize> = con.getattr(intern!(con.py(), "shape"))?.extract()?;
    shape
        .first()
        .copied()
        .ok_or_else(|| PyTypeError::new_err(format!("len() of a 0-d {}", type_name(con))))
}

/// Registers indexing in `copapy._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nd_getitem, m)?)?;
    m.add_function(wrap_pyfunction!(nd_get_scalar, m)?)?;
    m.add_function(wrap_pyfunction!(nd_iter, m)?)?;
    m.add_function(wrap_pyfunction!(nd_len, m)?)?;
    m.add_function(wrap_pyfunction!(nd_lookup, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(i: usize) -> Pick<char> {
        Pick::At(i)
    }

    #[test]
    fn static_picks_are_strided_views() {
        // x[1, ::-2] of shape (2, 3)
        let picks = vec![
            at(1),
            Pick::Range {
                start: 2,
                step: -2,
                len: 2,
            },
        ];
        let sel = select(picks, &[2, 3]);
        assert_eq!(
            (sel.offset(), sel.shape.clone(), sel.strides.clone()),
            (5, vec![2], vec![-2])
        );
        assert!(!sel.element && !sel.has_runtime());
        // x[None, 0] of shape (4,): one element under a new axis
        let sel = select(vec![Pick::NewAxis, at(0)], &[4]);
        assert_eq!(
            (sel.shape.clone(), sel.strides.clone(), sel.element),
            (vec![1], vec![0], false)
        );
        assert!(select(vec![at(1), at(2)], &[2, 3]).element);
    }

    #[test]
    fn runtime_picks_keep_their_axis_and_reach() {
        // x[i, 1:3, 2] of shape (2, 3, 4)
        let picks = vec![
            Pick::Runtime('i'),
            Pick::Range {
                start: 1,
                step: 1,
                len: 2,
            },
            at(2),
        ];
        let sel = select(picks, &[2, 3, 4]);
        assert_eq!(
            sel.terms,
            vec![Term::Runtime('i', 2, 12), Term::Static(4), Term::Static(2)]
        );
        assert_eq!((sel.offset(), sel.highest()), (6, 18));
        assert_eq!((sel.shape.clone(), sel.strides.clone()), (vec![2], vec![4]));
    }
}
