// SPDX-License-Identifier: GPL-2.0-only
/* sysdispatch_nobtf.bpf.c - the syscall dispatcher for kernels without BTF
 * of their own (src/lib/kernel/btf_find.h): the same programs and maps,
 * with the file operations it compares against as plain kallsyms
 * addresses, since libbpf resolves typed ksyms only in the kernel's BTF.
 */
#define KS_SYSD_NOBTF
#include "sysdispatch.bpf.c"
