"""A closed loop on a microcontroller driven from Python over a serial line.

The compiled step reads the board's sensor import ``adc_read``, computes a PI controller
and drives its actuator import ``pwm_write``, both implemented in the reference firmware
(docs/firmware.md, "The reference firmware's imports"): the actuator's value goes out on
a second UART of the board, which QEMU writes into a file here. Python sends the program
over the link UART, runs it and reads the results with ``cp.Target(runner="serial:...")``,
then runs the same step on this machine with Python functions that compute what the
firmware's do, and checks that both give the same bits, and that the actuator UART
carried the values the host's actuator function received.

Usage:
  serial_board.py [cortex-m4|riscv32]          boots the reference firmware under QEMU
                                               (built by scripts/build_firmware.sh if missing)
  serial_board.py cortex-m4 /dev/ttyACM0       a board running the firmware (any pyserial
                                               URL: socket://HOST:PORT, ...)
"""

import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import copapy as cp

KP, KI, DT = 1.5, 4.0, 0.05
STEPS = 60
DUTY_LIMIT = 1_000_000
FIRMWARE = Path(__file__).resolve().parent.parent / "target" / "firmware-boards"
QEMU = {
    "cortex-m4": ["qemu-system-arm", "-M", "mps2-an386", "-semihosting-config", "enable=on,target=native",
                  "-kernel", str(FIRMWARE / "mps2-an386.elf")],
    "riscv32": ["qemu-system-riscv32", "-M", "virt", "-bios", "none",
                "-kernel", str(FIRMWARE / "virt-rv32.elf")],
}


def qemu_command(arch: str, port: int, actuator: Path) -> list[str]:
    """QEMU booting the reference firmware for ``arch``: the link's UART on the local TCP
    ``port``, the actuator's UART (UART1 of the MPS2; a PCI serial port on virt) into the
    file ``actuator``."""
    link = f"tcp:127.0.0.1:{port},server=on,wait=off,nodelay=on"
    second = (["-serial", f"file:{actuator}"] if arch == "cortex-m4" else
              ["-chardev", f"file,id=actuator,path={actuator}", "-device", "pci-serial,chardev=actuator"])
    return [*QEMU[arch], "-display", "none", "-monitor", "none", "-serial", link, *second]


def actuator_values(actuator: Path) -> list[int]:
    """The values the firmware's pwm_write sent, 4 bytes little-endian each."""
    data = actuator.read_bytes()
    return [v for (v,) in struct.iter_unpack("<I", data[:len(data) // 4 * 4])]


def f32(x: float) -> float:
    """``x`` rounded to float32 (one float32 operation on float32 inputs is the float64
    result rounded so: float64 holds their exact product, and divides correctly)."""
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


class Plant:
    """What firmware/common/io.c computes, in Python: the same register and plant."""

    def __init__(self) -> None:
        self.register = 0
        self.y_mv = 0
        self.written: list[int] = []  # what went out on the actuator's UART

    def pwm_write(self, duty: float) -> None:
        scaled = f32(duty * 1000.0)
        self.register = 0 if not scaled > 0 else DUTY_LIMIT if scaled >= DUTY_LIMIT else int(scaled)
        self.written.append(self.register)

    def adc_read(self, channel: int) -> float:
        if channel != 0:
            return 0.0
        self.y_mv += int((self.register - self.y_mv) / 8)  # C's division truncates toward zero
        return f32(self.y_mv / 1000.0)


def closed_loop(tg: cp.Target, steps: int = STEPS) -> list[tuple[float, float]]:
    """Compiles the PI loop for ``tg`` and runs it; (measured, duty) after each step."""
    setpoint = cp.value(1.0, name="setpoint")
    integral = cp.value(0.0, name="integral")
    measured = cp.extern("adc_read", 0, returns=float)
    error = setpoint - measured
    new_integral = integral + error * DT
    duty = cp.clamp(KP * error + KI * new_integral, 0.0, 5.0)
    written = cp.extern("pwm_write", duty, returns=None)
    tg.compile(measured, duty, written, names={"measured": measured, "duty": duty},
               updates={integral: new_integral})
    rows = []
    for _ in range(steps):
        tg.run()
        rows.append((float(tg.read_value("measured")), float(tg.read_value("duty"))))
    return rows


def boot_qemu(arch: str, actuator: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The reference firmware for ``arch`` under QEMU (:func:`qemu_command`)."""
    if not shutil.which(QEMU[arch][0]):
        sys.exit(f"needs {QEMU[arch][0]}: scripts/setup.sh installs QEMU")
    if not Path(QEMU[arch][-1]).exists():
        subprocess.run([str(FIRMWARE.parent.parent / "scripts" / "build_firmware.sh")], check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    qemu = subprocess.Popen(qemu_command(arch, port, actuator))
    for _ in range(600):  # until QEMU listens
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            break
        except OSError:
            time.sleep(0.05)
    return qemu, f"socket://127.0.0.1:{port}"


def main() -> None:
    arch = sys.argv[1] if len(sys.argv) > 1 else "cortex-m4"
    with tempfile.TemporaryDirectory() as tmp:
        actuator = Path(tmp) / "actuator.bin"
        qemu, url = (None, sys.argv[2]) if len(sys.argv) > 2 else boot_qemu(arch, actuator)
        try:
            board = closed_loop(cp.Target(arch, runner=f"serial:{url}"))
        finally:
            if qemu is not None:
                qemu.kill()
                qemu.wait()
        written = actuator_values(actuator) if qemu is not None else None
    plant = Plant()
    imports = {"adc_read": plant.adc_read, "pwm_write": plant.pwm_write}
    host = closed_loop(cp.Target("native", imports=imports))
    for step in range(9, STEPS, 10):
        print(f"step {step + 1}: measured {board[step][0]!r} duty {board[step][1]!r}")
    if board != host:
        sys.exit("board and host DIFFER")
    if written is not None:
        if written != plant.written:
            sys.exit(f"the actuator UART carried {written[:5]}..., the host's got {plant.written[:5]}...")
        print(f"the actuator UART carried the host's {len(written)} values, last {written[-1]}")
    print("board and host agree bit for bit")


if __name__ == "__main__":
    main()
