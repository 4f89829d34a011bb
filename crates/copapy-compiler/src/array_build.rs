//! The front end's entry to the structural array operations ([`build`], the Python
//! binding's `_core.array_kernel(name, operands, params)`): the public rows, by name, to
//! the generic constructor [`array::kernel`], which checks each by its row's rule.

use crate::array;
use crate::array_kernels::{named, KERNELS};
use crate::graph::Value;
use crate::trace::TraceError;

fn err(message: String) -> TraceError {
    TraceError { message }
}

/// Structural operation `name` of `operands` with parameters `params`, as a front end
/// asks for it: a public row, its number of operands checked, then its rule.
pub fn build(name: &str, operands: &[Value], params: &[i64]) -> Result<Value, TraceError> {
    let k = named(name).ok_or_else(|| {
        let names: Vec<&str> = KERNELS
            .iter()
            .filter(|k| k.public)
            .map(|k| k.name)
            .collect();
        err(format!(
            "unknown array operation {name:?}: one of {}",
            names.join(", ")
        ))
    })?;
    if !k.public {
        return Err(err(format!(
            "array operation {name:?} is made by the compiler only"
        )));
    }
    if operands.len() != k.operands() {
        return Err(err(format!(
            "{name} takes {} operands ({}), got {}",
            k.operands(),
            k.shape,
            operands.len()
        )));
    }
    array::kernel(name, operands, params)
}
