#!/bin/sh
# First start: initdb with POSTGRES_USER as superuser, create POSTGRES_DB, run the scripts in
# /docker-entrypoint-initdb.d; then run PostgreSQL in the foreground as the postgres user.
set -eu
# POSTGRES_PASSWORD_FILE (a compose secret) stands for POSTGRES_PASSWORD, as in the official image.
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then POSTGRES_PASSWORD=$(head -n 1 "$POSTGRES_PASSWORD_FILE"); fi
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}" "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is required}"
export POSTGRES_USER POSTGRES_DB
mkdir -p "$PGDATA"
chown postgres:postgres "$PGDATA"
chmod 700 "$PGDATA"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    chown postgres "$pwfile"
    as_postgres initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
    fi
    for f in /docker-entrypoint-initdb.d/*; do
        case "$f" in
            *.sh) echo "postgres-entrypoint: running $f"; . "$f" ;;
            *.sql) echo "postgres-entrypoint: running $f"; as_postgres psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f "$f" ;;
        esac
    done
    as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres-entrypoint: database initialised"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*'
