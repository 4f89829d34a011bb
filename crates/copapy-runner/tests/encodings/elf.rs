//! Just enough of an ELF reader to take the assembled golden instructions out of the
//! fixture objects: the `.text` bytes and the offsets of its labels. Kept apart from
//! the compiler's ELF reader on purpose, so a bug there cannot hide one here.

use std::collections::HashMap;

/// The `.text` section of one relocatable object and its labels.
pub struct Text {
    /// Raw section bytes.
    pub bytes: Vec<u8>,
    /// Label name to offset in `bytes`.
    pub labels: HashMap<String, usize>,
    /// Number of relocation sections that apply to `.text`.
    pub relocation_sections: usize,
}

const SHT_SYMTAB: u32 = 2;
const SHT_RELA: u32 = 4;
const SHT_REL: u32 = 9;

struct Section {
    name: u32,
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
    info: usize,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn c_str(b: &[u8], at: usize) -> String {
    let end = b[at..].iter().position(|&c| c == 0).unwrap() + at;
    String::from_utf8(b[at..end].to_vec()).unwrap()
}

/// Reads a little-endian ELF32 or ELF64 relocatable object.
pub fn read_text(file: &[u8]) -> Text {
    assert_eq!(&file[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(file[5], 1, "fixture objects are little-endian");
    let is64 = match file[4] {
        1 => false,
        2 => true,
        c => panic!("bad ELF class {c}"),
    };
    let word = |at: usize| {
        if is64 {
            u64_at(file, at) as usize
        } else {
            u32_at(file, at) as usize
        }
    };
    let (shoff, shentsize, shnum, shstrndx) = if is64 {
        (
            word(0x28),
            u16_at(file, 0x3A),
            u16_at(file, 0x3C),
            u16_at(file, 0x3E),
        )
    } else {
        (
            word(0x20),
            u16_at(file, 0x2E),
            u16_at(file, 0x30),
            u16_at(file, 0x32),
        )
    };
    let sections: Vec<Section> = (0..shnum as usize)
        .map(|i| {
            let h = shoff + i * shentsize as usize;
            if is64 {
                Section {
                    name: u32_at(file, h),
                    kind: u32_at(file, h + 4),
                    offset: word(h + 0x18),
                    size: word(h + 0x20),
                    link: u32_at(file, h + 0x28) as usize,
                    info: u32_at(file, h + 0x2C) as usize,
                }
            } else {
                Section {
                    name: u32_at(file, h),
                    kind: u32_at(file, h + 4),
                    offset: word(h + 0x10),
                    size: word(h + 0x14),
                    link: u32_at(file, h + 0x18) as usize,
                    info: u32_at(file, h + 0x1C) as usize,
                }
            }
        })
        .collect();
    let shstr = sections[shstrndx as usize].offset;
    let text_index = sections
        .iter()
        .position(|s| c_str(file, shstr + s.name as usize) == ".text")
        .expect("no .text section");
    let text = &sections[text_index];
    let bytes = file[text.offset..text.offset + text.size].to_vec();

    let symtab = sections
        .iter()
        .find(|s| s.kind == SHT_SYMTAB)
        .expect("no symbol table");
    let strtab = sections[symtab.link].offset;
    let entry = if is64 { 24 } else { 16 };
    let mut labels = HashMap::new();
    for sym in (symtab.offset..symtab.offset + symtab.size).step_by(entry) {
        let (value, shndx) = if is64 {
            (u64_at(file, sym + 8) as usize, u16_at(file, sym + 6))
        } else {
            (u32_at(file, sym + 4) as usize, u16_at(file, sym + 14))
        };
        let name = c_str(file, strtab + u32_at(file, sym) as usize);
        // ARM mapping symbols ($a, $t, $d, $x) mark ranges, not cases.
        if shndx as usize == text_index && !name.is_empty() && !name.starts_with('$') {
            labels.insert(name, value);
        }
    }
    let relocation_sections = sections
        .iter()
        .filter(|s| (s.kind == SHT_REL || s.kind == SHT_RELA) && s.info == text_index)
        .count();
    Text {
        bytes,
        labels,
        relocation_sections,
    }
}
