"""The array part of the stencil table: loop kernels and their stencils.

Imported by gen_stencils.py, which appends these to generated/stencils.c. Naming
(README.md, "Array stencils"):

    st_arr_<op>_<ty>_<form>      element-wise binary, form in aa, as, sa (a: array,
                                 s: a broadcast scalar slot); cp_a0 = cp_a1 op cp_a2
    st_arr_<op>_<ty>_a           element-wise unary; cp_a0 = op(cp_a1)
    st_arr_select_f_a<x><y>      cp_a0 = cp_a1 ? cp_a2 : cp_a3, x, y in a, s
    st_arr_sum_<ty>              scalar cp_a0 = sum of cp_a1, in the fixed order
    st_arr_dot_<ty>              scalar cp_a0 = sum of cp_a1 * cp_a2, same order
    st_arr_min_<ty>, st_arr_max_<ty>
                                 scalar cp_a0 = np.minimum / np.maximum over cp_a1, in the
                                 order of the sums (8 partials from +inf / -inf, then
                                 pairwise): a NaN anywhere gives NaN
    st_arr_matmul_<ty>           cp_a0 (m x p) = cp_a1 (m x k) @ cp_a2 (k x p), row-major, with
                                 cp_a3 the int array [m, k, p]; each entry is a dot
                                 product in the sums' order
    st_arr_strided               cp_a0[...] = cp_a1[off + i0*s0 + i1*s1 + i2*s2 + i3*s3] over
                                 i0 < n0 .. i3 < n3 in row-major order, cp_a2 the int array
                                 [off, n0, n1, n2, n3, s0, s1, s2, s3]: slices, transposes
                                 and broadcasts as one copy (32-bit patterns, any dtype)
    st_arr_index_<ty>            scalar cp_a0 = cp_a1[k], k the int in slot cp_a2: a negative
                                 k counts from the end (once), then k is clamped to the
                                 array, so no index reads outside it (lookup tables)
    st_arr_widen_b               cp_a0 (int32) = cp_a1 (one byte per element), zero-extended
    st_arr_narrow_<ty>           cp_a0 (one byte per element) = tobyte(cp_a1): 0..255, saturating
    st_arr_dot_<op>_f_<form>     scalar cp_a0 = sum of (cp_a1 op cp_a2) * cp_a3, same order:
                                 an element-wise add/sub/mul fused into the dot that
                                 is its only reader (the same roundings, one pass)

Each stencil calls its kernel cpm_arr_<same suffix>(dst, operands..., n) once.

Sorting, axis reductions, runtime sub-arrays and adjoints (generate_ops below):

    st_arr_sort_<ty>, st_arr_argsort_<ty>
                                 cp_a0 = np.sort / np.argsort(kind='stable') of cp_a1 (n
                                 elements), cp_a2 a scratch int array of 2n: Batcher's odd-even
                                 merge sort network for n (compare-exchanges chosen by the
                                 indices only), keys (value, index) so the order is total
    st_arr_rows_min_<ty>, st_arr_rows_max_<ty>
                                 cp_a0[r] = min / max of row r of cp_a1 (rows x cols), cp_a2
                                 the int array [rows, cols]; each row in the order of
                                 st_arr_min_<ty>
    st_arr_gather                as st_arr_strided with a runtime offset: cp_a2 the int slot
                                 of the offset, clamped to [lo, hi] by masks, cp_a3 the int
                                 array [lo, hi, n0..n3, s0..s3]
    st_arr_scatter_add           the adjoint of a gather: cp_a0 (len elements) = +0.0, then
                                 cp_a0[off + i0*s0 + ..] += cp_a1[i] in row-major order of i,
                                 off as for st_arr_gather, cp_a3 = [lo, hi, n0..n3, s0..s3, len]
    st_arr_take                  cp_a0[k] = cp_a1[cp_a2[k]] for k < m, each index clamped to
                                 0..nx-1 by masks, cp_a3 = [nx, m] (32-bit patterns)

Linear algebra (generate_linalg below):

    st_arr_solve_f               cp_a0 (n x r) = the solution of cp_a1 (n x n) @ x = cp_a2
                                 (n x r), cp_a3 the int array [n, r] followed by n*n floats of
                                 scratch: Gaussian elimination with partial pivoting by masked
                                 row swaps, in the order spelled out at _SOLVE
    st_arr_det_f                 scalar cp_a0 = the determinant of cp_a1 (n x n), cp_a2 the
                                 int array [n] followed by n*n floats of scratch: the same
                                 elimination (order at _DET); a singular matrix gives +-0
"""

import json
import os

import optable

# (operand type, result type): operations with array stencils (the "array" flag of
# optable.py); the same semantics as the scalar table
BINARY = optable.grouped(2, array_only=True)
UNARY = optable.grouped(1, array_only=True)
FORMS = ("aa", "as", "sa")
SELECT_FORMS = ("aa", "as", "sa", "ss")
REDUCE_TYPES = "f i"
FUSED_DOT_OPS = "add sub mul"

C_TYPE = {"f": "f32", "i": "i32"}
SIG = "(f32 a, f32 b, i32 i, i32 j)"
HOLES = ("CP_HOLE(cp_a0)", "CP_HOLE(cp_a1)", "CP_HOLE(cp_a2)", "CP_HOLE(cp_a3)")


def _operand(form_code, var, k):
    """C expression of operand k of a kernel: an array element or the hoisted scalar."""
    return f"{var}[k]" if form_code == "a" else f"{var}0"


def _kernel(name, rty, params, setup, body):
    args = ", ".join(f"const {t} *restrict {v}" for t, v in params)
    # float operands: scalar on ARMv7 (NEON is not IEEE, see arrays.h)
    pragma = "    CPM_FLOAT_LOOP\n" if any(t == "f32" for t, _ in params) else ""
    return (f"CPM_NOINLINE void {name}({C_TYPE[rty]} *restrict d, {args}, i32 n) {{\n"
            f"{setup}{pragma}    for (i32 k = 0; k < n; k++)\n        d[k] = {body};\n}}\n")


# Branch-free math whose body the kernel inlines (mathlib.c cpm_<f>_body(x, vec)): on
# x86_64 and AArch64 (CPM_VEC_MATH) the elements in groups of 4 run it without the mask
# barrier, which the vectoriser needs (SSE2 / NEON, the same operations so the same
# bits); the last n % 4, and every element elsewhere, run the scalar helper's code.
VECTOR_MATH = {(op, "f"): f"cpm_{op}f_body"
               for op in "exp tanh sin cos tan log asin acos atan atan2 pow sigmoid".split()}


def _vector_math_kernel(name, body, form=None):
    """The kernel of a unary (form None) or binary (form aa) math operation."""
    if form is None:
        params, setup, args = "const f32 *restrict x", "", "x[k]"
    else:
        params = "const f32 *restrict x, const f32 *restrict y"
        setup = "".join(f"    const f32 {v}0 = *{v};\n"
                        for f, v in zip(form, "xy", strict=True) if f == "s")
        args = f"{_operand(form[0], 'x', 0)}, {_operand(form[1], 'y', 1)}"
    return (f"CPM_NOINLINE void {name}(f32 *restrict d, {params}, i32 n) {{\n{setup}"
            "    i32 n4 = CPM_VEC_MATH ? (i32)((u32)n & ~3u) : 0;\n"
            "    CPM_VECTOR_LOOP\n"
            f"    for (i32 k = 0; k < n4; k++)\n        d[k] = {body}({args}, 1);\n"
            "    CPM_SCALAR_LOOP\n"
            f"    for (i32 k = n4; k < n; k++)\n        d[k] = {body}({args}, 0);\n}}\n")


def _select_with_scalar(suffix, setup, operands, portable):
    """A select with one broadcast scalar operand. On x86_64 clang vectorises the plain
    kernel but gives its scalar remainder loop a branch on the condition (it loads the
    array operand only where the condition picks it), so the count depends on the
    data: there the kernel runs groups of 4 vectorised and the rest with op_select_f,
    whose mask the optimiser cannot see (tests/targets/test_array_bounds.py found it).
    Every other target keeps the plain kernel."""
    return (
        "#if defined(__x86_64__)\n"
        f"CPM_NOINLINE void cpm_arr_{suffix}(f32 *restrict d, const i32 *restrict c, "
        "const f32 *restrict x, const f32 *restrict y, i32 n) {\n"
        f"{setup}"
        "    i32 n4 = (i32)((u32)n & ~3u);\n"
        "    CPM_VECTOR_LOOP\n"
        f"    for (i32 k = 0; k < n4; k++)\n        d[k] = op_select_arr_f({operands});\n"
        "    CPM_SCALAR_LOOP\n"
        f"    for (i32 k = n4; k < n; k++)\n        d[k] = op_select_f({operands});\n"
        "}\n#else\n" + portable + "#endif\n")


# A shift of an array by one broadcast count: clang unswitches the element loop on the
# count (count < 32 or not: the x86_64 and ARMv7 kernels branched on it inside the loop),
# so the count would depend on a value. The test and the clamped count are computed once,
# before the loop, through a mask the optimiser cannot see; the loop shifts by a
# loop-invariant count and masks, as NumPy (counts outside 0..31 shift everything out).
_COUNT_MASK = ("    const i32 y0 = *y;\n"
               "    u32 in_range = 0u - (u32)((u32)y0 < 32u);\n"
               '    __asm__("" : "+r"(in_range));\n')
SHIFTS_BY_SCALAR = {
    ("shl", "i", "as"): (_COUNT_MASK + "    const u32 count = (u32)y0 & 31u;\n",
                         "(i32)(((u32)x[k] << count) & in_range)"),
    ("shr", "i", "as"): (_COUNT_MASK
                         + "    const u32 count = ((u32)y0 & in_range) | (31u & ~in_range);\n",
                         "x[k] >> count"),
}


def _stencil(name, kernel, nargs):
    holes = ", ".join(HOLES[: nargs + 1])
    return (f"void {name}{SIG} {{\n    {kernel}({holes}, cp_n);\n"
            f"    NEXT(a, b, i, j);\n}}\n")


# The structural array operations (matmul, sort, gather, solve, ...): one row each in the
# compiler's table (crates/copapy-compiler/src/array_kernels.rs), written out here by a
# cargo test; a stencil's holes come from its row, so C and Rust cannot disagree.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "array_kernels.json"),
          encoding="utf-8") as _f:
    KERNELS = json.load(_f)
KERNEL_HOLES = {name: k["holes"] for k in KERNELS for name in k["stencils"]}


def _kernel_stencil(name):
    """The stencil of structural kernel ``name`` (``st_arr_...``), calling its loop
    kernel ``cpm_arr_...`` with the holes its row of the table names."""
    return _stencil(name, "cpm_" + name[3:], KERNEL_HOLES[name])


def generate():
    """Yield (stencil name, C source of its kernel and stencil), in a fixed order."""
    for (ty, rty), ops in BINARY.items():
        t = C_TYPE[ty]
        for op in ops.split():
            for form in FORMS:
                suffix = f"{op}_{ty}_{form}"
                setup = "".join(f"    const {t} {v}0 = *{v};\n"
                                for f, v in zip(form, "xy", strict=True) if f == "s")
                body = f"op_{op}_{ty}({_operand(form[0], 'x', 0)}, {_operand(form[1], 'y', 1)})"
                if (op, ty) in (("floordiv", "i"), ("mod", "i")):  # arrays.h says why
                    body = body.replace(f"op_{op}_i(", f"op_{op}_arr_i(")
                if (op, ty, form) in SHIFTS_BY_SCALAR:
                    setup, body = SHIFTS_BY_SCALAR[op, ty, form]
                # only both-array forms: with a hoisted scalar operand clang turns the
                # masks that depend on it alone into branches (loop-invariant, but on data)
                if (op, ty) in VECTOR_MATH and form == "aa":
                    src = _vector_math_kernel(f"cpm_arr_{suffix}", VECTOR_MATH[op, ty], form)
                else:
                    src = _kernel(f"cpm_arr_{suffix}", rty, [(t, "x"), (t, "y")], setup, body)
                yield f"st_arr_{suffix}", src + _stencil(f"st_arr_{suffix}", f"cpm_arr_{suffix}", 2)
    for (ty, rty), ops in UNARY.items():
        for op in ops.split():
            suffix = f"{op}_{ty}_a"
            if (op, ty) in VECTOR_MATH:
                src = _vector_math_kernel(f"cpm_arr_{suffix}", VECTOR_MATH[op, ty])
            else:
                src = _kernel(f"cpm_arr_{suffix}", rty, [(C_TYPE[ty], "x")], "", f"op_{op}_{ty}(x[k])")
            yield f"st_arr_{suffix}", src + _stencil(f"st_arr_{suffix}", f"cpm_arr_{suffix}", 1)
    # sin and cos of one float array from one range reduction (the scheduler's fusion,
    # crates/copapy-compiler/src/sincos.rs): sin to cp_a0, cos to cp_a2
    yield "st_arr_sincos_f_a", (
        "CPM_NOINLINE void cpm_arr_sincos_f_a(f32 *restrict d, const f32 *restrict x, "
        "f32 *restrict c, i32 n) {\n"
        "    i32 n4 = CPM_VEC_MATH ? (i32)((u32)n & ~3u) : 0;\n"
        "    CPM_VECTOR_LOOP\n"
        "    for (i32 k = 0; k < n4; k++)\n        cpm_sincos_body(x[k], &d[k], &c[k], 1);\n"
        "    CPM_SCALAR_LOOP\n"
        "    for (i32 k = n4; k < n; k++)\n        cpm_sincos_body(x[k], &d[k], &c[k], 0);\n}\n"
        + _stencil("st_arr_sincos_f_a", "cpm_arr_sincos_f_a", 2))
    for form in SELECT_FORMS:
        suffix = f"select_f_a{form}"
        setup = "".join(f"    const f32 {v}0 = *{v};\n"
                        for f, v in zip(form, "xy", strict=True) if f == "s")
        operands = f"c[k], {_operand(form[0], 'x', 0)}, {_operand(form[1], 'y', 1)}"
        body = f"op_select_arr_f({operands})"
        src = _kernel(f"cpm_arr_{suffix}", "f", [("i32", "c"), ("f32", "x"), ("f32", "y")],
                      setup, body)
        if "s" in form:
            src = _select_with_scalar(suffix, setup, operands, src)
        yield f"st_arr_{suffix}", src + _stencil(f"st_arr_{suffix}", f"cpm_arr_{suffix}", 3)
    for ty in REDUCE_TYPES.split():
        # ints add in uint32 (wrapping, so any order gives the same sum)
        acc_t = "f32" if ty == "f" else "u32"
        # -0.0 is the identity of float addition (-0.0 + x is x for every x, -0.0 too), so
        # a partial that never gets a term changes nothing and a sum of one term is it
        init = ", ".join(["-0.0f" if ty == "f" else "0"] * 8)
        for name, nargs in (("sum", 1), ("dot", 2)):
            term = "x[k + l]" if name == "sum" else "x[k + l] * y[k + l]"
            if ty == "i":
                term = "(u32)x[k + l]" if name == "sum" else "(u32)x[k + l] * (u32)y[k + l]"
            params = ", ".join(f"const {C_TYPE[ty]} *restrict {v}" for v in "xy"[:nargs])
            suffix = f"{name}_{ty}"
            src = (
                f"CPM_NOINLINE void cpm_arr_{suffix}({C_TYPE[ty]} *restrict d, {params}, i32 n) {{\n"
                f"    {acc_t} acc[8] = {{{init}}};\n"
                "    i32 k = 0;\n"
                "    for (; k + 8 <= n; k += 8)\n"
                f"        for (int l = 0; l < 8; l++) acc[l] += {term};\n"
                f"    for (int l = 0; k + l < n; l++) acc[l] += {term};\n"
                f"    *d = cp_combine8_{ty}(acc);\n}}\n")
            yield f"st_arr_{suffix}", src + _kernel_stencil(f"st_arr_{suffix}")
    for ty in REDUCE_TYPES.split():
        for name in ("min", "max"):
            if ty == "f":
                start = "-" if name == "max" else ""
                init = ", ".join([f"{start}__builtin_inff()"] * 8)
            else:
                init = ", ".join(["INT32_MAX" if name == "min" else "INT32_MIN"] * 8)
            suffix = f"{name}_{ty}"
            step = f"acc[l] = op_{name}_{ty}(acc[l], x[k + l])"
            # ARMv7 NEON compares flush subnormals: every loop of a float kernel stays scalar
            loop = "CPM_FLOAT_LOOP " if ty == "f" else ""
            src = (
                f"CPM_NOINLINE void cpm_arr_{suffix}({C_TYPE[ty]} *restrict d, "
                f"const {C_TYPE[ty]} *restrict x, i32 n) {{\n"
                f"    {C_TYPE[ty]} acc[8] = {{{init}}};\n"
                "    i32 k = 0;\n"
                f"    {loop}for (; k + 8 <= n; k += 8)\n"
                f"        {loop}for (int l = 0; l < 8; l++) {step};\n"
                f"    {loop}for (int l = 0; k + l < n; l++) {step};\n"
                f"    {loop}for (int h = 4; h >= 1; h /= 2)\n"
                f"        {loop}for (int l = 0; l < h; l++) "
                f"acc[l] = op_{name}_lane_{ty}(acc[l], acc[l + h]);\n"
                "    *d = acc[0];\n}\n")
            yield f"st_arr_{suffix}", src + _kernel_stencil(f"st_arr_{suffix}")
    for ty in REDUCE_TYPES.split():
        t, acc_t = C_TYPE[ty], ("f32" if ty == "f" else "u32")
        init = ", ".join(["-0.0f" if ty == "f" else "0"] * 8)
        term = "row[s + l] * b[(s + l) * p + j]" if ty == "f" else \
            "(u32)row[s + l] * (u32)b[(s + l) * p + j]"
        suffix = f"matmul_{ty}"
        src = (
            f"CPM_NOINLINE void cpm_arr_{suffix}({t} *restrict d, const {t} *restrict a, "
            f"const {t} *restrict b, const i32 *restrict dims, i32 n) {{\n"
            "    (void)n;\n"
            "    const i32 m = dims[0], kk = dims[1], p = dims[2];\n"
            "    for (i32 i = 0; i < m; i++) {\n"
            f"        const {t} *row = a + i * kk;\n"
            "        for (i32 j = 0; j < p; j++) {\n"
            f"            {acc_t} acc[8] = {{{init}}};\n"
            "            i32 s = 0;\n"
            "            for (; s + 8 <= kk; s += 8)\n"
            f"                for (int l = 0; l < 8; l++) acc[l] += {term};\n"
            f"            for (int l = 0; s + l < kk; l++) acc[l] += {term};\n"
            f"            d[i * p + j] = cp_combine8_{ty}(acc);\n"
            "        }\n    }\n}\n")
        yield f"st_arr_{suffix}", src + _kernel_stencil(f"st_arr_{suffix}")
    src = (
        "CPM_NOINLINE void cpm_arr_strided(u32 *restrict d, const u32 *restrict x, "
        "const i32 *restrict prm, i32 n) {\n"
        "    (void)n;\n"
        "    const u32 *p0 = x + prm[0];\n"
        "    for (i32 i0 = 0; i0 < prm[1]; i0++, p0 += prm[5]) {\n"
        "        const u32 *p1 = p0;\n"
        "        for (i32 i1 = 0; i1 < prm[2]; i1++, p1 += prm[6]) {\n"
        "            const u32 *p2 = p1;\n"
        "            for (i32 i2 = 0; i2 < prm[3]; i2++, p2 += prm[7]) {\n"
        "                const i32 n3 = prm[4], s3 = prm[8];\n"
        "                for (i32 i3 = 0; i3 < n3; i3++) *d++ = p2[i3 * s3];\n"
        "            }\n        }\n    }\n}\n")
    yield "st_arr_strided", src + _kernel_stencil("st_arr_strided")
    # byte arrays: storage only, widened to int32 for every operation that reads them and
    # narrowed (saturating, the tobyte rule) when an array is stored as bytes
    src = ("CPM_NOINLINE void cpm_arr_widen_b(i32 *restrict d, const u8 *restrict x, i32 n) {\n"
           "    for (i32 k = 0; k < n; k++)\n        d[k] = (i32)x[k];\n}\n")
    yield "st_arr_widen_b", src + _kernel_stencil("st_arr_widen_b")
    for ty in REDUCE_TYPES.split():
        src = (f"CPM_NOINLINE void cpm_arr_narrow_{ty}(u8 *restrict d, const {C_TYPE[ty]} *restrict x, "
               "i32 n) {\n"
               + ("    CPM_FLOAT_LOOP\n" if ty == "f" else "")
               + f"    for (i32 k = 0; k < n; k++)\n        d[k] = (u8)op_tobyte_{ty}(x[k]);\n}}\n")
        yield f"st_arr_narrow_{ty}", src + _kernel_stencil(f"st_arr_narrow_{ty}")
    for ty in REDUCE_TYPES.split():
        # masks, not branches: the time does not depend on the index
        suffix = f"index_{ty}"
        src = (
            f"CPM_NOINLINE void cpm_arr_{suffix}({C_TYPE[ty]} *restrict d, "
            f"const {C_TYPE[ty]} *restrict x, const i32 *restrict idx, i32 n) {{\n"
            "    i32 k = *idx;\n"
            "    k += n & -(i32)(k < 0);\n"
            "    k &= -(i32)(k >= 0);\n"
            "    i32 over = -(i32)(k >= n);\n"
            # hides the mask from the optimiser, which would turn the blend into a
            # branch on cores without a conditional move (RISC-V)
            "    __asm__(\"\" : \"+r\"(over));\n"
            "    k = (k & ~over) | ((n - 1) & over);\n"
            "    *d = x[k];\n}\n")
        yield f"st_arr_{suffix}", src + _kernel_stencil(f"st_arr_{suffix}")
    for op in FUSED_DOT_OPS.split():
        for form in FORMS:
            suffix = f"dot_{op}_f_{form}"
            x = "x[k + l]" if form[0] == "a" else "x0"
            z = "z[k + l]" if form[1] == "a" else "z0"
            setup = "".join(f"    const f32 {v}0 = *{v};\n"
                            for f, v in zip(form, "xz", strict=True) if f == "s")
            term = f"op_{op}_f({x}, {z}) * y[k + l]"
            src = (
                f"CPM_NOINLINE void cpm_arr_{suffix}(f32 *restrict d, const f32 *restrict x, "
                "const f32 *restrict z, const f32 *restrict y, i32 n) {\n"
                f"{setup}"
                "    f32 acc[8] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};\n"
                "    i32 k = 0;\n"
                "    for (; k + 8 <= n; k += 8)\n"
                f"        for (int l = 0; l < 8; l++) acc[l] += {term};\n"
                f"    for (int l = 0; k + l < n; l++) acc[l] += {term};\n"
                "    *d = cp_combine8_f(acc);\n}\n")
            yield f"st_arr_{suffix}", src + _stencil(f"st_arr_{suffix}", f"cpm_arr_{suffix}", 3)
    yield from generate_ops()
    yield from generate_linalg()


# ---------------------------------------------------------------- sorting, axes, gathers
# (a block of its own: other stencil families are added above)

SORT_TYPES = "f i"
# a mask hidden from the optimiser, which would turn a blend into a branch on cores
# without a conditional move (RISC-V, ARMv6 Thumb-less code)
_OPAQUE = '    __asm__("" : "+r"({0}));\n'

_NETWORK = (
    # Batcher's odd-even merge sort for any n: the network for the next power of two
    # with every compare-exchange that touches an index >= n dropped (those would compare
    # with padding that sorts last and never move). Which pairs meet depends on n only.
    "    for (i32 p = 1, lp = 0; p < n; p += p, lp++)\n"
    "        for (i32 k = p; k >= 1; k >>= 1)\n"
    "            for (i32 j = k & (p - 1); j + k < n; j += k + k)\n"
    "                for (i32 i = 0; i < k && i + j + k < n; i++)\n"
    "                    if (((i + j) >> (lp + 1)) == ((i + j + k) >> (lp + 1)))\n"
    "                        cp_cmpx(key, idx, i + j, i + j + k);\n"
)

_CMPX = (
    "/* (key, index) pairs compared lexicographically: every pair differs, so the\n"
    " * network's result is the unique stable order; the swap is a mask, not a branch */\n"
    "OP void cp_cmpx(i32 *restrict key, i32 *restrict idx, i32 a, i32 b) {\n"
    "    i32 ka = key[a], kb = key[b], ia = idx[a], ib = idx[b];\n"
    "    u32 m = 0u - (u32)((kb < ka) | ((kb == ka) & (ib < ia)));\n"
    + _OPAQUE.format("m") +
    "    u32 dk = ((u32)ka ^ (u32)kb) & m, di = ((u32)ia ^ (u32)ib) & m;\n"
    "    key[a] = (i32)((u32)ka ^ dk); key[b] = (i32)((u32)kb ^ dk);\n"
    "    idx[a] = (i32)((u32)ia ^ di); idx[b] = (i32)((u32)ib ^ di);\n"
    "}\n"
    "/* a float's place in NumPy's order as an int: -0.0 equals +0.0, every NaN equals every\n"
    " * other NaN and sorts after +inf */\n"
    "OP i32 cp_sort_key_f(u32 b) {\n"
    "    u32 mag = b & 0x7fffffffu;\n"
    "    u32 k = b ^ ((u32)((i32)b >> 31) >> 1);\n"
    "    u32 zero = 0u - (u32)(mag == 0), nan = 0u - (u32)(mag > 0x7f800000u);\n"
    + _OPAQUE.format("zero") + _OPAQUE.format("nan") +
    "    k &= ~zero;\n"
    "    return (i32)((k & ~nan) | (0x7fffffffu & nan));\n"
    "}\n"
)


def _sort_kernels():
    shared = _CMPX  # helpers inlined into the kernels, emitted before the first one
    for ty in SORT_TYPES.split():
        key = "cp_sort_key_f(x[k])" if ty == "f" else "(i32)x[k]"
        for name, out in (("sort", "x[idx[k]]"), ("argsort", "(u32)idx[k]")):
            suffix = f"{name}_{ty}"
            src = (
                f"CPM_NOINLINE void cpm_arr_{suffix}(u32 *restrict d, const u32 *restrict x, "
                "i32 *restrict s, i32 n) {\n"
                "    i32 *key = s, *idx = s + n;\n"
                f"    for (i32 k = 0; k < n; k++) {{ key[k] = {key}; idx[k] = k; }}\n"
                + _NETWORK +
                f"    for (i32 k = 0; k < n; k++) d[k] = {out};\n}}\n")
            yield f"st_arr_{suffix}", shared + src + _kernel_stencil(f"st_arr_{suffix}")
            shared = ""


def _rows_kernels():
    for ty in REDUCE_TYPES.split():
        t = C_TYPE[ty]
        for name in ("min", "max"):
            if ty == "f":
                init = ", ".join([f"{'-' if name == 'max' else ''}__builtin_inff()"] * 8)
            else:
                init = ", ".join(["INT32_MAX" if name == "min" else "INT32_MIN"] * 8)
            step = f"acc[l] = op_{name}_{ty}(acc[l], x[k + l])"
            # ARMv7 NEON compares flush subnormals: every loop of a float kernel stays scalar
            loop = "CPM_FLOAT_LOOP " if ty == "f" else ""
            suffix = f"rows_{name}_{ty}"
            src = (
                f"CPM_NOINLINE void cpm_arr_{suffix}({t} *restrict d, const {t} *restrict row, "
                "const i32 *restrict dims, i32 n) {\n"
                "    (void)n;\n"
                "    const i32 rows = dims[0], cols = dims[1];\n"
                "    for (i32 r = 0; r < rows; r++, row += cols) {\n"
                f"        const {t} *x = row;\n"
                f"        {t} acc[8] = {{{init}}};\n"
                "        i32 k = 0;\n"
                f"        {loop}for (; k + 8 <= cols; k += 8)\n"
                f"            {loop}for (int l = 0; l < 8; l++) {step};\n"
                f"        {loop}for (int l = 0; k + l < cols; l++) {step};\n"
                f"        {loop}for (int h = 4; h >= 1; h /= 2)\n"
                f"            {loop}for (int l = 0; l < h; l++)\n"
                f"                acc[l] = op_{name}_lane_{ty}(acc[l], acc[l + h]);\n"
                "        d[r] = acc[0];\n    }\n}\n")
            yield f"st_arr_{suffix}", src + _kernel_stencil(f"st_arr_{suffix}")


_CLAMPED_OFFSET = (
    "    i32 off = *offp;\n"
    "    i32 under = -(i32)(off < prm[0]), over = -(i32)(off > prm[1]);\n"
    + _OPAQUE.format("under") + _OPAQUE.format("over") +
    "    off = (off & ~under) | (prm[0] & under);\n"
    "    off = (off & ~over) | (prm[1] & over);\n"
)


def _walk(body):
    """Loops over the four (size, stride) dimensions in prm[2..9], `at` the source index."""
    return (
        "    const u32 *p0 = x + off;\n"
        "    for (i32 i0 = 0; i0 < prm[2]; i0++, p0 += prm[6]) {\n"
        "        const u32 *p1 = p0;\n"
        "        for (i32 i1 = 0; i1 < prm[3]; i1++, p1 += prm[7]) {\n"
        "            const u32 *p2 = p1;\n"
        "            for (i32 i2 = 0; i2 < prm[4]; i2++, p2 += prm[8]) {\n"
        "                const i32 n3 = prm[5], s3 = prm[9];\n"
        f"                for (i32 i3 = 0; i3 < n3; i3++) {body};\n"
        "            }\n        }\n    }\n")


def _gather_kernels():
    src = (
        "CPM_NOINLINE void cpm_arr_gather(u32 *restrict d, const u32 *restrict x, "
        "const i32 *restrict offp, const i32 *restrict prm, i32 n) {\n"
        "    (void)n;\n"
        + _CLAMPED_OFFSET + _walk("*d++ = p2[i3 * s3]") + "}\n")
    yield "st_arr_gather", src + _kernel_stencil("st_arr_gather")
    # the same walk over the adjoint's positions: x is the destination here
    src = (
        "CPM_NOINLINE void cpm_arr_scatter_add(f32 *restrict d, const f32 *restrict g, "
        "const i32 *restrict offp, const i32 *restrict prm, i32 n) {\n"
        "    (void)n;\n"
        "    for (i32 k = 0; k < prm[10]; k++) d[k] = 0.0f;\n"
        + _CLAMPED_OFFSET +
        "    f32 *p0 = d + off;\n"
        "    for (i32 i0 = 0; i0 < prm[2]; i0++, p0 += prm[6]) {\n"
        "        f32 *p1 = p0;\n"
        "        for (i32 i1 = 0; i1 < prm[3]; i1++, p1 += prm[7]) {\n"
        "            f32 *p2 = p1;\n"
        "            for (i32 i2 = 0; i2 < prm[4]; i2++, p2 += prm[8]) {\n"
        "                const i32 n3 = prm[5], s3 = prm[9];\n"
        "                for (i32 i3 = 0; i3 < n3; i3++) p2[i3 * s3] += *g++;\n"
        "            }\n        }\n    }\n}\n")
    yield "st_arr_scatter_add", src + _kernel_stencil("st_arr_scatter_add")
    # x at an int array of indices, each clamped to x by masks (the adjoint of a sort)
    src = (
        "CPM_NOINLINE void cpm_arr_take(u32 *restrict d, const u32 *restrict x, "
        "const i32 *restrict idx, const i32 *restrict prm, i32 n) {\n"
        "    (void)n;\n"
        "    const i32 nx = prm[0], m = prm[1];\n"
        "    for (i32 k = 0; k < m; k++) {\n"
        "        i32 j = idx[k];\n"
        "        i32 under = -(i32)(j < 0), over = -(i32)(j >= nx);\n"
        + _OPAQUE.format("under").replace("    ", "        ", 1)
        + _OPAQUE.format("over").replace("    ", "        ", 1) +
        "        j &= ~under;\n"
        "        j = (j & ~over) | ((nx - 1) & over);\n"
        "        d[k] = x[j];\n    }\n}\n")
    yield "st_arr_take", src + _kernel_stencil("st_arr_take")


def generate_ops():
    """Yield (stencil name, C source) of this block; generate() ends with these."""
    yield from _sort_kernels()
    yield from _rows_kernels()
    yield from _gather_kernels()


# ---------------------------------------------------------------- linear algebra
# (a block of its own: other stencil families are added above)

# The one order of operations of solve (also python/copapy/_linalg.py's docstring and the
# NumPy reference in tests/arrays/test_linalg.py). w is the n x n matrix, x the n x r right-hand
# sides, both row-major copies. For column k = 0..n-1: for i = k+1..n-1 in increasing i,
# rows k and i (columns k.. of w, all of x) trade places when |w[i][k]| > |w[k][k]|
# (strictly, so ties and NaNs keep the upper row), by masks; then inv = 1 / w[k][k] and
# for i = k+1..n-1: f = w[i][k] * inv, w[i][j] -= f * w[k][j] for j > k and
# x[i][c] -= f * x[k][c]. Back substitution for i = n-1..0, each column c:
# s = x[i][c], s -= w[i][q] * x[q][c] for q = i+1..n-1 in increasing q, x[i][c] = s * inv_i.
# Every trip count depends on n and r only; a singular matrix divides by zero (inf/NaN).
_SOLVE = (
    "/* |x| > |y| as a mask (no NaN is greater): whether a row becomes the pivot row */\n"
    "OP u32 cp_gtabs_mask(f32 x, f32 y) {\n"
    "    u32 m = 0u - (u32)(op_abs_f(x) > op_abs_f(y));\n"
    + _OPAQUE.format("m") +
    "    return m;\n}\n"
    "/* swap the bit patterns of *p and *q where m is set */\n"
    "OP void cp_cswap(f32 *p, f32 *q, u32 m) {\n"
    "    u32 x, y;\n"
    "    __builtin_memcpy(&x, p, 4); __builtin_memcpy(&y, q, 4);\n"
    "    u32 t = (x ^ y) & m;\n"
    "    x ^= t; y ^= t;\n"
    "    __builtin_memcpy(p, &x, 4); __builtin_memcpy(q, &y, 4);\n}\n"
    "CPM_NOINLINE void cpm_arr_solve_f(f32 *restrict x, const f32 *restrict a, "
    "const f32 *restrict b, i32 *restrict s, i32 cnt) {\n"
    "    (void)cnt;\n"
    "    const i32 n = s[0], r = s[1];\n"
    "    f32 *w = (f32 *)(s + 2);\n"
    "    CPM_FLOAT_LOOP for (i32 k = 0; k < n * n; k++) w[k] = a[k];\n"
    "    CPM_FLOAT_LOOP for (i32 k = 0; k < n * r; k++) x[k] = b[k];\n"
    "    for (i32 k = 0; k < n; k++) {\n"
    "        f32 *wk = w + k * n, *xk = x + k * r;\n"
    "        for (i32 i = k + 1; i < n; i++) {\n"
    "            f32 *wi = w + i * n, *xi = x + i * r;\n"
    "            const u32 m = cp_gtabs_mask(wi[k], wk[k]);\n"
    "            CPM_FLOAT_LOOP for (i32 j = k; j < n; j++) cp_cswap(wk + j, wi + j, m);\n"
    "            CPM_FLOAT_LOOP for (i32 c = 0; c < r; c++) cp_cswap(xk + c, xi + c, m);\n"
    "        }\n"
    "        const f32 inv = 1.0f / wk[k];\n"
    "        for (i32 i = k + 1; i < n; i++) {\n"
    "            f32 *wi = w + i * n, *xi = x + i * r;\n"
    "            const f32 f = wi[k] * inv;\n"
    "            CPM_FLOAT_LOOP for (i32 j = k + 1; j < n; j++) wi[j] = wi[j] - f * wk[j];\n"
    "            CPM_FLOAT_LOOP for (i32 c = 0; c < r; c++) xi[c] = xi[c] - f * xk[c];\n"
    "        }\n"
    "        wk[k] = inv; /* the pivot itself is not read again */\n"
    "    }\n"
    "    for (i32 i = n - 1; i >= 0; i--) {\n"
    "        const f32 *wi = w + i * n;\n"
    "        for (i32 c = 0; c < r; c++) {\n"
    "            f32 acc = x[i * r + c];\n"
    "            CPM_FLOAT_LOOP for (i32 q = i + 1; q < n; q++) acc = acc - wi[q] * x[q * r + c];\n"
    "            x[i * r + c] = acc * wi[i];\n"
    "        }\n"
    "    }\n"
    "}\n"
)


# det: the elimination of _SOLVE without right-hand sides; d = 1.0, then for each k after
# the swaps d = d * w[k][k] (k increasing), a zero pivot takes inv = 0 (by a mask) so the
# rows below stay finite and the product stays 0; at the end d is negated if the number of
# swaps is odd (exact, so its place in the order does not matter).
_DET = (
    "CPM_NOINLINE void cpm_arr_det_f(f32 *restrict d, const f32 *restrict a, "
    "i32 *restrict s, i32 cnt) {\n"
    "    (void)cnt;\n"
    "    const i32 n = s[0];\n"
    "    f32 *w = (f32 *)(s + 1);\n"
    "    CPM_FLOAT_LOOP for (i32 k = 0; k < n * n; k++) w[k] = a[k];\n"
    "    f32 acc = 1.0f;\n"
    "    u32 sign = 0;\n"
    "    for (i32 k = 0; k < n; k++) {\n"
    "        f32 *wk = w + k * n;\n"
    "        for (i32 i = k + 1; i < n; i++) {\n"
    "            f32 *wi = w + i * n;\n"
    "            const u32 m = cp_gtabs_mask(wi[k], wk[k]);\n"
    "            sign ^= m;\n"
    "            CPM_FLOAT_LOOP for (i32 j = k; j < n; j++) cp_cswap(wk + j, wi + j, m);\n"
    "        }\n"
    "        const f32 p = wk[k];\n"
    "        acc = acc * p;\n"
    "        u32 zero = 0u - (u32)(p == 0.0f);\n"
    + _OPAQUE.format("zero").replace("    ", "        ", 1) +
    "        const f32 inv = op_blend_f(zero, 0.0f, 1.0f / p);\n"
    "        for (i32 i = k + 1; i < n; i++) {\n"
    "            f32 *wi = w + i * n;\n"
    "            const f32 f = wi[k] * inv;\n"
    "            CPM_FLOAT_LOOP for (i32 j = k + 1; j < n; j++) wi[j] = wi[j] - f * wk[j];\n"
    "        }\n"
    "    }\n"
    "    u32 bits;\n"
    "    __builtin_memcpy(&bits, &acc, 4);\n"
    "    bits ^= sign & 0x80000000u;\n"
    "    __builtin_memcpy(d, &bits, 4);\n"
    "}\n"
)


def generate_linalg():
    """Yield (stencil name, C source) of the linear-algebra block."""
    yield "st_arr_solve_f", _SOLVE + _kernel_stencil("st_arr_solve_f")
    yield "st_arr_det_f", _DET + _kernel_stencil("st_arr_det_f")
