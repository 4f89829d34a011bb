//! The structural array operations, one row each ([`KERNELS`]): the stencil family, the
//! element types it exists for, the holes it fills, whether its result is a scalar, where
//! its parameter array goes, and its declarative [`Rule`] on the generic node
//! [`ArrayOp::Kernel`]: how the front end's parameters become the node's words and what
//! they must satisfy ([`Params`]: sizes, walks, windows), operand and result lengths as
//! products of those words, the operand and result types (byte storage included), the
//! words of its parameter array and the adjoint.
//!
//! Element-wise operations come from the op table (`stencils/optable.py`, the `array`
//! flag); the operations here each have a loop kernel of their own in
//! `stencils/gen_arrays.py` or `gen_windows.py`. The stencil names the compiler asks for
//! ([`crate::array_stencils`]), the scheduler's placement of the result and of the
//! parameter array ([`ArrayOp::params`]), the generic constructor
//! ([`crate::array::kernel`]), the adjoints ([`crate::autodiff`]), the front-end entry
//! ([`crate::array_build::build`], the Python binding's `_core.array_kernel(name,
//! operands, params)`, typed by the Literal names in `python/copapy/_array_kernels.py`)
//! and the stencil wrappers of the generators (`stencils/array_kernels.json`) all read
//! it; both files are this table written out by `COPAPY_BLESS=1 cargo test -p
//! copapy-compiler --test array_kernels`. Adding an operation is a row here (a [`Rule`]:
//! its parameters an existing [`Params`] kind or a new one in [`crate::kernel_params`],
//! its adjoint an existing [`Adjoint`] or a new arm in `crate::autodiff`) and its C
//! kernel.

use crate::graph::ArrayOp;
use crate::stencil_db::ARG_COUNT;

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
    /// Whether a front end may build it (`crate::array_build::build`); not the
    /// operations only the compiler makes (adjoints, the widening of byte storage).
    pub public: bool,
    /// The declarative shape, type, parameter and adjoint rule of the row on the generic
    /// node [`ArrayOp::Kernel`].
    pub rule: Rule,
}

/// A length in a shape rule.
#[derive(Clone, Copy, Debug)]
pub enum Len {
    /// Any length of at least one element, the same wherever the rule says `N`.
    N,
    /// The product of the node's parameter words at these positions (the sizes as
    /// [`Params`] stores them: a walk's count is the product of its four sizes, a
    /// window's output the product of its batch and output sizes).
    Prm(&'static [usize]),
    /// No elements: a scalar.
    Scalar,
}

/// What an operand must be.
#[derive(Clone, Copy, Debug)]
pub enum Operand {
    /// An array of this length, any element type (byte storage read widened).
    Array(Len),
    /// An array stored one byte per element, read as it is stored (the widening itself).
    Bytes(Len),
    /// An int array of this length.
    IntArray(Len),
    /// An int or bool scalar.
    IntScalar,
}

/// The result's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// The first operand's.
    Operand,
    /// Float for a float operand, int for int and bool ones (a sum).
    Sum,
    /// Int (indices).
    Int,
    /// The operands promoted as for a scalar product, and the product's type.
    Product,
    /// Float, from float operands only (no promotion).
    Float,
    /// Float, the array operands converted to float (a scatter of int elements).
    ToFloat,
    /// Int elements stored one byte each (saturating: the `tobyte` rule).
    Bytes,
}

/// How the front end's integer parameters are checked and become the node's words
/// ([`crate::kernel_params`]); sizes are at least 1 unless a kind says otherwise, and
/// every element a walk reads lies inside the array it walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Params {
    /// This many sizes (0 to 2**32 - 1), stored as given.
    Sizes(usize),
    /// A walk of the first operand from a constant offset: `offset` and up to four
    /// `(size, stride)` pairs, stored `[offset, n0..n3, s0..s3]` with missing leading
    /// dimensions of size 1 and stride 0.
    Walk,
    /// A walk of the first operand from a runtime offset clamped to `[lo, hi]`: `lo, hi`
    /// and one to four pairs, stored `[lo, hi, n0..n3, s0..s3]`; every offset in the
    /// range keeps the walk inside.
    ClampedWalk,
    /// The stored words of a clamped walk and the length `len` of the result it
    /// scatters into (`[lo, hi, n0..n3, s0..s3, len]`, as the adjoint of a walk has
    /// them): the walk stays inside `len` elements.
    Scatter,
    /// A convolution, `[n, ci, h, w, co, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw]`:
    /// padding may be 0, and `oh`, `ow` must be the output sizes PyTorch's formula gives.
    Conv2d,
    /// A pooling, `[nc, h, w, kh, kw, oh, ow, sh, sw, ph, pw]`: padding at most half the
    /// window, `oh`, `ow` the formula's output sizes.
    Pool2d,
}

impl Params {
    /// How many words the node keeps.
    pub const fn words(self) -> usize {
        match self {
            Params::Sizes(n) => n,
            Params::Walk => 9,
            Params::ClampedWalk => 10,
            Params::Scatter => 11,
            Params::Conv2d => 15,
            Params::Pool2d => 11,
        }
    }
}

/// The words of the parameter array the kernel reads (shape and static scratch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Words {
    /// None: the row has no parameter hole.
    None,
    /// The parameters.
    Prm,
    /// `2 * len` zeros: the keys and indices of a sorting network.
    SortScratch,
    /// The parameters, then `n * n` zeros (`n` the first parameter): the eliminated
    /// copy of the matrix.
    Elimination,
    /// The first operand's length and the result's.
    Lens,
}

/// How the gradient flows back (`crate::autodiff`, one arm per rule, built from other
/// rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjoint {
    /// No gradient flows (int results).
    None,
    /// The scalar gradient broadcast to every element (sum).
    Broadcast,
    /// The gradient times the other operand (dot).
    Products,
    /// One-hot at the first extreme (min, max).
    FirstExtreme,
    /// One-hot at the first extreme of each row (rows_min, rows_max).
    FirstExtremePerRow,
    /// One-hot at the index wrapped once and clamped (index).
    ClampedOneHot,
    /// The gradient at the inverse of the sorting permutation (sort).
    Unsort,
    /// The gradient taken at the inverse permutation (take).
    Untake,
    /// `G Bᵀ` and `Aᵀ G` (matmul).
    MatMul,
    /// `dB = A⁻ᵀ G`, `dA = -dB xᵀ` (solve).
    Solve,
    /// `det(A) A⁻ᵀ` (det).
    Det,
    /// The gradient added back where the walk read it, at the walk's constant offset
    /// (strided: a scatter_add row).
    ScatterWalk,
    /// The gradient added back where the walk read it, at the same runtime offset
    /// (gather: a scatter_add row).
    ScatterClamped,
    /// The gradient read back where the scatter wrote it (scatter_add: a gather row).
    GatherBack,
    /// A transposed convolution for the input, a correlation for the weights, per
    /// channel sums for the bias (conv2d: conv2d, strided, scatter_add and matmul rows).
    Conv2d,
    /// The gradient over the window size sent to every tap (avgpool2d: a transposed
    /// convolution with a kernel of ones).
    AvgPool,
    /// The gradient routed to the tap holding each window's maximum (maxpool2d: one
    /// compare, select and scatter per tap).
    MaxPool,
}

/// The declarative rule of a row on [`ArrayOp::Kernel`].
#[derive(Debug)]
pub struct Rule {
    /// The integer parameters the front end passes and the words the node keeps.
    pub params: Params,
    /// The operands, in the order of the holes.
    pub operands: &'static [Operand],
    /// The result's length.
    pub result: Len,
    /// The result's element type.
    pub ty: Ty,
    /// The parameter array's words.
    pub words: Words,
    /// The adjoint.
    pub adjoint: Adjoint,
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
    public: bool,
    rule: Rule,
) -> Kernel {
    Kernel {
        name,
        classes,
        holes,
        scalar,
        params,
        shape,
        grad,
        public,
        rule,
    }
}

/// The rule of a row on the generic node.
const fn rule(
    params: Params,
    operands: &'static [Operand],
    result: Len,
    ty: Ty,
    words: Words,
    adjoint: Adjoint,
) -> Rule {
    Rule {
        params,
        operands,
        result,
        ty,
        words,
        adjoint,
    }
}

use Adjoint as D;
use Classes::{Any, Float, FloatAndInt};
use Len::{Prm, Scalar, N};
use Operand::{Array, IntArray, IntScalar};
use Params::Sizes;
use Ty::Operand as Same;

const ONE: &[Operand] = &[Array(N)];
const TWO: &[Operand] = &[Array(N), Array(N)];
const SQUARE: Len = Prm(&[0, 0]);
/// The element count of a walk stored from word 1 (strided) or 2 (gather, scatter).
const WALK_FROM_1: Len = Prm(&[1, 2, 3, 4]);
const WALK_FROM_2: Len = Prm(&[2, 3, 4, 5]);
/// The input `n x ci x h x w` and output `n x co x oh x ow` of a convolution, and of a
/// pooling `nc x h x w` and `nc x oh x ow`.
const CONV_IN: Len = Prm(&[0, 1, 2, 3]);
const CONV_OUT: Len = Prm(&[0, 4, 7, 8]);
const POOL_IN: Len = Prm(&[0, 1, 2]);
const POOL_OUT: Len = Prm(&[0, 5, 6]);

/// Every structural array operation, in the order of `stencils/array_kernels.json`.
#[rustfmt::skip]
pub static KERNELS: [Kernel; 21] = [
    kernel("sum", FloatAndInt, 1, true, None, "array -> scalar", "g broadcast", true,
        rule(Sizes(0), ONE, Scalar, Ty::Sum, Words::None, D::Broadcast)),
    kernel("dot", FloatAndInt, 2, true, None, "two arrays of one length -> scalar", "g * the other", true,
        rule(Sizes(0), TWO, Scalar, Ty::Product, Words::None, D::Products)),
    kernel("index", FloatAndInt, 2, true, None, "array, int scalar -> scalar", "one-hot at the clamped index", true,
        rule(Sizes(0), &[Array(N), IntScalar], Scalar, Same, Words::None, D::ClampedOneHot)),
    // the walks: their reach (a sum of signed strides over a range of offsets) is not a
    // product, so the Params kind checks it (`kernel_params::check_reach`)
    kernel("strided", Any, 2, false, Some(2), "array -> [offset, n0..n3, s0..s3] walk", "scatter-add", true,
        rule(Params::Walk, ONE, WALK_FROM_1, Same, Words::Prm, D::ScatterWalk)),
    kernel("matmul", FloatAndInt, 3, false, Some(3), "m x k, k x p -> m x p", "G Bt, At G", true,
        rule(Sizes(3), &[Array(Prm(&[0, 1])), Array(Prm(&[1, 2]))], Prm(&[0, 2]), Ty::Product, Words::Prm, D::MatMul)),
    kernel("min", FloatAndInt, 1, true, None, "array -> scalar", "one-hot at the first extreme", true,
        rule(Sizes(0), ONE, Scalar, Same, Words::None, D::FirstExtreme)),
    kernel("max", FloatAndInt, 1, true, None, "array -> scalar", "one-hot at the first extreme", true,
        rule(Sizes(0), ONE, Scalar, Same, Words::None, D::FirstExtreme)),
    kernel("sort", FloatAndInt, 2, false, Some(2), "array -> array (scratch 2n)", "g at the inverse permutation", true,
        rule(Sizes(0), ONE, N, Same, Words::SortScratch, D::Unsort)),
    kernel("argsort", FloatAndInt, 2, false, Some(2), "array -> int array (scratch 2n)", "none (ints)", true,
        rule(Sizes(0), ONE, N, Ty::Int, Words::SortScratch, D::None)),
    kernel("rows_min", FloatAndInt, 2, false, Some(2), "rows x cols -> rows", "one-hot per row", true,
        rule(Sizes(2), &[Array(Prm(&[0, 1]))], Prm(&[0]), Same, Words::Prm, D::FirstExtremePerRow)),
    kernel("rows_max", FloatAndInt, 2, false, Some(2), "rows x cols -> rows", "one-hot per row", true,
        rule(Sizes(2), &[Array(Prm(&[0, 1]))], Prm(&[0]), Same, Words::Prm, D::FirstExtremePerRow)),
    kernel("gather", Any, 3, false, Some(3), "array, int offset -> [lo, hi, n0..n3, s0..s3] walk", "scatter-add", true,
        rule(Params::ClampedWalk, &[Array(N), IntScalar], WALK_FROM_2, Same, Words::Prm, D::ScatterClamped)),
    kernel("scatter_add", Any, 3, false, Some(3), "array, int offset -> len zeros plus it", "gather", false,
        rule(Params::Scatter, &[Array(WALK_FROM_2), IntScalar], Prm(&[10]), Ty::ToFloat, Words::Prm, D::GatherBack)),
    kernel("take", Any, 3, false, Some(3), "array, int indices -> indices' length", "take at the inverse permutation", false,
        rule(Sizes(0), &[Array(N), IntArray(N)], N, Same, Words::Lens, D::Untake)),
    kernel("solve", Float, 3, false, Some(3), "n x n, n x r -> n x r (scratch n*n)", "solve with At, -dB xt", true,
        rule(Sizes(2), &[Array(SQUARE), Array(Prm(&[0, 1]))], Prm(&[0, 1]), Ty::Float, Words::Elimination, D::Solve)),
    kernel("det", Float, 2, true, Some(2), "n x n -> scalar (scratch n*n)", "det * solve(At, I)", true,
        rule(Sizes(1), &[Array(SQUARE)], Scalar, Ty::Float, Words::Elimination, D::Det)),
    // the windows: the output sizes are a division (PyTorch's formula), checked by the
    // Params kind; the lengths are then products of the words
    kernel("conv2d", Float, 3, false, Some(ARG_COUNT), "input, weights, bias -> output", "convolutions and a scatter", true,
        rule(Params::Conv2d, &[Array(CONV_IN), Array(Prm(&[4, 1, 5, 6])), Array(Prm(&[4]))], CONV_OUT, Ty::Float, Words::Prm, D::Conv2d)),
    kernel("maxpool2d", Float, 2, false, Some(2), "nc x h x w -> nc x oh x ow", "compare, select, scatter per tap", true,
        rule(Params::Pool2d, &[Array(POOL_IN)], POOL_OUT, Ty::Float, Words::Prm, D::MaxPool)),
    kernel("avgpool2d", Float, 2, false, Some(2), "nc x h x w -> nc x oh x ow", "spread / window size", true,
        rule(Params::Pool2d, &[Array(POOL_IN)], POOL_OUT, Ty::Float, Words::Prm, D::AvgPool)),
    // byte storage: widen_b is the one reader of bytes as stored (Operand::Bytes), narrow the
    // one writer (Ty::Bytes); to_bytes skips narrow for an array already stored as bytes
    kernel("widen_b", Any, 1, false, None, "byte array -> int array", "none (ints)", false,
        rule(Sizes(0), &[Operand::Bytes(N)], N, Ty::Int, Words::None, D::None)),
    kernel("narrow", FloatAndInt, 1, false, None, "array -> byte array", "none (ints)", true,
        rule(Sizes(0), ONE, N, Ty::Bytes, Words::None, D::None)),
];

/// The row called `name`.
pub fn named(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

/// The index of the row called `name`, for [`ArrayOp::Kernel`].
pub fn row_index(name: &str) -> Option<u8> {
    KERNELS.iter().position(|k| k.name == name).map(|i| i as u8)
}

impl ArrayOp {
    /// The row of a structural operation; `None` for element-wise ones, data, gathered
    /// scalars, elements and calls.
    pub fn kernel(&self) -> Option<&'static Kernel> {
        match self {
            ArrayOp::Kernel { row, .. } => KERNELS.get(usize::from(*row)),
            _ => None,
        }
    }

    /// Whether this is the row-backed operation called `name`.
    pub fn is_row(&self, name: &str) -> bool {
        self.kernel().is_some_and(|k| k.name == name)
    }

    /// The words of the parameter array the kernel reads from the hole its row names
    /// (shape and static scratch, zeros past the given words), for a result of `len`
    /// elements whose first array operand has `operand_len`; `None` for a kernel that
    /// takes none.
    pub fn params(&self, operand_len: u32, len: u32) -> Option<Vec<u32>> {
        Some(match *self {
            ArrayOp::Kernel { row, prm } => {
                let rule = &KERNELS.get(usize::from(row))?.rule;
                let given = &prm[..rule.params.words()];
                match rule.words {
                    Words::None => return None,
                    Words::Prm => given.to_vec(),
                    Words::SortScratch => vec![0; 2 * len as usize],
                    Words::Elimination => {
                        let n = prm[0] as usize;
                        let mut w = given.to_vec();
                        w.resize(given.len() + n * n, 0);
                        w
                    }
                    Words::Lens => vec![operand_len, len],
                }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Form, Op, KERNEL_PARAMS};

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

    /// A rule agrees with the row's columns: its operands fill the holes but the
    /// parameter array's, its result is a scalar exactly when the row says so, its
    /// parameter words exist exactly when the row has a hole for them, and every
    /// parameter position it names is one of its parameters.
    #[test]
    fn every_rule_agrees_with_its_row() {
        for k in KERNELS.iter() {
            let r = &k.rule;
            assert_eq!(r.operands.len(), k.operands(), "{}", k.name);
            assert_eq!(matches!(r.result, Len::Scalar), k.scalar, "{}", k.name);
            assert_eq!(r.words != Words::None, k.params.is_some(), "{}", k.name);
            assert!(r.params.words() <= KERNEL_PARAMS, "{}", k.name);
            let lens = r.operands.iter().filter_map(|o| match o {
                Operand::Array(l) | Operand::IntArray(l) | Operand::Bytes(l) => Some(*l),
                Operand::IntScalar => None,
            });
            for l in lens.chain([r.result]) {
                if let Len::Prm(at) = l {
                    assert!(at.iter().all(|&i| i < r.params.words()), "{}", k.name);
                }
            }
            assert!(
                !matches!(r.operands[0], Operand::IntScalar),
                "{}: the first operand is an array",
                k.name
            );
        }
    }

    #[test]
    fn every_row_is_some_operation() {
        let ops: Vec<ArrayOp> = (0..KERNELS.len())
            .map(|row| ArrayOp::Kernel {
                row: row as u8,
                prm: [1; KERNEL_PARAMS],
            })
            .collect();
        let mut rows: Vec<&str> = ops.iter().map(|o| o.kernel().unwrap().name).collect();
        let mut table: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
        rows.sort_unstable();
        table.sort_unstable();
        assert_eq!(rows, table);
        for o in &ops {
            let k = o.kernel().unwrap();
            assert_eq!(o.params(1, 1).is_some(), k.params.is_some(), "{}", k.name);
        }
        assert!(ArrayOp::Binary(Op::Add, Form::AA).kernel().is_none());
    }
}
