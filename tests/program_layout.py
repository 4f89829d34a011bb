"""Program file layout read in Python from docs/program-format.md, for tests that edit files.

Independent of the Rust reader: the header fields, the compact patch section of versions 5
and 7 (`crates/copapy-program/src/compact.rs` documents the same stream) and the 16-byte
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
    if version(data) in (COMPACT_VERSION, IMPLIED_TARGETS_VERSION):
        return start, start + 4 + struct.unpack_from("<I", data, start)[0]
    return start, start + RECORD * count


def _uleb(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[at]
        value |= (b & 0x7F) << shift
        at += 1
        shift += 7
        if not b & 0x80:
            return value, at


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
    out: list[Patch] = []
    for _ in range(count):
        head, at = _uleb(data, at)
        flag, head = head & 1, head >> 1
        kind_bits = (len(kinds) - 1).bit_length()
        kind = head & ((1 << kind_bits) - 1)
        offset += _unzigzag(head >> kind_bits) << offset_scale
        base = kinds[kind] >> 7
        if implied_targets and flag:  # the previous target of the base, the kind's addend
            delta, new_addend = 0, 0
        elif implied_targets:
            number, at = _uleb(data, at)
            delta, new_addend = number >> 1, number & 1
        else:
            (delta, at), new_addend = _uleb(data, at), flag
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
