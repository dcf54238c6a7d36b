// SPDX-License-Identifier: MIT
/* mount_context.c - the guests' selinux check (tests/guest/selinux.sh):
 * mount a tmpfs labelled with a context= option, through the new mount API
 * (fsopen, fsconfig(FSCONFIG_SET_STRING, "context", ...), fsmount), as
 * util-linux 2.39+ mount and systemd do, and through mount(2), and read
 * the label SELinux gave its root. The parameter must reach SELinux: an
 * fmod_ret program on security_fs_context_parse_param that returns
 * non-zero skips every LSM, and tmpfs then refuses "context" (EINVAL).
 * Prints one JSON object; exit 0 when both ways gave the label.
 *
 *	mount_context CONTEXT DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/mount.h>

/* The root's security.selinux label into @label, or the errno's name. */
static void label_of(const char *dir, char *label, size_t len)
{
	ssize_t n = getxattr(dir, "security.selinux", label, len - 1);

	if (n < 0)
		snprintf(label, len, "getxattr: %s", strerror(errno));
	else
		label[n] = '\0';
	if (n > 0 && label[n - 1] == '\0')	/* the kernel counts the NUL */
		label[n - 1] = '\0';
}

static const char *err_or_ok(int rc)
{
	return rc < 0 ? strerror(errno) : "ok";
}

int main(int argc, char **argv)
{
	char l1[256] = "", l2[256] = "", opt[300];
	const char *ctx, *dir, *set = "not tried", *mnt = "not tried";
	int fs, m, ok;

	if (argc != 3) {
		fprintf(stderr, "usage: mount_context CONTEXT DIR\n");
		return 2;
	}
	ctx = argv[1];
	dir = argv[2];
	mkdir(dir, 0755);

	fs = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0) {
		set = strerror(errno);
	} else {
		set = err_or_ok(syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "context", ctx, 0));
		if (!strcmp(set, "ok") &&
		    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0 &&
		    (m = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0)) >= 0) {
			if (syscall(SYS_move_mount, m, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) == 0) {
				label_of(dir, l1, sizeof(l1));
				umount2(dir, MNT_DETACH);
			} else {
				snprintf(l1, sizeof(l1), "move_mount: %s", strerror(errno));
			}
			close(m);
		} else if (!strcmp(set, "ok")) {
			snprintf(l1, sizeof(l1), "create/fsmount: %s", strerror(errno));
		}
		close(fs);
	}

	snprintf(opt, sizeof(opt), "context=\"%s\"", ctx);
	mnt = err_or_ok(mount("tmpfs", dir, "tmpfs", 0, opt));
	if (!strcmp(mnt, "ok")) {
		label_of(dir, l2, sizeof(l2));
		umount2(dir, MNT_DETACH);
	}

	ok = !strcmp(l1, ctx) && !strcmp(l2, ctx);
	printf("{\"ok\": %s, \"fsconfig\": \"%s\", \"fsmount_label\": \"%s\", \"mount\": \"%s\", "
	       "\"mount_label\": \"%s\"}\n", ok ? "true" : "false", set, l1, mnt, l2);
	return ok ? 0 : 1;
}
