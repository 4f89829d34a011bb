"""The table of structural array operations (crates/copapy-compiler/src/array_kernels.rs,
written to stencils/array_kernels.json by a cargo test) against the stencil generators:
every row has its stencils, every structural stencil has a row, and each stencil passes
its kernel the holes its row names. (The compiler checks the other direction: every
stencil name it asks for is in the object, array::tests.)
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from helpers import ROOT

STENCILS = ROOT / "stencils"


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    """{stencil name: C source} of every array and window stencil, as generated."""
    sys.path.insert(0, str(STENCILS))
    try:
        import gen_arrays
        import gen_windows
        return dict([*gen_arrays.generate(), *gen_windows.generate()])
    finally:
        sys.path.remove(str(STENCILS))


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((STENCILS / "array_kernels.json").read_text())
    return rows


def _element_wise(name: str) -> bool:
    """Stencils that are not structural: the op table's element-wise ones, select, the
    fused sincos and the dot products fused with an element-wise operation."""
    sys.path.insert(0, str(STENCILS))
    try:
        import optable
    finally:
        sys.path.remove(str(STENCILS))
    ops = {op.name for op in optable.OPS if optable.has(op, "array")}
    m = re.fullmatch(r"st_arr_(\w+?)_[fi]_(a|aa|as|sa)", name)
    if m and m.group(1) in ops or name == "st_arr_sincos_f_a":
        return True
    fused_dot = re.fullmatch(r"st_arr_dot_\w+_f_(aa|as|sa)", name) is not None
    return name.startswith("st_arr_select_") or fused_dot


def test_every_row_has_its_stencils_and_every_structural_stencil_a_row(
        generated: dict[str, str]) -> None:
    table = {s for row in _rows() for s in row["stencils"]}
    assert table <= set(generated), sorted(table - set(generated))
    structural = {n for n in generated if not _element_wise(n)}
    assert structural == table, (sorted(structural - table), sorted(table - structural))


def test_each_stencil_passes_the_holes_of_its_row(generated: dict[str, str]) -> None:
    for row in _rows():
        for name in row["stencils"]:
            body = generated[name].split(f"void {name}(")[1]
            holes = re.findall(r"CP_HOLE\(cp_a(\d)\)", body)
            assert holes == [str(k) for k in range(row["holes"] + 1)], (name, holes)
            if row["params"] == 4:  # the parameter array takes the count's hole
                assert "CP_N_PARAMS" in body, name


def test_rows_are_well_formed() -> None:
    rows = _rows()
    assert len({r["name"] for r in rows}) == len(rows)
    for r in rows:
        assert r["classes"] in ("fi", "f", ""), r
        assert r["params"] is None or r["params"] in (r["holes"], 4), r
        assert r["shape"] and r["grad"], r


def test_python_builds_every_row_with_a_constructor_by_name() -> None:
    # the names the stub's Literal types allow are exactly the rows with a constructor,
    # split by the row's result (a value or an array)
    import typing

    import copapy as cp
    from copapy import _array_kernels, _core
    rows = {r["name"]: r for r in _rows()}
    scalar = set(typing.get_args(_array_kernels.ScalarKernel))
    arrays = set(typing.get_args(_array_kernels.ArrayKernel))
    assert scalar <= set(rows) and arrays <= set(rows) and not scalar & arrays
    assert all(rows[n]["scalar"] for n in scalar) and not any(rows[n]["scalar"] for n in arrays)
    assert {"solve", "det", "conv2d", "matmul", "sort"} <= scalar | arrays
    m = cp.array([[2.0, 1.0], [1.0, 3.0]])
    b = cp.array([1.0, 2.0])
    assert isinstance(_core.array_kernel("det", [m._cp_node], [2]), cp.value)
    assert isinstance(_core.array_kernel("solve", [m._cp_node, b._cp_node], [2, 1]), _core.ArrayNode)


@pytest.mark.parametrize(("name", "operands", "params", "message"), [
    ("nope", 1, [], "unknown array operation"),
    ("take", 2, [], "made by the compiler only"),
    ("det", 2, [2], "det takes 1 operands"),
    ("det", 1, [], "det takes 1 parameters, got 0"),
    ("det", 1, [-2], "not a size"),
    ("strided", 1, [0, 2], r"\(size, stride\) pairs"),
    ("det", 1, [3], "."),  # 4 elements are no 3 x 3 matrix: the constructor's shape rule
])
def test_bad_requests_are_clear_errors(name: str, operands: int, params: list[int],
                                       message: str) -> None:
    import copapy as cp
    from copapy import _core
    m = cp.array([[2.0, 1.0], [1.0, 3.0]])._cp_node
    with pytest.raises(TypeError, match=message):
        _core.array_kernel(name, [m] * operands, params)  # type: ignore[call-overload]
