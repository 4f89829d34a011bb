"""Call stencils of imported functions (``cp.extern``): one per result kind, and one per
result kind for calls with array (buffer) arguments.

A call step reads the function pointer from the program's import table in data memory
(``cp_a1``: an 8-byte entry the loader fills; code is never patched with the address)
and its arguments from an argument block (``cp_a2``: four float slots, then four int32
slots), calls the function with the hard-float C ABI and stores the result to ``cp_a0``.

Every supported ABI (x86_64 SysV, AAPCS64, AAPCS-VFP, RISC-V ILP32F/LP64D) passes float
and integer arguments in two independent register sequences, so a function with at most
4 float and 4 int arguments, in any order, receives them correctly from one stencil that
always passes four of each (the unused registers carry zeros and are ignored). The
registers a, b, i, j pass through unchanged: the C compiler saves them around the call,
as for the array kernels.

``st_call_<r>_p`` also passes buffers: an array argument is a pointer and an int32 length
in two consecutive integer registers. The pointer's register must hold a full address
(64 bits on 64-bit targets), so these stencils pass the four integer registers as
``intptr_t``: int32 arguments sign-extended (what RISC-V LP64 requires, and what the
other ABIs ignore above bit 31), and a buffer's slot, which holds the buffer's data
offset, plus the address of data offset 0 (``cp_a3``). Which slots are offsets is the
bit mask in a ninth slot of the block (bit k for int slot k), applied without a branch.
The scalar stencils stay as they were, so programs without array arguments do not change.

``st_arr_call_buffer`` copies an array into a call's own buffer before the call (``cp_a0`` =
``cp_a1``, ``cp_n`` 32-bit elements): a 1-D loop kernel (``cpm_arr_buffer_i_a``, whose
name puts it among bounds.py's linear kernels), so a program passing arrays keeps its
instruction bounds.
"""

SIG = "(f32 a, f32 b, i32 i, i32 j)"
# result code -> (C result type, expression stored to cp_a0)
RESULTS = {
    "f": ("f32", "*(f32 *)CP_HOLE(cp_a0) = r;"),
    "i": ("i32", "*(i32 *)CP_HOLE(cp_a0) = r;"),
    # a C bool result is an int32 0 or 1; anything else nonzero counts as true
    "b": ("i32", "*(i32 *)CP_HOLE(cp_a0) = (i32)(r != 0);"),
    "v": ("void", ""),
}


def _stencil(name: str, rty: str, int_type: str, ints: str, prologue: str) -> str:
    kind = name[len("st_call_"):]
    call = (f"((cp_import_{kind})*entry)"
            f"(fa[0], fa[1], fa[2], fa[3], {ints})")
    store = RESULTS[kind[0]][1]
    body = f"    {rty} r = {call};\n    {store}\n" if rty != "void" else f"    {call};\n"
    return (
        f"typedef {rty} (*cp_import_{kind})(f32, f32, f32, f32, "
        f"{int_type}, {int_type}, {int_type}, {int_type});\n"
        f"void {name}{SIG} {{\n"
        "    void *const *entry = CP_HOLE(cp_a1);\n"
        "    const f32 *fa = CP_HOLE(cp_a2);\n"
        "    const i32 *ia = (const i32 *)CP_HOLE(cp_a2) + 4;\n"
        f"{prologue}"
        f"{body}"
        "    NEXT(a, b, i, j);\n}\n")


# int slot k of a call with buffers: its int32, plus the data base where mask bit k is set
_BUFFER_PROLOGUE = (
    "    intptr_t base = (intptr_t)CP_HOLE(cp_a3);\n"
    "    u32 mask = (u32)ia[4];\n"
    "    intptr_t p0 = (intptr_t)ia[0] + (base & -(intptr_t)(mask & 1));\n"
    "    intptr_t p1 = (intptr_t)ia[1] + (base & -(intptr_t)(mask >> 1 & 1));\n"
    "    intptr_t p2 = (intptr_t)ia[2] + (base & -(intptr_t)(mask >> 2 & 1));\n"
    "    intptr_t p3 = (intptr_t)ia[3] + (base & -(intptr_t)(mask >> 3 & 1));\n")


_BUFFER_COPY = (
    "CPM_NOINLINE void cpm_arr_buffer_i_a(u32 *restrict d, const u32 *restrict x, i32 n) {\n"
    "    CPM_SCALAR_LOOP\n"
    "    for (i32 k = 0; k < n; k++) d[k] = x[k];\n"
    "}\n"
    "void st_arr_call_buffer(f32 a, f32 b, i32 i, i32 j) {\n"
    "    cpm_arr_buffer_i_a(CP_HOLE(cp_a0), CP_HOLE(cp_a1), cp_n);\n"
    "    NEXT(a, b, i, j);\n}\n")


def generate():
    """Yield (stencil name, C source) for each result kind, scalar and with buffers, and
    the buffer copy."""
    for code, (rty, _) in RESULTS.items():
        yield f"st_call_{code}", _stencil(f"st_call_{code}", rty, "i32",
                                          "ia[0], ia[1], ia[2], ia[3]", "")
    for code, (rty, _) in RESULTS.items():
        yield f"st_call_{code}_p", _stencil(f"st_call_{code}_p", rty, "intptr_t",
                                            "p0, p1, p2, p3", _BUFFER_PROLOGUE)
    yield "st_arr_call_buffer", _BUFFER_COPY
