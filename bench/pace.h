/* SPDX-License-Identifier: MIT */
/* pace.h - the storms' steady mode: operation @i of a run started at
 * @start (CLOCK_MONOTONIC) begins no earlier than i / @rate seconds in.
 * A run that falls behind does not sleep, so it catches up at full speed
 * (its printed wall time shows it: more than N / RATE). @rate 0: no pacing. */
#ifndef KSHIELD_BENCH_PACE_H
#define KSHIELD_BENCH_PACE_H

#include <time.h>

static inline void pace(const struct timespec *start, long i, double rate)
{
	struct timespec at;
	double t;

	if (rate <= 0)
		return;
	t = start->tv_sec + start->tv_nsec / 1e9 + i / rate;
	at.tv_sec = (time_t)t;
	at.tv_nsec = (long)((t - at.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
		;	/* EINTR: sleep on to the same deadline */
}

#endif
