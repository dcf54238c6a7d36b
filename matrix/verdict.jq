# verdict.jq - the matrix's pass/fail rule over results.json, for `jq -e`:
# true (exit 0) unless a row failed or a check of the matrix did not hold.
# "unprotected" and "n/a" rows do not fail the matrix, and are not passes.
all(.[]; .status != "fail" and .status != "check-failed")
