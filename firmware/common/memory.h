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

/* Writes `v` in decimal to `out` (no NUL) and returns its length. */
uint32_t runner_format_dec(char out[12], int32_t v);

#endif /* MEMORY_H */
