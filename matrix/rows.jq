# SPDX-License-Identifier: MIT
# rows.jq - turn one kernel's console (or the host's test output) into
# matrix rows. Run as: jq -R -n -f rows.jq --arg ... <console.log
# Input: raw lines; only lines starting with a KSHIELD-* tag are read (see
# matrix/init). Output: {kernel: {...}, rows: [...]}.
#
# Args: $kernel (row label), $package, $arch, $flavour, $checks (comma list
# or "-"), $lsm (the boot's lsm=, "" for the host), $error (why the boot
# failed, "" when it finished), $wall (host seconds from QEMU start to exit).
#
# Each row's status:
#   pass           the shield loaded, did what its variant claims on every
#                  trigger path that runs here (refused the ones it prevents,
#                  counted the ones it detects; for a state-check shield on
#                  a fixed kernel: no effect with or without it, "fixed-here"),
#                  left benign use alone
#   partial        as pass, but a path that runs here is not covered by the
#                  variant that loaded ("cgroup: compat-i386 not covered"):
#                  shown apart, never counted as a pass
#   fail           anything else the shield claimed and did not do
#                  (also a test that did not run because the shield was
#                  already enforcing there: its error says "not run: ...")
#   unprotected    no variant loads on this kernel (the shield says so:
#                  "unsupported"); shown apart, never counted as a pass
#   n/a            the trigger cannot run here at all (the kernel lacks the
#                  subsystem), or the kernel has no BTF and kshield found
#                  none for it ("no BTF for build ID X", no_btf below):
#                  nothing to protect and nothing proven
#   todo           cases of the shield's test say "not written yet"
#                  (KS_CASE_TODO, as `kshield shield new` leaves them):
#                  never a pass, fails the matrix
#   expected-fail  a check row that failed, as it must (broken fixture)
#   check-failed   a check of the matrix itself did not hold

def tagged($t): select(startswith($t + " ")) | .[($t | length) + 1:];
def checks: if $checks == "-" then [] else ($checks | split(",")) end;
def lsm_variant: (. // "") | startswith("lsm");

# Paths the loaded variant claims to prevent that went through anyway (a
# state-check shield's "fixed-here" path, no effect without the shield nor
# with it, is not one: the state it refuses never arose).
def prevented_passed:
  [.paths[]? | select(.coverage == "prevents" and
                      (.enforce == "passed" or .enforce == "effect"
                       or (.enforce == "no-effect" and
                           (.status != "fixed-here" or .baseline != "no-effect"))))
   | .name];

# Paths that ran while enforcing and the loaded variant does not cover.
def uncovered: [.paths[]? | select(.coverage == "none" and .enforce != null) | .name];

# A kernel without BTF of its own (/sys/kernel/btf/vmlinux) for which
# kshield found no external BTF either (the probe names no btf_path): a
# shield that loaded no variant cannot CO-RE-relocate anything there, so its
# row is n/a with that reason, not "unprotected" (which fails the matrix when
# a tp variant was tried: a kshield regression, not this one). Once kshield
# finds the kernel's BTF by build ID the rule no longer applies and the row
# is judged like any other. null when it does not apply.
def no_btf($probe):
  if $probe != null and $probe.btf == false and ($probe.btf_path // null) == null
     and .shield != null and .check == null and .variant == null
     and .not_applicable != true and ([.tried[]?] | length) > 0
     and all(.tried[]; .ok == false)
  then "no BTF for build ID \($probe.build_id // "unknown"): "
       + ($probe.btf_error // "the kernel has none and kshield found no external BTF")
       + "; load: \(.tried[0].why // "failed")"
  else null end;

def status:
  if .check_error != null then "check-failed"
  elif .no_btf != null then "n/a"
  elif .check == "guard" then
    # kshield guard selftest: must pass, and refuse wherever BPF LSM or
    # fmod_ret programs attach (the probe's lsm and fmod_ret hooks: bpf in
    # lsm= is not enough on kernels without BPF trampolines, such as arm64
    # 6.1; without bpf in lsm= the guard refuses through fmod_ret)
    (if .passed == true and (.refuses == true or (.lsm_hook != true and .fmod_ret_hook != true))
     then "pass" else "check-failed" end)
  elif .check == "ksites" then "pass"
  # tests/guest/monitor-flow.sh: exact flow records of TCP over IPv4/IPv6
  elif .check == "flow" then (if .ok == true then "pass" else "check-failed" end)
  # tests/guest/harm.sh: unrelated syscalls with every shield loaded
  # (median ratios and ranges over alternating rounds); it fails only
  # when every round of the agent as packaged is over its goal (.error)
  elif .check == "harm" then
    (if .ok != true then "check-failed" elif .error != null then "fail"
     elif .known_gap != null then "partial" else "pass" end)
  # tests/guest/selinux.sh: labelled mounts with every shield loaded
  elif .check == "selinux" then (if .ok == true then "pass" else "check-failed" end)
  # tests/guest/guard-agent.sh: every tokenless weakening refused, then a token works
  elif .check == "guardagent" then (if .ok == true then "pass" else "check-failed" end)
  elif .check == "broken" then
    (if .error != null then "expected-fail" else "check-failed" end)
  elif ((.todo // []) | length) > 0 then "todo"
  elif .unsupported == true then "unprotected"
  elif .not_applicable == true then "n/a"
  # a path the variant claims to prevent went through: fail, whatever the
  # runner said (the matrix holds the claim itself)
  elif (prevented_passed | length) > 0 then "fail"
  elif .error == null and .benign_ok == true
       and (.partial == true or (uncovered | length) > 0) then "partial"
  elif .error == null and (.trigger_refused == true or .detect_only == true
                           or .fixed_here == true)
       and .benign_ok == true then "pass"
  else "fail" end;

# The nobpf check: with bpf left out of lsm=, an LSM variant must not load,
# and the row says which fallback (if any) took over.
def nobpf_check:
  if (checks | index("nobpf")) == null then .
  else
    ([.tried[]? | select(.variant | lsm_variant)] | first) as $l
    | if $l == null then .no_lsm_variant = true
      elif $l.ok == true and (.variant | lsm_variant) then
        .check_error = "lsm variant '\($l.variant)' loaded with bpf left out of lsm="
      else
        .lsm_unavailable = ($l.why // "not tried")
        | .fallback = (.variant // "none: unprotected")
      end
  end;

# The notramp check (nokprobe too): with trampoline programs refused by the
# notramp policy (matrix/fixtures/notramp.bpf.c), no lsm or fmod_ret variant
# may load (nor a kprobe one with nokprobe); the row says which fallback
# took over (or that none did).
def notramp: (checks | index("notramp")) != null or (checks | index("nokprobe")) != null;
def notramp_check:
  if notramp | not then .
  elif ((.variant | lsm_variant) or .variant == "fmod_ret") then
    .check_error = "variant '\(.variant)' loaded with trampolines refused (notramp)"
  elif (checks | index("nokprobe")) != null and .variant == "kprobe" then
    .check_error = "variant 'kprobe' loaded with kprobes refused (nokprobe)"
  else .fallback = (.variant // "none: unprotected") end;

# The ksites check (tests/guest/kernel-sites.sh, `make matrix-dbg`): every
# copy of an inlined kernel function probed from a sites manifest, each
# syscall path seen once at a copy of its own and killed there, benign opens
# untouched, another build's manifest refused, a forged or unsigned one too
# (the guest requires signed manifests). $s: step -> kshield's JSON.
def ksites_row($s):
  (if $arch == "x86_64" then ["open", "openat", "creat", "open32", "openat32", "creat32"]
   else ["openat"] end) as $kinds
  | ($s.list.sites // []) as $sites
  | ($kinds | map({key: ., value: [$s["trace-" + .].sites[]? | select(.hits > 0)
                                   | {id, caller, hits}]}) | from_entries) as $hits
  | [$kinds[] | select(($hits[.] | map(.hits) | add // 0) != 1)] as $bad_hits
  | [$kinds[] | select($s["kill-" + .].status != 137)] as $not_killed
  | [$kinds[] | select($s["ok-" + .].status != 0)] as $ok_broken
  | ($kinds | map({key: ., value: $s["symbol-" + .].symbol_hits}) | from_entries) as $sym
  | {shield: ($s.load.name // "kernel-sites-fixture"), variant: ($s.load.variant // null),
     function: $s.list.function, site_build_id: $s.list.build_id,
     kprobes: $s.debuginfo.objects[0].kprobes,
     sites: ($sites | length), probeable: ([$sites[] | select(.probeable)] | length),
     hits: $hits, symbol_hits: $sym,
     killed: [$kinds[] | select($s["kill-" + .].status == 137)],
     mismatch_refused: (($s.mismatch.error // "") | test("refusing")),
     mismatch_load_refused: (($s["mismatch-load"].error // "") | test("refusing")),
     mismatch_error: $s.mismatch.error,
     forged_refused: (($s["forged-load"].error // "") | test("bad signature")),
     unsigned_refused: (($s["unsigned-load"].error // "") | test("unsigned")),
     site_pins: $s.kprobes.site_pins, kprobes_listed: $s.kprobes.listed,
     kprobes_optimized: $s.kprobes.optimized,
     kills_counted: ([$s.stats[]? | select(.name == "kernel-sites-fixture") | .verdicts.killed] | first),
     bench_ns: $s.bench}
  | .check_error =
      (if $s.list == null then "no sites list reported"
       elif $s.list.error then "sites list: \($s.list.error)"
       elif $s.load == null or $s.load.error then "load: \($s.load.error // "nothing reported")"
       elif ($bad_hits | length) > 0 then "paths not seen exactly once by the sites: \($bad_hits | join(","))"
       elif ($sym | to_entries | map(select(.value | type != "number")) | length) > 0 then
         "the kprobe on the symbol alone did not attach: \([$kinds[] | $s["symbol-" + .].error // empty] | first)"
       elif ($sym | to_entries | map(.value) | add) >= ($kinds | length) then
         "a kprobe on the symbol alone saw every path: nothing inlined is being proven"
       elif $s.kprobes.site_pins != ([$sites[] | select(.probeable)] | length) then
         "\($s.kprobes.site_pins) link_*__site<N> pins for \([$sites[] | select(.probeable)] | length) probeable copies"
       elif ($not_killed | length) > 0 then "not killed: \($not_killed | join(","))"
       elif .kills_counted != ($kinds | length) then
         "the shield counted \(.kills_counted) kills for \($kinds | length) killed paths"
       elif ($ok_broken | length) > 0 then "benign open disturbed: \($ok_broken | join(","))"
       elif .mismatch_refused != true then "another build's manifest was not refused: \($s.mismatch)"
       elif .mismatch_load_refused != true then "the shield loaded with another build's manifest"
       elif .forged_refused != true then "a forged manifest was not refused: \($s["forged-load"])"
       elif .unsigned_refused != true then "an unsigned manifest was not refused: \($s["unsigned-load"])"
       else null end);

[inputs | gsub("\r"; "") | gsub("\u001b\\[[0-9;?]*[a-zA-Z]|\u001bc"; "")] as $lines
| ($lines | map(tagged("KSHIELD-PROBE") | fromjson?) | first) as $probe
| ($lines | map(tagged("KSHIELD-BOOT") | tonumber?) | first) as $boot
| ($lines | map(tagged("KSHIELD-DONE") | tonumber?) | first) as $done
| ($lines | map(tagged("KSHIELD-LOG"))) as $log
| ([$lines[] | tagged("KSHIELD-SITES") | capture("^(?<k>\\S+) (?<v>.*)$")
    | {key: .k, value: (.v | fromjson? // {error: "garbled: \(.[:120])"})}] | from_entries) as $sites
| {kernel: $kernel, package: $package, arch: $arch, flavour: $flavour,
   checks: checks, lsm: $lsm,
   release: ($probe.release // null),
   boot_s: $boot, done_s: $done, wall_s: ($wall | tonumber? // null),
   error: (if $error == "" then null else $error end),
   log: $log, probe: $probe} as $k
| def base: {kernel: $kernel, package: $package, arch: $arch, flavour: $flavour,
              build_id: ($probe.build_id // null), lsm: $lsm, lsm_hook: (if $probe == null then null else $probe.hooks.lsm end), fmod_ret_hook: (if $probe == null then null else $probe.hooks.fmod_ret end), check: null};
  ( [ $lines[] | tagged("KSHIELD-RESULT") ]
    | map((fromjson? // {garbled: .}) as $r
          | if $r.garbled then base + {shield: null, error: "garbled result line: \($r.garbled[:120])"}
            else base + ($r | del(.kernel, .arch)) + {release: $r.kernel, arch: ($r.arch // $arch)}
                 | nobpf_check | notramp_check end) ) as $results
| ( [ $lines[] | tagged("KSHIELD-CHECK") | capture("^(?<check>\\S+) (?<json>.*)$") ]
    | map((.json | fromjson? // {error: "garbled check line"}) as $r
          | base + ($r | del(.kernel, .arch)) + {release: $r.kernel, arch: ($r.arch // $arch),
                                                  check: .check}) ) as $checked
| ( [ if $k.error != null then base + {shield: null, error: $k.error} else empty end ]
    + [ $log[] | select(test("^insmod .* failed")) | base + {shield: null, error: .} ]
    + [ if $k.error == null and ($results | length) == 0 then
          base + {shield: null, error: "no shield results reported"} else empty end ]
    + [ if (checks | index("nobpf")) != null and $probe != null
           and ($probe.hooks.lsm == true or (($probe.lsms // []) | index("bpf")) != null) then
          base + {shield: null, check: "nobpf",
                  check_error: "probe: BPF LSM active with bpf left out of lsm= (lsms \($probe.lsms))"}
        else empty end ]
    + [ if notramp and $probe != null
           and ($probe.hooks.fmod_ret == true or $probe.hooks.fentry == true or $probe.hooks.lsm == true) then
          base + {shield: null, check: "notramp",
                  check_error: "probe: trampolines usable with the notramp policy loaded (hooks \($probe.hooks))"}
        elif notramp and $k.error == null
             and ([$log[] | select(startswith("notramp: ") and (contains("attached") | not))] | length) > 0 then
          base + {shield: null, check: "notramp",
                  check_error: ([$log[] | select(startswith("notramp: "))] | first)}
        else empty end ]
    # The guard selftest prints nothing on stdout when it cannot load the
    # guard: on a kernel without BTF that kshield found none for, say so.
    + [ if $k.error == null and $probe != null and $probe.btf == false
           and ($probe.btf_path // null) == null
           and ([$checked[] | select(.check == "guard")] | length) == 0 then
          ("no BTF for build ID \($probe.build_id // "unknown"): "
           + ($probe.btf_error // "the kernel has none and kshield found no external BTF")
           + "; " + ([$log[] | select(startswith("guard: "))] | first // "guard: reported nothing")) as $nb
          | base + {shield: null, check: "guard", no_btf: $nb, error: $nb, na_reason: $nb}
        else empty end ]
    + [ if (checks | index("ksites")) != null and $k.error == null then
          base + {check: "ksites"} + ksites_row($sites)
        else empty end ]
    + [ if (checks | index("flow")) != null and $k.error == null
           and ([$checked[] | select(.check == "flow")] | length) == 0 then
          base + {shield: null, check: "flow", check_error: "flow check reported nothing"}
        else empty end ]
    + [ if (checks | index("guardagent")) != null and $k.error == null
           and ([$checked[] | select(.check == "guardagent")] | length) == 0 then
          base + {shield: null, check: "guardagent", check_error: "guard-agent check reported nothing"}
        else empty end ]
    + [ if (checks | index("harm")) != null and $k.error == null
           and ([$checked[] | select(.check == "harm")] | length) == 0 then
          base + {shield: null, check: "harm", check_error: "harm check reported nothing"}
        else empty end ]
    + [ if (checks | index("selinux")) != null and $k.error == null
           and ([$checked[] | select(.check == "selinux")] | length) == 0 then
          base + {shield: null, check: "selinux", check_error: "selinux check reported nothing"}
        else empty end ]
    + [ if (checks | index("broken")) != null and $k.error == null
           and ([$checked[] | select(.check == "broken")] | length) == 0 then
          base + {shield: null, check: "broken", check_error: "broken fixture reported nothing"}
        else empty end ]
  ) as $kernel_rows
| {kernel: $k,
   rows: (($results + $checked + $kernel_rows)
          | map(. + {boot_s: $k.boot_s, done_s: $k.done_s, wall_s: $k.wall_s}
                | (no_btf($probe)) as $nb
                | if $nb != null then .no_btf = $nb | .error = $nb | .na_reason = $nb else . end
                | .error = (.check_error // .error
                            // (prevented_passed | if length > 0 then
                                 "\(join(", ")) went through on a variant that claims to prevent it"
                               else null end))
                | .status = status
                | if .check == "guard" and .status != "pass" and .error == null then
                    .error = ([.checks[]? | select(.ok != true) | "\(.name): \(.got)"]
                              | if length > 0 then "guard: " + join("; ")
                                else "guard does not refuse although BPF LSM or fmod_ret programs attach here" end)
                  elif .check == "guardagent" and .status != "pass" and .error == null then
                    .error = "guard-agent: \(.failed) step(s) failed: \(.failures)"
                  elif .check == "flow" and .status != "pass" and .error == null then
                    .error = "flow: \(.why // "echoed \(.echoed), final records tcp4 \(.final_tcp4) tcp6 \(.final_tcp6) long \(.long_final), interim \(.long_interim) (want 2, 2, 2, >= 1)")"
                  else . end))}
