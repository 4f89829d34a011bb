"""Symbol names: the writers keep one rule and every reader checks it again.

The rule (crates/copapy-program/src/names.rs): 1 to 255 bytes of UTF-8, no whitespace, no
control character, none of the runners' field separators ``=`` ``:`` ``,``, unique within
a program. ``cp.value(name=)`` and ``compile(names=)`` refuse a bad name at once with a
``ValueError`` saying why; ``cp.loads``/``cp.load`` and ``copapy-run`` refuse a file that
breaks it (hand-made or damaged) and never pick one of two equal names.

The reference for what a name may be is written here from the Unicode tables
(``unicodedata`` and the White_Space list of PropList.txt), not taken from copapy.
Auto-named inputs are ``in0, in1, ...`` in the order the user created them.
"""

from __future__ import annotations

import os
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

import copapy as cp
import program_layout
import pytest
from copapy._core import Target as NativeTarget  # copapy-run runs this machine's code
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from standalone import standalone_runner

# Unicode White_Space (PropList.txt): what Rust's char::is_whitespace tests
WHITE_SPACE = {chr(c) for c in [*range(0x9, 0xE), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                0x2028, 0x2029, 0x202F, 0x205F, 0x3000]}
SEPARATORS = "=:,"


def problem_of(name: str | bytes) -> str | None:
    """The reference rule: why ``name`` is not a valid name, or None if it is. The first
    problem in byte order is the one reported (a file's name may also not be UTF-8)."""
    raw = name if isinstance(name, bytes) else name.encode()
    if len(raw) == 0:
        return "is empty"
    if len(raw) > 255:
        return f"is {len(raw)} bytes long"
    try:
        text, bad_at = raw.decode(), None
    except UnicodeDecodeError as e:
        text, bad_at = raw[:e.start].decode(), e.start
    for c in text:
        if c in SEPARATORS:
            return "has the separator"
        if unicodedata.category(c) == "Cc":
            return "has the control character"
        if c in WHITE_SPACE:
            return "has the whitespace"
    return None if bad_at is None else f"is not UTF-8 (from byte {bad_at} on)"


_FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))
SETTINGS = settings(max_examples=3000 if _FUZZ else 20 if _EMULATED else 150, deadline=None,
                    derandomize=not _FUZZ, suppress_health_check=[HealthCheck.too_slow])

# names from every corner: separators, whitespace of all kinds, control characters,
# letters from other scripts, long ones
names = st.one_of(
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12),
    st.text(alphabet=st.sampled_from("ab_0ä€𝄞 \t\n\r\x00\x1b\x7f\x85\xa0\u2028\u3000=:,.-[]\"'"),
            max_size=8),
    st.integers(250, 260).map(lambda n: "x" * n),
    st.integers(120, 130).map(lambda n: "ä" * n),  # 2 bytes each: 240 to 260 bytes
)


@pytest.mark.parametrize("name, why", [
    ("", "it is empty"),
    ("has space", "whitespace ' ' (U+0020) at byte 3"),
    ("line\nbreak", "control character '\\n' (U+000A) at byte 4"),
    ("tab\t", "control character '\\t'"),
    ("a=1", "separator '=' (U+003D) at byte 1"),
    ("x:float", "separator ':'"),
    ("a,b", "separator ','"),
    ("del\x7f", "control character"),
    ("nb\xa0sp", "whitespace"),
    ("ls\u2028", "whitespace"),
    ("x" * 256, "it is 256 bytes long"),
])
def test_writers_refuse_a_bad_name_at_once_saying_why(name: str, why: str) -> None:
    with pytest.raises(ValueError, match="invalid variable name") as e:
        cp.value(1.0, name=name)
    assert why in str(e.value) and "1 to 255 bytes of UTF-8" in str(e.value)
    x = cp.value(1.0)
    with pytest.raises(ValueError, match="invalid variable name") as e:
        cp.Target().compile(x * 2, names={name: x})
    assert why in str(e.value)


def test_a_name_that_is_not_utf8_is_refused_as_a_bad_name() -> None:
    def in_compile(n: str) -> None:
        cp.Target().compile(cp.value(1.0), names={n: 1.0})

    for give in (lambda n: cp.value(1.0, name=n), in_compile):
        with pytest.raises(ValueError, match="invalid variable name 'a\\\\udc80': it is not UTF-8"):
            give("a\udc80")
    with pytest.raises(TypeError, match="a variable name is a str, not <class 'int'>"):
        cp.value(1.0, name=3)  # type: ignore[call-overload]


def test_two_variables_of_one_name_are_refused_when_compiled_together() -> None:
    p, q = cp.value(1.0, name="twice"), cp.value(2.0, name="twice")
    with pytest.raises(ValueError, match="two different variables"):
        cp.Target().compile(p + q)
    r = cp.value(3.0)
    with pytest.raises(ValueError, match="two different variables"):
        cp.Target().compile(p + r, names={"twice": r})


@SETTINGS
@given(names)
def test_every_name_the_writer_accepts_round_trips(name: str) -> None:
    why = problem_of(name)
    try:
        x = cp.value(2.5, name=name)
    except ValueError as e:
        assert why is not None, f"{name!r} refused: {e}"
        assert why in str(e)
        return
    assert why is None, f"{name!r} accepted, but it {why}"
    y = x * 2.0
    out = "result" if name != "result" else "other"
    tg = cp.Target()
    tg.compile(y, names={out: y})
    back = cp.loads(tg.program_bytes())
    assert [v[0] for v in back.variables()] == [out, name]
    back.write_value(name, 4.0)
    back.run()
    assert back.read_value(out) == 8.0
    assert back.read_value(name) == 4.0


# --- readers -------------------------------------------------------------------------------


def symbol_names(data: bytes) -> list[tuple[int, int]]:
    """(file offset, length) of each symbol name (docs/program-format.md)."""
    out = []
    for sym in program_layout.symbols(data):
        start, end = sym["name at"]  # type: ignore[misc]
        out.append((start, end - start))
    return out


def reseal(data: bytearray) -> bytes:
    """Rewrites the CRC-32 (IEEE, zlib's) so the edited file passes the checksum."""
    return program_layout.reseal(data)


def program_with(names_: tuple[str, str], target: Any = None) -> bytes:
    a, b = cp.value(1.5), cp.value(-2.0)
    tg = (target or cp.Target)()
    tg.compile(a * b, names=dict(zip(names_, (a, b), strict=True)))
    return tg.program_bytes()


def renamed(data: bytes, index: int, new: bytes) -> bytes:
    """The file with symbol ``index``'s name replaced by ``new`` of the same length."""
    start, n = symbol_names(data)[index]
    assert len(new) == n
    out = bytearray(data)
    out[start:start + n] = new
    return reseal(out)


@pytest.mark.parametrize("new, index, problem", [
    (b"a b", 0, "has the whitespace ' ' (U+0020) at byte 1"),
    (b"a\nb", 0, "has the control character '\\n' (U+000A) at byte 1"),
    (b"a=b", 0, "has the separator '='"),
    (b"a:b", 0, "has the separator ':'"),
    (b"a,b", 0, "has the separator ','"),
    (b"a\xffb", 0, "is not UTF-8 (from byte 1 on)"),
    (b"ccc", 1, "is also the name of symbol 0"),
])
def test_cp_loads_refuses_names_writers_never_write(new: bytes, index: int, problem: str) -> None:
    data = program_with(("ccc", "ddd"))
    with pytest.raises(ValueError) as e:
        cp.loads(renamed(data, index, new))
    msg = str(e.value)
    assert msg.startswith("not a valid program file: symbol "), msg
    assert problem in msg and "a name is 1 to 255 bytes of UTF-8" in msg
    assert "\n" not in msg


@SETTINGS
@given(st.sampled_from([0, 1]), st.binary(min_size=4, max_size=4))
def test_files_with_mutated_names_are_refused_or_read_right_never_misread(index: int, new: bytes) -> None:
    data = program_with(("name", "nom2"))
    edited = renamed(data, index, new)
    names_ = [b"name", b"nom2"]
    names_[index] = new
    why = problem_of(new)
    if why is None and names_[0] == names_[1]:
        why = "is also the name of symbol 0"
        index = 1
    if why is None:
        tg = cp.loads(edited)
        assert [v[0] for v in tg.variables()][:2] == [n.decode() for n in names_]
        assert tg.read_value(names_[0].decode()) == 1.5 and tg.read_value(names_[1].decode()) == -2.0
    else:
        with pytest.raises(ValueError, match="not a valid program file") as e:
            cp.loads(edited)
        assert why in str(e.value), (new, str(e.value))
        assert f"symbol {index} has the name" in str(e.value)


def runner() -> str:
    return standalone_runner()


@pytest.mark.parametrize("new, problem", [
    (b"a\nb", "control character"),
    (b"ccc", "is also the name of symbol 0"),
])
def test_copapy_run_refuses_such_files_too(tmp_path: Path, new: bytes, problem: str) -> None:
    path = tmp_path / "bad.cpy"
    path.write_bytes(renamed(program_with(("ccc", "ddd"), NativeTarget), 1, new))
    r = subprocess.run([runner(), str(path), "--stdio"], input="vars\nquit\n", capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and r.stdout == "", (r.stdout, r.stderr)
    assert "symbol 1 has the name" in r.stderr and problem in r.stderr


# --- generated names ---------------------------------------------------------------------------


@SETTINGS
@given(st.permutations(range(5)))
def test_auto_named_inputs_are_numbered_in_creation_order(use_order: list[int]) -> None:
    """in<k> is the k-th input the user created, whatever order the program uses them in
    (the order the compiler reaches them), and ``variables()`` lists them so."""
    xs = [cp.value(float(10 * k + 1)) for k in range(5)]
    total = xs[use_order[0]]
    for k in use_order[1:]:
        total = total * 3.0 + xs[k]
    tg = cp.Target()
    tg.compile(total)
    listed = [v[0] for v in tg.variables() if v[0].startswith("in")]
    assert listed == [f"in{k}" for k in range(5)]
    for k in range(5):
        assert tg.read_value(f"in{k}") == 10 * k + 1
    tg.write_value("in2", 1000.0)
    assert tg.read_value(xs[2]) == 1000.0


def test_auto_names_skip_given_names_in_creation_order() -> None:
    a = cp.value(1.0)
    b = cp.value(2.0, name="in0")
    c = cp.value(3.0)
    tg = cp.Target()
    tg.compile(c - a + b)
    assert tg.read_value("in0") == 2.0  # the given name keeps its variable
    assert tg.read_value("in1") == 1.0 and tg.read_value("in2") == 3.0


def test_the_runner_lists_auto_named_inputs_in_creation_order(tmp_path: Path) -> None:
    xs = [cp.value(float(k)) for k in range(4)]
    y = xs[3] * 2.0 + xs[1] * 3.0 + xs[0] - xs[2]
    tg = NativeTarget()
    tg.compile(y)
    path = tmp_path / "p.cpy"
    tg.save(str(path))
    r = subprocess.run([runner(), str(path), "--stdio"], input="vars\nset in2 7\nrun\nget out0\nquit\n",
                       capture_output=True, text=True, timeout=60, check=True)
    replies = r.stdout.splitlines()
    listed = [w.split(":")[0] for w in replies[0].split()[1:]]
    assert [n for n in listed if n.startswith("in")] == ["in0", "in1", "in2", "in3"]
    assert replies[3].split()[0] == "ok" and float(replies[3].split()[1]) == 3 * 2.0 + 1 * 3.0 + 0 - 7
