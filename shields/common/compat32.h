/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* compat32.h - for the static 32-bit trigger programs of the shields'
 * compat paths (each shield's compat/ folder, and common/compat/), which
 * kshield test runs on 64-bit kernels. They exit (ks_test_run_compat) 0
 * when the trigger went through, 1 when a step the shield guards was
 * refused with EPERM, 4 when not applicable, 5 on any other error. */
#ifndef KSHIELD_COMPAT32_H
#define KSHIELD_COMPAT32_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The exit status for @step failing with errno: 1 for EPERM where @step
 * is @guarded (one the shield refuses), else 5, saying why on stderr. */
static inline int compat32_fail(const char *step, int guarded)
{
	if (guarded && errno == EPERM)
		return 1;
	fprintf(stderr, "32-bit %s: %s\n", step, strerror(errno));
	return 5;
}

#endif /* KSHIELD_COMPAT32_H */
