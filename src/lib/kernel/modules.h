/* SPDX-License-Identifier: MIT */
/* modules.h - whether this kernel has a module (the shield tests ask it of
 * each module in a shield's "modules" metadata, to tell "n/a here" from a
 * trigger that failed). */
#ifndef KSHIELD_MODULES_H
#define KSHIELD_MODULES_H

/* Kernel module @name ('-' read as '_') on kernel @release (uname -r):
 * 1 loaded or built in, 0 in this kernel's modules.dep but not loaded,
 * -1 unknown to this kernel (not built, or renamed: aes_generic is
 * library code in 7.x). */
int ks_module_state(const char *name, const char *release);

#endif
