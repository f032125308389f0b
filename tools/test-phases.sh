#!/usr/bin/env bash
# `make unit` / `make test`: the suite in its two phases. The parallel phase runs everything
# not marked `timing` on worker processes; the timing phase runs the `timing` tests one at a
# time, so that their wall-clock bounds and self-check verdicts are measured with the CPU
# theirs whenever they want it. Every result is printed, then the script fails if any part
# failed (a failure in one phase never stops the other).
#
# Side by side where the host allows it: the timing tests mostly wait (on sleeps, servers,
# fixed-length load points: about a fifth of the two cores over the phase), while the
# parallel phase is bound by the CPU. Where this process may create a CPU control group (root,
# with cgroup v1's cpu controller or v2's), the parallel phase and CHECKS run inside one
# *beside* the timing phase, in two steps:
#   1. the timing tests not marked `cpu_heavy`, with the group at the idle class (cpu.idle):
#      a timing test that wakes takes its core at once, ahead of anything in the group (a
#      group of low weight alone let a background task finish its slice first: a 3 ms late
#      first token in the ground-truth test);
#   2. the `cpu_heavy` timing tests (a Ray cluster starting keeps both cores busy for
#      seconds, which would leave an idle-class group nothing for that long), with the group
#      at low weight instead (BACKGROUND_SHARE: 64 of 1024, about 6 % of the CPU).
# Before both, and before the parallel phase starts, the timing tests marked `quiet` run with
# nothing beside them: their bounds are a few milliseconds against a server's own stamps, and
# even at the idle class a busy group beside them made one stamp in 60-200 late by 2.4-3.2 ms
# (two clean-clone runs in five, 2026-12-06). Pausing the group instead would move the clock
# under its tests' own timeouts.
# Elsewhere, or with PHASES=sequential, the phases run one after the other, the timing phase
# alone (docs/testing.md).
#
# CHECKS, when set, is a shell command (`make test`: ruff, then mypy) run beside the parallel
# phase, whose tests must pass on a busy host anyway.
set -u
PYTEST=${PYTEST:-.venv/bin/pytest}
# On 2 cores: a third worker fills the waits on servers and subprocesses; a fourth measured
# no faster (192 s against 193 s, 2026-12-05).
WORKERS=${WORKERS:-3}
CHECKS=${CHECKS:-}
PHASES=${PHASES:-auto}
BACKGROUND_SHARE=${BACKGROUND_SHARE:-64}   # of 1024 (cgroup v1 cpu.shares), in step 2
# Each phase its own pytest base folder: two pytest sessions at once would otherwise number
# theirs in one folder and clear each other's old ones.
BASE=${TMPDIR:-/tmp}/acceval-tests-$(id -u)
common=(-q -p no:cacheprovider --durations=20 "$@")

# Bytecode caches, written once. A host may set PYTHONDONTWRITEBYTECODE=1 (this project's
# machines do); then each of the few hundred interpreters the suite starts (CLI runs, local
# servers, training ranks, Ray workers) compiles acceval from source again, about 0.25 s of
# CPU each on a fresh clone, and pytest rewrites every test module on every worker. The
# caches go to __pycache__/ folders, which git ignores.
unset PYTHONDONTWRITEBYTECODE
"$(dirname "$PYTEST")/python" -m compileall -q -j 0 src tests/helpers >/dev/null

# The timing phase collects only the files that mark a test `timing` (found by their text, as
# tests/unit/test_timing_marks.py finds them), not the whole suite: about 10 s of collection
# saved. When the command line names anything but options, that is collected instead.
timing_files=()
named=0
for arg in "$@"; do [[ $arg == -* ]] || named=1; done
if ((named == 0)); then
  mapfile -t timing_files < <(grep -rlE --include='test_*.py' 'mark\.timing' tests | sort)
fi

# background_group: create a CPU control group and print its folder; fail (printing nothing)
# where the host does not let us. set_group DIR idle|weight: its class for the next step.
background_group() {
  local dir
  for base in /sys/fs/cgroup/cpu /sys/fs/cgroup; do   # cgroup v1's cpu controller, then v2
    [ -f "$base/cpu.idle" ] || [ -f "$base/cgroup.subtree_control" ] || continue
    [ -w "$base" ] || continue
    if [ "$base" = /sys/fs/cgroup ]; then
      grep -qw cpu "$base/cgroup.subtree_control" 2>/dev/null || continue
    fi
    dir="$base/acceval-tests-$$"
    if mkdir "$dir" 2>/dev/null; then
      if [ -f "$dir/cpu.idle" ] && set_group "$dir" weight; then
        echo "$dir"; return 0
      fi
      rmdir "$dir" 2>/dev/null
    fi
  done
  return 1
}

set_group() {
  local dir=$1
  if [ "$2" = idle ]; then
    echo 1 >"$dir/cpu.idle" 2>/dev/null
  elif [ -f "$dir/cpu.shares" ]; then
    echo 0 >"$dir/cpu.idle" 2>/dev/null && echo "$BACKGROUND_SHARE" >"$dir/cpu.shares" 2>/dev/null
  else  # v2: cpu.weight 1-10000, default 100
    echo 0 >"$dir/cpu.idle" 2>/dev/null \
      && echo $(( (BACKGROUND_SHARE * 100 + 1023) / 1024 )) >"$dir/cpu.weight" 2>/dev/null
  fi
}

results=()
note() {  # note NAME RC SECONDS: one line of the summary
  results+=("$1: $( (($2 == 0)) && echo passed || echo "FAILED (exit $2)"), $3 s")
}

# run_parallel LOG: the parallel phase and the checks beside it; their exit codes and times
# go to LOG.rc as "first SECONDS checks SECONDS_AFTER_START".
run_parallel() {
  local start=$SECONDS checks=0 checks_pid="" checks_log="$1.checks"
  if [ -n "$CHECKS" ]; then
    bash -c "$CHECKS" >"$checks_log" 2>&1 &
    checks_pid=$!
  fi
  "$PYTEST" "${common[@]}" --basetemp="$BASE/parallel" -n "$WORKERS" --dist loadfile \
    -m "not timing"
  local first=$? took=$((SECONDS - start))
  ((first == 5 && named)) && first=0   # a run naming only timing tests' files selects none
  [ -n "$checks_pid" ] && { wait "$checks_pid"; checks=$?; }
  echo "$first $took $checks $((SECONDS - start))" >"$1.rc"
}

report_parallel() {  # report_parallel LOG: its results, after the phase ended
  local first took checks done
  if ! read -r first took checks done 2>/dev/null <"$1.rc"; then
    note "parallel phase (did not run: see above)" 1 0
    return 1
  fi
  note "parallel phase (not timing, workers: $WORKERS)" "$first" "$took"
  if [ -n "$CHECKS" ]; then
    echo; echo "--- checks beside the parallel phase: $CHECKS"
    cat "$1.checks"
    results+=("checks ($CHECKS): $( ((checks == 0)) && echo passed || echo "FAILED (exit $checks)"), done $done s after the start")
  fi
  return $((first != 0 || checks != 0))
}

timing_phase() {  # timing_phase WHAT MARKS BASETEMP: the timing tests MARKS select
  local start=$SECONDS
  "$PYTEST" "${common[@]}" --basetemp="$BASE/$3" -m "$2" "${timing_files[@]}"
  local rc=$?
  # pytest's 5, no test selected: fine for a run naming files without such tests, a fault in
  # the whole suite (a mark lost)
  ((rc == 5 && named)) && rc=0
  note "timing phase ($1)" $rc $((SECONDS - start))
  return $rc
}

mkdir -p "$BASE"
log=$(mktemp "$BASE/parallel-XXXXXX")
group=""
[ "$PHASES" = sequential ] || group=$(background_group) || group=""
if [ -n "$group" ]; then
  echo "The parallel phase runs in the CPU group $group beside the timing phase; its output" \
       "follows the timing phase's."
  trap 'rmdir "$group" 2>/dev/null' EXIT   # also when the run is interrupted
  timing_phase "quiet, one at a time, alone" "timing and quiet" timing-quiet
  second=$?
  set_group "$group" idle \
    || echo "note: the CPU group could not take the idle class; it keeps weight $BACKGROUND_SHARE/1024"
  ( if echo "$BASHPID" 2>/dev/null >"$group/cgroup.procs"; then run_parallel "$log" >"$log" 2>&1
    else echo "could not join the CPU group $group: run with PHASES=sequential" >"$log"; fi ) &
  bg=$!
  timing_phase "one test at a time, the parallel phase beside it at the idle class" \
    "timing and not cpu_heavy and not quiet" timing
  second=$((second | $?))
  set_group "$group" weight
  timing_phase "cpu_heavy, one at a time, the parallel phase beside it at weight $BACKGROUND_SHARE/1024" \
    "timing and cpu_heavy" timing-heavy
  second=$((second | $?))
  if kill -0 "$bg" 2>/dev/null; then
    echo; echo "--- timing phase done; waiting for the parallel phase"
  fi
  wait "$bg"
  echo; echo "--- parallel phase"
  cat "$log"
  report_parallel "$log"
  first=$?
else
  run_parallel "$log"
  report_parallel "$log"
  first=$?
  timing_phase "alone, one test at a time" timing timing
  second=$?
fi
rm -f "$log" "$log.rc" "$log.checks"
echo
printf '%s\n' "${results[@]}"
((first == 0 && second == 0))
