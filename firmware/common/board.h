/* What a board gives the reference runner (runner.c, link.c): a character out, making
 * freshly written code visible to instruction fetch, a way to stop, and for the serial
 * link bytes in and out and a timer. Everything else the
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

/* The serial link (link.c): one raw byte out, one byte in (waits for it). On the
 * reference boards this is the console UART, so a board serves either a job list or
 * the link. */
void board_link_put(uint8_t byte);
uint8_t board_link_get(void);

/* A free-running timer for periodic runs: ticks since start-up, and its rate. */
uint64_t board_ticks(void);
extern const uint32_t board_ticks_per_us;
extern const uint32_t board_ns_per_tick;

/* The actuator port of the board imports (io.c): a second UART, apart from the link's,
 * that `value` goes out on as 4 bytes, little-endian (a motor driver or a PWM chip on
 * the other end of the wire). A board without one drops the bytes. */
void board_actuator_write(uint32_t value);

/* The copapy target this board runs (the link's INFO reply), e.g. "cortex-m4". */
extern const char board_target[];

/* The job list's address (link.ld: __copapy_jobs), where the test loads it. */
extern const uint8_t __copapy_jobs[];

/* Entry of the board-independent part, called by the start-up code with the FPU on. */
__attribute__((noreturn)) void runner_main(void);

#endif /* BOARD_H */
