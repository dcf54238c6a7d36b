# SPDX-License-Identifier: MIT
# table.jq - print the matrix: one line per kernel x shield, then the
# boot-to-result time per kernel and the totals. Input: results.json;
# --slurpfile kernels kernels.json.
def pad($n): tostring | if length >= $n then .[:$n] else . + (" " * ($n - length)) end;
def yn: if . == true then "yes" elif . == false then "no" else "-" end;
def ms: if . == null or . == 0 then "-" else (. * 10 | round / 10 | tostring) end;
# Per-path outcome when a shield has several paths or one not prevented:
# "native prevented, compat-i386 n/a"; a path a variant other than tp
# stopped by its SIGKILL (a backstop, not the refusal it claims) says so.
def paths_note:
  [.paths[]?] as $p | (.variant // "") as $v
  | if ($p | length) > 1 or ($p | map(select(.status != "prevented")) | length) > 0 then
      ($p | map("\(.name) \(.status)"
                + (if .killed == true and $v != "tp" then " (killed)" else "" end)) | join(", "))
    else "" end;
def vuln: if .vulnerable == null then "-" else .vulnerable end;
def reason:
  if .check == "harm" and .status == "partial" then "known gap: \(.known_gap)"
  elif .check == "harm" and .status == "pass" then
    # medians over the rounds, getppid/read+write/stat; ranges in results.json
    def m3: "\(.getppid.median)/\(.rw512.median)/\(.stat.median)";
    def j(w): if .judged[w] == null then "not judged" else "\(.judged[w].median) (\(.judged[w].range | join("-")))" end;
    "default/\(.judged.base // "?") getppid \(j("getppid")), rw \(j("rw512")); \(.loaded)/\(.shields) shields \(.modes.shields | m3); monitor \(.modes.monitor | m3); default \(.modes.default | m3); none/none \(.noise | m3)"
  elif .check == "selinux" and .check_error == null then
    "policy \(.policy_loaded), \(.loaded) shields (\(.variants | .[:60])): fsconfig context= \(.shields.fsconfig // "?"), label \(.shields.fsmount_label // "?"); mount(2) \(.shields.mount // "?"); without shields \(.none.fsconfig // "?")"
  elif .status == "partial" then
    "\(.coverage_note // "not covered"); \(paths_note)"
  elif .status == "pass" and paths_note != "" then
    (if .fallback then "fallback \(.fallback); " else "" end) + paths_note
  elif .status == "pass" then
    (if .fallback then "lsm unavailable; fallback \(.fallback) took over"
     elif .no_lsm_variant then "no lsm variant" else "" end)
  elif .status == "todo" then "not written yet: \(.todo | join(", "))"
  elif .status == "expected-fail" then "check \(.check): marked failed as it must be: \(.error)"
  elif .lsm_unavailable and .status != "check-failed" then
    "lsm unavailable (\(.lsm_unavailable | .[:60])); fallback: \(.fallback); \(.error // "")"
  else (.error // .na_reason // "") end | gsub("\n"; " ") | .[:150];
def mark: {"pass": "ok", "fail": "FAIL", "unprotected": "UNPROTECTED", "n/a": "n/a",
           "expected-fail": "ok(check)", "check-failed": "CHECK-FAILED", "partial": "PARTIAL",
           "todo": "TODO"}[.status] // .status;

(["KERNEL", "ARCH", "SHIELD", "VARIANT", "TRIGGER", "BENIGN", "VULN", "LOAD ms", "RESULT", "REASON"]
 | [.[0] | pad(34)] + [.[1] | pad(8)] + [.[2] | pad(24)] + [.[3] | pad(9)]
   + [.[4] | pad(8)] + [.[5] | pad(7)] + [.[6] | pad(8)] + [.[7] | pad(8)] + [.[8] | pad(13)]
   + [.[9]] | join("")),
(.[] | [(.kernel | pad(34)), (.arch | pad(8)),
        ((.shield // "(kernel)") + (if .check then " [\(.check)]" else "" end) | pad(23) + " "),
        ((.variant // "-") | pad(9)),
        (if .shield == null then "-" elif .detect_only == true then "detect"
         else (.trigger_refused | yn) end | pad(8)),
        (if .shield == null then "-" else (.benign_ok | yn) end | pad(7)),
        (vuln | pad(8)),
        (.load_ms | ms | pad(8)), (mark | pad(13)), reason] | join("")),
"",
"boot-to-result per kernel (guest uptime at init / at last result; wall = host time incl. QEMU):",
($kernels[0][] | "  \(.kernel | pad(34)) \(.arch | pad(8)) init \(.boot_s // "-" | tostring | pad(6)) s  done \(.done_s // "-" | tostring | pad(6)) s  wall \((.wall_s // 0) * 10 | round / 10) s\(if .error then "  FAILED: \(.error)" else "" end)"),
"",
(group_by(.status) | map("\(.[0].status): \(length)") | "rows: " + join(", "))
