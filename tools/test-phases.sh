#!/usr/bin/env bash
# `make unit`: the suite in its two phases. The first runs everything not marked `timing` on
# two worker processes; the second runs the `timing` tests alone, one at a time, so that their
# wall-clock bounds and self-check verdicts are measured on a host not also running another
# test. The second phase runs even when the first fails (a failure there says nothing about
# timings); both results are printed, then the script fails if either phase failed.
set -u
PYTEST=${PYTEST:-.venv/bin/pytest}
WORKERS=${WORKERS:-2}
common=(-q -p no:cacheprovider --durations=20 "$@")

phase() {  # phase NAME ARGS...: run pytest, print its status and wall time
  local name=$1; shift
  local start=$SECONDS
  "$PYTEST" "${common[@]}" "$@"
  local rc=$?
  results+=("$name: $( ((rc == 0)) && echo passed || echo "FAILED (pytest exit $rc)"), $((SECONDS - start)) s")
  return $rc
}

results=()
phase "parallel phase (not timing, workers: $WORKERS)" -n "$WORKERS" --dist loadfile -m "not timing"
first=$?
phase "timing phase (alone)" -m timing
second=$?
echo
printf '%s\n' "${results[@]}"
((first == 0 && second == 0))
