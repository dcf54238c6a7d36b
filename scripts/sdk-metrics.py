#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sdk-metrics.py - what a shield author meets, per shield: the SDK names
used (concepts), and lines of logic against lines of ceremony.

  scripts/sdk-metrics.py [shields/*/shield.bpf.c ...]

Concepts: distinct SDK names (KS_*, ks_*, KSHIELD_*, NLW_*, nlw_* defined
in bpf/sdk/*.h) the file uses, plus program-name suffixes (__noloop, __compat32,
__opt, __raw) and metadata keys (KSHIELD_META(key, ...)).
Ceremony: lines that only declare (includes, KSHIELD_* metadata, SEC(...),
program signatures, #define of an SDK hook, KS_SYSCALL_SOCK, bare macro
invocations that make programs), and the lines of metadata strings
continuing them. Logic: every other line that is not blank or comment.
"""
import glob, re, sys

sdk_names = set()
for h in glob.glob('bpf/sdk/*.h'):
    for m in re.finditer(r'#define\s+((?:KS|KSHIELD|NLW)_\w+|(?:ks|nlw)_\w+)', open(h).read()):
        sdk_names.add(m.group(1))
    for m in re.finditer(r'^static\s+__always_inline\s+[\w\s\*]+?\b((?:ks|nlw)_\w+)\s*\(', open(h).read(), re.M):
        sdk_names.add(m.group(1))

def strip_comments(s):
    s = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), s, flags=re.S)
    return re.sub(r'//[^\n]*', '', s)

CEREMONY = re.compile(r'^\s*(#include|KSHIELD_|SEC\(|KS_SYSCALL_SOCK|KS_SYSCALL_ENTER32|KS_SYSCALL_EXIT32|'
                      r'KS_SOCKETCALL32|NLW_TP_PROGRAMS|NLW_LSM_PROGRAM|#define\s+NLW_|char LICENSE|'
                      r'int\s+(BPF_PROG\()?\w+__\w+\(|KS_SECURITY_HOOK|KS_SYSCALL|KS_SYSCALLS|'
                      r'\s*"[^"]*"\s*\)?;?\s*$)')

def measure(path):
    src = open(path).read()
    code = strip_comments(src)
    used = set(n for n in sdk_names if re.search(r'\b' + re.escape(n) + r'\b', code))
    suffixes = set(re.findall(r'\w+?(__noloop|__compat32|__opt|__raw)\b', code))
    keys = set(re.findall(r'KSHIELD_META\((\w+)', code))
    logic = ceremony = 0
    cont = False
    for line in code.split('\n'):
        if not line.strip() or line.strip() in ('{', '}', '};'):
            continue
        if cont or CEREMONY.match(line):
            ceremony += 1
            cont = line.rstrip().endswith('\\') or (line.count('(') > line.count(')'))
        else:
            logic += 1
    return len(used) + len(suffixes) + len(keys), len(used), len(suffixes), len(keys), logic, ceremony

files = sys.argv[1:] or sorted(glob.glob('shields/*/shield.bpf.c'))
print('%-16s %8s %5s %8s %4s %6s %9s' % ('shield', 'concepts', 'names', 'suffixes', 'keys', 'logic', 'ceremony'))
tot = [0] * 6
for f in files:
    r = measure(f)
    tot = [a + b for a, b in zip(tot, r)]
    print('%-16s %8d %5d %8d %4d %6d %9d' % ((f.split('/')[1],) + r))
print('%-16s %8d %5d %8d %4d %6d %9d' % (('total',) + tuple(tot)))
