/* RV32IMAFC on QEMU's RISC-V `virt` machine, bare metal in machine mode (-bios none):
 * NS16550A UART (console and serial link), a PCI serial port (the actuator), CLINT
 * timer, instruction-fetch fence, exit through the SiFive test device. The only
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
/* The actuator's UART: QEMU's PCI serial port (-device pci-serial,chardev=...), a 16550
 * behind the virt machine's PCIe host bridge. No firmware ran before this one (-bios
 * none), so it finds the device in the ECAM configuration space itself, places its I/O
 * BAR and enables I/O decoding. */
#define PCI_ECAM 0x30000000u
#define PCI_IO 0x03000000u /* the bridge's I/O space window */
#define PCI_SERIAL_ID 0x00021B36u /* device 0x0002, vendor 0x1b36 (Red Hat): pci-serial */
#define PCI_SERIAL_BAR 0x1000u /* where in I/O space this firmware puts its 8 registers */
#define PCI_ID 0x00u
#define PCI_COMMAND 0x04u
#define PCI_BAR0 0x10u
#define PCI_COMMAND_IO 1u
#define REG_THR 0 /* 16550 register offsets */
#define REG_LSR 5

static volatile uint32_t *pci_config(uint32_t slot, uint32_t reg) {
    return (volatile uint32_t *)(PCI_ECAM + (slot << 15) + reg);
}

/* The 16550's registers, or 0 when the machine has no PCI serial port (bytes dropped). */
static volatile uint8_t *actuator_uart(void) {
    static volatile uint8_t *uart;
    static int searched;
    if (!searched) {
        searched = 1;
        for (uint32_t slot = 0; slot < 32 && !uart; slot++) {
            if (*pci_config(slot, PCI_ID) != PCI_SERIAL_ID) continue;
            *pci_config(slot, PCI_BAR0) = PCI_SERIAL_BAR;
            *pci_config(slot, PCI_COMMAND) |= PCI_COMMAND_IO;
            uart = (volatile uint8_t *)(PCI_IO + PCI_SERIAL_BAR);
        }
    }
    return uart;
}

void board_actuator_write(uint32_t value) {
    volatile uint8_t *uart = actuator_uart();
    if (!uart) return;
    for (int i = 0; i < 4; i++) {
        while (!(uart[REG_LSR] & UART_LSR_THR_EMPTY)) {
        }
        uart[REG_THR] = (uint8_t)(value >> (8 * i));
    }
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
