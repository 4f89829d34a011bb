/* RV32IMAFC on QEMU's RISC-V `virt` machine, bare metal in machine mode (-bios none):
 * NS16550A UART (console and serial link), CLINT timer, instruction-fetch fence, exit through the SiFive test device. The only
 * board-specific C code of the reference firmware; start.S has reset and the FPU,
 * link.ld the memory map. */
#include "board.h"

const char board_name[] = "virt rv32imafc";
const char board_target[] = "riscv32";

#define UART0 0x10000000u
#define UART_THR (*(volatile uint8_t *)(UART0 + 0))
#define UART_RBR (*(volatile uint8_t *)(UART0 + 0))
#define UART_LSR (*(volatile uint8_t *)(UART0 + 5))
#define UART_LSR_DATA_READY 0x01u
#define UART_LSR_THR_EMPTY 0x20u

/* CLINT mtime: 64 bits at 10 MHz on QEMU's virt */
#define MTIME_LO (*(volatile uint32_t *)0x0200BFF8u)
#define MTIME_HI (*(volatile uint32_t *)0x0200BFFCu)
/* CLINT mtimecmp of hart 0: the actuator register of the board imports (io.c). Timer
 * interrupts stay off (mie.MTIE = 0), so a small value only sets mip.MTIP. */
#define MTIMECMP_LO (*(volatile uint32_t *)0x02004000u)
#define MTIMECMP_HI (*(volatile uint32_t *)0x02004004u)

void board_pwm_set(uint32_t value) {
    MTIMECMP_HI = 0;
    MTIMECMP_LO = value;
}

uint32_t board_pwm_get(void) {
    return MTIMECMP_LO;
}

const uint32_t board_ticks_per_us = 10;
const uint32_t board_ns_per_tick = 100;

/* SiFive test device: 0x5555 ends QEMU with status 0, (code << 16) | 0x3333 with `code`. */
#define SIFIVE_TEST (*(volatile uint32_t *)0x00100000u)

void board_link_put(uint8_t byte) {
    while (!(UART_LSR & UART_LSR_THR_EMPTY)) {
    }
    UART_THR = byte;
}

uint8_t board_link_get(void) {
    while (!(UART_LSR & UART_LSR_DATA_READY)) {
    }
    return UART_RBR;
}

void board_putc(char c) {
    board_link_put((uint8_t)c);
}

uint64_t board_ticks(void) {
    uint32_t hi, lo;
    do { /* the low word wrapped between the reads: read again */
        hi = MTIME_HI;
        lo = MTIME_LO;
    } while (hi != MTIME_HI);
    return (uint64_t)hi << 32 | lo;
}

/* RISC-V does not promise that instruction fetch sees stores to memory until this hart
 * executes fence.i (QEMU translates blocks once and relies on it too). */
void board_code_written(const uint8_t *code, size_t len) {
    (void)code;
    (void)len;
    __asm__ volatile("fence.i" ::: "memory");
}

void board_exit(int failed) {
    SIFIVE_TEST = failed ? (1u << 16) | 0x3333u : 0x5555u;
    for (;;) {
    }
}

static void put_hex(const char *label, uint32_t v) {
    for (const char *s = label; *s; s++) board_putc(*s);
    for (int i = 7; i >= 0; i--) board_putc("0123456789abcdef"[(v >> (4 * i)) & 0xF]);
}

__attribute__((noreturn)) void board_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval);
void board_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval) {
    put_hex("trap mcause ", mcause);
    put_hex(" mepc ", mepc);
    put_hex(" mtval ", mtval);
    board_putc('\n');
    board_exit(1);
}
