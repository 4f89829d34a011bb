//! The parameter kinds of the array rows ([`Params`]): how the integer parameters a front
//! end passes are checked and become the words an [`crate::graph::ArrayOp::Kernel`] node
//! keeps (and its stencil reads), and the one check that needs an operand too: a walk
//! stays inside the array it walks. The shape rule ([`crate::array::kernel`]) then
//! checks the operand lengths against products of these words.
//!
//! Walks and windows are kinds of their own rather than [`crate::array_kernels::Len`]
//! products because what they promise is not a product: a walk's reach is a sum of
//! signed strides over a range of offsets, a window's output size a division.

use crate::array_kernels::Params;
use crate::graph::{KERNEL_PARAMS, MAX_LEN};
use crate::trace::TraceError;

fn err(message: String) -> TraceError {
    TraceError { message }
}

/// The node's words of row `name`, whose parameters are of kind `kind`, from the
/// parameters `prm` a front end gave: checked as far as they can be without the operands,
/// zeros past the kind's count, signed words as their two's complement bits.
pub fn store(name: &str, kind: Params, prm: &[i64]) -> Result<[u32; KERNEL_PARAMS], TraceError> {
    let signed = match kind {
        Params::Sizes(count) => return sizes(name, count, prm),
        Params::Walk => {
            let (&offset, pairs) = prm
                .split_first()
                .ok_or_else(|| err(format!("{name} takes an offset and (size, stride) pairs")))?;
            walk(name, &[offset, offset], pairs, 0)?[1..].to_vec()
        }
        Params::ClampedWalk => {
            if prm.len() < 2 {
                return Err(err(format!(
                    "{name} takes lo, hi and (size, stride) pairs, got {} parameters",
                    prm.len()
                )));
            }
            walk(name, &prm[..2], &prm[2..], 1)?
        }
        Params::Scatter => scatter(name, prm)?,
        Params::Conv2d => conv2d(prm)?,
        Params::Pool2d => pool2d(prm)?,
    };
    let mut words = [0u32; KERNEL_PARAMS];
    for (w, &x) in words.iter_mut().zip(&signed) {
        *w = x as u32;
    }
    Ok(words)
}

/// The check that needs the operands: the walk of a walk kind stays inside the first
/// operand (`first_len` elements) or, for a scatter, inside its result.
pub fn check_reach(
    name: &str,
    kind: Params,
    words: &[u32; KERNEL_PARAMS],
    first_len: u32,
) -> Result<(), TraceError> {
    let w = words.map(|x| i64::from(x as i32));
    let (lo, hi, dims, n) = match kind {
        Params::Walk => (w[0], w[0], &w[1..9], i64::from(first_len)),
        Params::ClampedWalk => (w[0], w[1], &w[2..10], i64::from(first_len)),
        Params::Scatter => (w[0], w[1], &w[2..10], w[10]),
        Params::Sizes(_) | Params::Conv2d | Params::Pool2d => return Ok(()),
    };
    let (mut low, mut high) = (lo, hi);
    for d in 0..4 {
        // sizes up to 2**26 and strides within i32: each reach fits, their sum too
        let reach = (dims[d] - 1) * dims[4 + d];
        if reach < 0 {
            low += reach;
        } else {
            high += reach;
        }
    }
    if low < 0 || high >= n {
        return Err(err(format!(
            "{name} would read elements {low}..={high} of an array of {n}"
        )));
    }
    Ok(())
}

/// `count` sizes (0 to 2**32 - 1), as given.
fn sizes(name: &str, count: usize, prm: &[i64]) -> Result<[u32; KERNEL_PARAMS], TraceError> {
    if prm.len() != count {
        return Err(err(format!(
            "{name} takes {count} parameters, got {}",
            prm.len()
        )));
    }
    let mut words = [0u32; KERNEL_PARAMS];
    for (s, &x) in words.iter_mut().zip(prm) {
        *s = u32::try_from(x).map_err(|_| {
            err(format!(
                "{name}: parameter {x} is not a size (0 to 2**32 - 1)"
            ))
        })?;
    }
    Ok(words)
}

/// `[lo, hi, n0..n3, s0..s3]` from the offset range `range` and at least `min_dims`, at
/// most four `(size, stride)` pairs: missing leading dimensions of size 1, stride 0.
fn walk(name: &str, range: &[i64], pairs: &[i64], min_dims: usize) -> Result<Vec<i64>, TraceError> {
    if !pairs.len().is_multiple_of(2) || pairs.len() / 2 > 4 || pairs.len() / 2 < min_dims {
        return Err(err(format!(
            "{name} takes {min_dims} to 4 (size, stride) pairs after its offsets, got {} \
             parameters there",
            pairs.len()
        )));
    }
    let (lo, hi) = (range[0], range[1]);
    if lo > hi {
        return Err(err(format!(
            "{name}: the offset range {lo}..={hi} is empty"
        )));
    }
    let fits = |x: i64| i32::try_from(x).is_ok();
    if !fits(lo) || !fits(hi) {
        return Err(err(format!("{name}: offsets {lo}..={hi} are out of range")));
    }
    let mut words = vec![lo, hi, 1, 1, 1, 1, 0, 0, 0, 0];
    let pad = 4 - pairs.len() / 2;
    for (d, pair) in pairs.chunks(2).enumerate() {
        let (size, stride) = (pair[0], pair[1]);
        if size < 1 || size > MAX_LEN as i64 {
            return Err(err(format!(
                "{name}: a walk needs at least one element per dimension and at most {MAX_LEN}, got size {size}"
            )));
        }
        if !fits(stride) {
            return Err(err(format!("{name}: stride {stride} is out of range")));
        }
        words[2 + pad + d] = size;
        words[6 + pad + d] = stride;
    }
    // the element count, a product of the sizes, is checked as the result's length
    Ok(words)
}

/// A clamped walk's ten stored words and the result's length.
fn scatter(name: &str, prm: &[i64]) -> Result<Vec<i64>, TraceError> {
    let &[lo, hi, n0, n1, n2, n3, s0, s1, s2, s3, len] = prm else {
        return Err(err(format!(
            "{name} takes 11 parameters ([lo, hi, n0..n3, s0..s3, len]), got {}",
            prm.len()
        )));
    };
    let mut words = walk(name, &[lo, hi], &[n0, s0, n1, s1, n2, s2, n3, s3], 4)?;
    if len < 1 || len > MAX_LEN as i64 {
        return Err(err(format!(
            "{name}: a result of {len} elements is out of range (1 to {MAX_LEN})"
        )));
    }
    words.push(len);
    Ok(words)
}

/// Output size of one axis: `(size + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1`,
/// or None when the kernel does not fit the padded input.
pub(crate) fn out_size(
    size: i64,
    kernel: i64,
    stride: i64,
    pad: i64,
    dilation: i64,
) -> Option<i64> {
    let span = size + 2 * pad - dilation * (kernel - 1) - 1;
    (span >= 0).then(|| span / stride + 1)
}

/// Checks parameters that must be at least `min`, and fit an i32 the kernel can index.
fn at_least(prm: &[i64], min: &[i64], what: &str) -> Result<(), TraceError> {
    for (&p, &m) in prm.iter().zip(min) {
        if p < m || p > MAX_LEN as i64 {
            return Err(err(format!("{what} parameters {prm:?} are out of range")));
        }
    }
    Ok(())
}

/// `[n, ci, h, w, co, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw]`: strides, zero padding on
/// both sides and dilations, `oh`/`ow` as PyTorch's formula gives them.
fn conv2d(prm: &[i64]) -> Result<Vec<i64>, TraceError> {
    let &[_, _, h, wd, _, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw] = prm else {
        return Err(err(format!(
            "conv2d takes 15 parameters, got {}",
            prm.len()
        )));
    };
    let min = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1];
    at_least(prm, &min, "conv2d")?;
    if out_size(h, kh, sh, ph, dh) != Some(oh) || out_size(wd, kw, sw, pw, dw) != Some(ow) {
        return Err(err(format!(
            "conv2d of a {h}x{wd} input with a {kh}x{kw} kernel gives no {oh}x{ow} output"
        )));
    }
    Ok(prm.to_vec())
}

/// `[nc, h, w, kh, kw, oh, ow, sh, sw, ph, pw]`: padded taps are skipped by the maximum
/// and count as zeros in the average, so the padding is at most half the window.
fn pool2d(prm: &[i64]) -> Result<Vec<i64>, TraceError> {
    let &[_, h, wd, kh, kw, oh, ow, sh, sw, ph, pw] = prm else {
        return Err(err(format!(
            "pool2d takes 11 parameters, got {}",
            prm.len()
        )));
    };
    at_least(prm, &[1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0], "pool2d")?;
    if 2 * ph > kh || 2 * pw > kw {
        return Err(err(format!(
            "pool2d padding ({ph}, {pw}) must be at most half the kernel ({kh}, {kw})"
        )));
    }
    if out_size(h, kh, sh, ph, 1) != Some(oh) || out_size(wd, kw, sw, pw, 1) != Some(ow) {
        return Err(err(format!(
            "pool2d of a {h}x{wd} input with a {kh}x{kw} window gives no {oh}x{ow} output"
        )));
    }
    Ok(prm.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_are_stored_padded_to_four_dimensions() {
        let w = store("strided", Params::Walk, &[5, 2, -3]).unwrap();
        assert_eq!(w[..9], [5, 1, 1, 1, 2, 0, 0, 0, -3i32 as u32]);
        assert!(check_reach("strided", Params::Walk, &w, 6).is_ok());
        assert!(check_reach("strided", Params::Walk, &w, 5).is_err());
        let g = store("gather", Params::ClampedWalk, &[0, 4, 2, 1]).unwrap();
        assert_eq!(g[..10], [0, 4, 1, 1, 1, 2, 0, 0, 0, 1]);
        // offsets 0..=4 of 2-element rows read at most element 5
        assert!(check_reach("gather", Params::ClampedWalk, &g, 6).is_ok());
        assert!(check_reach("gather", Params::ClampedWalk, &g, 5).is_err());
        let mut scatter: Vec<i64> = g[..10].iter().map(|&x| i64::from(x as i32)).collect();
        scatter.push(5);
        let s = store("scatter_add", Params::Scatter, &scatter).unwrap();
        assert!(check_reach("scatter_add", Params::Scatter, &s, 2).is_err());
        scatter[10] = 6;
        let s = store("scatter_add", Params::Scatter, &scatter).unwrap();
        assert!(check_reach("scatter_add", Params::Scatter, &s, 2).is_ok());
    }

    #[test]
    fn bad_walks_and_windows_are_errors() {
        assert!(store("strided", Params::Walk, &[]).is_err());
        assert!(store("strided", Params::Walk, &[0, 2]).is_err());
        assert!(store("strided", Params::Walk, &[0, 0, 1]).is_err());
        assert!(store("gather", Params::ClampedWalk, &[0, 1]).is_err());
        assert!(store("gather", Params::ClampedWalk, &[2, 1, 2, 1]).is_err());
        assert!(store("conv2d", Params::Conv2d, &[1; 14]).is_err());
        let pool = [2, 4, 4, 2, 2, 2, 2, 2, 2, 0, 0];
        assert!(store("maxpool2d", Params::Pool2d, &pool).is_ok());
        let mut bad = pool;
        bad[5] = 3; // not the formula's output size
        assert!(store("maxpool2d", Params::Pool2d, &bad).is_err());
    }
}
