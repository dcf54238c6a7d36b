/* SPDX-License-Identifier: MIT */
/* array.h - the number of elements of an array (not of a pointer). */
#ifndef KSHIELD_ARRAY_H
#define KSHIELD_ARRAY_H

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* KSHIELD_ARRAY_H */
