/* SPDX-License-Identifier: MIT */
/* What main.c needs from a board: a periodic tick, a console, and how deep the main stack went. */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

/* A tick every 10 ms, each calling sensor_tick from the timer's
 * interrupt, until board_tick_stop.  board_tick_start also unmasks the
 * interrupt, which kpn_run needs to wake from its sleep. */
void board_tick_start(void);
void board_tick_stop(void);
void sensor_tick(void); /* main.c */

/* Semihosting on QEMU; a UART on a board. */
void console_write(const char *s);
void console_exit(int code);

/* The deepest the main stack (main, kpn_run and, where the board runs
 * them there, the interrupt handlers) has reached, in bytes. */
uint32_t stack_peak(void);

#endif /* BOARD_H */
