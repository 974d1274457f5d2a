#!/bin/sh
# Runs once on a new PostgreSQL volume: one role and one schema per service. Each role's password
# is the compose secret db_<service> (/run/secrets/db_<service>; deploy/generate-secrets.sh
# makes them), never written in compose.yaml.
set -eu
for s in accounts alarms scheduler notifications invitations billing; do
  file=/run/secrets/db_$s
  [ -r "$file" ] || { echo "postgres-init: $file is missing or unreadable (run deploy/generate-secrets.sh)" >&2; exit 1; }
  password=$(head -n 1 "$file")
  case "$password" in
    *\'*|"") echo "postgres-init: $file must hold one line without quotes" >&2; exit 1 ;;
  esac
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" >/dev/null <<SQL
CREATE ROLE chronir_$s LOGIN PASSWORD '$password';
CREATE SCHEMA $s AUTHORIZATION chronir_$s;
REVOKE ALL ON SCHEMA $s FROM PUBLIC;
SQL
done
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -c "REVOKE CREATE ON SCHEMA public FROM PUBLIC"
