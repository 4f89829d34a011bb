/* The serial link (link.c): the firmware's second mode, entered by runner.c when no job
 * list was loaded. */
#ifndef LINK_H
#define LINK_H

/* Serves requests from the serial link forever. */
__attribute__((noreturn)) void link_main(void);

#endif /* LINK_H */
