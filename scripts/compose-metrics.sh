#!/usr/bin/env bash
# Sourced by compose-test.sh: Prometheus in the compose stack, checked from the host.
#   metrics_config DIR        deploy/prometheus copied to DIR for the test: scrapes and rule
#                             evaluation every 2 s, DNS refreshed every 5 s, and every alert's
#                             `for:` cut to 10 s so an alert fires within the test (promtool's
#                             unit tests in `make test` cover the real durations)
#   prom_query EXPR           prints the number of series EXPR returns now
#   check_dashboard FILE      runs every panel's query of a Grafana dashboard; fails on one with no data
#   await_alert NAME JOB SECS waits until alert NAME fires for job JOB (Prometheus's /api/v1/alerts)
# Needs PROM_URL (http://127.0.0.1:<port>) and fail() from the caller.

metrics_config() {
    local dir=$1
    rm -rf "$dir"
    cp -r deploy/prometheus "$dir"
    rm -rf "$dir/image" "$dir/tests"
    sed -i -E 's/^(  (scrape|evaluation)_interval|  scrape_timeout): .*/\1: 2s/; s/refresh_interval: .*/refresh_interval: 5s/' "$dir/prometheus.yml"
    sed -i -E 's/^( +for:) .*/\1 10s/' "$dir"/rules/*.yml
    chmod -R a+rX "$dir"
}

prom_query() {
    curl -fsS -G "$PROM_URL/api/v1/query" --data-urlencode "query=$1" \
        | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["data"]["result"]))'
}

check_dashboard() {
    local file=$1 title expr n empty=0
    while IFS=$'\t' read -r title expr; do
        n=$(prom_query "$expr") || n="error"
        printf '  %-42s %s series\n' "$title" "$n"
        if [ "$n" = "error" ] || [ "$n" = 0 ]; then empty=$((empty + 1)); fi
    done < <(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["panels"]:
    for t in p.get("targets", []):
        print(p["title"] + "\t" + t["expr"])' "$file")
    [ "$empty" -eq 0 ] || fail "$empty dashboard panels returned no data from Prometheus"
}

await_alert() {
    local name=$1 job=$2 deadline=$(( $(date +%s) + $3 )) state
    while [ "$(date +%s)" -lt "$deadline" ]; do
        state=$(curl -fsS "$PROM_URL/api/v1/alerts" | python3 -c '
import json, sys
alerts = json.load(sys.stdin)["data"]["alerts"]
states = [a["state"] for a in alerts if a["labels"].get("alertname") == sys.argv[1] and a["labels"].get("job") == sys.argv[2]]
print("firing" if "firing" in states else (states[0] if states else "none"))' "$name" "$job" 2>/dev/null || echo "none")
        [ "$state" = firing ] && return 0
        sleep 2
    done
    fail "alert $name for $job did not fire within $3 s (last state: $state)"
}
