/* The code and data buffers both modes of the reference firmware load programs into
 * (the job list, runner.c, and the serial link, link.c), and the number formatting they
 * share. */
#ifndef MEMORY_H
#define MEMORY_H

#include <stdint.h>

/* Sized for the test programs; docs/firmware.md says how to size them for yours. The
 * code buffer is in RAM the core may execute (link.ld: .code_ram). */
#define RUNNER_CODE_CAP (128u * 1024u)
#define RUNNER_DATA_CAP (16u * 1024u)
extern uint8_t runner_code[RUNNER_CODE_CAP];
extern uint8_t runner_data[RUNNER_DATA_CAP];

/* Header number `index` of a loaded program file (format version 10, docs/program-format.md:
 * LEB128 numbers from byte 12 on; 0 CPU features, 1 code length), which copapy_load
 * checked; only its low 32 bits. */
uint32_t runner_header_number(const uint8_t *file, uint32_t index);

/* Writes `v` in decimal to `out` (no NUL) and returns its length. */
uint32_t runner_format_dec(char out[12], int32_t v);

#endif /* MEMORY_H */
