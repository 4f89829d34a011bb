"""The basic example: trace a few operations, compile them to machine code, run, read."""

import copapy as cp

# Inputs: float32 variables the compiled program reads (write_value can change them).
a = cp.value(0.25)
b = cp.value(0.87)

# Operations are traced into a graph, not computed here.
c = a + b * 2.0
d = c**2 + cp.sin(a)
e = cp.sqrt(b)

# Compile for this machine, run the native code, read the results.
tg = cp.Target()
tg.compile(c, d, e)
tg.run()

print("Result c:", tg.read_value(c))
print("Result d:", tg.read_value(d))
print("Result e:", tg.read_value(e))
