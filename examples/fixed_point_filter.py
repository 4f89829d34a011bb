"""A fixed-point (integer-only) low-pass filter, compiled for blocks of 8 samples.

Each run filters one block: y[n] = y[n-1] + ((x[n] - y[n-1]) >> SHIFT), with the result
saturated to the int16 range. Integer arithmetic wraps at 32 bits and >> is an arithmetic
shift, as on the microcontrollers this kind of filter runs on. The filter state (the last
output) is carried from block to block with write_value.
"""

import copapy as cp

BLOCK = 8
SHIFT = 3  # smoothing factor 1/8
I16_MIN, I16_MAX = -32768, 32767


def saturate(x: "cp.value[int]") -> "cp.value[int]":
    above = x > I16_MAX
    below = x < I16_MIN
    inside = 1 - above - below
    return above * I16_MAX + below * I16_MIN + inside * x


state = cp.value(0)
inputs = [cp.value(0) for _ in range(BLOCK)]
outputs: "list[cp.value[int]]" = []
y = state
for x in inputs:
    y = saturate(y + ((x - y) >> SHIFT))
    outputs.append(y)

tg = cp.Target()
tg.compile(outputs)

# A test signal: a square wave in int16 sample units, with a glitch far outside that range
# at sample 37 (a faulty sensor reading) that the saturation catches.
signal = [(20000 if (n // 16) % 2 == 0 else -12000) + (400000 if n == 37 else 0) for n in range(64)]

last = 0
filtered: list[int] = []
for start in range(0, len(signal), BLOCK):
    tg.write_value(inputs, signal[start : start + BLOCK])
    tg.write_value(state, last)
    tg.run()
    block = tg.read_value(outputs)
    filtered += block
    last = block[-1]

for start in range(0, len(filtered), 16):
    print(" ".join(str(v) for v in filtered[start : start + 16]))
