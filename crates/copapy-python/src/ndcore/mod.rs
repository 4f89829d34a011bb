//! The n-d core every Python container stands on (`tensor`, `vector`, `matrix`, `cp.array`,
//! `quaternion`): NumPy's rules for shapes, axes, reshapes, transposes, broadcasts and
//! indices, static and runtime (`index.rs`, with NumPy's errors), flat-to-nested and
//! nested-to-flat data, and the documented summation order with Copapy's sparse-constant
//! rules. Written once, over two storage modes (`storage.rs`): a tuple of leaves (values and
//! plain numbers) and one contiguous array node. The arithmetic of shapes is `shape.rs`'.

use pyo3::prelude::*;

mod binary;
mod cast;
mod data;
mod elements;
mod errors;
mod index;
mod leaves;
mod make;
mod pack;
mod product;
mod readout;
mod reduce;
mod select;
mod shapes;
mod sort;
mod storage;
mod sums;

pub use binary::*;
pub use cast::*;
pub use data::*;
pub use errors::*;
pub use leaves::*;
pub use pack::*;
pub use product::*;
pub use readout::*;
pub use reduce::*;
pub use select::*;
pub use shapes::*;
pub use sort::*;
pub use storage::*;
pub use sums::*;

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
    m.add_function(wrap_pyfunction!(nd_reshape, m)?)?;
    m.add_function(wrap_pyfunction!(nd_nest, m)?)?;
    m.add_function(wrap_pyfunction!(nd_scalar, m)?)?;
    m.add_function(wrap_pyfunction!(nd_flatten, m)?)?;
    m.add_function(wrap_pyfunction!(nd_sum, m)?)?;
    m.add_function(wrap_pyfunction!(nd_dot, m)?)?;
    m.add_function(wrap_pyfunction!(nd_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(nd_check_leaves, m)?)?;
    m.add("PACK_THRESHOLD", PACK_THRESHOLD)?;
    m.add_function(wrap_pyfunction!(nd_pack_threshold, m)?)?;
    m.add_function(wrap_pyfunction!(nd_wants_pack, m)?)?;
    m.add_function(wrap_pyfunction!(nd_pack, m)?)?;
    // the methods every container has, over both storage modes
    m.add_function(wrap_pyfunction!(nd_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(nd_trace, m)?)?;
    m.add_function(wrap_pyfunction!(nd_sort, m)?)?;
    m.add_function(wrap_pyfunction!(nd_astype, m)?)?;
    m.add_function(wrap_pyfunction!(nd_cast_leaf, m)?)?;
    m.add_function(wrap_pyfunction!(nd_transpose, m)?)?;
    m.add_function(wrap_pyfunction!(nd_reshape_to, m)?)?;
    m.add_function(wrap_pyfunction!(nd_flat, m)?)?;
    m.add_function(wrap_pyfunction!(nd_broadcast_to, m)?)?;
    m.add_function(wrap_pyfunction!(nd_item, m)?)?;
    m.add_function(wrap_pyfunction!(nd_tolist, m)?)?;
    m.add_function(wrap_pyfunction!(nd_element, m)?)?;
    m.add_function(wrap_pyfunction!(nd_get_values, m)?)?;
    m.add_function(wrap_pyfunction!(nd_map, m)?)?;
    m.add_function(wrap_pyfunction!(nd_homogenize, m)?)?;
    m.add_function(wrap_pyfunction!(nd_binary, m)?)?;
    m.add_function(wrap_pyfunction!(nd_unary, m)?)?;
    m.add_function(wrap_pyfunction!(nd_product, m)?)?;
    m.add_function(wrap_pyfunction!(nd_bool, m)?)?;
    m.add_function(wrap_pyfunction!(nd_all, m)?)?;
    m.add_function(wrap_pyfunction!(nd_to_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(nd_array_data, m)?)?;
    m.add_function(wrap_pyfunction!(nd_encode, m)?)?;
    m.add_function(wrap_pyfunction!(nd_select, m)?)?;
    elements::register(m)?;
    index::register(m)?;
    make::register(m)?;
    Ok(())
}
