#!/usr/bin/env python3
"""The soak's fault schedule, drawn from its seed alone (issue 75): the same seed, minutes and
replicas give the same schedule, printed at the start of every run.

    scripts/soak_plan.py --seed S --minutes M --replicas N [--lead L]

One line per episode, in time order:

    <seconds after the first due instant> <class> <victim> <parameter> <pick>

Episodes are aligned to the stages of the fire and completion paths around each due minute:
the scheduler records and relays a fire `--lead` (CHRONIR_FIRE_LEAD, 10 s) before it is due,
notifications writes the inbox rows, the gateway rings at the instant, members complete a few
hundred milliseconds later and the completion fans out. Each minute gets three episodes in
three different stages; some start together with a second one (overlapping faults). A
victim, a service (both replicas down is not a fault the suite promises to ride out) and
PostgreSQL are each busy from an episode's start until it can have recovered, so no episode
hits what another still holds.

Classes (parameter):
  kill       SIGKILL any replica, first ones and gateways included (seconds down)
  stop       SIGSTOP any replica (seconds frozen; half the draws pass the consumers' 10 s
             idle timeout, so the paused-replica path runs)
  pg         PostgreSQL restarted (fast or immediate)
  failpoint  a consumer replica restarted with CHRONIR_FAILPOINT_KILL_BEFORE_CHECKPOINT: it
             SIGKILLs itself inside a consumer transaction, events applied, checkpoint not
             written (which application: 1…4; pick chooses the stream)
  blackhole  a service replica's bus ports (request and publish) dropped on loopback by
             iptables, both directions (seconds)
  conns      every database connection of one service terminated (pg_terminate_backend)
  clock      a gateway, notifications or scheduler replica restarted under libfaketime with its
             wall clock stepped (signed seconds, 2…8 either way; the monotonic clock left
             alone), for 20 s, then restarted with the host's clock
"""
import argparse
import random

SERVICES = ["accounts", "alarms", "scheduler", "notifications", "invitations", "billing"]
BUSY_CONSUMERS = ["alarms", "scheduler", "notifications"]
CLASSES = ["kill", "stop", "pg", "failpoint", "blackhole", "conns", "clock"]
# The processes whose own clock could decide when something rings or is due.
CLOCKED = ["gateway", "notifications", "scheduler"]
# How long a replica runs with its clock stepped.
CLOCK_SECONDS = 20
# Seconds relative to the due instant (lead 10 s): where each stage of the paths runs.
def stages(lead):
    return {
        "record": (-lead - 2.5, -lead + 0.5),    # fires recorded and relayed
        "relay": (-lead + 1.0, -3.0),             # notifications consumes, inbox rows written
        "ring": (-2.0, 1.0),                      # the gateway rings at the instant
        "complete": (0.2, 3.0),                   # members complete
        "fanout": (3.0, 12.0),                    # completions fan out
        "quiet": (20.0, 40.0),                    # between minutes
    }
# How long after its fault ends an episode keeps its victim (recovery is measured within 60 s;
# most take seconds).
RECOVERY = 20


def plan(seed, minutes, replicas, lead):
    rng = random.Random(seed)
    st = stages(lead)
    replicas_of = {s: [f"{s}-{k}" for k in range(1, replicas + 1)] for s in SERVICES + ["gateway"]}
    held = []  # (key: a service, "gateway" or "pg", from, to): what each placed episode holds
    out = []

    def free(key, at, duration):
        """Whether `key` is held by no placed episode over [at, at + duration + RECOVERY]; "pg"
        (PostgreSQL restarted) holds everything, and is held by anything."""
        end = at + duration + RECOVERY
        return not any(s < end and at < e and (k == key or k == "pg" or key == "pg") for k, s, e in held)

    bag = []  # classes still to place in this round: every class comes up in turn

    def draw(at, taken):
        """One episode at `at` (the first class of the bag that can be placed then, taken out
        of it), or None when everything it could hit is held."""
        if not bag:
            bag.extend(rng.sample(CLASSES, len(CLASSES)))
        for attempt in range(40):
            cls = bag[attempt % len(bag)]
            if attempt >= len(bag) * 4:
                return None
            if cls == "pg":
                # Not while anything else is going on: a service started again must reach its
                # database to start at all.
                if taken or not free("pg", at, 10):
                    continue
                how = rng.choice(["fast", "immediate"])
                bag.remove(cls)
                return (cls, "postgresql", how, 0, 10)
            if cls == "conns":
                svc = rng.choice(SERVICES)
                if not free(svc, at, 5) or svc in taken:
                    continue
                bag.remove(cls)
                return (cls, svc, 0, 0, 5)
            # Failpoints where consumer transactions run all the time (the fire and completion paths).
            pool = (SERVICES + ["gateway"] if cls in ("kill", "stop") else BUSY_CONSUMERS if cls == "failpoint"
                    else CLOCKED if cls == "clock" else list(SERVICES))
            svc = rng.choice(pool)
            victim = rng.choice(replicas_of[svc])
            if svc in taken:
                continue
            if cls == "kill":
                param = rng.randint(1, 6)
            elif cls == "stop":
                param = rng.randint(3, 8) if rng.random() < 0.5 else rng.randint(12, 25)
            elif cls == "failpoint":
                param = rng.randint(1, 4)
            elif cls == "clock":
                param = rng.choice([-1, 1]) * rng.randint(2, 8)
            else:  # blackhole
                param = rng.randint(5, 20)
            # How long the fault lasts: a failpoint waits up to 30 s for its application, then a relaunch.
            duration = 32 + param if cls == "failpoint" else CLOCK_SECONDS if cls == "clock" else param
            pick = rng.randint(0, 999)
            if not free(svc, at, duration):
                continue
            bag.remove(cls)
            return (cls, victim, param, pick, duration)
        return None

    # Faults end before the load audits (it reads every inbox back about 50 s after the last
    # instant, with --drain 45): a fault then would judge the audit, not the suite.
    last_end = 60.0 * (minutes - 1) + 40
    for m in range(minutes):
        due = 60.0 * m
        for stage in rng.sample(list(st), 3):
            lo, hi = st[stage]
            at = round(due + rng.uniform(lo, hi), 1)
            group = 2 if rng.random() < 0.3 else 1
            taken = set()
            for g in range(group):
                t = round(at + (rng.uniform(0, 1) if g else 0), 1)
                e = draw(t, taken)
                if e is None:
                    continue
                cls, victim, param, pick, duration = e
                if t + duration > last_end:
                    continue
                key = "pg" if cls == "pg" else victim if cls == "conns" else victim.rsplit("-", 1)[0]
                held.append((key, t, t + duration + RECOVERY))
                taken.add(key)
                out.append((t, cls, victim, param, pick, stage))
    out.sort(key=lambda e: e[0])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--minutes", type=int, required=True)
    ap.add_argument("--replicas", type=int, required=True)
    ap.add_argument("--lead", type=float, default=10.0)
    a = ap.parse_args()
    for t, cls, victim, param, pick, stage in plan(a.seed, a.minutes, a.replicas, a.lead):
        print(f"{t:.1f} {cls} {victim} {param} {pick} {stage}")


if __name__ == "__main__":
    main()
