"""A closed loop whose sensor and actuator are imported functions (``cp.extern``).

The compiled step reads the sensor, computes a PI controller and writes the actuator,
all inside one ``run()``: on this machine the two Python functions below serve the
imports; ``cp.Target("riscv32", imports=...)`` runs the same step in the emulator; saved
with ``--save``, it runs under ``copapy-run --plugin libplant.so`` with the same plant in C
(``extern_plugin.c``), or on a microcontroller whose firmware registers ``adc_read`` and
``pwm_write`` (docs/firmware.md, "Adding your own I/O functions"; ``serial_board.py``).

Usage: extern_closed_loop.py [TARGET] [--save FILE]   (default: this machine; --save
writes the program, in its initial state, for copapy-run)
"""

import sys

import copapy as cp

KP, KI, DT = 1.5, 4.0, 0.05


class Plant:
    """A first-order lag the actuator drives and the sensor reads (Python floats)."""

    def __init__(self) -> None:
        self.y = 0.0
        self.calls = 0

    def adc_read(self, channel: int) -> float:
        self.calls += 1
        return self.y if channel == 0 else 0.0

    def pwm_write(self, duty: float) -> None:
        self.calls += 1
        self.y += DT * (duty - self.y) / 0.5


plant = Plant()
args = sys.argv[1:]
save = args.pop(args.index("--save") + 1) if "--save" in args[:-1] else None
target = args[0] if args and args[0] != "--save" else "native"
tg = cp.Target(target, imports={"adc_read": plant.adc_read, "pwm_write": plant.pwm_write})

setpoint = cp.value(1.0, name="setpoint")
integral = cp.value(0.0, name="integral")
measured = cp.extern("adc_read", 0, returns=float)
error = setpoint - measured
new_integral = integral + error * DT
duty = cp.clamp(KP * error + KI * new_integral, 0.0, 5.0)
written = cp.extern("pwm_write", duty, returns=None)
tg.compile(duty, written, names={"duty": duty}, updates={integral: new_integral})

for step in range(100):
    tg.run()
    if step % 20 == 19:
        print(f"step {step + 1}: y={plant.y!r} duty={tg.read_value('duty')!r}")
print(f"calls {plant.calls}")
if save:
    tg.save(save, initial=True)  # from the start, as the plant in C starts
