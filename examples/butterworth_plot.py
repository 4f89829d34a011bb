"""A Butterworth low-pass designed with scipy.signal, run by copapy on the host and a Cortex-M4, plotted.

The design is SciPy's (``butter(..., output="sos")``); copapy compiles ``cp.signal.sosfilt``
for blocks of 50 samples, the filter state carried from run to run by the program itself
(``updates=``). The same program runs natively and in the emulator of a Cortex-M4F; both
are compared with ``scipy.signal.sosfilt`` (float64) over the whole noisy signal.

    python examples/butterworth_plot.py                      # prints the differences
    python examples/butterworth_plot.py docs/figures/butterworth.png   # and plots them
"""

import sys
from typing import Any

import copapy as cp
import numpy as np
import scipy.signal  # type: ignore[import-untyped]

FS = 1000.0  # Hz
BLOCK, BLOCKS = 50, 8
sos = scipy.signal.butter(4, 20.0, fs=FS, output="sos")

t = np.arange(BLOCK * BLOCKS) / FS
rng = np.random.default_rng(1)
clean = np.sin(2 * np.pi * 4.0 * t)
noisy = (clean + 0.5 * rng.normal(size=t.size)).astype(np.float32)


def run_on(target: Any) -> list[float]:
    """Filter ``noisy`` block by block with a program compiled for ``target``."""
    xs = [cp.value(0.0) for _ in range(BLOCK)]
    z = cp.signal.state((len(sos), 2), "z")
    y, zf = cp.signal.sosfilt(sos, cp.vector(xs), zi=z)
    target.compile(y, updates={z[s][c]: zf[s][c] for s in range(len(sos)) for c in range(2)})
    out: list[float] = []
    for k in range(BLOCKS):
        target.write_value(xs, [float(v) for v in noisy[k * BLOCK:(k + 1) * BLOCK]])
        target.run()
        out.extend(float(v) for v in target.read_value(y))
    return out


reference = scipy.signal.sosfilt(sos, noisy.astype(np.float64))
host = run_on(cp.Target())
m4 = run_on(cp.Target("cortex-m4"))
print(f"host: largest difference from scipy.signal.sosfilt: {np.max(np.abs(np.array(host) - reference)):.3g}")
print(f"cortex-m4 (emulated): largest difference from scipy.signal.sosfilt: "
      f"{np.max(np.abs(np.array(m4) - reference)):.3g}")
print(f"host and cortex-m4 bit-identical: {host == m4}")

if len(sys.argv) > 1:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.plot(t, noisy, color="0.75", lw=0.8, label="noisy input")
    ax.plot(t, reference, color="C0", lw=3, alpha=0.5, label="scipy.signal.sosfilt (float64)")
    ax.plot(t, m4, color="C3", lw=1, ls="--", label="copapy on Cortex-M4 (emulated, float32)")
    ax.set_xlabel("time [s]")
    ax.set_title("4th-order Butterworth low-pass, 20 Hz, blocks of 50 samples")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[1], metadata={"Software": None})
