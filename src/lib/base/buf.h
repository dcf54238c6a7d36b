/* SPDX-License-Identifier: MIT */
/* buf.h - a growable byte buffer: what the fleet's COPY batches and NATS
 * frames are built in. */
#ifndef KSHIELD_BUF_H
#define KSHIELD_BUF_H

#include <stddef.h>

/* Make room for @need bytes in the malloc'ed *@buf of *@cap bytes (NULL
 * and 0 at first): doubling from @first, *@buf and *@cap updated. 0, or
 * -ENOMEM with both left as they were. */
int ks_buf_reserve(char **buf, size_t *cap, size_t need, size_t first);

#endif /* KSHIELD_BUF_H */
