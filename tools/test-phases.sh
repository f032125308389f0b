#!/usr/bin/env bash
# `make unit` / `make test`: the suite in its two phases. The first runs everything not marked
# `timing` on worker processes; the second runs the `timing` tests alone, one at a time, so
# that their wall-clock bounds and self-check verdicts are measured on a host not also running
# another test. The second phase runs even when the first fails (a failure there says nothing
# about timings); every result is printed, then the script fails if any part failed.
#
# CHECKS, when set, is a shell command (`make test`: ruff, then mypy) run beside the parallel
# phase, whose tests must pass on a busy host anyway; it is waited for, and its output
# printed, before the timing phase starts, so the timing tests still have the host alone.
set -u
PYTEST=${PYTEST:-.venv/bin/pytest}
# On 2 cores: a third worker fills the waits on servers and subprocesses; a fourth measured
# slower on a fresh clone (325 s against 279 s).
WORKERS=${WORKERS:-3}
CHECKS=${CHECKS:-}
common=(-q -p no:cacheprovider --durations=20 "$@")

# Bytecode caches, written once. A host may set PYTHONDONTWRITEBYTECODE=1 (this project's
# machines do); then each of the few hundred interpreters the suite starts (CLI runs, local
# servers, training ranks, Ray workers) compiles acceval from source again, about 0.25 s of
# CPU each on a fresh clone, and pytest rewrites every test module on every worker. The
# caches go to __pycache__/ folders, which git ignores.
unset PYTHONDONTWRITEBYTECODE
"$(dirname "$PYTEST")/python" -m compileall -q -j 0 src tests/helpers >/dev/null

results=()
note() {  # note NAME RC SECONDS: one line of the summary
  results+=("$1: $( (($2 == 0)) && echo passed || echo "FAILED (exit $2)"), $3 s")
}

phase() {  # phase NAME ARGS...: run pytest, print its status and wall time
  local name=$1; shift
  local start=$SECONDS
  "$PYTEST" "${common[@]}" "$@"
  local rc=$?
  note "$name" $rc $((SECONDS - start))
  return $rc
}

checks=0
if [ -n "$CHECKS" ]; then
  checks_log=$(mktemp)
  checks_start=$SECONDS
  bash -c "$CHECKS" >"$checks_log" 2>&1 &
  checks_pid=$!
fi
phase "parallel phase (not timing, workers: $WORKERS)" -n "$WORKERS" --dist loadfile -m "not timing"
first=$?
if [ -n "$CHECKS" ]; then
  wait "$checks_pid"; checks=$?
  echo; echo "--- checks beside the parallel phase: $CHECKS"
  cat "$checks_log"; rm -f "$checks_log"
  results+=("checks ($CHECKS): $( ((checks == 0)) && echo passed || echo "FAILED (exit $checks)"), done $((SECONDS - checks_start)) s after the start")
fi
# The timing phase collects only the files that mark a test `timing` (found by their text, as
# tests/unit/test_timing_marks.py finds them), not the whole suite: about 10 s of collection
# saved. When the command line names anything but options, that is collected instead.
timing_files=()
named=0
for arg in "$@"; do [[ $arg == -* ]] || named=1; done
if ((named == 0)); then
  mapfile -t timing_files < <(grep -rlE --include='test_*.py' 'mark\.timing' tests | sort)
fi
phase "timing phase (alone)" -m timing "${timing_files[@]}"
second=$?
echo
printf '%s\n' "${results[@]}"
((first == 0 && second == 0 && checks == 0))
