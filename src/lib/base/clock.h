/* SPDX-License-Identifier: MIT */
/* clock.h - wall-clock time as the fleet and the store count it, and the
 * monotonic clock intervals and deadlines are measured on. */
#ifndef KSHIELD_CLOCK_H
#define KSHIELD_CLOCK_H

#include <stdint.h>

int64_t ks_now_ms(void);

/* CLOCK_MONOTONIC: unaffected by clock steps, so right for "how long since"
 * and "not before"; meaningless across reboots and between hosts. */
int64_t ks_mono_ns(void);
int64_t ks_mono_ms(void);

#endif /* KSHIELD_CLOCK_H */
