#!/bin/sh
# Makes the compose secrets that do not exist yet, each a random 48-hex-digit line:
#   postgres_password   the PostgreSQL superuser (chronir)
#   db_<service>        the password of role chronir_<service>, one per service
#   grafana_admin_password   Grafana's admin (user admin)
#   key_encryption_key  32 random bytes in base64: accounts seals the JWT signing keys with it
#                       (CHRONIR_KEY_ENCRYPTION_KEY_FILE); lose it and every session ends
# Usage: deploy/generate-secrets.sh [DIR]   (default: deploy/secrets; compose reads
# CHRONIR_SECRETS_DIR, default ./secrets next to compose.yaml). The directory is 0700: the
# files themselves are 0644 because compose mounts them as they are into containers whose
# users (postgres, 10001) must read them. Existing files are kept: a password changed after
# the database volume was made must also be changed in PostgreSQL (docs/operations.md).
set -eu
dir=${1:-$(dirname "$0")/secrets}
mkdir -p "$dir"
chmod 700 "$dir"
made=""
for name in postgres_password db_accounts db_alarms db_scheduler db_notifications db_invitations db_billing grafana_admin_password; do
  [ -s "$dir/$name" ] && continue
  umask 022
  od -An -N24 -tx1 /dev/urandom | tr -d ' \n' > "$dir/$name.tmp"
  echo >> "$dir/$name.tmp"
  chmod 644 "$dir/$name.tmp"
  mv "$dir/$name.tmp" "$dir/$name"
  made="$made $name"
done
if ! [ -s "$dir/key_encryption_key" ]; then
  umask 022
  head -c 32 /dev/urandom | base64 > "$dir/key_encryption_key.tmp"
  chmod 644 "$dir/key_encryption_key.tmp"
  mv "$dir/key_encryption_key.tmp" "$dir/key_encryption_key"
  made="$made key_encryption_key"
fi
echo "secrets in $dir:${made:- all present}"
