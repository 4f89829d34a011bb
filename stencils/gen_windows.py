"""Sliding-window stencils: convolution and pooling (``cp.nn.conv1d/conv2d`` and the
pooling layers), a block of its own so other array families grow without touching it.

Imported by gen_stencils.py, which appends these after gen_arrays.py's stencils.

    st_arr_conv2d_f              cp_a0 (n, co, oh, ow) = cross-correlation of cp_a1
                                 (n, ci, h, w) with cp_a2 (co, ci, kh, kw) plus cp_a3
                                 (co,); the hole cp_n holds the int array [n, ci, h, w,
                                 co, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw] instead of
                                 an element count (a fourth operand without a fifth hole)
    st_arr_maxpool2d_f           cp_a0 (nc, oh, ow) = np.maximum over each kh x kw window
    st_arr_avgpool2d_f           of cp_a1 (nc, h, w), or its sum / (kh * kw); cp_a2 the int
                                 array [nc, h, w, kh, kw, oh, ow, sh, sw, ph, pw]

The order of every output (the same on every target, so results are bit-identical):
the accumulator starts at the bias (conv), -inf (max) or +0.0 (avg); the window's taps
follow in row-major order of (input channel, ky, kx), each one accumulated as it comes
(``acc = acc + w * x``, ``acc = maximum(acc, x)``); taps in the zero padding are
skipped (they would add exactly zero, but inf * 0 would make a NaN). The average is
the rounded sum divided by kh * kw (padding counts, as Copapy's and PyTorch's
default). Loop bounds depend on the shape parameters only, never on data.
"""

from gen_arrays import HOLES, KERNEL_HOLES

# clang must not vectorise these loops on ARMv7 (NEON is not IEEE, see arrays.h); the
# window order is serial anyway, so nothing is lost elsewhere
_LOOP = "CPM_FLOAT_LOOP "


def _conv2d():
    src = (
        "CPM_NOINLINE void cpm_arr_conv2d_f(f32 *restrict d, const f32 *restrict x, "
        "const f32 *restrict wt, const f32 *restrict bias, const i32 *restrict prm) {\n"
        "    const i32 nb = prm[0], ci = prm[1], h = prm[2], wd = prm[3], co = prm[4];\n"
        "    const i32 kh = prm[5], kw = prm[6], oh = prm[7], ow = prm[8];\n"
        "    const i32 sh = prm[9], sw = prm[10], ph = prm[11], pw = prm[12];\n"
        "    const i32 dh = prm[13], dw = prm[14];\n"
        "    for (i32 b = 0; b < nb; b++)\n"
        "        for (i32 c = 0; c < co; c++)\n"
        "            for (i32 oy = 0; oy < oh; oy++)\n"
        f"                {_LOOP}for (i32 ox = 0; ox < ow; ox++) {{\n"
        "                    f32 acc = bias[c];\n"
        "                    const f32 *wc = wt + c * ci * kh * kw;\n"
        "                    for (i32 q = 0; q < ci; q++) {\n"
        "                        const f32 *xq = x + (b * ci + q) * h * wd;\n"
        "                        for (i32 ky = 0; ky < kh; ky++) {\n"
        "                            const i32 iy = oy * sh - ph + ky * dh;\n"
        f"                            {_LOOP}for (i32 kx = 0; kx < kw; kx++) {{\n"
        "                                const i32 ix = ox * sw - pw + kx * dw;\n"
        "                                if (iy >= 0 && iy < h && ix >= 0 && ix < wd)\n"
        "                                    acc = acc + wc[(q * kh + ky) * kw + kx] * xq[iy * wd + ix];\n"
        "                            }\n"
        "                        }\n"
        "                    }\n"
        "                    *d++ = acc;\n"
        "                }\n}\n")
    # the parameter array sits where an element count would (see the module docstring)
    # cp_n is declared as an int (arrays.h), so its address is taken explicitly;
    # x86_64 needs the RIP-relative lea of CP_HOLE for it as for the other holes
    stencil = (
        "#if defined(__x86_64__)\n"
        "#define CP_N_PARAMS ((const i32 *)CP_HOLE(cp_n))\n"
        "#else\n"
        "#define CP_N_PARAMS ((const i32 *)&cp_n)\n"
        "#endif\n"
        "void st_arr_conv2d_f(f32 a, f32 b, i32 i, i32 j) {\n"
        f"    cpm_arr_conv2d_f({', '.join(HOLES[:1 + KERNEL_HOLES['st_arr_conv2d_f']])}, "
        "CP_N_PARAMS);\n"
        "    NEXT(a, b, i, j);\n}\n")
    yield "st_arr_conv2d_f", src + stencil


def _pools():
    for name in ("max", "avg"):
        init = "-__builtin_inff()" if name == "max" else "0.0f"
        step = "acc = op_max_f(acc, xp[iy * wd + ix])" if name == "max" else "acc = acc + xp[iy * wd + ix]"
        out = "acc" if name == "max" else "acc / (f32)(kh * kw)"
        suffix = f"{name}pool2d_f"
        src = (
            f"CPM_NOINLINE void cpm_arr_{suffix}(f32 *restrict d, const f32 *restrict x, "
            "const i32 *restrict prm, i32 n) {\n"
            "    (void)n;\n"
            "    const i32 nc = prm[0], h = prm[1], wd = prm[2], kh = prm[3], kw = prm[4];\n"
            "    const i32 oh = prm[5], ow = prm[6], sh = prm[7], sw = prm[8];\n"
            "    const i32 ph = prm[9], pw = prm[10];\n"
            "    for (i32 p = 0; p < nc; p++) {\n"
            "        const f32 *xp = x + p * h * wd;\n"
            "        for (i32 oy = 0; oy < oh; oy++)\n"
            f"            {_LOOP}for (i32 ox = 0; ox < ow; ox++) {{\n"
            f"                f32 acc = {init};\n"
            "                for (i32 ky = 0; ky < kh; ky++) {\n"
            "                    const i32 iy = oy * sh - ph + ky;\n"
            f"                    {_LOOP}for (i32 kx = 0; kx < kw; kx++) {{\n"
            "                        const i32 ix = ox * sw - pw + kx;\n"
            "                        if (iy >= 0 && iy < h && ix >= 0 && ix < wd)\n"
            f"                            {step};\n"
            "                    }\n"
            "                }\n"
            f"                *d++ = {out};\n"
            "            }\n"
            "    }\n}\n")
        stencil = (
            f"void st_arr_{suffix}(f32 a, f32 b, i32 i, i32 j) {{\n"
            f"    cpm_arr_{suffix}({', '.join(HOLES[:1 + KERNEL_HOLES[f'st_arr_{suffix}']])}, cp_n);\n"
            "    NEXT(a, b, i, j);\n}\n")
        yield f"st_arr_{suffix}", src + stencil


def generate():
    """Yield (stencil name, C source) of the window stencils, in a fixed order."""
    yield from _conv2d()
    yield from _pools()
