/* Reset and trap entry of the RV32IMAFC reference firmware (QEMU -M virt -bios none
 * starts the hart in machine mode at 0x80000000, where link.ld puts `reset`). */
    .section .text.reset, "ax"
    .globl reset
reset:
    la sp, __stack_top
    la t0, trap
    csrw mtvec, t0
    /* FPU on: mstatus.FS = Initial. Until then every F instruction traps, and the
     * generated code is full of them. */
    li t0, 0x2000
    csrs mstatus, t0
    csrwi fcsr, 0
    /* zero .bss (QEMU loaded .text, .rodata and .data where they run) */
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  call runner_main

    /* Any exception (illegal instruction, access fault, ...) is reported, not a hang. */
    .balign 4
trap:
    csrr a0, mcause
    csrr a1, mepc
    csrr a2, mtval
    la sp, __stack_top
    call board_trap
