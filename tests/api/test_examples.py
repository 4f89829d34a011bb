"""Run every example as a subprocess; check it exits 0 and prints the numbers that an
independent float32 / int32 reference computed here gives."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import refsem as R
from conftest import TARGET
from helpers import F32, ROOT

EXAMPLES = ROOT / "examples"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|-?inf|nan")


# Under COPAPY_TEST_TARGET (conftest.py) the example runs with cp.Target() meaning that
# target, in the emulator: the same check of every example on every architecture.
ON_TARGET = """
import runpy, sys, copapy
native, target = copapy.Target, sys.argv[1]
copapy.Target = lambda arch="native", *a, **k: native(target if arch == "native" else arch, *a, **k)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_example(name: str) -> str:
    cmd = [sys.executable, str(EXAMPLES / name)]
    if TARGET:
        cmd = [sys.executable, "-c", ON_TARGET, TARGET, str(EXAMPLES / name)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


def numbers(line: str) -> list[str]:
    return NUMBER.findall(line.split(":", 1)[-1] if ":" in line else line)


ALL_EXAMPLES = ["basic.py", "pid_controller.py", "fixed_point_filter.py", "forward_kinematics.py",
                "attitude_integration.py", "sensor_filter.py", "neural_layer.py", "jit_example.py",
                "inverse_kinematics.py", "pid_state_loop.py", "state_space_filter.py",
                "inverse_kinematics_loop.py", "newton_solve.py", "mpc_rollout.py",
                "extern_closed_loop.py",
                "serial_board.py"]  # tested by test_serial_link.py (boots QEMU: once, not per target)


def test_every_example_is_tested() -> None:
    from test_plot_examples import PLOT_EXAMPLES  # the plot examples are tested there

    assert {p.name for p in EXAMPLES.glob("*.py")} == set(ALL_EXAMPLES) | set(PLOT_EXAMPLES)


def test_basic() -> None:
    out = run_example("basic.py").splitlines()
    c, d, e = (float(numbers(line)[-1]) for line in out[:3])
    fa, fb = F32(0.25), F32(0.87)
    want_c = fa + fb * F32(2.0)
    assert R.same_float(c, want_c)
    assert R.same_float(e, np.sqrt(fb))
    assert R.ulp_distance(d, float(want_c * want_c + R.sin(fa))) <= 1


def pid_reference() -> list[tuple[float, float]]:
    dt, kp, ki, kd, u_min, u_max = 0.01, 2.0, 5.0, 0.1, -10.0, 10.0
    gain, tau = 0.8, 0.5
    y, integral, prev_error = 0.0, F32(0.0), F32(0.0)
    rows = []
    with np.errstate(all="ignore"):
        for step in range(300):
            error = F32(1.0) - F32(y)
            new_integral = integral + error * F32(dt)
            derivative = (error - prev_error) / F32(dt)
            raw = F32(kp) * error + F32(ki) * new_integral + F32(kd) * derivative
            above, below = int(raw > F32(u_max)), int(raw < F32(u_min))
            inside = 1 - above - below
            u = F32(above) * F32(u_max) + F32(below) * F32(u_min) + F32(inside) * raw
            integral, prev_error = new_integral, error
            y += dt * (gain * float(u) - y) / tau
            if step % 50 == 49:
                rows.append((y, float(u)))
    return rows


def test_pid_controller() -> None:
    out = [line for line in run_example("pid_controller.py").splitlines() if line.startswith("t=")]
    got = [(float(re.search(r"y=(\S+)", s)[1]), float(re.search(r"u=(\S+)", s)[1])) for s in out]  # type: ignore[index]
    assert got == pid_reference()


def pid_state_loop_reference() -> list[tuple[float, float]]:
    dt, kp, ki, kd, gain, tau = F32(0.01), F32(2.0), F32(5.0), F32(0.1), F32(0.8), F32(0.5)
    y, integral, prev_error, rows = F32(0.0), F32(0.0), F32(0.0), []
    for step in range(300):
        error = F32(1.0) - y
        new_integral = integral + error * dt
        raw = kp * error + ki * new_integral + kd * ((error - prev_error) / dt)
        u = np.minimum(np.maximum(raw, F32(-10)), F32(10))
        y = y + dt * (gain * u - y) / tau
        integral, prev_error = new_integral, error
        if step % 50 == 49:
            rows.append((float(y), float(u)))
    return rows


def test_pid_state_loop() -> None:
    out = [line for line in run_example("pid_state_loop.py").splitlines() if line.startswith("t=")]
    got = [(float(re.search(r"y=(\S+)", s)[1]), float(re.search(r"u=(\S+)", s)[1])) for s in out]  # type: ignore[index]
    assert got == pid_state_loop_reference()


def test_state_space_filter() -> None:
    a = np.array([[0.98, 0.03], [-0.03, 0.97]], dtype=F32)
    b, c, d = np.array([0.01, 0.02], dtype=F32), np.array([1.0, 0.5], dtype=F32), F32(0.05)
    x, want = np.zeros(2, dtype=F32), []
    for k in range(40):
        u = F32(math.sin(0.3 * k))
        y = c[0] * x[0] + c[1] * x[1] + d * u
        x = np.array([a[i, 0] * x[0] + a[i, 1] * x[1] + b[i] * u for i in range(2)], dtype=F32)
        if k % 8 == 7:
            want.append([float(y), float(x[0]), float(x[1])])
    lines = run_example("state_space_filter.py").splitlines()
    got = [[float(t.split("=")[1]) for t in line.split()[1:]] for line in lines]
    assert got == want


def filter_reference() -> list[int]:
    signal = [(20000 if (n // 16) % 2 == 0 else -12000) + (400000 if n == 37 else 0) for n in range(64)]
    y, out = 0, []
    for x in signal:
        y = R.wrap32(y + (R.wrap32(x - y) >> 3))
        y = max(-32768, min(32767, y))
        out.append(y)
    return out


def test_fixed_point_filter() -> None:
    text = run_example("fixed_point_filter.py")
    got = [int(tok) for tok in text.split()]
    want = filter_reference()
    assert got == want
    assert 32767 in want  # the glitch saturates


@pytest.mark.parametrize("name", [n for n in ALL_EXAMPLES if n != "serial_board.py"])  # boots QEMU
def test_examples_are_deterministic(name: str) -> None:
    assert run_example(name) == run_example(name)


# ---------------------------------------------------------------------------------------------
# Examples of typical programs: kinematics, rotations, filters, a neural layer, @cp.jit.
# Their references are float64 (or float32) NumPy computations written here, independent of
# copapy; the tolerances are the float32 rounding the compiled code may add.


def floats_after(line: str, label: str) -> list[float]:
    """The numbers on ``line`` after ``label``."""
    assert label in line, (label, line)
    return [float(t) for t in NUMBER.findall(line.split(label, 1)[1] if label else line)]


def f32_list(xs: list[float]) -> list[float]:
    return [float(F32(x)) for x in xs]


def test_forward_kinematics() -> None:
    links = [1.8, 2.0, 0.6]
    out = run_example("forward_kinematics.py").splitlines()
    poses = [k for k, line in enumerate(out) if line.startswith("pose ")]
    assert len(poses) == 5
    for start in poses:
        theta = f32_list(floats_after(out[start], "theta ="))
        angles = np.cumsum(theta)
        points = np.cumsum([[ln * np.cos(a), ln * np.sin(a)] for ln, a in zip(links, angles, strict=True)],
                           axis=0)
        rows = out[start + 1: start + 6]
        got_points = [floats_after(rows[i], ":") for i in range(3)]
        assert rows[2].strip().startswith("end effector:")
        np.testing.assert_allclose(got_points, points, rtol=0, atol=2e-6)
        assert floats_after(rows[3], "tool angle:")[0] == pytest.approx(angles[-1], abs=1e-6)
        assert floats_after(rows[4], "reach:")[0] == pytest.approx(np.hypot(*points[-1]), abs=2e-6)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    w, x, y, z = a
    left = np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])
    return left @ b  # type: ignore[no-any-return]


def quat_matrix(q: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    """Rotation matrix of the unit quaternion q: columns are the rotated basis vectors."""
    cols = []
    for e in np.eye(3):
        p = quat_mul(quat_mul(q, np.concatenate([[0.0], e])), q * [1, -1, -1, -1])
        cols.append(p[1:])
    return np.stack(cols, axis=1)


def test_attitude_integration() -> None:
    dt = 0.01
    manoeuvres = [(100, [0.0, 0.0, math.pi / 2]), (100, [math.pi / 4, 0.0, 0.0]), (150, [0.0, 0.3, -0.2]),
                  (50, [0.0, 0.0, 0.0]), (200, [1.0, -2.0, 0.5])]
    out = run_example("attitude_integration.py").splitlines()
    blocks = [k for k, line in enumerate(out) if line.startswith("after ")]
    assert len(blocks) == len(manoeuvres)
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for start, (steps, rates) in zip(blocks, manoeuvres, strict=True):
        # a constant body rate for T seconds rotates by |w| T about w (body frame): exact
        w = np.array(f32_list(rates))
        angle = np.linalg.norm(w) * steps * dt
        axis = w / np.linalg.norm(w) if angle else w
        q = quat_mul(q, np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis]))
        m = quat_matrix(q)
        euler = [math.atan2(m[2, 1], m[2, 2]), math.asin(-m[2, 0]), math.atan2(m[1, 0], m[0, 0])]
        got_q = floats_after(out[start + 1], "quaternion:")
        got_euler = floats_after(out[start + 2], "roll pitch yaw:")
        got_nose = floats_after(out[start + 3], "nose:")
        # float32 rounding of ~100 steps each: a few 1e-5 at most
        np.testing.assert_allclose(got_q, q, rtol=0, atol=5e-5)
        np.testing.assert_allclose(got_euler, euler, rtol=0, atol=1e-4)
        np.testing.assert_allclose(got_nose, m[:, 0], rtol=0, atol=5e-5)
    hold, before = out[blocks[3] + 1], out[blocks[2] + 1]
    assert hold == before  # zero rate: the identity step, taken through cp.iif, changes nothing
    assert floats_after(out[-1], "norm:")[0] == pytest.approx(1.0, abs=1e-6)


def test_sensor_filter() -> None:
    def sensor(n: int) -> float:
        if n in (7, 19, 20):
            return 0.0
        if n == 31:
            return 9.5
        return 1.0 + 0.5 * n / 40 + 0.02 * math.sin(2.7 * n) + 0.01 * math.cos(7.1 * n)

    out = run_example("sensor_filter.py").splitlines()
    assert len(out) == 40
    history = [sensor(0)] * 5
    for n, line in enumerate(out):
        history = history[1:] + [sensor(n)]
        window = np.array(history, dtype=np.float32)
        assert line.startswith(f"n={n:2d} ")
        assert float(re.search(r"raw=(\S+)", line)[1]) == history[-1]  # type: ignore[index]
        median = float(re.search(r"median=(\S+)", line)[1])  # type: ignore[index]
        mean = float(re.search(r"mean=(\S+)", line)[1])  # type: ignore[index]
        order = [int(t) for t in NUMBER.findall(line.split("order=")[1])]
        assert R.same_float(median, np.median(window))
        assert mean == pytest.approx(float(np.mean(window.astype(np.float64))), rel=1e-6)
        assert order == np.argsort(window, kind="stable").tolist()
    # the median ignores the dropouts and the reflection; the mean does not
    medians = [float(re.search(r"median=(\S+)", line)[1]) for line in out]  # type: ignore[index]
    assert all(0.99 < m < 1.6 for m in medians)


def test_neural_layer() -> None:
    w1 = np.array([[0.8, -0.5, 0.3], [0.0, 1.2, -0.7], [-0.6, 0.4, 0.9], [0.25, 0.25, 0.25]],
                  dtype=np.float32)
    b1 = np.array([0.1, -0.2, 0.05, -0.3], dtype=np.float32)
    w2 = np.array([[1.5, -0.8, 0.6, 0.0], [-1.1, 0.9, 1.3, -0.4]], dtype=np.float32)
    b2 = np.array([-0.25, 0.1], dtype=np.float32)
    out = run_example("neural_layer.py").splitlines()
    assert len(out) == 5
    for line in out:
        head, rest = line.split(": hidden ")
        x = np.array(floats_after(head, "input"), dtype=np.float32).astype(np.float64)
        got_hidden = [float(t) for t in NUMBER.findall(rest.split(" scores ")[0])]
        got_scores = [float(t) for t in NUMBER.findall(rest.split(" scores ")[1])]
        hidden = np.maximum(w1.astype(np.float64) @ x + b1, 0.0)
        scores = 1.0 / (1.0 + np.exp(-(w2.astype(np.float64) @ hidden + b2)))
        np.testing.assert_allclose(got_hidden, hidden, rtol=0, atol=2e-6)
        np.testing.assert_allclose(got_scores, scores, rtol=0, atol=2e-6)
    first_hidden = [float(t) for t in NUMBER.findall(out[0].split(" scores ")[0].split(": hidden ")[1])]
    assert first_hidden == [0.10000000149011612, 0.0, 0.05000000074505806, 0.0]  # relu(b1): exact


def test_jit_example() -> None:
    out = run_example("jit_example.py").splitlines()
    for line, (x, y) in zip(out, [(2.5, 1.2), (3.1, 4.7)], strict=True):
        fx, fy = F32(x), F32(y)
        total = F32(0.0)
        for i in range(10):
            total = total + (fx * fx + fy * fy + F32(i))  # sum() adds left to right
        assert R.same_float(float(numbers(line)[-1]), total), (line, total)


def test_inverse_kinematics() -> None:
    text = run_example("inverse_kinematics.py")
    out = {line.split(":")[0].split("=")[0].strip(): line for line in text.splitlines()}
    theta = floats_after(out["Joint angles"], ":")
    joint = np.array(floats_after(out["Joint position"], ":"))
    effector = np.array(floats_after(out["End-effector position"], ":"))
    error = floats_after(out["quadratic error"], "=")[0]
    # positions are the forward kinematics of the angles before the last descent step: the
    # links keep their lengths and point (almost) where the final angles say
    assert np.linalg.norm(joint) == pytest.approx(1.8, abs=2e-6)
    assert np.linalg.norm(effector - joint) == pytest.approx(2.0, abs=2e-6)
    assert math.atan2(joint[1], joint[0]) == pytest.approx(theta[0], abs=1e-3)
    d = effector - joint
    assert math.atan2(d[1], d[0]) == pytest.approx(theta[0] + theta[1], abs=1e-3)
    # the end effector reached the target; the printed error is its squared distance
    assert effector == pytest.approx([0.7, 0.7], abs=2e-3)
    assert error == pytest.approx(float(np.sum((0.7 - effector) ** 2)), rel=1e-3)
    assert error < 1e-5


def test_inverse_kinematics_loop() -> None:
    text = run_example("inverse_kinematics_loop.py")
    out = {line.split(":")[0].strip(): line for line in text.splitlines()}
    assert int(numbers(out["Cortex-M4 code for 1,000 steps"].replace(",", ""))[0]) < 4096
    t1, t2 = floats_after(out["Joint angles"], ":")
    effector = floats_after(out["End-effector position"], ":")
    # the forward kinematics of the printed angles (float64) reach the target
    fk = [1.8 * math.cos(t1) + 2.0 * math.cos(t1 + t2), 1.8 * math.sin(t1) + 2.0 * math.sin(t1 + t2)]
    assert fk == pytest.approx(effector, abs=1e-5)
    assert effector == pytest.approx([0.7, 0.7], abs=1e-5)


def test_newton_solve() -> None:
    lines = run_example("newton_solve.py").splitlines()
    assert len(lines) == 3
    for line, tau in zip(lines, (-1.5, 0.5, 2.0), strict=True):
        x = float(numbers(line)[-1])
        assert 4.0 * math.sin(x) - 9.0 * x == pytest.approx(tau, abs=1e-5)


def test_mpc_rollout() -> None:
    out = {line.split(":")[0].strip(): line for line in run_example("mpc_rollout.py").splitlines()}
    first = floats_after(out["cost of the first plan"], ":")[0]
    last = floats_after(out["cost after 20 gradient steps"], ":")[0]
    # the same descent in float64, the gradient by hand (reverse sweep of the roll-out)
    u = np.zeros(50)
    costs = []
    for _ in range(20):
        x = v = 0.0
        xs = []
        for uk in u:
            x, v = x + 0.1 * v, v + 0.1 * uk
            xs.append(x)
        costs.append(sum((xk - 1.0) ** 2 for xk in xs) + 0.01 * float(np.sum(u * u)))
        gx = gv = 0.0
        grad = np.zeros(50)
        for t in range(49, -1, -1):
            gx += 2.0 * (xs[t] - 1.0)
            grad[t] = 0.1 * gv + 0.02 * u[t]
            gx, gv = gx, gv + 0.1 * gx
        u = u - 0.002 * grad
    assert first == 50.0
    assert last == pytest.approx(costs[-1], rel=1e-4)


def _closed_loop_reference(steps: int) -> list[tuple[float, Any]]:
    """extern_closed_loop.py's loop: a float32 controller, the plant in Python floats;
    (y, duty) after each step."""
    kp, ki, dt = F32(1.5), F32(4.0), F32(0.05)
    y, integral, rows = 0.0, F32(0.0), []
    for _ in range(steps):
        error = F32(1.0) - F32(y)
        integral = integral + error * dt
        duty = np.minimum(np.maximum(kp * error + ki * integral, F32(0.0)), F32(5.0))
        y += 0.05 * (float(duty) - y) / 0.5
        rows.append((y, duty))
    return rows


def test_extern_closed_loop() -> None:
    """The PI loop with imported sensor and actuator against a float32 controller and the
    same Python plant (under COPAPY_TEST_TARGET: in the emulator)."""
    out = run_example("extern_closed_loop.py").splitlines()
    rows = _closed_loop_reference(100)[19::20]
    assert len(out) == 6 and out[-1] == "calls 200"
    for line, (ry, rduty) in zip(out, rows, strict=False):
        got_y, got_duty = (float(v) for v in numbers(line))
        assert got_y == ry and F32(got_duty) == rduty


@pytest.mark.skipif(bool(TARGET), reason="copapy-run on this machine: the main pass runs it")
def test_extern_plugin_example_serves_the_loop_under_copapy_run(tmp_path: Path) -> None:
    """The plugin example: extern_plugin.c built as a shared library serves the imports of
    the program extern_closed_loop.py saves, under the copapy-run of this install; every
    duty equals the reference loop's (the C plant does the Python plant's double
    arithmetic; no contraction into FMAs)."""
    lib = tmp_path / "libplant.so"
    subprocess.run(["gcc", "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(lib),
                    str(EXAMPLES / "extern_plugin.c")], check=True)
    prog = tmp_path / "loop.cpy"
    subprocess.run([sys.executable, str(EXAMPLES / "extern_closed_loop.py"), "--save", str(prog)],
                   check=True, capture_output=True)
    from copapy._remote import own_runner_command

    out = subprocess.run([*own_runner_command(), str(prog), "--plugin", str(lib), "-n", "100",
                          "--print", "duty"], capture_output=True, text=True, check=True, timeout=120).stdout
    got = [F32(line.split("duty=")[1]) for line in out.splitlines()]
    assert [g.tobytes() for g in got] == [d.tobytes() for _, d in _closed_loop_reference(100)]
