"""Convolutions and pooling layers of ``cp.nn`` (Copapy's newest API): ``conv1d``,
``conv2d``, ``max_pool1d``, ``max_pool2d``, ``avg_pool1d``, ``avg_pool2d`` and
``global_avg_pool2d``.

Each layer is one array stencil whose loop kernel reads the shape from a small int
array, so its code size does not depend on the sizes. Convolutions are
cross-correlations (no kernel flip), as in PyTorch and Copapy: ``scipy.signal.correlate``
of each channel, summed over input channels. The order of each output is fixed (the
same on every target): start at the bias (or +0.0), then add ``w * x`` for the taps in
row-major order of (input channel, ky, kx), skipping taps in the zero padding; max
pooling folds ``maximum`` from -inf in that order (padded taps ignored, NaN propagates),
average pooling divides the sum (from +0.0) by the window size, padded taps counting
as zeros. Every result is float; int inputs are converted first. 1-D layers are the 2-D
ones with a window one row high.

``cp.grad`` flows through every layer: to the input, the weights and the bias of a
convolution, evenly over each average window, and for max pooling the whole gradient of a
window to its last tap equal to the maximum (or NaN when the maximum is NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from . import _core, _packing
from ._array import array
from ._core import nd_plain_int as plain_int
from ._tensors import _packed_ten, tensor
from ._vectors import vector

T = TypeVar("T")


def _float_array(x: Any, name: str) -> array[Any]:
    """``x`` (a cp.array, tensor, vector or nested numbers/values) as a float array."""
    a: array[Any]
    if isinstance(x, array):
        a = x
    elif isinstance(x, tensor | vector):
        node = _packing.lookup_array(x)
        a = array._of(node, tuple(x.shape))
    elif isinstance(x, Sequence) and not isinstance(x, str | bytes):
        a = array(x)
    else:
        raise TypeError(f"{name} must be a cp.array, tensor or nested list, not {type(x).__name__}")
    if a.dtype == "float":
        return a
    converted: array[Any] = a * 1.0
    return converted


def _pair(v: Any, name: str, minimum: int) -> tuple[int, int]:
    one = plain_int(v)
    pair = (one, one) if one is not None else tuple(map(plain_int, v)) if isinstance(v, Sequence) else ()
    if len(pair) != 2 or not all(p is not None and p >= minimum for p in pair):
        raise ValueError(f"{name} must be an int >= {minimum} or a pair of them, got {v!r}")
    return pair[0], pair[1]  # type: ignore[return-value]  # checked above: both ints


def _one(v: Any, name: str, minimum: int) -> int:
    n = plain_int(v)
    if n is None or n < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {v!r}")
    return n


def _out(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _like(x: Any, result: array[Any]) -> Any:
    """The result as the type of the input: a tensor for a tensor, else the array."""
    if isinstance(x, tensor):
        return _packed_ten(result._cp_node, result.shape)
    return result


def _conv(x: array[Any], w: array[Any], bias: Any, stride: tuple[int, int],
          padding: tuple[int, int], dilation: tuple[int, int]) -> array[Any]:
    """Convolution of an ``(n, ci, h, w)`` input with ``(co, ci, kh, kw)`` weights."""
    n, ci, h, wd = x.shape
    co, wci, kh, kw = w.shape
    if wci != ci:
        raise ValueError(f"an input with {ci} channels does not fit weights for {wci} channels "
                         f"(weights are (out_channels, in_channels, kernel...), got {w.shape})")
    dims = zip((h, wd), (kh, kw), stride, padding, dilation, strict=True)
    oh, ow = (_out(s, k, st, p, d) for s, k, st, p, d in dims)
    if oh < 1 or ow < 1:
        raise ValueError(f"the kernel {(kh, kw)} (dilation {dilation}) is larger than the padded "
                         f"input {(h + 2 * padding[0], wd + 2 * padding[1])}")
    b = array([0.0] * co) if bias is None else _float_array(bias, "bias")
    if b.shape != (co,):
        raise ValueError(f"a bias of shape {b.shape} does not fit {co} output channels")
    prm = [n, ci, h, wd, co, kh, kw, oh, ow, *stride, *padding, *dilation]
    node = _core.array_kernel("conv2d", [x._cp_node, w._cp_node, b._cp_node], prm)
    return array._of(node, (n, co, oh, ow), "float")


def conv2d(x: T, weight: Any, bias: Any = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1) -> T:
    """2-D convolution (cross-correlation, as PyTorch's ``conv2d``), one array stencil.

    ``x`` is ``(channels, height, width)`` or ``(batch, channels, height, width)``,
    ``weight`` ``(out_channels, channels, kh, kw)``, ``bias`` ``(out_channels,)`` or None;
    ``stride``, ``padding`` (zeros on both sides) and ``dilation`` are an int or a
    (vertical, horizontal) pair. The result is a float array (a tensor for a tensor
    input) of shape ``(out_channels, out_h, out_w)``, with the batch dimension if ``x``
    has one."""
    xa, wa = _float_array(x, "x"), _float_array(weight, "weight")
    if xa.ndim not in (3, 4) or wa.ndim != 4:
        raise ValueError(
            f"conv2d takes a 3-D or 4-D input and 4-D weights, got shapes {xa.shape} and {wa.shape}")
    st, pd, dl = _pair(stride, "stride", 1), _pair(padding, "padding", 0), _pair(dilation, "dilation", 1)
    out = _conv(xa.reshape(-1, *xa.shape[-3:]), wa, bias, st, pd, dl)
    if xa.ndim == 3:
        out = out.reshape(*out.shape[1:])
    result: T = _like(x, out)
    return result


def conv1d(x: T, weight: Any, bias: Any = None, stride: int = 1, padding: int = 0,
           dilation: int = 1) -> T:
    """1-D convolution (cross-correlation, as PyTorch's ``conv1d``), one array stencil.

    ``x`` is ``(channels, length)`` or ``(batch, channels, length)``, ``weight``
    ``(out_channels, channels, k)``, ``bias`` ``(out_channels,)`` or None. The result is a
    float array (a tensor for a tensor input) of shape ``(out_channels, out_length)``,
    with the batch dimension if ``x`` has one."""
    xa, wa = _float_array(x, "x"), _float_array(weight, "weight")
    if xa.ndim not in (2, 3) or wa.ndim != 3:
        raise ValueError(
            f"conv1d takes a 2-D or 3-D input and 3-D weights, got shapes {xa.shape} and {wa.shape}")
    st, pd, dl = _one(stride, "stride", 1), _one(padding, "padding", 0), _one(dilation, "dilation", 1)
    x4 = xa.reshape(-1, xa.shape[-2], 1, xa.shape[-1])
    out = _conv(x4, wa.reshape(wa.shape[0], wa.shape[1], 1, wa.shape[2]), bias, (1, st), (0, pd), (1, dl))
    lead = (out.shape[0],) if xa.ndim == 3 else ()
    result: T = _like(x, out.reshape(*lead, out.shape[1], out.shape[3]))
    return result


def _pool(x: Any, which: str, kernel: tuple[int, int], step: tuple[int, int],
          pad: tuple[int, int], dims: int) -> Any:
    """Pooling over the last ``dims`` (1 or 2) axes of a ``dims + 1`` or ``dims + 2``-D input."""
    name = f"{which}_pool{dims}d"
    xa = _float_array(x, "x")
    if xa.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{name} takes a {dims + 1}-D or {dims + 2}-D input, got shape {xa.shape}")
    if any(2 * p > k for p, k in zip(pad, kernel, strict=True)):
        raise ValueError(
            f"{name}: padding {pad[2 - dims:]} must be at most half the kernel size {kernel[2 - dims:]}")
    h, wd = (1, xa.shape[-1]) if dims == 1 else xa.shape[-2:]
    oh, ow = (_out(s, k, st, p, 1) for s, k, st, p in zip((h, wd), kernel, step, pad, strict=True))
    if oh < 1 or ow < 1:
        raise ValueError(
            f"{name}: the window {kernel[2 - dims:]} is larger than the padded input {xa.shape[-dims:]}")
    lead = xa.shape[:-dims]
    nc = 1
    for d in lead:
        nc *= d
    prm = [nc, h, wd, *kernel, oh, ow, *step, *pad]
    node = _core.array_kernel("maxpool2d" if which == "max" else "avgpool2d", [xa._cp_node], prm)
    return _like(x, array._of(node, (*lead, *((oh, ow)[2 - dims:])), "float"))


def max_pool2d(x: T, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0) -> T:
    """2-D max pooling (PyTorch's ``max_pool2d``): the largest element of each window,
    one array stencil. ``x`` is ``(channels, h, w)`` or ``(batch, channels, h, w)``;
    ``stride`` defaults to the kernel size; ``padding`` (at most half the kernel) is
    ignored by the maximum. NaN in a window gives NaN."""
    k = _pair(kernel_size, "kernel_size", 1)
    s = k if stride is None else _pair(stride, "stride", 1)
    result: T = _pool(x, "max", k, s, _pair(padding, "padding", 0), 2)
    return result


def avg_pool2d(x: T, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0) -> T:
    """2-D average pooling (PyTorch's ``avg_pool2d``): the mean of each window, padded
    elements counting as zeros, one array stencil. Arguments as ``max_pool2d``."""
    k = _pair(kernel_size, "kernel_size", 1)
    s = k if stride is None else _pair(stride, "stride", 1)
    result: T = _pool(x, "avg", k, s, _pair(padding, "padding", 0), 2)
    return result


def max_pool1d(x: T, kernel_size: int, stride: int | None = None, padding: int = 0) -> T:
    """1-D max pooling over the last axis of ``(channels, length)`` or
    ``(batch, channels, length)``; as ``max_pool2d`` with a window one row high."""
    k = _one(kernel_size, "kernel_size", 1)
    s = k if stride is None else _one(stride, "stride", 1)
    result: T = _pool(x, "max", (1, k), (1, s), (0, _one(padding, "padding", 0)), 1)
    return result


def avg_pool1d(x: T, kernel_size: int, stride: int | None = None, padding: int = 0) -> T:
    """1-D average pooling over the last axis; as ``avg_pool2d`` with a window one row
    high."""
    k = _one(kernel_size, "kernel_size", 1)
    s = k if stride is None else _one(stride, "stride", 1)
    result: T = _pool(x, "avg", (1, k), (1, s), (0, _one(padding, "padding", 0)), 1)
    return result


def global_avg_pool2d(x: T) -> T:
    """The mean of each channel over height and width: ``(channels,)`` or
    ``(batch, channels)`` from a 3-D or 4-D input (an ``avg_pool2d`` over the whole
    plane)."""
    shape = tuple(getattr(x, "shape", ()))
    if len(shape) not in (3, 4):
        raise ValueError(f"global_avg_pool2d takes a 3-D or 4-D input, got shape {shape}")
    pooled: Any = _pool(x, "avg", shape[-2:], shape[-2:], (0, 0), 2)
    result: T = pooled.reshape(*pooled.shape[:-2])
    return result
