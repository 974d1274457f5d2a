#!/usr/bin/env bash
# One measured load run of prebuilt binaries, for A/B runs of two commits on one machine:
# `scripts/load-run.sh --cpu` on an empty cluster with pg_stat_statements, the statements and
# WAL of the spike window (scripts/statements-window.sh), and the window's WAL by record type
# (pg_waldump --stats=record; the cluster keeps its WAL for it). Results in .run/ab/NAME/.
#   scripts/load-ab.sh NAME BIN_DIR [load-run options…]
# Copy each commit's release binaries aside first (`find .build/release -maxdepth 1 -type f
# -executable`), then alternate: base BIN_A, new BIN_B, base BIN_A, new BIN_B.
# scripts/load-summary.py NAME… prints one line per run; scripts/wal-by-relation.sh after a run
# breaks its window's WAL down by table and index.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1 bin=$2; shift 2
rm -rf .run/lpg
export CHRONIR_BIN_DIR=$bin CHRONIR_PG_DIR=.run/lpg
export CHRONIR_PG_OPTS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on -c wal_keep_size=4GB"
scripts/load-run.sh --cpu "$@" > ".run/ab-$name.log" 2>&1 &
run=$!
sleep 15   # load-run has removed the last run's files by now
scripts/statements-window.sh > /dev/null &
window=$!
rc=0; wait $run || rc=$?
wait $window || true
out=.run/ab/$name
mkdir -p "$out"
cp .run/load/*.txt .run/load/report.json "$out/"
read -r _ _ _ _ from _ to < .run/load/wal-window.txt
"$(dpkg -L postgresql-15 | grep 'bin/pg_waldump$')" --stats=record -s "$from" -e "$to" -p .run/lpg/pg_wal > "$out/waldump.txt" 2>&1 || true
echo "run $name: load-run exited $rc; results in $out"
exit $rc
