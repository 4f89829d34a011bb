"""Program file layout read in Python from docs/program-format.md, for tests that edit files.

Independent of the Rust reader: the header fields, the compact patch section of versions 5,
7 and 8 (`crates/copapy-program/src/compact.rs` and `predict.rs` document the same stream) and the 16-byte
patch records of versions 2 to 4, so a test can turn a file into the one an older writer
made.
"""

from __future__ import annotations

import struct
import zlib

HEADER = 44
RECORD = 16
BOUNDS = 20
COMPACT_VERSION = 5
PRELINKED_VERSION = 6
IMPLIED_TARGETS_VERSION = 7  # compact patches whose pair partners take the previous target
PREDICTED_TARGETS_VERSION = 8  # targets predicted from pairs and the last two written
COMPACT_VERSIONS = (COMPACT_VERSION, IMPLIED_TARGETS_VERSION, PREDICTED_TARGETS_VERSION)
# patch encodings (docs/program-format.md) that fill the first and second half of a pair
PAIR_FIRST = {5, 12, 15, 17}  # ADRP, ARM MOVW, Thumb MOVW, RISC-V HI20
PAIR_SECOND = {6, 7, 8, 9, 10, 13, 16, 18, 19}  # AArch64 LO12, MOVT, RISC-V LO12 (I, S)
PENDING = 4  # first halves a base keeps waiting
PLACEMENT = 16

Patch = tuple[int, int, int, int, int]  # offset, encoding, base, target, addend


def reseal(b: bytearray) -> bytes:
    """Rewrites the CRC-32 (zlib's, over the header's first 40 bytes and all after it)."""
    b[40:44] = struct.pack("<I", zlib.crc32(bytes(b[:40]) + bytes(b[44:])))
    return bytes(b)


def version(data: bytes) -> int:
    return int(struct.unpack_from("<H", data, 4)[0])


def patch_section(data: bytes) -> tuple[int, int]:
    """(start, end) of the patch section in the file."""
    code, dlen, count = struct.unpack_from("<III", data, 16)
    start = HEADER + code + dlen
    if version(data) == PRELINKED_VERSION:  # a pre-linked image: its placement, no patches
        return start, start + PLACEMENT
    if version(data) in COMPACT_VERSIONS:
        return start, start + 4 + struct.unpack_from("<I", data, start)[0]
    return start, start + RECORD * count


def _uleb(data: bytes, at: int) -> tuple[int, int]:
    """A LEB128 number in its shortest form (docs/program-format.md); ValueError otherwise."""
    value = shift = 0
    for i in range(10):
        b = data[at]
        value |= (b & 0x7F) << shift
        at += 1
        shift += 7
        if not b & 0x80:
            if (b == 0 and i > 0) or value >= 1 << 64:
                raise ValueError(f"overlong LEB128 number ending at byte {at}")
            return value, at
    raise ValueError(f"LEB128 number longer than 10 bytes at byte {at}")


def _unzigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


def patches(data: bytes) -> list[Patch]:
    """Every patch in file order, from either encoding."""
    count = struct.unpack_from("<I", data, 24)[0]
    start, end = patch_section(data)
    if version(data) == PRELINKED_VERSION:
        return []
    if version(data) < COMPACT_VERSION:
        return [struct.unpack_from("<IBBxxIi", data, start + RECORD * i) for i in range(count)]
    kinds = list(data[start + 5 : start + 5 + data[start + 4]])
    at = start + 5 + len(kinds)
    offset_scale, target_scales = data[at], [data[at + 1] & 0xF, data[at + 1] >> 4]
    at += 2
    offset, targets, addends = 0, [0, 0], [0] * len(kinds)
    implied_targets = version(data) == IMPLIED_TARGETS_VERSION
    predicted = version(data) == PREDICTED_TARGETS_VERSION
    written: list[list[int]] = [[0, 0], [0, 0]]  # per base, the last two written, newest first
    pending: list[list[int]] = [[], []]  # per base, first halves of pairs waiting
    out: list[Patch] = []
    for _ in range(count):
        head, at = _uleb(data, at)
        flag, head = head & 1, head >> 1
        kind_bits = (len(kinds) - 1).bit_length()
        kind = head & ((1 << kind_bits) - 1)
        offset += _unzigzag(head >> kind_bits) << offset_scale
        base, encoding = kinds[kind] >> 7, kinds[kind] & 0x7F
        if predicted:
            waiting = pending[base].pop(0) if encoding in PAIR_SECOND and pending[base] else None
            guess = targets[base] if waiting is None else waiting
            if flag:
                targets[base], new_addend = guess, 0
            else:
                number, at = _uleb(data, at)
                new_addend, select = number & 1, (number >> 1) & 1
                targets[base] = written[base][select] + (_unzigzag(number >> 2) << target_scales[base])
                written[base] = [targets[base], written[base][0]]
            if encoding in PAIR_FIRST:
                pending[base] = (pending[base] + [targets[base]])[-PENDING:]
        elif implied_targets and flag:  # the previous target of the base, the kind's addend
            delta, new_addend = 0, 0
        elif implied_targets:
            number, at = _uleb(data, at)
            delta, new_addend = number >> 1, number & 1
        else:
            (delta, at), new_addend = _uleb(data, at), flag
        if not predicted:
            targets[base] += _unzigzag(delta) << target_scales[base]
        if new_addend:
            delta, at = _uleb(data, at)
            addends[kind] += _unzigzag(delta)
        out.append((offset, kinds[kind] & 0x7F, base, targets[base], addends[kind]))
    assert at == end, "the compact patch section has bytes left over"
    return out


def as_version(data: bytes, wanted: int) -> bytes:
    """The same program as a writer of format `wanted` (2, 3 or 4) made it: 16-byte patch
    records, and no instruction bounds before version 4."""
    start, end = patch_section(data)
    records = b"".join(struct.pack("<IBBxxIi", *p) for p in patches(data))
    rest = data[end:]
    if wanted < 4 and version(data) >= 4:
        rest = rest[:-BOUNDS]
    b = bytearray(data[:start] + records + rest)
    b[4:6] = struct.pack("<H", wanted)
    return reseal(b)
