"""The stencil build's control-flow reading (stencils/cfg.py): the branch check and the
path bounds, on disassembly in the exact format of the committed ``*.dis`` files.

The snippets are the code that this check was written against (RISC-V ``max`` and the
x86_64 min-reduction tail before they were made branch-free) and small hand-written
graphs whose path lengths are counted by hand here.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "stencils"))
import branch_allowlist  # noqa: E402
import build  # noqa: E402
import cfg  # noqa: E402

RISCV_MAX_WITH_BRANCH = """Disassembly of section .text.st_max_i_r0r1_r0:

0000000000000000 <st_max_i_r0r1_r0>:
       0:      \tblt\ta1, a0, 0x6 <st_max_i_r0r1_r0+0x6>
       4:      \tmv\ta0, a1
       6:      \tauipc\tt1, 0
\t\t0000000000000006:  R_RISCV_CALL_PLT\tcp_next
       a:      \tjr\tt1
"""

X86_MIN_TAIL_WITH_BRANCH = """Disassembly of section .text.cpm_arr_min_f:

0000000000000000 <cpm_arr_min_f>:
   0:\txor    %eax,%eax
   2:\tmovss  (%rsi,%rax,4),%xmm1
   7:\tminss  %xmm1,%xmm0
   b:\tadd    $0x1,%rax
   f:\tcmp    %rax,%rdx
  12:\tjne    2 <cpm_arr_min_f+0x2>
  14:\tmovd   %xmm2,%eax
  18:\ttest   $0x1,%al
  1a:\tje     21 <cpm_arr_min_f+0x21>
  1c:\tpshufd $0x55,%xmm0,%xmm0
  21:\tmovd   %xmm0,(%rdi)
  25:\tret
"""

RISCV_LOOP = """Disassembly of section .text.cpm_loop:

0000000000000000 <cpm_loop>:
       0:      \tli\ta3, 31
       2:      \taddi\ta0, a0, 1
       4:      \taddi\ta3, a3, -1
       6:      \tbnez\ta3, 0x2 <cpm_loop+0x2>
       a:      \tret
"""

RISCV_DIAMOND = """Disassembly of section .text.cpm_diamond:

0000000000000000 <cpm_diamond>:
       0:      \tbeqz\ta0, 0xa <cpm_diamond+0xa>
       4:      \taddi\ta0, a0, 1
       6:      \taddi\ta0, a0, 1
       8:      \tj\t0xc <cpm_diamond+0xc>
       a:      \tli\ta0, 5
       c:      \tret
"""


def errors(target: str, dis: str) -> list[str]:
    funcs = build.parse_functions(dis)
    return list(cfg.branch_errors(target, funcs, branch_allowlist.allowed,
                                  branch_allowlist.SKIP_LIMIT))


def test_a_branch_in_a_stencil_is_rejected() -> None:
    (e,) = errors("riscv64", RISCV_MAX_WITH_BRANCH)
    assert e.startswith("st_max_i_r0r1_r0: conditional branch(es) (1)")


def test_a_select_shaped_skip_in_a_loop_kernel_is_rejected() -> None:
    (e,) = errors("x86_64", X86_MIN_TAIL_WITH_BRANCH)
    assert "cpm_arr_min_f: 'je" in e and "skips 1 instruction" in e


def test_a_loop_kernel_back_edge_is_allowed() -> None:
    assert errors("x86_64", X86_MIN_TAIL_WITH_BRANCH.replace(
        "  1a:\tje     21 <cpm_arr_min_f+0x21>\n", "  1a:\tnop\n")) == []


def test_an_unlisted_helper_with_a_branch_is_rejected() -> None:
    (e,) = errors("riscv64", RISCV_DIAMOND)
    assert "branch_allowlist.py" in e


def bounds(target: str, dis: str, name: str, trips: int | None = None) -> Any:
    insns = build.parse_functions(dis)[name]
    return cfg.path_bounds(target, insns, lambda callee: (0, 0), 0, trips)


def test_paths_of_a_diamond() -> None:
    # taken: beqz, li, ret = 3; fall-through: beqz, addi, addi, j, ret = 5
    assert bounds("riscv64", RISCV_DIAMOND, "cpm_diamond") == (3, 5)


def test_the_stencil_tail_jump_is_not_counted() -> None:
    # blt taken: blt = 1; not taken: blt, mv = 2 (auipc + jr dropped by the linker)
    assert bounds("riscv64", RISCV_MAX_WITH_BRANCH, "st_max_i_r0r1_r0") == (1, 2)


def test_a_loop_needs_its_trip_count() -> None:
    with pytest.raises(cfg.Loop):
        bounds("riscv64", RISCV_LOOP, "cpm_loop")
    # li, then 31 x (addi, addi, bnez), then ret
    assert bounds("riscv64", RISCV_LOOP, "cpm_loop", trips=31) == (1 + 31 * 3 + 1,) * 2


def test_the_committed_tables_cover_every_stencil() -> None:
    import json
    table = json.loads((ROOT / "python" / "copapy"
                        / "_instruction_bounds.json").read_text())
    for target, per in table.items():
        scalar = [n for n in per if n.startswith("st_") and not n.startswith("st_arr_")]
        assert scalar and all(per[n] is not None for n in scalar), target
        assert all(per[n][0] == per[n][1] for n in scalar
                   if not any(m in n for m in ("sin", "cos", "tan", "asin", "acos", "atan",
                                                "exp", "log", "tanh", "pow", "atan2",
                                                "floordiv_f", "mod_f"))), target


def test_a_jump_table_is_rejected_and_has_no_bound() -> None:
    dis = X86_MIN_TAIL_WITH_BRANCH.replace("  1a:\tje     21 <cpm_arr_min_f+0x21>\n",
                                           "  1a:\tjmp    *%rax\n").replace(
        "cpm_arr_min_f", "cpm_table")
    assert any("cpm_table: 'jmp    *%rax' at +0x1a jumps to a computed address" in e
               for e in errors("x86_64", dis))
    with pytest.raises(ValueError, match="computed address"):
        bounds("x86_64", dis, "cpm_table")
