//! The structural array operations, one row each ([`KERNELS`]): the stencil family, the
//! element types it exists for, the holes it fills, whether its result is a scalar, where
//! its parameter array goes, its shape rule and its adjoint, and the constructor a front
//! end calls it by ([`build`]).
//!
//! Element-wise operations come from the op table (`stencils/optable.py`, the `array`
//! flag); the operations here each have a loop kernel of their own in
//! `stencils/gen_arrays.py` or `gen_windows.py`. The stencil names the compiler asks for
//! ([`crate::array_stencils`]), the scheduler's placement of the result and of the
//! parameter array ([`ArrayOp::params`]), the Python binding (one function,
//! `_core.array_kernel(name, operands, params)`, typed by the Literal names in
//! `python/copapy/_array_kernels.py`) and the stencil wrappers of the generators
//! (`stencils/array_kernels.json`) all read it; both files are this table written out by
//! `COPAPY_BLESS=1 cargo test -p copapy-compiler --test array_kernels`. Adding one is a row
//! here (with its `build_*` adapter), its [`ArrayOp`] variant with [`ArrayOp::kernel`] and
//! [`ArrayOp::params`] arms, its constructor in [`crate::array`] (the shape rule), its
//! adjoint arm in [`crate::autodiff`] (the compiler's exhaustive matches name each
//! missing one) and its C kernel.

use crate::array;
use crate::graph::{ArrayOp, Op, Value};
use crate::stencil_db::ARG_COUNT;
use crate::trace::TraceError;

/// How a front end builds the operation: its operands (arrays, or scalars where the
/// row's shape says so) and its integer parameters, in the order of the row's shape
/// rule; the constructor checks them.
pub type Build = fn(&[Value], &[i64]) -> Result<Value, TraceError>;

/// The element types a kernel's stencils exist for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classes {
    /// `st_arr_<name>_f` and `st_arr_<name>_i` (int and bool elements share the int one).
    FloatAndInt,
    /// `st_arr_<name>_f` only: float arithmetic.
    Float,
    /// `st_arr_<name>`: moves 32-bit patterns, whatever they mean.
    Any,
}

impl Classes {
    /// The suffixes of the stencils, in the order of [`crate::array_stencils::stencil_names`].
    pub fn suffixes(self) -> &'static [&'static str] {
        match self {
            Classes::FloatAndInt => &["_f", "_i"],
            Classes::Float => &["_f"],
            Classes::Any => &[""],
        }
    }

    /// The name used in `stencils/array_kernels.json`.
    pub fn name(self) -> &'static str {
        match self {
            Classes::FloatAndInt => "fi",
            Classes::Float => "f",
            Classes::Any => "",
        }
    }
}

/// One structural array operation.
#[derive(Debug)]
pub struct Kernel {
    /// The stencil family: `st_arr_<name>` plus the class suffix.
    pub name: &'static str,
    /// The element types it exists for.
    pub classes: Classes,
    /// How many of the holes `cp_a1..cp_a3` the stencil passes to its kernel: the
    /// operands, then the parameter array when it sits in one of them.
    pub holes: u8,
    /// The result is a scalar (its slot in `cp_a0`) rather than an array range.
    pub scalar: bool,
    /// The hole that receives the parameter array of [`ArrayOp::params`] (shape, scratch),
    /// if the kernel takes one; [`ARG_COUNT`] puts it where the element count would be.
    pub params: Option<u8>,
    /// Operands and result: the shape rule its constructor checks.
    pub shape: &'static str,
    /// Its adjoint (`crate::autodiff`).
    pub grad: &'static str,
    /// Its constructor as a front end calls it ([`build`]); `None` for operations only
    /// the compiler makes (adjoints, byte storage).
    pub build: Option<Build>,
}

impl Kernel {
    /// How many operands the front end passes: the holes but the parameter array's.
    pub fn operands(&self) -> usize {
        let params_in_a_hole = self.params.is_some_and(|h| h != ARG_COUNT);
        usize::from(self.holes) - usize::from(params_in_a_hole)
    }
}

// one argument per column, so each row of the table reads as one line
#[allow(clippy::too_many_arguments)]
const fn kernel(
    name: &'static str,
    classes: Classes,
    holes: u8,
    scalar: bool,
    params: Option<u8>,
    shape: &'static str,
    grad: &'static str,
    build: Option<Build>,
) -> Kernel {
    Kernel {
        name,
        classes,
        holes,
        scalar,
        params,
        shape,
        grad,
        build,
    }
}

fn err(message: String) -> TraceError {
    TraceError { message }
}

/// The `N` parameters of `name` as unsigned sizes.
fn sizes<const N: usize>(name: &str, p: &[i64]) -> Result<[u32; N], TraceError> {
    let mut out = [0u32; N];
    if p.len() != N {
        return Err(err(format!("{name} takes {N} parameters, got {}", p.len())));
    }
    for (o, &x) in out.iter_mut().zip(p) {
        *o = u32::try_from(x).map_err(|_| {
            err(format!(
                "{name}: parameter {x} is not a size (0 to 2**32 - 1)"
            ))
        })?;
    }
    Ok(out)
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
        .map(|d| Ok((sizes::<1>(name, &d[..1])?[0], d[1])))
        .collect()
}

fn build_sum(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("sum", p)?;
    array::sum(&v[0])
}

fn build_dot(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("dot", p)?;
    array::dot(&v[0], &v[1])
}

fn build_index(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("index", p)?;
    array::index(&v[0], &v[1])
}

fn build_strided(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    let offset = *p
        .first()
        .ok_or_else(|| err("strided takes an offset".into()))?;
    array::strided(&v[0], offset, &walk("strided", p, 1)?)
}

fn build_matmul(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    let [m, k, n] = sizes("matmul", p)?;
    array::matmul(&v[0], &v[1], m, k, n)
}

fn build_min(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("min", p)?;
    array::extreme(Op::Min, &v[0])
}

fn build_max(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("max", p)?;
    array::extreme(Op::Max, &v[0])
}

fn build_sort(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("sort", p)?;
    array::sort(&v[0], false)
}

fn build_argsort(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    sizes::<0>("argsort", p)?;
    array::sort(&v[0], true)
}

fn build_rows_min(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    let [rows, cols] = sizes("rows_min", p)?;
    array::rows_extreme(Op::Min, &v[0], rows, cols)
}

fn build_rows_max(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    let [rows, cols] = sizes("rows_max", p)?;
    array::rows_extreme(Op::Max, &v[0], rows, cols)
}

fn build_gather(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    if p.len() < 2 {
        return Err(err("gather takes lo, hi and (size, stride) pairs".into()));
    }
    array::gather(&v[0], &v[1], p[0], p[1], &walk("gather", p, 2)?)
}

fn build_solve(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    let [n, r] = sizes("solve", p)?;
    array::solve(&v[0], &v[1], n, r)
}

fn build_det(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    let [n] = sizes("det", p)?;
    array::det(&v[0], n)
}

fn build_conv2d(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    crate::window::conv2d(&v[0], &v[1], &v[2], p)
}

fn build_maxpool2d(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    crate::window::pool2d(false, &v[0], p)
}

fn build_avgpool2d(v: &[Value], p: &[i64]) -> Result<Value, TraceError> {
    crate::window::pool2d(true, &v[0], p)
}

/// Structural operation `name` of `operands` with parameters `params`, as a front end
/// asks for it (the Python binding's `array_kernel`): the row's constructor, after
/// checking the number of operands.
pub fn build(name: &str, operands: &[Value], params: &[i64]) -> Result<Value, TraceError> {
    let k = named(name).ok_or_else(|| {
        let names: Vec<&str> = KERNELS
            .iter()
            .filter(|k| k.build.is_some())
            .map(|k| k.name)
            .collect();
        err(format!(
            "unknown array operation {name:?}: one of {}",
            names.join(", ")
        ))
    })?;
    let make = k.build.ok_or_else(|| {
        err(format!(
            "array operation {name:?} is made by the compiler only"
        ))
    })?;
    if operands.len() != k.operands() {
        return Err(err(format!(
            "{name} takes {} operands ({}), got {}",
            k.operands(),
            k.shape,
            operands.len()
        )));
    }
    make(operands, params)
}

use Classes::{Any, Float, FloatAndInt};

/// Every structural array operation, in the order of `stencils/array_kernels.json`.
#[rustfmt::skip]
pub static KERNELS: [Kernel; 21] = [
    kernel("sum", FloatAndInt, 1, true, None, "array -> scalar", "g broadcast", Some(build_sum)),
    kernel("dot", FloatAndInt, 2, true, None, "two arrays of one length -> scalar", "g * the other", Some(build_dot)),
    kernel("index", FloatAndInt, 2, true, None, "array, int scalar -> scalar", "one-hot at the clamped index", Some(build_index)),
    kernel("strided", Any, 2, false, Some(2), "array -> [offset, n0..n3, s0..s3] walk", "scatter-add", Some(build_strided)),
    kernel("matmul", FloatAndInt, 3, false, Some(3), "m x k, k x p -> m x p", "G Bt, At G", Some(build_matmul)),
    kernel("min", FloatAndInt, 1, true, None, "array -> scalar", "one-hot at the first extreme", Some(build_min)),
    kernel("max", FloatAndInt, 1, true, None, "array -> scalar", "one-hot at the first extreme", Some(build_max)),
    kernel("sort", FloatAndInt, 2, false, Some(2), "array -> array (scratch 2n)", "g at the inverse permutation", Some(build_sort)),
    kernel("argsort", FloatAndInt, 2, false, Some(2), "array -> int array (scratch 2n)", "none (ints)", Some(build_argsort)),
    kernel("rows_min", FloatAndInt, 2, false, Some(2), "rows x cols -> rows", "one-hot per row", Some(build_rows_min)),
    kernel("rows_max", FloatAndInt, 2, false, Some(2), "rows x cols -> rows", "one-hot per row", Some(build_rows_max)),
    kernel("gather", Any, 3, false, Some(3), "array, int offset -> [lo, hi, n0..n3, s0..s3] walk", "scatter-add", Some(build_gather)),
    kernel("scatter_add", Any, 3, false, Some(3), "array, int offset -> len zeros plus it", "gather", None),
    kernel("take", Any, 3, false, Some(3), "array, int indices -> indices' length", "take at the inverse permutation", None),
    kernel("solve", Float, 3, false, Some(3), "n x n, n x r -> n x r (scratch n*n)", "solve with At, -dB xt", Some(build_solve)),
    kernel("det", Float, 2, true, Some(2), "n x n -> scalar (scratch n*n)", "det * solve(At, I)", Some(build_det)),
    kernel("conv2d", Float, 3, false, Some(ARG_COUNT), "input, weights, bias -> output", "convolutions and a scatter", Some(build_conv2d)),
    kernel("maxpool2d", Float, 2, false, Some(2), "nc x h x w -> nc x oh x ow", "compare, select, scatter per tap", Some(build_maxpool2d)),
    kernel("avgpool2d", Float, 2, false, Some(2), "nc x h x w -> nc x oh x ow", "spread / window size", Some(build_avgpool2d)),
    kernel("widen_b", Any, 1, false, None, "byte array -> int array", "none (ints)", None),
    kernel("narrow", FloatAndInt, 1, false, None, "array -> byte array", "none (ints)", None),
];

/// The row called `name`.
pub fn named(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

fn reduce_name(op: Op) -> &'static str {
    if op == Op::Min {
        "min"
    } else {
        "max"
    }
}

fn words<const N: usize>(prm: &[i32; N]) -> Vec<u32> {
    prm.iter().map(|&x| x as u32).collect()
}

impl ArrayOp {
    /// The row of a structural operation; `None` for element-wise ones, data, gathered
    /// scalars, elements and calls.
    pub fn kernel(&self) -> Option<&'static Kernel> {
        let name = match self {
            ArrayOp::Sum => "sum",
            ArrayOp::Dot => "dot",
            ArrayOp::Index => "index",
            ArrayOp::Strided(_) => "strided",
            ArrayOp::MatMul { .. } => "matmul",
            ArrayOp::Reduce(op) => reduce_name(*op),
            ArrayOp::Sort { argsort: false } => "sort",
            ArrayOp::Sort { argsort: true } => "argsort",
            ArrayOp::Rows { op, .. } => {
                if *op == Op::Min {
                    "rows_min"
                } else {
                    "rows_max"
                }
            }
            ArrayOp::Gather(_) => "gather",
            ArrayOp::ScatterAdd(_) => "scatter_add",
            ArrayOp::Take => "take",
            ArrayOp::Solve { .. } => "solve",
            ArrayOp::Det { .. } => "det",
            ArrayOp::Conv2d(_) => "conv2d",
            ArrayOp::Pool2d { avg: false, .. } => "maxpool2d",
            ArrayOp::Pool2d { avg: true, .. } => "avgpool2d",
            ArrayOp::Widen => "widen_b",
            ArrayOp::Narrow => "narrow",
            ArrayOp::Data(_)
            | ArrayOp::Pack
            | ArrayOp::Element(_)
            | ArrayOp::Binary(..)
            | ArrayOp::Unary(_)
            | ArrayOp::Select(_)
            | ArrayOp::Call { .. }
            | ArrayOp::Filled(_) => return None,
        };
        named(name)
    }

    /// The words of the parameter array the kernel reads from the hole its row names
    /// (shape and static scratch, zeros past the given words), for a result of `len`
    /// elements whose first array operand has `operand_len`; `None` for a kernel that
    /// takes none.
    pub fn params(&self, operand_len: u32, len: u32) -> Option<Vec<u32>> {
        Some(match *self {
            ArrayOp::MatMul { m, k, p } => vec![m, k, p],
            ArrayOp::Strided(prm) => words(&prm),
            // the network's keys and indices: static scratch, never shared
            ArrayOp::Sort { .. } => vec![0; 2 * len as usize],
            ArrayOp::Rows { rows, cols, .. } => vec![rows, cols],
            ArrayOp::Gather(prm) => words(&prm),
            ArrayOp::ScatterAdd(prm) => words(&prm),
            ArrayOp::Take => vec![operand_len, len],
            // [n] and the eliminated copy of the matrix
            ArrayOp::Det { n } => {
                let mut prm = vec![0; 1 + (n * n) as usize];
                prm[0] = n;
                prm
            }
            // [n, r] and the eliminated copy of the matrix
            ArrayOp::Solve { n, r } => {
                let mut prm = vec![0; 2 + (n * n) as usize];
                prm[..2].copy_from_slice(&[n, r]);
                prm
            }
            ArrayOp::Conv2d(prm) => words(&prm),
            ArrayOp::Pool2d { prm, .. } => words(&prm),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Form;

    #[test]
    fn names_are_unique_and_params_have_a_hole() {
        for (i, k) in KERNELS.iter().enumerate() {
            assert!(KERNELS[..i].iter().all(|o| o.name != k.name), "{}", k.name);
            if let Some(h) = k.params {
                assert!(h == ARG_COUNT || (1..=3).contains(&h), "{}", k.name);
                assert!(h == ARG_COUNT || h == k.holes, "{}: params go last", k.name);
            }
        }
    }

    #[test]
    fn every_row_is_some_operation() {
        let ops = [
            ArrayOp::Sum,
            ArrayOp::Dot,
            ArrayOp::Index,
            ArrayOp::Strided([0; 9]),
            ArrayOp::MatMul { m: 1, k: 1, p: 1 },
            ArrayOp::Reduce(Op::Min),
            ArrayOp::Reduce(Op::Max),
            ArrayOp::Sort { argsort: false },
            ArrayOp::Sort { argsort: true },
            ArrayOp::Rows {
                op: Op::Min,
                rows: 1,
                cols: 1,
            },
            ArrayOp::Rows {
                op: Op::Max,
                rows: 1,
                cols: 1,
            },
            ArrayOp::Gather([0; 10]),
            ArrayOp::ScatterAdd([0; 11]),
            ArrayOp::Take,
            ArrayOp::Solve { n: 1, r: 1 },
            ArrayOp::Det { n: 1 },
            ArrayOp::Conv2d([0; 15]),
            ArrayOp::Pool2d {
                avg: false,
                prm: [0; 11],
            },
            ArrayOp::Pool2d {
                avg: true,
                prm: [0; 11],
            },
            ArrayOp::Widen,
            ArrayOp::Narrow,
        ];
        let rows: Vec<&str> = ops.iter().map(|o| o.kernel().unwrap().name).collect();
        let table: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
        assert_eq!(rows, table);
        for o in &ops {
            let k = o.kernel().unwrap();
            assert_eq!(o.params(1, 1).is_some(), k.params.is_some(), "{}", k.name);
        }
        assert!(ArrayOp::Binary(Op::Add, Form::AA).kernel().is_none());
    }
}
