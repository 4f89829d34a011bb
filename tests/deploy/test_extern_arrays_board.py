"""Array imports on the reference firmwares under qemu-system (firmware/common/io_arrays.c):
the DAC/ADC/counter loop of test_extern_arrays.py driven over the serial link, compared
with the same loop in NumPy float32 / int32 and on this machine with Python imports; the
firmware's import table refuses an array of the wrong element type, naming the import.

It names its targets itself, so it runs in the main pass only (as test_serial_link.py)."""

from __future__ import annotations

import copapy as cp
import pytest
from conftest import TARGET
from copapy._serial import FirmwareError, SerialDevice
from test_extern_arrays import STEPS, Converters, _bits, _read, loop_program, loop_reference
from test_firmware_boards import firmwares  # noqa: F401 - the fixture that builds them
from test_serial_link import Board, Qemu, qemu  # noqa: F401 - the fixture that boots them

if TARGET:
    pytest.skip("independent of COPAPY_TEST_TARGET: boots both firmwares in the main pass",
                allow_module_level=True)


def test_array_loop_on_the_board_matches_numpy_and_this_machine(qemu: tuple[Board, Qemu]) -> None:  # noqa: F811
    board, q = qemu
    device = SerialDevice.open(q.url()[len("serial:"):])
    try:
        on_board = cp.Target(board.arch, runner=device)
        state, counts = loop_program(on_board)
        on_host = cp.Target("native", imports=Converters().imports())
        host_state, host_counts = loop_program(on_host)
        for row in loop_reference(Converters(), STEPS):
            on_board.run()
            on_host.run()
            for tg, s, c in ((on_board, state, counts), (on_host, host_state, host_counts)):
                assert _bits(_read(tg, "u")) == _bits(row["u"])
                assert _bits(_read(tg, "measured")) == _bits(row["measured"])
                assert _read(tg, "read") == row["read"]
                assert _bits(_read(tg, s)) == _bits(row["state"])
                assert _read(tg, c) == row["counts"]
        # the table's signatures are checked at load: an int buffer where dac_write takes floats
        with pytest.raises(FirmwareError) as e:
            cp.Target(board.arch, runner=device).compile(
                cp.extern("dac_write", cp.array([1, 2], dtype="int"), returns=None))
        assert e.value.code == -21 and str(e.value).endswith(": dac_write"), e.value
        on_board.run()  # the refused load left the loop in place
    finally:
        device.close()
