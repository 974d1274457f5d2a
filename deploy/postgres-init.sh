#!/bin/sh
# Runs once on a new PostgreSQL volume: one role and one schema per service.
set -eu
for s in accounts alarms scheduler notifications invitations billing; do
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE chronir_$s LOGIN PASSWORD 'chronir_$s';
CREATE SCHEMA $s AUTHORIZATION chronir_$s;
REVOKE ALL ON SCHEMA $s FROM PUBLIC;
SQL
done
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -c "REVOKE CREATE ON SCHEMA public FROM PUBLIC"
