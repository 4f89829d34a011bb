//! The adjoints of the sliding-window rows (`conv2d`, `maxpool2d`, `avgpool2d` of
//! [`crate::array_kernels::KERNELS`], whose parameters [`crate::kernel_params`] checks):
//! transposed convolutions and correlations built from the same `conv2d` row plus strided
//! copies and scatters (no stencils of their own; code size stays independent of the
//! sizes).

use crate::array;
use crate::graph::{ScalarType, KERNEL_PARAMS};
use crate::kernel_params::out_size;
use crate::trace::TraceError;
use crate::Value;

fn err(message: String) -> TraceError {
    TraceError { message }
}

fn conv2d(x: &Value, w: &Value, bias: &Value, prm: &[i64]) -> Result<Value, TraceError> {
    array::kernel("conv2d", &[x.clone(), w.clone(), bias.clone()], prm)
}

fn zeros(len: i64) -> Result<Value, TraceError> {
    array::data(ScalarType::Float, vec![0; len as usize])
}

fn dims(d: &[(i64, i64)]) -> Vec<(u32, i64)> {
    d.iter().map(|&(n, s)| (n as u32, s)).collect()
}

/// The first `N` parameter words of a node, signed.
fn prm64<const N: usize>(prm: &[u32; KERNEL_PARAMS]) -> [i64; N] {
    std::array::from_fn(|i| i64::from(prm[i] as i32))
}

/// The first and one past the last output index whose window start `o * s + a` lies in
/// `[0, size)` (the others only touch padding).
fn valid_range(outputs: i64, s: i64, a: i64, size: i64) -> (i64, i64) {
    let first = if a >= 0 { 0 } else { (-a + s - 1) / s };
    let last = ((size - 1 - a) / s).min(outputs - 1);
    (first, (last + 1).max(first))
}

/// `dL/dx` of a convolution with weights `w` (`prm` its words) for the result's
/// gradient `g`: `g` spread out by the strides into a zero array, correlated with the
/// weights flipped and with input and output channels swapped.
pub fn conv2d_dx(w: &Value, g: &Value, prm: &[u32; KERNEL_PARAMS]) -> Result<Value, TraceError> {
    let [n, ci, h, wd, co, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw] = prm64(prm);
    let (hp, wp) = (h + (kh - 1) * dh, wd + (kw - 1) * dw);
    let (a, b) = ((kh - 1) * dh - ph, (kw - 1) * dw - pw);
    let (y0, y1) = valid_range(oh, sh, a, hp);
    let (x0, x1) = valid_range(ow, sw, b, wp);
    if y0 == y1 || x0 == x1 {
        return zeros(n * ci * h * wd);
    }
    let (ny, nx) = (y1 - y0, x1 - x0);
    let taken = array::strided(
        g,
        y0 * ow + x0,
        &dims(&[(n, co * oh * ow), (co, oh * ow), (ny, ow), (nx, 1)]),
    )?;
    let off = (y0 * sh + a) * wp + x0 * sw + b;
    let walk = [off, off, n, co, ny, nx, co * hp * wp, hp * wp, sh * wp, sw].map(|v| v as i32);
    let offset = Value::constant(ScalarType::Int, off as u32);
    let spread = array::scatter_add(&taken, &offset, walk, (n * co * hp * wp) as u32)?;
    let flipped = array::strided(
        w,
        (kh - 1) * kw + kw - 1,
        &dims(&[(ci, kh * kw), (co, ci * kh * kw), (kh, -kw), (kw, -1)]),
    )?;
    conv2d(
        &spread,
        &flipped,
        &zeros(ci)?,
        &[n, co, hp, wp, ci, kh, kw, h, wd, 1, 1, 0, 0, dh, dw],
    )
}

/// `dL/dw` of a convolution of `x`: the correlation of the input (batch and channels
/// swapped) with the gradient as the kernel, strides and dilations swapped.
pub fn conv2d_dw(x: &Value, g: &Value, prm: &[u32; KERNEL_PARAMS]) -> Result<Value, TraceError> {
    let [n, ci, h, wd, co, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw] = prm64(prm);
    let xt = array::strided(
        x,
        0,
        &dims(&[(ci, h * wd), (n, ci * h * wd), (h, wd), (wd, 1)]),
    )?;
    let gt = array::strided(
        g,
        0,
        &dims(&[(co, oh * ow), (n, co * oh * ow), (oh, ow), (ow, 1)]),
    )?;
    let bad = || err("the adjoint of a convolution has no output".into());
    let oh2 = out_size(h, oh, dh, ph, sh).ok_or_else(bad)?;
    let ow2 = out_size(wd, ow, dw, pw, sw).ok_or_else(bad)?;
    let full = conv2d(
        &xt,
        &gt,
        &zeros(co)?,
        &[ci, n, h, wd, co, oh, ow, oh2, ow2, dh, dw, ph, pw, sh, sw],
    )?;
    array::strided(
        &full,
        0,
        &dims(&[(co, oh2 * ow2), (ci, co * oh2 * ow2), (kh, ow2), (kw, 1)]),
    )
}

/// `dL/dbias` of a convolution: the gradient summed over batch and positions per output
/// channel (a matmul with ones, in the sums' order).
pub fn conv2d_dbias(g: &Value, prm: &[u32; KERNEL_PARAMS]) -> Result<Value, TraceError> {
    let [n, _, _, _, co, _, _, oh, ow, ..] = prm64::<15>(prm);
    let per_channel = array::strided(
        g,
        0,
        &dims(&[(co, oh * ow), (n, co * oh * ow), (oh * ow, 1)]),
    )?;
    let m = n * oh * ow;
    let ones = array::data(ScalarType::Float, vec![1.0f32.to_bits(); m as usize])?;
    array::kernel("matmul", &[per_channel, ones], &[co, m, 1])
}

/// `dL/dx` of an average pooling: `g / (kh * kw)` sent back to every tap of its window
/// (a transposed convolution with a kernel of ones).
pub fn avgpool_dx(g: &Value, prm: &[u32; KERNEL_PARAMS]) -> Result<Value, TraceError> {
    let [nc, h, wd, kh, kw, oh, ow, sh, sw, ph, pw] = prm64::<11>(prm);
    let k = (kh * kw) as f32;
    let scaled = array::binary(
        crate::Op::Div,
        g,
        &Value::constant(ScalarType::Float, k.to_bits()),
    )?;
    let ones = array::data(
        ScalarType::Float,
        vec![1.0f32.to_bits(); (kh * kw) as usize],
    )?;
    let conv = [nc, 1, h, wd, 1, kh, kw, oh, ow, sh, sw, ph, pw, 1, 1];
    let mut words = [0u32; KERNEL_PARAMS];
    for (w, x) in words.iter_mut().zip(conv) {
        *w = x as u32;
    }
    conv2d_dx(&ones, &scaled, &words)
}

/// `dL/dx` of a max pooling with result `r`: each window's gradient goes to the last of
/// its taps (in the forward order) that equals the maximum, or is NaN when the maximum
/// is NaN, as `maximum` passes it to its second operand on a tie. One pass per tap (code
/// grows with the window, not with the data): the taps are visited from the last, and a
/// window's gradient is taken by the first hit.
pub fn maxpool_dx(
    x: &Value,
    r: &Value,
    g: &Value,
    prm: &[u32; KERNEL_PARAMS],
) -> Result<Value, TraceError> {
    let [nc, h, wd, kh, kw, oh, ow, sh, sw, ph, pw] = prm64(prm);
    let (hp, wp) = (h + 2 * ph, wd + 2 * pw);
    let plane = |d: &[(i64, i64)]| dims(d);
    let len = nc * hp * wp;
    let padded = ph > 0 || pw > 0;
    let inner = ph * wp + pw;
    let (xp, inside) = if padded {
        let walk = [inner, inner, 1, nc, h, wd, 0, hp * wp, wp, 1].map(|v| v as i32);
        let offset = Value::constant(ScalarType::Int, inner as u32);
        let xp = array::scatter_add(x, &offset, walk, len as u32)?;
        let mut mask = vec![0u32; len as usize];
        for p in 0..nc {
            for y in 0..h {
                for k in 0..wd {
                    mask[((p * hp + y + ph) * wp + k + pw) as usize] = 1;
                }
            }
        }
        (xp, Some(array::data(ScalarType::Int, mask)?))
    } else {
        (x.clone(), None)
    };
    let fzero = Value::constant(ScalarType::Float, 0);
    let mut left = g.clone();
    let mut total: Option<Value> = None;
    for tap in (0..kh * kw).rev() {
        let at = (tap / kw) * wp + tap % kw;
        let windows = plane(&[(nc, hp * wp), (oh, sh * wp), (ow, sw)]);
        let xt = array::strided(&xp, at, &windows)?;
        let is_max = array::binary(crate::Op::Eq, &xt, r)?;
        let is_nan = array::binary(crate::Op::Ne, &xt, &xt)?;
        let mut taken = array::select(&is_max, &left, &array::select(&is_nan, &left, &fzero)?)?;
        let mut rest = array::select(&is_max, &fzero, &array::select(&is_nan, &fzero, &left)?)?;
        if let Some(mask) = &inside {
            let valid = array::strided(mask, at, &windows)?;
            taken = array::select(&valid, &taken, &fzero)?;
            rest = array::select(&valid, &rest, &left)?;
        }
        left = rest;
        let walk = [at, at, 1, nc, oh, ow, 0, hp * wp, sh * wp, sw].map(|v| v as i32);
        let offset = Value::constant(ScalarType::Int, at as u32);
        let spread = array::scatter_add(&taken, &offset, walk, len as u32)?;
        total = Some(match total {
            None => spread,
            Some(t) => array::binary(crate::Op::Add, &t, &spread)?,
        });
    }
    let total = total.ok_or_else(|| err("a pooling window has no taps".into()))?;
    if !padded {
        return Ok(total);
    }
    array::strided(&total, inner, &plane(&[(nc, hp * wp), (h, wp), (wd, 1)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn farr(n: usize) -> Value {
        array::data(ScalarType::Float, vec![0; n]).unwrap()
    }

    #[test]
    fn conv2d_checks_shapes_and_parameters() {
        let prm = [1, 2, 5, 5, 3, 3, 3, 3, 3, 1, 1, 0, 0, 1, 1];
        assert!(conv2d(&farr(50), &farr(54), &farr(3), &prm).is_ok());
        assert!(conv2d(&farr(49), &farr(54), &farr(3), &prm).is_err());
        assert!(conv2d(&farr(50), &farr(54), &farr(2), &prm).is_err());
        let mut bad = prm;
        bad[7] = 4; // not the formula's output size
        assert!(conv2d(&farr(50), &farr(54), &farr(3), &bad).is_err());
        bad = prm;
        bad[9] = 0; // stride 0
        assert!(conv2d(&farr(50), &farr(54), &farr(3), &bad).is_err());
        let ints = array::data(ScalarType::Int, vec![0; 50]).unwrap();
        assert!(conv2d(&ints, &farr(54), &farr(3), &prm).is_err());
    }

    #[test]
    fn pool2d_checks_padding_and_shapes() {
        let pool = |name: &str, n: usize, prm: &[i64]| array::kernel(name, &[farr(n)], prm);
        let prm = [2, 4, 4, 2, 2, 2, 2, 2, 2, 0, 0];
        assert!(pool("maxpool2d", 32, &prm).is_ok());
        assert!(pool("avgpool2d", 31, &prm).is_err());
        let padded = [2, 4, 4, 2, 2, 3, 3, 2, 2, 1, 1];
        assert!(pool("avgpool2d", 32, &padded).is_ok());
        let too_much = [2, 4, 4, 2, 2, 4, 4, 2, 2, 2, 2];
        assert!(pool("avgpool2d", 32, &too_much).is_err());
    }
}
