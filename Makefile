# SPDX-License-Identifier: MIT
# kshield build. `make` builds build/kshield and build/shields/<name>.bpf.o;
# `make test` runs every test (host tests, then the quick kernel matrix).
# V=1 shows full commands.

BUILD     ?= build
CC        ?= gcc
CLANG     ?= clang-19
BPFTOOL   ?= bpftool
LLVM_STRIP ?= llvm-strip-19
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VERSION   := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)

CFLAGS    ?= -O2 -g
# User space: commands (src/cmd/) over a library (src/lib/<subsystem>/,
# built as libkshield.a). Each subsystem's header is its interface; header
# names are unique across subsystems, so every folder is on the include path.
LIB_DIRS  := $(sort $(dir $(wildcard src/lib/*/*.c)))
CFLAGS    += -std=gnu11 -Wall -Wextra -Werror -Wno-format-truncation -Iinclude -Isrc/cmd \
             $(patsubst %/,-I%,$(LIB_DIRS)) -I$(BUILD) \
             -DKSHIELD_VERSION='"$(VERSION)"'
# libnats, libpq, libdebuginfod and libmicrohttpd are not linked: they are
# loaded when a feature first needs them (src/lib/base/dl.h; their -dev
# packages give the headers), so an agent without fleet or metrics never
# maps them and OpenSSL, GnuTLS, Kerberos and curl under them.
LDLIBS    := -lbpf -lelf -lz -lzstd -lsqlite3 -ljson-c -lsodium -lm -lpthread -ldl -ldw
STATIC_LDLIBS := -Wl,--start-group -lbpf -ldw -lelf -llzma -lbz2 -lz -lzstd -lsqlite3 -ljson-c -lsodium -lm -lpthread -ldl -Wl,--end-group
BPF_CFLAGS := -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) \
              -Iinclude -Ibpf/sdk -Ibpf -I$(BUILD)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# kshield's own BPF programs (bpf/*.bpf.c) become skeletons.
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
# Each shields/<name>/shield.bpf.c becomes build/shields/<name>.bpf.o; its
# test.c is linked into kshield (so `kshield test NAME` runs it anywhere).
SHIELD_DIRS := $(patsubst %/shield.bpf.c,%,$(wildcard shields/*/shield.bpf.c))
SHIELDS   := $(notdir $(SHIELD_DIRS))
SHIELD_OBJS := $(patsubst %,$(BUILD)/shields/%.bpf.o,$(SHIELDS))
LIB_SRCS  := $(wildcard src/lib/*/*.c)
CMD_SRCS  := $(wildcard src/cmd/*.c) $(wildcard shields/*/test*.c)
SRC_HDRS  := $(wildcard src/cmd/*.h src/lib/*/*.h) $(wildcard include/kshield/*.h) \
             $(wildcard shields/*/*.h)
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
# The fleet page's files (kshield fleet view), compiled in as C arrays.
VIEW_ASSETS := $(wildcard src/lib/fleet/view/*)
LIB_OBJS  += $(BUILD)/obj/view_assets.o
OBJS      := $(patsubst %.c,$(BUILD)/obj/%.o,$(CMD_SRCS))
STATIC_LIB_OBJS := $(patsubst %.c,$(BUILD)/obj-static/%.o,$(LIB_SRCS))
STATIC_OBJS := $(patsubst %.c,$(BUILD)/obj-static/%.o,$(CMD_SRCS))
# tests/clockshift.c is an LD_PRELOAD shim of its own (clock_gettime): linked
# into the tests, it would shift their own clock as well as the agent's.
TEST_SRCS := $(filter-out tests/clockshift.c,$(wildcard tests/*.c))
# 32-bit builds of test programs (shields/<name>/compat/<prog>.c) that
# kshield test runs on 64-bit kernels to reach their compat paths: static
# i386 on x86 (Debian's gcc-i686-linux-gnu), AArch32 on arm64
# (gcc-arm-linux-gnueabihf); build/shields/<name>/compat/<prog>.<abi>.
ifeq ($(ARCH),arm64)
COMPAT_CC  ?= arm-linux-gnueabihf-gcc
COMPAT_ABI := arm
else
COMPAT_CC  ?= i686-linux-gnu-gcc
COMPAT_ABI := i386
endif
COMPAT_BINS := $(patsubst shields/%.c,$(BUILD)/shields/%.$(COMPAT_ABI),$(wildcard shields/*/compat/*.c))

.PHONY: static-arm64
.PHONY: all setup run run-fleet static test test-host test-unit test-fleet-ui matrix matrix-quick matrix-dbg bench clean install uninstall
.DELETE_ON_ERROR:
# Keep skeletons and their BPF objects: as pattern-rule intermediates make
# would delete them after each build, and the next build would regenerate
# every skeleton and recompile everything that includes one.
.SECONDARY: $(SKELS) $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))

all: $(BUILD)/kshield $(SHIELD_OBJS) $(COMPAT_BINS)

$(BUILD)/shields/%.$(COMPAT_ABI): shields/%.c $(wildcard shields/*/*.h)
	$(call msg,CC32,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(COMPAT_CC) -static -O2 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

BPF_HDRS := $(wildcard bpf/*.bpf.h bpf/sdk/*.bpf.h) $(wildcard include/kshield/*.h)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@	# DWARF: unused (BTF and line info stay); a shield ships in one 1 MB NATS message

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/shields/%.bpf.o: shields/%/shield.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,SHIELD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@	# DWARF: unused (BTF and line info stay); a shield ships in one 1 MB NATS message

$(BUILD)/obj/%.o: %.c $(SKELS) $(SRC_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/view_assets.c: $(VIEW_ASSETS) scripts/embed-assets.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/embed-assets.sh src/lib/fleet/view > $@

$(BUILD)/obj/view_assets.o: $(BUILD)/view_assets.c src/lib/fleet/view_assets.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libkshield.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/kshield: $(OBJS) $(BUILD)/libkshield.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Statically linked kshield for the kernel matrix guests.
$(BUILD)/obj-static/%.o: %.c $(SKELS) $(SRC_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DKSHIELD_STATIC -c $< -o $@

$(BUILD)/static/libkshield.a: $(STATIC_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/static/kshield: $(STATIC_OBJS) $(BUILD)/static/libkshield.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static $^ $(STATIC_LDLIBS) -o $@ 2>&1 | \
	    { grep -v 'statically linked applications requires at runtime' | grep -v 'in function' || true; }
	$(Q)test -x $@

# The guests' harm check (tests/guest/harm.sh) times syscalls with it.
$(BUILD)/static/syscall_loop: bench/syscall_loop.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static $< -o $@

# The guests' selinux check (tests/guest/selinux.sh) mounts with it.
$(BUILD)/static/mount_context: tests/guest/mount_context.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static $< -o $@

# The guests' flow check (tests/guest/monitor-flow.sh) makes its connections with it.
$(BUILD)/static/flowgen: tests/guest/flowgen.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static $< -o $@

# The guests' notramp check (matrix/fixtures/notramp.bpf.c) loads its
# fixture with it.
$(BUILD)/static/notramp: tests/guest/notramp.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -static $< $(STATIC_LDLIBS) -o $@ 2>&1 | \
	    { grep -v 'statically linked applications requires at runtime' | grep -v 'in function' || true; }
	$(Q)test -x $@

static: $(BUILD)/static/kshield $(BUILD)/static/syscall_loop $(BUILD)/static/mount_context \
	$(BUILD)/static/flowgen $(BUILD)/static/notramp $(SHIELD_OBJS) $(COMPAT_BINS)

# BPF objects the tests load on purpose (bad shields and the like).
FIXTURES := $(patsubst tests/fixtures/%.bpf.c,$(BUILD)/tests/fixtures/%.bpf.o,$(wildcard tests/fixtures/*.bpf.c))

$(BUILD)/tests/fixtures/%.bpf.o: tests/fixtures/%.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# A shield outside shields/ (one `kshield shield new --dir` wrote, the
# host test of the scaffold): `make shield-extra EXTRA=DIR/NAME` builds its
# object with the shields' flags and a kshield with its test.c linked in,
# both in $(BUILD)/extra/NAME/ (`$(BUILD)/extra/NAME/kshield test NAME
# --dir $(BUILD)/extra/NAME`). Nothing under shields/ changes.
ifneq ($(EXTRA),)
EXTRA_NAME := $(notdir $(abspath $(EXTRA)))
EXTRA_OUT  := $(BUILD)/extra/$(EXTRA_NAME)

$(EXTRA_OUT)/$(EXTRA_NAME).bpf.o: $(EXTRA)/shield.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,SHIELD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@	# as the bundled ones: it may ship to a fleet

$(EXTRA_OUT)/test.o: $(EXTRA)/test.c $(SKELS) $(SRC_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(EXTRA_OUT)/kshield: $(OBJS) $(EXTRA_OUT)/test.o $(BUILD)/libkshield.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@
endif

.PHONY: shield-extra
shield-extra: $(if $(EXTRA),$(EXTRA_OUT)/$(EXTRA_NAME).bpf.o $(EXTRA_OUT)/kshield,shield-extra-usage)

shield-extra-usage:
	@echo "usage: make shield-extra EXTRA=DIR/NAME (a shield folder outside shields/)" >&2; exit 2

# Host tests: one Criterion binary built from tests/*.c.
$(BUILD)/tests/kshield-tests: $(TEST_SRCS) $(wildcard tests/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests $(TEST_SRCS) -lcriterion -ljson-c -lsqlite3 -lbpf -o $@

# The fleet page in a real browser (tests/ui/: Debian's chromium through
# chromedriver, a local fleet from scripts/run-fleet.sh); about a minute,
# so not in test-host. Its screenshots go to docs/. Loads BPF on the host.
$(BUILD)/tests/fleet-ui-tests: $(wildcard tests/ui/*.c tests/ui/*.h) $(wildcard tests/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests $(wildcard tests/ui/*.c) -lcriterion -ljson-c -o $@

test-fleet-ui: all $(BUILD)/tests/fleet-ui-tests
	$(Q)KSHIELD=$(abspath $(BUILD)/kshield) KSHIELD_SHIELDS=$(abspath $(BUILD)/shields) \
	    KSHIELD_UI_SHOTS=$(abspath docs) $(BUILD)/tests/fleet-ui-tests --jobs 1 $(TESTFLAGS)

# A local fleet and its page (scripts/run-fleet.sh): NATS, PostgreSQL, the
# collector, control-plane agents, a real agent, http://127.0.0.1:9480/.
run-fleet: all
	$(Q)scripts/run-fleet.sh

# Unit tests of the library's pure functions (tests/unit/*.c): linked
# against libkshield.a, not the binary (plus cli.o, the option parser every
# command uses); no root needed, nothing loaded (test_fit_select opens
# the shield objects and reads the kernel's BTF).
UNIT_SRCS := $(wildcard tests/unit/*.c)

# tests/test_agent.c t18: the wall clock stepped for the agent alone
$(BUILD)/tests/clockshift.so: tests/clockshift.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -Wall -shared -fPIC $< -ldl -o $@

$(BUILD)/tests/unit-tests: $(UNIT_SRCS) $(BUILD)/obj/src/cmd/cli.o $(BUILD)/libkshield.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DKS_TEST_BUILD='"$(BUILD)"' $(UNIT_SRCS) $(BUILD)/obj/src/cmd/cli.o $(BUILD)/libkshield.a -lcriterion $(LDLIBS) -o $@

test-unit: $(BUILD)/tests/unit-tests $(SHIELD_OBJS)
	$(Q)$(BUILD)/tests/unit-tests --jobs 1

test-host: all $(BUILD)/tests/kshield-tests $(BUILD)/tests/unit-tests $(FIXTURES) $(BUILD)/bench/store_ingest \
	   $(BUILD)/tests/clockshift.so \
	   $(BUILD)/matrix/fixtures/dirtypipe-probe-anon.bpf.o $(BUILD)/matrix/fixtures/dirtypipe-probe-file.bpf.o
	$(Q)scripts/check-layers.sh
	$(Q)scripts/check-spdx.sh	# every source file names its licence (LICENSE)
	$(Q)scripts/check-commands.sh	# every program the tests run has a package in the set-up
	$(Q)scripts/sysnr.sh --check
	$(Q)$(BUILD)/tests/unit-tests --jobs 1
	$(Q)KSHIELD=$(abspath $(BUILD)/kshield) KSHIELD_SHIELDS=$(abspath $(BUILD)/shields) \
	    tests/hooks/bar.sh	# kshield hooks on the -dbg DWARF of 6.1.0-47 and 6.12.111 (fetched when missing)
	$(Q)KSHIELD=$(abspath $(BUILD)/kshield) KSHIELD_SHIELDS=$(abspath $(BUILD)/shields) \
	    KSHIELD_FIXTURES=$(abspath $(BUILD)/tests/fixtures) \
	    KSHIELD_MATRIX_FIXTURES=$(abspath $(BUILD)/matrix/fixtures) \
	    $(BUILD)/tests/kshield-tests --jobs 1 $(TESTFLAGS)

# The hook finder on held-out CVE fix functions (tests/hooks/heldout.sh,
# docs/hooks.md): >= 90% in the top 5 on 6.1.0-47 and 6.12.111. Not in
# test-host yet: 6.12.111 stands at 89% (docs/hooks.md), and its 70 runs
# of `kshield hooks` take minutes that make test cannot spare.
test-heldout: all
	$(Q)KSHIELD=$(abspath $(BUILD)/kshield) tests/hooks/heldout.sh

# Fresh-machine entry points (see README): both install what they need first.
setup:
	$(Q)bash scripts/setup.sh

run: setup
	$(Q)$(MAKE) --no-print-directory all
	$(Q)install -d -m 0700 /var/lib/kshield
	$(BUILD)/kshield agent --config packaging/kshield.conf --shields-dir $(BUILD)/shields

# setup-arm64.sh too: sysnr.sh --check reads the AArch32 UAPI headers
# (libc6-dev-armhf-cross), and the quick matrix has arm64 rows.
test: setup
	$(Q)bash scripts/setup-arm64.sh
	$(Q)$(MAKE) --no-print-directory test-host
	$(Q)$(MAKE) --no-print-directory matrix-quick

# Kernel matrix (matrix/run.sh over matrix/kernels.list): every shield on
# real kernels under QEMU, plus the host. Its fixtures test the matrix itself.
MATRIX_FIXTURES := $(patsubst matrix/fixtures/%.bpf.c,$(BUILD)/matrix/fixtures/%.bpf.o,$(wildcard matrix/fixtures/*.bpf.c))

# The Dirty Pipe probes are that shield's source, built with its test turned.
$(BUILD)/matrix/fixtures/dirtypipe-probe-anon.bpf.o $(BUILD)/matrix/fixtures/dirtypipe-probe-file.bpf.o: \
	shields/cve-2022-0847/shield.bpf.c
$(BUILD)/matrix/fixtures/%.bpf.o: matrix/fixtures/%.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# arm64 guests: the same sources cross-built by a sub-make into build/arm64/
# (static/kshield, shields/*.bpf.o compiled with -D__TARGET_ARCH_arm64 against
# a vmlinux.h cut from an arm64 kernel package's BTF: one object per arch,
# since register-reading variants need arm64's pt_regs). matrix/run.sh runs
# it (after scripts/setup-arm64.sh) only when aarch64 rows are selected.
ARM64_BTF_PKG ?= linux-image-6.12.111+deb12-cloud-arm64

$(BUILD)/arm64/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)matrix/arm64-vmlinux-h.sh $(ARM64_BTF_PKG) > $@

static-arm64: $(BUILD)/arm64/vmlinux.h
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/arm64 ARCH=arm64 CC=aarch64-linux-gnu-gcc static

# matrix/selftest.sh then checks the matrix itself on what the run produced
# (the broken shield is failed, the lsm=-without-bpf boot is reported).
matrix-quick: all static $(MATRIX_FIXTURES)
	$(Q)rc=0; matrix/run.sh --quick || rc=$$?; matrix/selftest.sh && exit $$rc

# Also writes each shield's proven summary into $(BUILD)/matrix/proven/,
# signed with MATRIX_KEY when given (gated rollouts: README).
matrix: all static $(MATRIX_FIXTURES)
	$(Q)rc=0; matrix/run.sh || rc=$$?; \
	cp $(BUILD)/matrix/coverage.md docs/coverage.md 2>/dev/null || true; \
	$(BUILD)/kshield shield proven $(BUILD)/matrix/results.json --out $(BUILD)/matrix/proven \
		$(if $(MATRIX_KEY),--key $(MATRIX_KEY)) >/dev/null || rc=1; \
	matrix/selftest.sh && exit $$rc

# Shields on inlined kernel functions (docs/inline-sites.md): each row's
# -dbg package (about 300 MB, cached), sites manifests made here, kprobes at
# every copy tested in the guests. Not part of `make test`: run it by hand.
matrix-dbg: all static $(FIXTURES)
	$(Q)matrix/dbg.sh

BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out %.bpf.c,$(wildcard bench/*.c))) \
	      $(patsubst bench/%.bpf.c,$(BUILD)/bench/%.bpf.o,$(wildcard bench/*.bpf.c))

$(BUILD)/bench/%.bpf.o: bench/%.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/%: bench/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -o $@

$(BUILD)/bench/exec_storm $(BUILD)/bench/connect_storm: bench/pace.h

# store_ingest drives the store library directly, without the kernel.
$(BUILD)/bench/store_ingest: bench/store_ingest.c $(BUILD)/libkshield.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ -lsqlite3 -ljson-c -o $@

bench: all $(BENCH_BINS) $(FIXTURES)
	$(Q)for b in bench/*.sh; do echo "== $$b"; bash $$b || exit 1; done

# `make install` (PREFIX, DESTDIR): binary, shields, systemd unit, default
# config, man page, bash completion. An existing config is never overwritten;
# shields.d links to the bundled shields are made only when shields.d is new,
# so a shield an administrator unlinked stays unlinked.
PREFIX     ?= /usr/local
SBINDIR    ?= $(PREFIX)/sbin
KSLIBDIR   ?= $(PREFIX)/lib/kshield
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
COMPDIR    ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(KSLIBDIR)/shields $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPDIR) $(DESTDIR)$(SYSCONFDIR)/kshield
	$(Q)install -m 0755 $(BUILD)/kshield $(DESTDIR)$(SBINDIR)/kshield
	$(Q)$(if $(SHIELD_OBJS),install -m 0644 $(SHIELD_OBJS) $(DESTDIR)$(KSLIBDIR)/shields/)
	$(Q)for c in $(COMPAT_BINS); do \
	    install -D -m 0755 $$c $(DESTDIR)$(KSLIBDIR)/shields/$${c#$(BUILD)/shields/}; done	# kshield test's compat paths
	$(Q)if [ ! -d $(DESTDIR)$(SYSCONFDIR)/kshield/shields.d ]; then \
	    install -d $(DESTDIR)$(SYSCONFDIR)/kshield/shields.d && \
	    for s in $(SHIELDS); do \
	        ln -s $(KSLIBDIR)/shields/$$s.bpf.o $(DESTDIR)$(SYSCONFDIR)/kshield/shields.d/$$s.bpf.o; \
	    done; fi
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/kshield/kshield.conf ] || \
	    install -m 0644 packaging/kshield.conf $(DESTDIR)$(SYSCONFDIR)/kshield/kshield.conf
	$(Q)sed -e 's|/usr/sbin/kshield|$(SBINDIR)/kshield|g' \
	    -e 's|/etc/kshield|$(SYSCONFDIR)/kshield|g' packaging/kshield.service \
	    > $(DESTDIR)$(UNITDIR)/kshield.service && chmod 0644 $(DESTDIR)$(UNITDIR)/kshield.service
	$(Q)install -m 0644 docs/kshield.8 $(DESTDIR)$(MANDIR)/man8/kshield.8
	$(Q)install -m 0644 packaging/kshield.bash-completion $(DESTDIR)$(COMPDIR)/kshield

# Removes what install put in place except the config, shields.d and the
# event store (administrator data). Loaded shields stay loaded.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/kshield $(DESTDIR)$(UNITDIR)/kshield.service \
	    $(DESTDIR)$(MANDIR)/man8/kshield.8 $(DESTDIR)$(COMPDIR)/kshield
	rm -rf $(DESTDIR)$(KSLIBDIR)

clean:
	rm -rf $(BUILD)
