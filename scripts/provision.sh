#!/usr/bin/env bash
# Creates the database, one role per service and one schema owned by each role.
#   scripts/provision.sh ADMIN_URL DATABASE   (idempotent)
# Prints nothing; each service then connects as chronir_<service> to DATABASE.
set -euo pipefail
admin=${1:?admin url}; db=${2:?database}
services="accounts alarms scheduler notifications invitations billing"
psql -q -v ON_ERROR_STOP=1 "$admin" -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 \
  || psql -q -v ON_ERROR_STOP=1 "$admin" -c "CREATE DATABASE \"$db\""
dburl="${admin%/*}/$db"
for s in $services; do
  psql -q -v ON_ERROR_STOP=1 "$dburl" <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chronir_$s') THEN
    CREATE ROLE chronir_$s LOGIN PASSWORD 'chronir_$s';
  END IF;
END \$\$;
CREATE SCHEMA IF NOT EXISTS $s AUTHORIZATION chronir_$s;
REVOKE ALL ON SCHEMA $s FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
SQL
done
