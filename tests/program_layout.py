"""Program file layout read in Python from docs/program-format.md, for tests that edit files.

Independent of the Rust reader: the header fields of the 44-byte header (versions 2 to 8)
and of version 9's and 10's headers of LEB128 numbers, the compact patch section of versions
5, 7, 8, 9 and 10 (`crates/copapy-program/src/compact.rs`, `predict.rs` and `pairs.rs`
document the same stream), the 16-byte patch records of versions 2 to 4, both symbol record
layouts and version 9's map of non-zero data words (with version 10's half words), so a test
can find any field of a file, edit it, and turn a file into the one an older writer made.
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
COMPACT_FILE_VERSION = 9  # LEB128 header, compact symbols, data as a map of non-zero words
FIXED = 13  # version 9: magic, version, CRC-32, architecture, flags, alignments
PAIRED_FILE_VERSION = 10  # version 9 with pair records, arch | flags << 3, half words
PAIRED_FIXED = 12  # version 10: magic, version, CRC-32, architecture and flags, alignments
HALF_WORDS = 16  # version 10 flag: the data image's half-word map
PAIR = 0x40  # version 10 kind byte: a pair kind, its second encoding follows
GAP = 4  # bytes from a pair record's first half to its second
# (first, second) encodings that form a pair record, and the second's addend step
PAIRS = {(5, e): 0 for e in range(6, 11)} | {(12, 13): 0, (15, 16): 0, (17, 18): 4, (17, 19): 4}

Patch = tuple[int, int, int, int, int]  # offset, encoding, base, target, addend


def compact_file(data: bytes) -> bool:
    """Whether the file has version 9's layout (versions 9 and 10)."""
    return version(data) in (COMPACT_FILE_VERSION, PAIRED_FILE_VERSION)


def reseal(b: bytearray) -> bytes:
    """Rewrites the CRC-32 (zlib's): over the header's first 40 bytes and all after it, or
    in versions 9 and 10 over bytes 0..6 and all after the field at 6..10."""
    if compact_file(bytes(b)):
        b[6:10] = struct.pack("<I", zlib.crc32(bytes(b[:6]) + bytes(b[10:])))
    else:
        b[40:44] = struct.pack("<I", zlib.crc32(bytes(b[:40]) + bytes(b[44:])))
    return bytes(b)


def version(data: bytes) -> int:
    return int(struct.unpack_from("<H", data, 4)[0])


def patch_section(data: bytes) -> tuple[int, int]:
    """(start, end) of the patch section in the file (version 9: its length number included;
    start == end when there is none)."""
    if compact_file(data):
        return header9(data)["patches at"]  # type: ignore[return-value]
    code, dlen, count = struct.unpack_from("<III", data, 16)
    start = HEADER + code + dlen
    if version(data) == PRELINKED_VERSION:  # a pre-linked image: its placement, no patches
        return start, start + PLACEMENT
    if version(data) in COMPACT_VERSIONS:
        return start, start + 4 + struct.unpack_from("<I", data, start)[0]
    return start, start + RECORD * count


NUMBERS = ("features", "code", "data", "entry", "symbols", "symbol bytes")


def fixed9(data: bytes) -> tuple[int, int, int, int]:
    """(architecture, flags, alignments byte, where the numbers start) of a version 9 or 10
    file: version 10 keeps architecture and flags in one byte (``arch | flags << 3``)."""
    if version(data) == PAIRED_FILE_VERSION:
        return data[10] & 7, data[10] >> 3, data[11], PAIRED_FIXED
    return data[10], data[11], data[12], FIXED


def header9(data: bytes) -> dict[str, object]:
    """Version 9's (or 10's) header fields, each number's (start, end) in the file ("<name>
    at"), and where code, data and patches lie (docs/program-format.md)."""
    arch, flags, aligns, at = fixed9(data)
    names = list(NUMBERS) + (["code base", "data base"] if flags & 1 else ["patches"])
    names += [] if flags & 10 else ["fewest", "most - fewest"]
    out: dict[str, object] = {"arch": arch, "flags": flags,
                              "code align": 1 << (aligns & 15), "data align": 1 << (aligns >> 4)}
    for name in names:
        start = at
        out[name], at = _uleb(data, at)
        out[name + " at"] = (start, at)
    out.setdefault("patches", 0)
    out["code at"] = (at, at + int(out["code"]))  # type: ignore[call-overload]
    at += int(out["code"])  # type: ignore[call-overload]
    data_len = int(out["data"])  # type: ignore[call-overload]
    words = (data_len + 3) // 4
    data_at, image = at, bytearray(data_len)
    at += (words + 7) // 8
    stored = [i for i in range(words) if data[data_at + i // 8] >> (i % 8) & 1]
    half_at = at  # version 10: one bit per stored word, set where its high half is stored
    if flags & HALF_WORDS:
        at += (len(stored) + 7) // 8
    for nth, i in enumerate(stored):
        n = min(4, data_len - 4 * i)
        if flags & HALF_WORDS and data[half_at + nth // 8] >> (nth % 8) & 1:
            image[4 * i + 2:4 * i + 4] = data[at:at + 2]
            at += 2
        else:
            image[4 * i:4 * i + n] = data[at:at + n]
            at += n
    out["data at"], out["image"] = (data_at, at), bytes(image)
    start = at
    if out["patches"]:
        length, at = _uleb(data, at)
        at += length
    out["patches at"] = (start, at)
    return out


def symbols(data: bytes) -> list[dict[str, object]]:
    """Every symbol record: role, dtype, shape, name, offsets, and where the record, its
    type byte and its name are in the file ("at", "dtype at", "name at")."""
    v9 = compact_file(data)
    count = int(header9(data)["symbols"]) if v9 else struct.unpack_from("<I", data, 28)[0]  # type: ignore[call-overload]
    at = patch_section(data)[1]
    out = []
    for _ in range(count):
        start = at
        if v9:
            head = data[at]
            role, dtype, rank = head & 3, (head >> 2) & 3, (head >> 4) & 7
            at += 1
            shape = []
            for _ in range(rank):
                d, at = _uleb(data, at)
                shape.append(d)
            name_len, at = _uleb(data, at)
        else:
            role, dtype, rank = data[at], data[at + 1], data[at + 2]
            name_len = struct.unpack_from("<H", data, at + 4)[0]
            shape = list(struct.unpack_from(f"<{rank}I", data, at + 8))
            at += 8 + 4 * rank
        name_at, at = at, at + name_len
        elements = 1
        for d in shape:
            elements *= d
        offsets = []
        unit = -1
        for _ in range(elements):
            if v9:
                step, at = _uleb(data, at)
                unit += _unzigzag(step) + 1
                offsets.append(unit * (1 if dtype == 3 else 4))
            else:
                offsets.append(struct.unpack_from("<I", data, at)[0])
                at += 4
        out.append({"role": role, "dtype": dtype, "shape": shape, "offsets": offsets,
                    "name": data[name_at:name_at + name_len], "at": (start, at),
                    "dtype at": start if v9 else start + 1, "name at": (name_at, name_at + name_len)})
    return out


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
    start, end = patch_section(data)
    if compact_file(data):
        count = int(header9(data)["patches"])  # type: ignore[call-overload]
        if count == 0:
            return []
        start = _uleb(data, start)[1] - 4  # the body, where older versions have a u32 length
    else:
        count = struct.unpack_from("<I", data, 24)[0]
    if version(data) == PRELINKED_VERSION:
        return []
    if version(data) < COMPACT_VERSION:
        return [struct.unpack_from("<IBBxxIi", data, start + RECORD * i) for i in range(count)]
    paired = version(data) == PAIRED_FILE_VERSION
    kinds: list[int] = []  # per kind: the kind byte, and (version 10) the second encoding
    seconds: list[int | None] = []
    at = start + 5
    for _ in range(data[start + 4]):
        byte = data[at]
        at += 1
        second = None
        if paired and byte & PAIR:
            byte, second = byte & ~PAIR, data[at]
            at += 1
        kinds.append(byte)
        seconds.append(second)
    if paired:  # one byte: offset scale | code target scale << 2 | data target scale << 5
        offset_scale, target_scales = data[at] & 3, [(data[at] >> 2) & 7, data[at] >> 5]
        at += 1
    else:
        offset_scale, target_scales = data[at], [data[at + 1] & 0xF, data[at + 1] >> 4]
        at += 2
    offset, targets, addends = 0, [0, 0], [0] * len(kinds)
    implied_targets = version(data) == IMPLIED_TARGETS_VERSION
    predicted = version(data) in (PREDICTED_TARGETS_VERSION, COMPACT_FILE_VERSION, PAIRED_FILE_VERSION)
    written: list[list[int]] = [[0, 0], [0, 0]]  # per base, the last two written, newest first
    pending: list[list[int]] = [[], []]  # per base, first halves of pairs waiting
    out: list[Patch] = []
    while len(out) < count:
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
            if encoding in PAIR_FIRST and seconds[kind] is None:  # a pair record waits for nothing
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
        second = seconds[kind]
        if second is not None:  # version 10: the pair record's second half
            offset += GAP
            step = PAIRS[(kinds[kind] & 0x3F, second)]
            out.append((offset, second, base, targets[base], addends[kind] + step))
    assert len(out) == count, "the patch count covers both halves of every pair"
    assert at == end, "the compact patch section has bytes left over"
    return out


def pair_records(patch_list: list[Patch]) -> int:
    """How many records of version 10 hold a pair: a first half followed directly (at +4,
    same encoding family, base and target, the first's addend plus the family's step) by
    its second half (docs/program-format.md, "Version 10")."""
    count = i = 0
    while i + 1 < len(patch_list):
        p, q = patch_list[i], patch_list[i + 1]
        step = PAIRS.get((p[1], q[1]))
        if step is not None and (q[0], q[2], q[3], q[4]) == (p[0] + GAP, p[2], p[3], p[4] + step):
            count, i = count + 1, i + 2
        else:
            i += 1
    return count


def as_version(data: bytes, wanted: int) -> bytes:
    """The same program as a writer of format `wanted` (2, 3 or 4) made it: the 44-byte
    header, 16-byte patch records, fixed-width symbol records, and no instruction bounds
    before version 4."""
    if not compact_file(data):
        start, end = patch_section(data)
        records = b"".join(struct.pack("<IBBxxIi", *p) for p in patches(data))
        rest = data[end:]
        if wanted < 4 and version(data) >= 4:
            rest = rest[:-BOUNDS]
        b = bytearray(data[:start] + records + rest)
        b[4:6] = struct.pack("<H", wanted)
        return reseal(b)
    h = header9(data)
    assert not h["flags"] & 5, "a relocatable file without imports"  # type: ignore[operator]
    syms = b""
    for sym in symbols(data):
        shape, name = list(sym["shape"]), bytes(sym["name"])  # type: ignore[call-overload]
        syms += struct.pack("<BBBxHxx", sym["role"], sym["dtype"], len(shape), len(name))
        syms += struct.pack(f"<{len(shape)}I", *shape) + name
        syms += struct.pack(f"<{len(sym['offsets'])}I", *sym["offsets"])  # type: ignore[arg-type]
    records = b"".join(struct.pack("<IBBxxIi", *p) for p in patches(data))
    count = len(symbols(data))
    header = b"CPPY" + struct.pack("<HBxIHHIIIIII", wanted, h["arch"], h["features"], h["code align"],
                                   h["data align"], h["code"], h["data"], int(h["patches"]),  # type: ignore[call-overload]
                                   count, len(syms), h["entry"]) + bytes(4)
    code_at = h["code at"]
    body = data[code_at[0]:code_at[1]] + bytes(h["image"]) + records + syms  # type: ignore[index, call-overload]
    if wanted >= 4:
        fewest = h.get("fewest")
        bounds = (1, 0, 0) if fewest is None else (0, fewest, fewest + h["most - fewest"])  # type: ignore[operator]
        body += struct.pack("<IQQ", *bounds)
    return reseal(bytearray(header + body))


def _leb(v: int) -> bytes:
    out = bytearray()
    while True:
        byte, v = v & 0x7F, v >> 7
        if not v:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def edit9(data: bytes, **fields: int) -> bytes:
    """A version 9 file with header numbers replaced (``features=``, ``entry=``,
    ``fewest=``, ``most_fewest=`` for "most - fewest", ...) and resealed; each number is
    written in its shortest form."""
    h = header9(data)
    names = [n for n in (*NUMBERS, "code base", "data base", "patches", "fewest", "most - fewest")
             if n in h]
    numbers = b""
    for name in names:
        numbers += _leb(fields.get(name.replace(" - ", "_").replace(" ", "_"), int(h[name])))  # type: ignore[call-overload]
    end = h[names[-1] + " at"][1]  # type: ignore[index]
    fixed = fixed9(data)[3]
    return reseal(bytearray(data[:fixed] + numbers + data[end:]))


def with_arch(data: bytes, arch: int) -> bytes:
    """The file with its architecture replaced (byte 6, or 10 in version 9, or the low 3
    bits of byte 10 in version 10), resealed."""
    b = bytearray(data)
    if version(data) == PAIRED_FILE_VERSION:
        b[10] = b[10] & ~7 | arch
    else:
        b[10 if version(data) == COMPACT_FILE_VERSION else 6] = arch
    return reseal(b)
