# SPDX-License-Identifier: MIT
# verdict.jq - the matrix's pass/fail rule over results.json, for `jq -e`:
# true (exit 0) unless a row failed or has cases not written yet ("todo"), a check of the matrix did not hold, or
# a trigger path went through on a variant that claims to prevent it (held
# here too, whatever a row's status says, but for a state-check shield's
# "fixed-here" path, no effect without the shield nor with it; not on check rows: the broken
# fixture goes through by design), or a path that failed, is n/a or had an
# "error" step reports no reason ("why": kshield test fills it for each).
# "unprotected", "partial" and "n/a" rows do not fail the matrix, and are
# not passes, but for one kind: a shield that has a tp variant (the
# fallback every kernel of the matrix can run) and loaded none is a
# regression of kshield, not of the kernel, and fails it.
all(.[]; .status != "fail" and .status != "check-failed" and .status != "todo")
and all(.[] | select(.status == "unprotected"); [.tried[]? | select(.variant == "tp")] | length == 0)
and all(.[] | select(.check == null); [.paths[]? | select(.coverage == "prevents" and
                                 (.enforce == "passed" or .enforce == "effect"
                                  or (.enforce == "no-effect" and
                                      (.status != "fixed-here" or .baseline != "no-effect"))))]
                                 | length == 0)
and all(.[]; [.paths[]? | select((.status == "fail" or .status == "n/a"
                                  or ([.baseline, .enforce, .audit, .unload] | index("error")))
                                 and .why == null)] | length == 0)
