/* What a board gives the reference runner (runner.c): a character out, making freshly
 * written code visible to instruction fetch, and a way to stop. Everything else the
 * runner needs is in copapy_runner.h. */
#ifndef BOARD_H
#define BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Name printed at start-up. */
extern const char board_name[];

/* Sends one character to the console (a UART). */
void board_putc(char c);

/* Called after copapy_load wrote `len` bytes of code at `code`, before the first
 * copapy_run: cache maintenance or an instruction-fetch fence where the core needs it. */
void board_code_written(const uint8_t *code, size_t len);

/* Ends the session: QEMU exits with status 0 when `failed` is 0, else 1. */
__attribute__((noreturn)) void board_exit(int failed);

/* The job list's address (link.ld: __copapy_jobs), where the test loads it. */
extern const uint8_t __copapy_jobs[];

/* Entry of the board-independent part, called by the start-up code with the FPU on. */
__attribute__((noreturn)) void runner_main(void);

#endif /* BOARD_H */
