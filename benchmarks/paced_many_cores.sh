#!/usr/bin/env bash
# The paced setting (50 ms TTFT, 5 ms/token, 64 tokens) on a machine with many cores: the mock
# on its own cores (serve --workers), acceval's clients on the others (one process per core,
# split as `acceval run --clients` splits a point), so that neither side binds the other as
# they do on 2 cores. Prints the paced figures, the cores each side had, and the goal.
#
#   benchmarks/paced_many_cores.sh            # 16 CPUs: mock on 0-5 (6 workers), clients 6-15
#
# Needs no network: the repository and an installed venv (PY, default .venv/bin/python, with
# acceval's core dependencies). The peers are not installed on such a machine, so the ratio is
# taken against PEER_RPS, the fastest peer's paced rate measured elsewhere (docs/benchmarks.md,
# 2026-12-06 11:24 sitting: vllm bench serve, 1,153 req/s on 2 cores; issue 31's sitting had
# inference-perf's 736); with PEERS=vllm-bench,... and their venvs present they
# are measured here instead. About 5 minutes: 3 client counts x 2 rounds x 22 s, then each
# one's half-max point (HALF_ROUNDS runs, 1 by default: a lent machine's time is short).
# Exit 3 when a goal is missed (benchmarks/goals.py), 1 on a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
CPUS=$(nproc)
SERVER_CPUS=${SERVER_CPUS:-0-$((CPUS * 3 / 8 - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-$((CPUS * 3 / 8))-$((CPUS - 1))}
WORKERS=${WORKERS:-$((CPUS * 3 / 8))}
CLIENTS=${CLIENTS:-1,4,$((CPUS - CPUS * 3 / 8))}
# 365 ms a request: 8192 in flight allow 22,400 req/s (Little's law), 10x the best peer's.
CONCURRENCY=${CONCURRENCY:-8192}
PEERS=${PEERS:-none}
PEER_RPS=${PEER_RPS:-1153}
HALF_ROUNDS=${HALF_ROUNDS:-1}
DURATION=${DURATION:-22}

"$PY" -c "import acceval, numpy, psutil" || {
  echo "no usable venv at $PY (set PY=...; it needs acceval's core dependencies)" >&2; exit 1; }
# This tree's acceval, whatever the venv has installed (the copy may sit elsewhere).
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
# Every connection is a descriptor, on both sides.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "host: $CPUS CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); mock: $WORKERS workers on" \
     "CPUs $SERVER_CPUS; acceval: clients $CLIENTS on CPUs $CLIENT_CPUS; concurrency" \
     "$CONCURRENCY; peers: $PEERS (else the reference $PEER_RPS req/s)"

ref=()
if [ "$PEERS" = none ]; then ref=(--peer-reference "paced=$PEER_RPS"); fi
exec "$PY" benchmarks/loadgen.py --settings paced --peers "$PEERS" \
  --server-cpu "$SERVER_CPUS" --server-workers "$WORKERS" \
  --acceval-cpu "$CLIENT_CPUS" --client-cpu "$CLIENT_CPUS" --no-unpinned \
  --clients "$CLIENTS" --concurrency "$CONCURRENCY" \
  --duration "$DURATION" --poisson-rounds 0 --half-rounds "$HALF_ROUNDS" --code tree \
  "${ref[@]}" "$@"
