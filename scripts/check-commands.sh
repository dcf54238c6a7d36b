#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-commands.sh - every program the host side of `make test`, the
# benches and the matrix run comes from a package a project script installs.
#
# 1. Each row of scripts/commands.tsv: its installer script names its
#    package; where that installer is part of `make test` (setup.sh,
#    setup-arm64.sh), the command is on PATH now.
# 2. A scan of host-side shell scripts (the first word of each command) and
#    of C string literals (the first word, and the word after | && ;) in
#    tests/, bench/ and src/: a word that is an executable on PATH from a
#    Debian package outside the required/important set must have a row.
#    Guest scripts (tests/guest/, matrix/init) run under busybox, and the
#    setup scripts' lines are package names: skipped.
# Prints one line per problem and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
table=scripts/commands.tsv
fail=0
problem() { echo "check-commands: $*" >&2; fail=1; }

# Words that look like commands in the scan but are not run as one (an
# English word at the start of a message, a column or option name).
ignore=" col column ex view open write look more red llc opt prove idle login
	 duplicates lld perf tipc time size file kvm node python3 zstd "

declare -A pkg_of installer_of
while IFS=$'\t' read -r cmd pkg inst; do
	[ -n "$cmd" ] || continue
	pkg_of[$cmd]=$pkg
	installer_of[$cmd]=$inst
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$table" | tr -s ' \t' '\t\t')

# 1. The table.
for cmd in "${!pkg_of[@]}"; do
	pkg=${pkg_of[$cmd]} inst=${installer_of[$cmd]}
	if [ ! -f "$inst" ]; then
		problem "$table: '$cmd': installer $inst does not exist"
		continue
	fi
	grep -qE "(^|[[:space:](])${pkg//+/\\+}([[:space:]):]|$)" "$inst" ||
		problem "'$cmd' needs package $pkg, which $inst does not install: add it there"
	case $inst in
	scripts/setup.sh|scripts/setup-arm64.sh)
		command -v "$cmd" >/dev/null ||
			problem "'$cmd' is not on PATH after $inst: install package $pkg (apt-get install $pkg)" ;;
	esac
done

# 2. The scan: candidate command words, with a file that names each.
words() {
	git ls-files -z -- '*.sh' 'bench/install-peers' '.ci/run' 'Makefile' \
		'tests/*.c' 'tests/*.h' 'bench/*.c' 'src/*.c' 'src/*.h' |
	perl -0 -ne 'chomp; print "$_\n" unless m{^(tests/guest/|matrix/init|tests/fixtures/|scripts/setup)}' |
	perl -ne '
		chomp; my $f = $_; open(my $h, "<", $f) or next;
		local $/; my $t = <$h>; my @cmds;
		if ($f =~ /\.[ch]$/) {
			for my $s ($t =~ /"((?:[^"\\]|\\.)*)"/g) { push @cmds, split /\|\||&&|[|;]/, $s }
		} else {
			$t =~ s/#.*//g;
			push @cmds, split /\|\||&&|[|;\n`]|\$\(|\bthen\b|\bdo\b|\belse\b/, $t;
		}
		my %w; for (@cmds) { $w{$1} = 1 if /^\s*([a-z][a-z0-9._+-]+)/ }
		print "$_\t$f\n" for sort keys %w;' | sort -u -k1,1
}
declare -A seen_in
while IFS=$'\t' read -r w f; do seen_in[$w]=$f; done < <(words)

paths=()
declare -A word_of on_path
while read -r c; do on_path[$c]=1; done < <(compgen -c)
for w in "${!seen_in[@]}"; do
	[ -n "${on_path[$w]:-}" ] && [ -z "${pkg_of[$w]:-}" ] || continue
	[[ $ignore == *" $w "* ]] && continue
	p=$(type -P "$w") || continue
	# dpkg knows a file by the path its package ships (/bin or /usr/bin).
	for q in "$(readlink -f "$p")" "$p" "/usr/bin/$w" "/usr/sbin/$w" "/bin/$w" "/sbin/$w"; do
		[ -e "$q" ] || continue
		paths+=("$q"); word_of[$q]=$w
	done
done
declare -A ok_word pkg_word prio_of
while read -r pkg prio; do prio_of[$pkg]=$prio; done < <(dpkg-query -W -f '${Package} ${Priority}\n')
if [ ${#paths[@]} -gt 0 ]; then
	while IFS= read -r line; do
		pkgs=${line%%: /*} path=${line#*: }
		w=${word_of[$path]:-}
		[ -n "$w" ] || continue
		for pkg in ${pkgs//,/ }; do
			pkg=${pkg%%:*}
			case ${prio_of[$pkg]:-} in required|important) ok_word[$w]=1 ;; *) pkg_word[$w]=$pkg ;; esac
		done
	done < <(dpkg -S "${paths[@]}" 2>/dev/null | grep -v '^diversion by')
fi
for w in "${!pkg_word[@]}"; do
	[ -n "${ok_word[$w]:-}" ] && continue
	problem "${seen_in[$w]} calls '$w' (package ${pkg_word[$w]}), which $table does not list: add a row with the script that installs it"
done

[ $fail = 0 ] && echo "check-commands: ${#pkg_of[@]} commands, each installed by a project script"
exit $fail
