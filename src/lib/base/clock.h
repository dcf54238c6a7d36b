/* clock.h - wall-clock time as the fleet and the store count it. */
#ifndef KSHIELD_CLOCK_H
#define KSHIELD_CLOCK_H

#include <stdint.h>

int64_t ks_now_ms(void);

#endif /* KSHIELD_CLOCK_H */
