/* copapy_runner.h: load and run copapy program files from static buffers.
 *
 * The C ABI of the no_std runner core (crate copapy-firmware, a static library:
 * libcopapy_firmware.a). No allocator and no OS are needed: the firmware provides the
 * code and data memory. Program files are written by copapy's Target.save(); their
 * format is docs/program-format.md. docs/firmware.md walks through porting to a board;
 * firmware/ in the repository holds two reference firmwares (Cortex-M4F, RV32IMAFC).
 *
 *   static uint8_t code[4096] __attribute__((aligned(16)));   // executable RAM
 *   static uint8_t data[1024] __attribute__((aligned(16)));
 *   struct copapy_program p;
 *   int32_t r = copapy_load(file, file_len, code, sizeof code, data, sizeof data, &p);
 *   if (r < 0) puts(copapy_error_message(r));
 *   // RISC-V: __asm__ volatile("fence.i"); caches: clean D-cache, invalidate I-cache
 *   copapy_run(&p);                                 // one step
 *
 * Requirements on the firmware that links this library:
 *  - Hard-float C ABI: the library is built for thumbv7em-none-eabihf (-mfloat-abi=hard,
 *    FPv4-SP) or riscv32imafc-unknown-none-elf (-mabi=ilp32f); link it with objects of the
 *    same ABI (a mix that links anyway passes floats in the wrong registers).
 *  - The FPU switched on before copapy_run: the generated code uses FPU instructions
 *    (Cortex-M: CPACR CP10/CP11 full access, then DSB and ISB; RISC-V: mstatus.FS != 0).
 *  - `code` in RAM the CPU may execute (not an MPU/PMP no-execute region), written by
 *    copapy_load and then made visible to instruction fetch: fence.i on RISC-V, cache
 *    maintenance on cores with caches (Cortex-M7: SCB_CleanDCache + SCB_InvalidateICache);
 *    on hosts with memory protection, executable (and not writable) after copapy_load.
 *  - `file`, `code` and `data` three separate buffers (overlap is refused), aligned as
 *    the program's header says (16 bytes covers every program copapy writes today).
 *  - The program file stays in memory, unchanged, while copapy_symbol is used: the
 *    symbol table recorded at load is read there (flash is fine).
 *
 * copapy_load validates the whole file once (magic, version, architecture, CPU
 * features, checksum, every record, every patch and variable inside its buffer,
 * alignment) before writing anything it does not own; copapy_symbol then only walks
 * the symbol table. Of the instruction bounds a file carries it keeps nothing; in a
 * version 4 to 8 file it checks only their length and checksum (docs/program-format.md).
 */
#ifndef COPAPY_RUNNER_H
#define COPAPY_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Filled in by copapy_load; treat as read-only (copapy_run refuses a struct whose check
 * word does not match, e.g. a zeroed one). */
struct copapy_program {
    const uint8_t *code;     /* start of the code buffer */
    uint32_t entry;          /* entry offset into code */
    uint8_t arch;            /* architecture number (1 x86_64, 2 aarch64, 3 arm, 4 thumb,
                                5 riscv64, 6 riscv32) */
    uint8_t symbol_format;   /* 1: format version 9/10 compact symbol records, 0: older */
    uint8_t *data;           /* start of the data buffer (the program's variables) */
    uint32_t data_len;       /* data bytes in use */
    const uint8_t *symbols;  /* the symbol table, inside the program file */
    uint32_t symbols_len;    /* its bytes */
    uint32_t symbol_count;   /* number of variables (copapy_symbol_at 0 .. count-1) */
    uint32_t loaded;         /* check word written by copapy_load */
};

/* Error codes (copapy_error_message gives a sentence for each). */
enum copapy_error {
    COPAPY_OK = 0,
    COPAPY_E_BAD_ARGUMENT = -1,
    COPAPY_E_BAD_MAGIC = -2,
    COPAPY_E_VERSION = -3,
    COPAPY_E_UNKNOWN_ARCH = -4,
    COPAPY_E_WRONG_ARCH = -5,
    COPAPY_E_FEATURES = -6,
    COPAPY_E_TRUNCATED = -7,
    COPAPY_E_TRAILING = -8,
    COPAPY_E_CHECKSUM = -9,
    COPAPY_E_BAD_RECORD = -10,
    COPAPY_E_ENTRY = -11,
    COPAPY_E_PATCH_RANGE = -12,
    COPAPY_E_SYMBOL_RANGE = -13,
    COPAPY_E_ALIGNMENT = -14,
    COPAPY_E_BUFFER_TOO_SMALL = -15,
    COPAPY_E_PATCH_REACH = -16,
    COPAPY_E_NO_SYMBOL = -17,
    COPAPY_E_OVERLAP = -18,
    COPAPY_E_NOT_LOADED = -19,
    COPAPY_E_IMPORT_MISSING = -20,   /* the program calls an import the table lacks */
    COPAPY_E_IMPORT_SIGNATURE = -21, /* the table's entry has another signature */
    COPAPY_E_WRONG_BASE = -22,       /* a pre-linked image for other buffer addresses */
    COPAPY_E_NOT_PRELINKED = -23     /* copapy_load_prelinked given a relocatable file */
};

/* A function the firmware offers to programs (cp.extern in Python), by name.
 *
 *   name       a C identifier, NUL-terminated; programs find the function by it
 *   fn         the function, called with the hard-float C ABI from inside copapy_run
 *   signature  NUL-terminated: the result code, then the argument codes in brackets:
 *              "f(i)" is float fn(int32_t), "v(ff)" void fn(float, float), "i()"
 *              int32_t fn(void). Codes: f float, i int32_t, b bool passed and returned as
 *              int32_t 0 or 1, v (result only) void, F and I an array passed as two
 *              parameters, a pointer to its elements and their int32_t count: "i(F)" is
 *              int32_t fn(float *, int32_t), "v(I)" void fn(int32_t *, int32_t). The
 *              buffer is the call's own; fn may write it while it runs (cp.extern's
 *              fills= reads it after the call), not keep the pointer. At most 4 float
 *              arguments and 4 integer registers (an int or bool one, an array two).
 *              It must equal, byte for byte, the signature the program
 *              declares for that name (Target(...).imports() in Python lists them).
 *
 * The function runs inside a step: it may read peripherals, but it must return (a
 * step is straight-line code otherwise) and must not call copapy_run or copapy_load.
 * Its own instructions are not part of the program's instruction bounds. */
struct copapy_import {
    const char *name;
    void *fn;
    const char *signature;
};

/* CPU feature bits (the program header's `features` field, docs/program-format.md). */
enum copapy_feature {
    COPAPY_FEATURE_SSE2 = 1u << 0,
    COPAPY_FEATURE_NEON = 1u << 1,
    COPAPY_FEATURE_ARMV6 = 1u << 2,
    COPAPY_FEATURE_ARMV7 = 1u << 3,
    COPAPY_FEATURE_VFP2 = 1u << 4,
    COPAPY_FEATURE_VFP3 = 1u << 5,
    COPAPY_FEATURE_ARMV7EM = 1u << 6,
    COPAPY_FEATURE_FPV4_SP = 1u << 7,
    COPAPY_FEATURE_RV_M = 1u << 8,
    COPAPY_FEATURE_RV_F = 1u << 9,
    COPAPY_FEATURE_RV_C = 1u << 10
};

/* The feature bits copapy_load checks programs against. Initially those of the
 * library's build target: ARMV7EM|FPV4_SP for thumbv7em-none-eabihf, RV_M|RV_F|RV_C for
 * riscv32imafc. */
uint32_t copapy_cpu_features(void);

/* Replaces them (e.g. with what the firmware probed at boot: MVFR0 on Cortex-M, misa on
 * RISC-V) and returns the previous set. A program needing a bit not set is refused with
 * COPAPY_E_FEATURES. */
uint32_t copapy_set_cpu_features(uint32_t features);

/* Validates `file` and installs it into `code` and `data`. Returns 0 or a negative
 * copapy_error; on error `out` is untouched. NULL pointers (COPAPY_E_BAD_ARGUMENT) and
 * overlapping buffers (COPAPY_E_OVERLAP) are refused. A relocatable file is patched for
 * wherever `code` and `data` are; a pre-linked image (format version 10 with its pre-linked
 * flag, or version 6; saved with code_base=/data_base=) is only copied, and refused with
 * COPAPY_E_WRONG_BASE, before anything is written, unless `code` and `data` are exactly at
 * its addresses. */
int32_t copapy_load(const uint8_t *file, size_t file_len, uint8_t *code, size_t code_cap,
                    uint8_t *data, size_t data_cap, struct copapy_program *out);

/* copapy_load for programs that call imported functions: `imports[0..import_count]` is
 * the firmware's table (any order; NULL with count 0 is an empty table). Each import the
 * program declares is looked up by name; one that is missing gives
 * COPAPY_E_IMPORT_MISSING, one whose signature differs COPAPY_E_IMPORT_SIGNATURE, both
 * before anything is written (`out` untouched). Then (and only then) *failed_name and
 * *failed_name_len, when not NULL, point at that import's name inside the program file
 * (not NUL-terminated). The function pointers are written into the program's import
 * table in `data` (code is never written for them). copapy_load(...) is this call with
 * an empty table: a program with imports is refused by it. */
int32_t copapy_load_with_imports(const uint8_t *file, size_t file_len, uint8_t *code,
                                 size_t code_cap, uint8_t *data, size_t data_cap,
                                 const struct copapy_import *imports, size_t import_count,
                                 struct copapy_program *out, const char **failed_name,
                                 uint32_t *failed_name_len);

/* copapy_load_with_imports for pre-linked images only (saved with code_base=/data_base=,
 * format version 10 with its pre-linked flag, or 6): a relocatable file is refused with COPAPY_E_NOT_PRELINKED. A firmware
 * that loads programs only through this call links none of the patching code, so its
 * loader is smaller (README, "runner-size"). */
int32_t copapy_load_prelinked(const uint8_t *file, size_t file_len, uint8_t *code, size_t code_cap,
                              uint8_t *data, size_t data_cap, const struct copapy_import *imports,
                              size_t import_count, struct copapy_program *out,
                              const char **failed_name, uint32_t *failed_name_len);

/* Runs a loaded program once (one step; state variables update themselves). Returns 0,
 * or, running nothing, COPAPY_E_BAD_ARGUMENT for NULL and COPAPY_E_NOT_LOADED for a
 * struct copapy_load did not fill. The FPU must be on (see above). */
int32_t copapy_run(const struct copapy_program *program);

/* Element `index` of variable `name` (NUL-terminated): writes its data offset and dtype
 * (0 float32, 1 int32, 2 bool as int32, 3 byte as uint8) and returns the variable's
 * element count, or a negative copapy_error. Read or write the element at
 * program->data + offset (4 bytes; 1 byte, 0..255, for dtype 3). Walks the symbol table
 * recorded by copapy_load; nothing is parsed or checksummed again. */
int32_t copapy_symbol(const struct copapy_program *program, const char *name, uint32_t index,
                      uint32_t *offset, uint8_t *dtype);

/* The same for variable number `var` (0 .. program->symbol_count - 1, in file order);
 * also points *name at its name (*name_len UTF-8 bytes in the file, not NUL-terminated)
 * when name and name_len are not NULL. For listing every variable. */
int32_t copapy_symbol_at(const struct copapy_program *program, uint32_t var, uint32_t index,
                         uint32_t *offset, uint8_t *dtype, const char **name,
                         uint32_t *name_len);

/* A static, NUL-terminated message for an error code. */
const char *copapy_error_message(int32_t error);

#ifdef __cplusplus
}
#endif

#endif /* COPAPY_RUNNER_H */
