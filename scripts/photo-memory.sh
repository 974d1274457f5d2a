#!/usr/bin/env bash
# Issue 57's photo-memory figure: the resident memory of the gateway and alarms while 64 clients
# upload 5 MiB photos at once (each client a few uploads in a row). Starts its own copy of the
# suite (`make run` on a throwaway PostgreSQL, HTTP on 18190), prints RSS before, the peak during
# and after, and the answers (200, and 503 CA022 past CHRONIR_PHOTO_UPLOADS).
#   PHOTO_CLIENTS=64 PHOTO_ROUNDS=3 PHOTO_MIB=5   the load; CHRONIR_* passes through to the suite
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=.run/photo-memory
mkdir -p "$out"
scripts/deps.sh >/dev/null
port=${PHOTO_HTTP_PORT:-18190}
. scripts/suite-start.sh
suite_start CHRONIR_PG_PORT="${PHOTO_PG_PORT:-55437}" CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=1000 CHRONIR_ALARM_CREATIONS_PER_MINUTE=100000 \
    CHRONIR_PHOTO_UPLOADS_PER_MINUTE=1000 CHRONIR_PHOTO_UPLOADS="${CHRONIR_PHOTO_UPLOADS:-8}"
bin=$(swift build --show-bin-path)
email="photos-$(date +%s)@example.com"
auth=$(curl -fsS -X POST "http://127.0.0.1:$port/v1/auth/signup" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$email\",\"password\":\"correct horse battery\",\"displayName\":\"Photos\",\"timezone\":\"UTC\"}")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])' <<<"$auth")
uid=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["user"]["uid"])' <<<"$auth")
CHRONIR_BUS_KEYS=$root/.run/keys "$bin/chronirctl" tier set --user "$uid" --tier premium >/dev/null
sleep 2
pids=$(for s in gateway alarms; do pgrep -f "$bin/$s\$" | head -1; done | tr '\n' ' ')
python3 - "$port" "$token" "$pids" <<'PY'
import http.client, json, os, sys, threading, time
port, token, pids = int(sys.argv[1]), sys.argv[2], sys.argv[3].split()
names = ["gateway", "alarms"]
clients, rounds, mib = int(os.environ.get("PHOTO_CLIENTS", 64)), int(os.environ.get("PHOTO_ROUNDS", 3)), int(os.environ.get("PHOTO_MIB", 5))
def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"): return int(line.split()[1]) // 1024
def call(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    h = {"Authorization": f"Bearer {token}"} | (headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse(); data = r.read(); c.close()
    return r.status, data
schedule = {"type": "monthly", "dayOfMonth": 1, "monthlyType": "fixed", "timeOfDay": "09:00", "timezone": "UTC", "startDate": "2026-01-01T00:00:00Z"}
ids = []
for i in range(clients):
    status, data = call("POST", "/v1/alarms", json.dumps({"title": f"Photo {i}", "schedule": schedule}), {"Content-Type": "application/json"})
    assert status == 201, (status, data[:300])
    ids.append(json.loads(data)["id"])
before = {n: rss(p) for n, p in zip(names, pids)}
peak = dict(before)
done = threading.Event()
def sample():
    while not done.is_set():
        for n, p in zip(names, pids): peak[n] = max(peak[n], rss(p))
        time.sleep(0.05)
answers = {}
lock = threading.Lock()
# A JPEG's magic bytes first: the gateway checks the type by content, not only the header.
body = b"\xff\xd8\xff\xe0" + os.urandom(mib * 1024 * 1024 - 68)
def upload(alarm):
    for _ in range(rounds):
        try:
            status, data = call("PUT", f"/v1/alarms/{alarm}/photo", body, {"Content-Type": "image/jpeg"})
            key = str(status) + ("" if status == 200 else " " + json.loads(data or b"{}").get("code", "?"))
        except OSError as e:  # answered (503) and closed before the whole body was sent
            key = type(e).__name__
        with lock: answers[key] = answers.get(key, 0) + 1
sampler = threading.Thread(target=sample); sampler.start()
started = time.time()
threads = [threading.Thread(target=upload, args=(a,)) for a in ids]
for t in threads: t.start()
for t in threads: t.join()
elapsed = time.time() - started
time.sleep(1); done.set(); sampler.join()
after = {n: rss(p) for n, p in zip(names, pids)}
print(f"photo-memory: {clients} clients x {rounds} uploads of {mib} MiB in {elapsed:.1f} s; answers {dict(sorted(answers.items()))}")
for n in names:
    print(f"photo-memory: {n:8s} RSS before {before[n]:5d} MiB, peak {peak[n]:5d} MiB, after {after[n]:5d} MiB")
PY
