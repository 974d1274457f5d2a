#!/usr/bin/env bash
# The statements PostgreSQL ran from a load run's spike to 10 s after it (pg_stat_statements),
# next to a running scripts/load-run.sh whose cluster was started with
#   CHRONIR_PG_OPTS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on"
# Waits for the spike (from .run/load/progress.log), resets the counters 1 s before it, and
# writes the top statements by total (planning + execution) time to .run/load/statements.txt,
# with the whole cluster's WAL over the same window (pg_stat_wal: records, full-page images, bytes).
#   scripts/statements-window.sh [SECONDS_AFTER_SPIKE]
set -euo pipefail
cd "$(dirname "$0")/.."
after=${1:-10}
url=$(scripts/pg.sh url "${CHRONIR_PG_PORT:-55433}" | sed "s,/postgres$,/chronir,")
until grep -q "spike at" .run/load/progress.log 2>/dev/null; do sleep 1; done
spike=$(date -d "$(grep -o 'spike at [^)]*' .run/load/progress.log | head -1 | cut -d' ' -f3)" +%s)
psql -q "$url" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
while [ "$(date +%s)" -lt "$((spike - 1))" ]; do sleep 0.2; done
psql -q "$url" -c "SELECT pg_stat_statements_reset(), pg_stat_reset_shared('wal')" >/dev/null
from=$(psql -qtA "$url" -c "SELECT pg_current_wal_insert_lsn()")
while [ "$(date +%s)" -lt "$((spike + after))" ]; do sleep 0.2; done
to=$(psql -qtA "$url" -c "SELECT pg_current_wal_insert_lsn()")
# The window's WAL by record type: pg_waldump --stats=record -s "$from" -e "$to" -p <data dir>/pg_wal
echo "WAL of the window: $from to $to" > .run/load/wal-window.txt
psql "$url" > .run/load/statements.txt <<'SQL'
SELECT round(sum(total_plan_time)::numeric) AS plan_ms, round(sum(total_exec_time)::numeric) AS exec_ms, sum(calls) AS calls,
       sum(plans) AS plans, round(sum(wal_bytes) / 1e6, 1) AS wal_mb, sum(wal_records) AS wal_records, sum(wal_fpi) AS wal_fpi
FROM pg_stat_statements;
SELECT wal_records, wal_fpi, round(wal_bytes / 1e6, 1) AS wal_mb, wal_buffers_full FROM pg_stat_wal;
SELECT round(total_plan_time::numeric) AS plan_ms, plans, round(total_exec_time::numeric) AS exec_ms, calls, rows,
       round(wal_bytes / 1e6, 1) AS wal_mb, wal_records, wal_fpi, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
FROM pg_stat_statements ORDER BY total_plan_time + total_exec_time DESC LIMIT 25;
SQL
echo "statements from the spike to +${after} s: .run/load/statements.txt"
