//! The front end's entry to the structural array operations ([`build`], the Python
//! binding's `_core.array_kernel(name, operands, params)`): a row with a shape rule goes
//! to the generic constructor [`array::kernel`]; the rows whose parameters are walks or
//! windows go to their own constructors, adapted here from the flat parameter list.

use crate::array;
use crate::array_kernels::{named, KERNELS};
use crate::graph::Value;
use crate::trace::TraceError;

fn err(message: String) -> TraceError {
    TraceError { message }
}

/// `(size, stride)` pairs from the parameters `[n0, s0, n1, s1, ...]` after `skip`.
fn walk(name: &str, p: &[i64], skip: usize) -> Result<Vec<(u32, i64)>, TraceError> {
    let dims = p.get(skip..).unwrap_or(&[]);
    if p.len() < skip || dims.len() % 2 != 0 {
        return Err(err(format!(
            "{name} takes {skip} parameters and (size, stride) pairs, got {}",
            p.len()
        )));
    }
    dims.chunks(2)
        .map(|d| {
            let size = u32::try_from(d[0]).map_err(|_| {
                err(format!(
                    "{name}: parameter {} is not a size (0 to 2**32 - 1)",
                    d[0]
                ))
            })?;
            Ok((size, d[1]))
        })
        .collect()
}

/// The rows without a shape rule, from the flat parameters.
fn own_constructor(name: &str, v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    match name {
        "strided" => {
            let offset = *p
                .first()
                .ok_or_else(|| err("strided takes an offset".into()))?;
            array::strided(&v[0], offset, &walk(name, p, 1)?)
        }
        "gather" => {
            if p.len() < 2 {
                return Err(err("gather takes lo, hi and (size, stride) pairs".into()));
            }
            array::gather(&v[0], &v[1], p[0], p[1], &walk(name, p, 2)?)
        }
        "conv2d" => crate::window::conv2d(&v[0], &v[1], &v[2], p),
        "maxpool2d" => crate::window::pool2d(false, &v[0], p),
        "avgpool2d" => crate::window::pool2d(true, &v[0], p),
        _ => Err(err(format!(
            "array operation {name:?} has no front-end constructor"
        ))),
    }
}

/// Structural operation `name` of `operands` with parameters `params`, as a front end
/// asks for it: the row's rule or its own constructor, after checking the number of
/// operands.
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
    if k.rule.is_some() {
        array::kernel(name, operands, params)
    } else {
        own_constructor(name, operands, params)
    }
}
