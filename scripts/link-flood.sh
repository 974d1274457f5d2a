#!/usr/bin/env bash
# Issue 57's hashing-flood figure: an honest user's login latency while anonymous accounts flood
# `POST /v1/auth/link` with a taken address (each such call cost a full scrypt hash before issue
# 57). Starts its own copy of the suite (HTTP on 18191; CHRONIR_BIN_DIR=DIR runs other binaries
# as they are, for a before/after pair), logs in for LINK_SECONDS (30) with LINK_FLOODERS (8)
# flooders, and prints the honest logins' p50/p99 and what the flood got.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.run/link-flood
mkdir -p "$out"
scripts/deps.sh >/dev/null
port=${LINK_HTTP_PORT:-18191}
. scripts/suite-start.sh
suite_start CHRONIR_PG_PORT="${LINK_PG_PORT:-55438}" CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR=100000
python3 - "$port" <<'PY'
import http.client, json, os, sys, threading, time
port = int(sys.argv[1])
seconds, flooders = float(os.environ.get("LINK_SECONDS", 30)), int(os.environ.get("LINK_FLOODERS", 8))
def call(method, path, body=None, token=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
    r = c.getresponse(); data = r.read(); c.close()
    return r.status, data
email = f"honest-{int(time.time())}@example.com"
status, data = call("POST", "/v1/auth/signup", {"email": email, "password": "correct horse battery", "displayName": "Honest", "timezone": "UTC"})
assert status == 201, (status, data[:200])
anon = []
for _ in range(flooders):
    status, data = call("POST", "/v1/auth/anonymous", {"timezone": "UTC"})
    assert status == 201, (status, data[:200])
    anon.append(json.loads(data)["accessToken"])
stop = time.time() + seconds
answers, lock = {}, threading.Lock()
def flood(token):
    while time.time() < stop:
        try:
            status, data = call("POST", "/v1/auth/link", {"email": email, "password": "another long password"}, token)
            key = str(status) + " " + json.loads(data or b"{}").get("code", "")
        except OSError as e:
            key = type(e).__name__
        with lock: answers[key] = answers.get(key, 0) + 1
logins = []
def honest():
    time.sleep(1)
    while time.time() < stop:
        t = time.time()
        status, _ = call("POST", "/v1/auth/login", {"email": email, "password": "correct horse battery"})
        logins.append((time.time() - t, status))
threads = [threading.Thread(target=flood, args=(a,)) for a in anon] + [threading.Thread(target=honest)]
for t in threads: t.start()
for t in threads: t.join()
ms = sorted(d * 1000 for d, _ in logins)
p = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
print(f"link-flood: {flooders} flooders for {seconds:.0f} s; flood answers {dict(sorted(answers.items()))}")
print(f"link-flood: honest logins {len(ms)} ({dict((s, sum(1 for _, x in logins if x == s)) for s in set(x for _, x in logins))}), p50 {p(0.5):.0f} ms, p99 {p(0.99):.0f} ms, max {ms[-1]:.0f} ms")
PY
