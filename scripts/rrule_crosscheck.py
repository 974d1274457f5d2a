#!/usr/bin/env python3
"""Cross-checks the schedule engine against python-dateutil's RFC 5545 implementation.

Reads JSON lines {"dtstart", "rrule", "after", "count", "expected"} (instants as Unix seconds),
expands each DTSTART/RRULE with dateutil (zoneinfo time zones: PEP 495 fold=0 reads a time in a
spring-forward gap with the offset before the gap and an ambiguous time as its first occurrence,
as RFC 5545 §3.3.5 says) and prints every case where the first `count` occurrences after `after`
differ. Exit status 1 when any differ.
"""
import json
import sys
from datetime import timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

mismatches = 0
cases = 0
for line in open(sys.argv[1]):
    case = json.loads(line)
    cases += 1
    rule = rrulestr(case["dtstart"] + "\n" + case["rrule"], tzids=lambda name: ZoneInfo(name))
    got = []
    for n, dt in enumerate(rule):
        u = int(dt.astimezone(timezone.utc).timestamp())
        if u > case["after"]:
            got.append(u)
            if len(got) == case["count"]:
                break
        if n > 200000:
            break
    if got != case["expected"]:
        mismatches += 1
        if mismatches <= 20:
            print(json.dumps({"case": case, "dateutil": got}))
print(f"{cases} cases, {mismatches} mismatches", file=sys.stderr)
sys.exit(1 if mismatches else 0)
