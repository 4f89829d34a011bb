/* Cortex-M4F on an Arm MPS2 board with the AN386 FPGA image (QEMU -M mps2-an386):
 * vector table, reset, FPU, UART0 (console and serial link), UART1 (the actuator),
 * SysTick, semihosting exit. The only board-specific code of
 * the reference firmware; link.ld has the memory map. */
#include "board.h"

const char board_name[] = "mps2-an386 cortex-m4f";
const char board_target[] = "cortex-m4";

/* CMSDK APB UARTs: UART0 carries the link, UART1 the actuator's bytes (QEMU: the first
 * and the second -serial) */
#define UART0 0x40004000u
#define UART1 0x40005000u
#define UART_DATA(u) (*(volatile uint32_t *)((u) + 0x00))
#define UART_STATE(u) (*(volatile uint32_t *)((u) + 0x04))
#define UART_CTRL(u) (*(volatile uint32_t *)((u) + 0x08))
#define UART_BAUDDIV(u) (*(volatile uint32_t *)((u) + 0x10))
#define UART_TX_FULL 1u
#define UART_RX_FULL 2u
#define UART_TX_ENABLE 1u
#define UART_RX_ENABLE 2u

static void uart_put(uint32_t uart, uint8_t byte) {
    while (UART_STATE(uart) & UART_TX_FULL) {
    }
    UART_DATA(uart) = byte;
}

void board_actuator_write(uint32_t value) {
    for (int i = 0; i < 4; i++) uart_put(UART1, (uint8_t)(value >> (8 * i)));
}

/* SysTick, clocked by the 25 MHz system clock (CLKSOURCE = processor clock) */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_ENABLE_TICKINT_CPUCLK 7u
#define SYST_TOP 0xFFFFFFu
const uint32_t board_ticks_per_us = 25;
const uint32_t board_ns_per_tick = 40;

/* System control block */
#define CPACR (*(volatile uint32_t *)0xE000ED88u)
#define CFSR (*(volatile uint32_t *)0xE000ED28u)

void board_link_put(uint8_t byte) {
    uart_put(UART0, byte);
}

uint8_t board_link_get(void) {
    while (!(UART_STATE(UART0) & UART_RX_FULL)) {
    }
    return (uint8_t)UART_DATA(UART0);
}

void board_putc(char c) {
    if (c == '\n') board_link_put('\r');
    board_link_put((uint8_t)c);
}

/* SysTick counts down 24 bits; its interrupt counts the wraps, so the time is 64 bits. */
static volatile uint32_t systick_wraps;

static void systick_handler(void) {
    systick_wraps++;
}

uint64_t board_ticks(void) {
    uint32_t wraps, count;
    do { /* a wrap between the two reads: read again */
        wraps = systick_wraps;
        count = SYST_CVR;
    } while (wraps != systick_wraps);
    return ((uint64_t)wraps << 24) + (SYST_TOP - count);
}

/* The M4 has no caches; the instruction fetch sees what the data bus wrote once the
 * writes completed and the pipeline is refilled. (A Cortex-M7: SCB_CleanDCache_by_Addr
 * and SCB_InvalidateICache here.) */
void board_code_written(const uint8_t *code, size_t len) {
    (void)code;
    (void)len;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

/* Semihosting SYS_EXIT (QEMU -semihosting-config enable=on): reason
 * ADP_Stopped_ApplicationExit ends QEMU with status 0, any other reason with 1. */
void board_exit(int failed) {
    register uint32_t op __asm__("r0") = 0x18;
    register uint32_t reason __asm__("r1") = failed ? 0x20023u /* RunTimeErrorUnknown */ : 0x20026u;
    __asm__ volatile("bkpt 0xAB" : : "r"(op), "r"(reason) : "memory");
    for (;;) {
    }
}

static void put(const char *s) {
    while (*s) board_putc(*s++);
}

/* A fault (e.g. an FPU instruction with the FPU off, or code in non-executable memory)
 * is reported and ends the session instead of hanging it. */
static void fault_handler(void) {
    uint32_t cfsr = CFSR;
    put("fault cfsr ");
    for (int i = 7; i >= 0; i--) board_putc("0123456789abcdef"[(cfsr >> (4 * i)) & 0xF]);
    board_putc('\n');
    board_exit(1);
}

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];

__attribute__((noreturn)) void reset(void) {
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    /* FPU on: full access to CP10 and CP11, before any floating-point instruction (the
     * generated code is full of them). */
    CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    UART_BAUDDIV(UART0) = 16;
    UART_CTRL(UART0) = UART_TX_ENABLE | UART_RX_ENABLE;
    UART_BAUDDIV(UART1) = 16;
    UART_CTRL(UART1) = UART_TX_ENABLE;
    SYST_RVR = SYST_TOP;
    SYST_CVR = 0;
    SYST_CSR = SYST_ENABLE_TICKINT_CPUCLK;
    runner_main();
}

/* Initial stack pointer, then the exception handlers (ARMv7-M vector table). */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))__stack_top, reset, fault_handler, fault_handler,
    fault_handler, fault_handler, fault_handler,
    [15] = systick_handler,
};
