// SPDX-License-Identifier: MIT
/* notramp OBJ PIN - load the BPF LSM fixture OBJ (matrix/fixtures/
 * notramp*.bpf.o), attach its program and pin the link at PIN, so that it
 * stays attached after this process exits (rm PIN detaches it): the
 * matrix's notramp check, run by matrix/init before kshield. Statically
 * linked for the guests, like kshield. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: notramp OBJ PIN\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "notramp: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "notramp: load %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	prog = bpf_object__next_program(obj, NULL);
	link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "notramp: attach %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_link__pin(link, argv[2]);
	if (err) {
		fprintf(stderr, "notramp: pin %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	return 0;
}
