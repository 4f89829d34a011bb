"""Imported functions (``cp.extern``) in the emulator: Python callables behind hooks.

Each import the program declares gets a stub address in a page of its own
(``IMPORT_BASE + 16 * k``) holding one return instruction; its entry in the program's
import table (data memory) is set to that address, so the generated code calls it as a
runner's function. A code hook on the page reads the arguments from the registers of the
target's hard-float C ABI (floats in the first four FP registers, ints in the first four
integer registers, each class counted on its own), calls the Python callable and writes
its result to the return register; the return instruction then goes back to the caller.
An array argument (an address and a count in two integer registers) reaches the callable
as a NumPy array over a copy of the buffer, written back after the call; the checks and
conversions are ``_import_check``'s, the same as on this machine.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Mapping
from typing import Any

from . import _import_check as check
from ._targets import CallAbi

#: The page holding the import stubs (below the stop page, outside code and data).
IMPORT_BASE = 0x0000_E000
STUB_BYTES = 16

def missing_import(name: str, signature: str) -> RuntimeError:
    return RuntimeError(
        f"the program calls import {name} (signature {signature}), which this Target does not "
        f"provide: pass Target(..., imports={{{name!r}: a_function}})")


def _signed(bits: int) -> int:
    bits &= 0xFFFF_FFFF
    return bits - (1 << 32) if bits & 0x8000_0000 else bits


def _float_bits(result: float) -> int:
    # a C float cast rounds to nearest, as the host's conversion does
    f = ctypes.c_float(result).value
    return int(struct.unpack("<I", struct.pack("<f", f))[0])


def _int_bits(result: int, name: str) -> int:
    if not -(1 << 31) <= result < (1 << 31):
        raise OverflowError(f"import {name} returned {result}, outside the int32 range")
    return result & 0xFFFF_FFFF


class EmulatedImports:
    """The resolved imports of one installed program."""

    def __init__(self, declared: list[tuple[str, str, int]],
                 imports: Mapping[str, Callable[..., Any]] | None) -> None:
        self.calls: list[tuple[str, str, Callable[..., Any]]] = []
        for name, signature, _ in declared:
            f = (imports or {}).get(name)
            if f is None:
                raise missing_import(name, signature)
            check.check_callable(name, signature, f)
            self.calls.append((name, signature, f))
        self.slots = [slot for _, _, slot in declared]
        self.error: BaseException | None = None

    def install(self, uc: Any, uc_mod: Any, consts: Any, abi: CallAbi, thumb: bool,
                data_addr: int, page: int) -> None:
        """Maps the stub page, points the import table at it, hooks it; ``abi`` is the
        instruction set's calling convention (the ISA table, ``_targets``)."""
        if not self.calls:
            return
        ret = abi.return_insn
        uc.mem_map(IMPORT_BASE, page, uc_mod.UC_PROT_READ | uc_mod.UC_PROT_EXEC)
        for k, slot in enumerate(self.slots):
            stub = IMPORT_BASE + STUB_BYTES * k
            uc.mem_write(stub, ret)
            uc.mem_write(data_addr + slot, (stub | int(thumb)).to_bytes(8, "little"))
        self._fregs = [getattr(consts, r) for r in abi.float_args]
        self._iregs = [getattr(consts, r) for r in abi.int_args]
        self._fres, self._ires = getattr(consts, abi.float_result), getattr(consts, abi.int_result)
        self._boxed = abi.nan_boxed  # singles NaN-boxed in 64-bit f registers
        uc.hook_add(uc_mod.UC_HOOK_CODE, self._hook, begin=IMPORT_BASE,
                    end=IMPORT_BASE + STUB_BYTES * len(self.calls) - 1)

    def _hook(self, uc: Any, address: int, size: int, _user: Any) -> None:
        if self.error is not None or (address - IMPORT_BASE) % STUB_BYTES:
            return
        name, signature, f = self.calls[(address - IMPORT_BASE) // STUB_BYTES]
        try:
            args: list[Any] = []
            buffers: list[tuple[int, bytearray]] = []
            fi = ii = 0
            for code in check.argument_codes(signature):
                if code == "f":
                    bits = int(uc.reg_read(self._fregs[fi])) & 0xFFFF_FFFF
                    args.append(struct.unpack("<f", bits.to_bytes(4, "little"))[0])
                    fi += 1
                elif code in "FI":
                    addr = int(uc.reg_read(self._iregs[ii]))
                    count = _signed(int(uc.reg_read(self._iregs[ii + 1])))
                    data = bytearray(uc.mem_read(addr, 4 * count))
                    buffers.append((addr, data))
                    args.append(check.buffer_array(data, code))
                    ii += 2
                else:
                    n = _signed(int(uc.reg_read(self._iregs[ii])))
                    args.append(bool(n) if code == "b" else n)
                    ii += 1
            result = check.result_number(name, signature, f(*args))
            if isinstance(result, float):
                bits = _float_bits(result)
                uc.reg_write(self._fres, bits | (0xFFFF_FFFF_0000_0000 if self._boxed else 0))
            elif result is not None:
                uc.reg_write(self._ires, _signed(_int_bits(result, name)) & ((1 << 64) - 1))
            for addr, data in buffers:
                uc.mem_write(addr, bytes(data))
        except BaseException as e:  # noqa: BLE001 - re-raised after the run
            self.error = e
            uc.emu_stop()
