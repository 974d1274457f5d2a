#!/usr/bin/env bash
# A throwaway local PostgreSQL cluster for `make run` and `make test`.
#   scripts/pg.sh start DIR PORT [fast]   create (if needed) and start a cluster in DIR on 127.0.0.1:PORT
#   scripts/pg.sh stop DIR                stop it (fast shutdown)
#   scripts/pg.sh restart DIR [immediate] restart it with its options (fast shutdown, or immediate:
#                                         a crash, recovered from the WAL at start)
#   scripts/pg.sh url PORT                print the admin URL
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user.
# "fast" turns off fsync (tests only: a crash of the machine may lose the test cluster).
set -euo pipefail

pg_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$d" ] || [ ! -x "$d/initdb" ]; then
        echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2
        exit 1
    fi
    echo "$d"
}

as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cmd=${1:?usage: pg.sh start|stop|url ...}
case "$cmd" in
start)
    dir=${2:?data directory}; port=${3:?port}; mode=${4:-durable}
    bin=$(pg_bin)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir"; chmod 700 "$dir"; fi
    if [ ! -f "$dir/PG_VERSION" ]; then
        as_pg "$bin/initdb" -D "$dir" -U postgres -A trust -E UTF8 --no-sync >/dev/null
    fi
    if as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
        echo "PostgreSQL already running in $dir" >&2
        exit 0
    fi
    # Checkpoints at most every 15 min / 4 GB of WAL: a write-heavy burst otherwise starts one
    # every few minutes and pays a full page image for every page it touches first after it.
    opts="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=600 -c shared_buffers=256MB"
    opts="$opts -c checkpoint_timeout=15min -c max_wal_size=4GB -c wal_compression=on"
    if [ "$mode" = fast ]; then opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"; fi
    # CHRONIR_PG_OPTS: more server options, e.g. for a profile
    # "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all".
    opts="$opts ${CHRONIR_PG_OPTS:-}"
    as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -o "$opts" -w -t 60 start >/dev/null
    echo "PostgreSQL started in $dir on 127.0.0.1:$port" >&2
    ;;
stop)
    dir=${2:?data directory}
    bin=$(pg_bin)
    [ -f "$dir/PG_VERSION" ] || exit 0
    as_pg "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
    ;;
restart)
    dir=${2:?data directory}; how=${3:-fast}
    bin=$(pg_bin)
    as_pg "$bin/pg_ctl" -D "$dir" -m "$how" -w -t 60 restart >/dev/null
    ;;
url)
    echo "postgres://postgres@127.0.0.1:${2:?port}/postgres"
    ;;
*)
    echo "unknown command $cmd" >&2; exit 2 ;;
esac
