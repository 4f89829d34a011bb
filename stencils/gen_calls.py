"""Call stencils of imported functions (``cp.extern``): one per result kind.

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


def generate():
    """Yield (stencil name, C source) for each result kind."""
    for code, (rty, store) in RESULTS.items():
        name = f"st_call_{code}"
        call = ("((cp_import_" + code + ")*entry)"
                "(fa[0], fa[1], fa[2], fa[3], ia[0], ia[1], ia[2], ia[3])")
        body = f"    {rty} r = {call};\n    {store}\n" if rty != "void" else f"    {call};\n"
        yield name, (
            f"typedef {rty} (*cp_import_{code})(f32, f32, f32, f32, i32, i32, i32, i32);\n"
            f"void {name}{SIG} {{\n"
            "    void *const *entry = CP_HOLE(cp_a1);\n"
            "    const f32 *fa = CP_HOLE(cp_a2);\n"
            "    const i32 *ia = (const i32 *)CP_HOLE(cp_a2) + 4;\n"
            f"{body}"
            "    NEXT(a, b, i, j);\n}\n")
