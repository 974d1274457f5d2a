#!/bin/bash
# The last A/B load run's window of WAL (scripts/load-ab.sh) by relation: the 25 largest
# (relation, record type) pairs of heap and B-tree records, with their counts and bytes; names
# from pg_class (the run's cluster in .run/lpg is started for that and stopped again).
#   scripts/wal-by-relation.sh
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .run/ab
read -r _ _ _ _ from _ to < .run/load/wal-window.txt
wd=$(dpkg -L postgresql-15 | grep 'bin/pg_waldump$')
$wd -s "$from" -e "$to" -p .run/lpg/pg_wal 2>/dev/null | python3 -c '
import sys, re, collections
c=collections.Counter(); b=collections.Counter()
for l in sys.stdin:
    m=re.search(r"rmgr: (\w+)\s+len \(rec/tot\):\s+\d+/\s*(\d+),.*desc: (\w+).*?rel \d+/\d+/(\d+)", l)
    if not m: continue
    k=(m.group(4), m.group(1), m.group(3)); c[k]+=1; b[k]+=int(m.group(2))
for k,v in sorted(b.items(), key=lambda x:-x[1])[:25]: print(k[0], k[1], k[2], c[k], v)
' > .run/ab/byrel.txt
scripts/pg.sh start .run/lpg 55433 >/dev/null 2>&1
while read -r node rm desc n bytes; do
  name=$(psql -qtA "postgres://postgres@127.0.0.1:55433/chronir" -c "SELECT n.nspname||'.'||c.relname FROM pg_class c JOIN pg_namespace n ON n.oid=c.relnamespace WHERE c.relfilenode=$node")
  printf "%-45s %-6s %-14s %8s %10s\n" "${name:-$node}" "$rm" "$desc" "$n" "$bytes"
done < .run/ab/byrel.txt
scripts/pg.sh stop .run/lpg >/dev/null 2>&1
