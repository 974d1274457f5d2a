#!/usr/bin/env python3
"""Offline checks of the Kubernetes manifests in deploy/k8s (docs/operations.md § Kubernetes).
Run through scripts/check-k8s.sh, which makes the venv (kubernetes-validate, checkov).

    scripts/check-k8s.sh               render the overlays and check them
    scripts/check-k8s.sh --self-test   break copies of deploy/k8s in known ways; each must be caught

For each overlay (dev, production), on a copy of deploy/k8s in which the dev overlay's local/
key and password files are stand-ins (the real ones, if any, are never read):

1. render: `kubectl kustomize` when kubectl is installed, else scripts/k8s_render.py; with
   kubectl, the two must give the same objects (generated names compared without their hash);
2. schema: every object against the Kubernetes OpenAPI schemas of KUBERNETES_VERSIONS,
   strictly (an unknown field fails, and so does a kind with no schema);
3. suite rules checkov cannot know: replicas (MIN_REPLICAS: every Deployment sets an int
   replicas of 2 or more in production, and in the base, rendered alone for this rule; 1 or
   more in dev), except the one a HorizontalPodAutoscaler scales, which must not set replicas
   (each apply would reset the autoscaler's count); a HorizontalPodAutoscaler only for the
   gateway (AUTOSCALED), its target an existing Deployment, minReplicas set, at least
   MIN_REPLICAS and at most maxReplicas; PodDisruptionBudgets by maxUnavailable: 1; the bus
   ports those of Shared/ServiceKit/Config/ServiceDirectory.swift, CHRONIR_SERVICE the
   Deployment's name, probes on /livez and /readyz, every ConfigMap and Secret mounted either
   rendered or one of those the operator creates (EXTERNAL);
4. checkov (--framework kubernetes, offline): no failed check, except those in ACCEPTED, each
   with its reason. Severities need a Prisma Cloud key, so every failed check counts.
"""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import k8s_render  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K8S = os.path.join(ROOT, "deploy", "k8s")
OVERLAYS = ["dev", "production"]
KUBERNETES_VERSIONS = ["1.30.0", "1.33.0"]
SERVICES = ["accounts", "alarms", "scheduler", "notifications", "invitations", "billing"]
PRINCIPALS = SERVICES + ["gateway", "operator"]
# The fewest replicas a Deployment (or an autoscaler's minReplicas) may have, per render. "base"
# is deploy/k8s/base rendered alone, for this rule only. Dev runs one of each on a laptop
# (overlays/dev/replicas.yaml says why).
MIN_REPLICAS = {"base": 2, "production": 2, "dev": 1}
# The Deployments a HorizontalPodAutoscaler may scale, and why the others may not.
AUTOSCALED = {"gateway"}
NOT_AUTOSCALED = {
    "scheduler": "its CPU follows the fires due, in bursts at whole minutes that a CPU average neither "
                 "predicts nor follows in time, and each change of its count moves partitions; "
                 "choose its count for the peak",
}
NOT_AUTOSCALED_DEFAULT = ("each of its replicas opens up to CHRONIR_DB_POOL_SIZE PostgreSQL connections: "
                          "its count is chosen for the database's max_connections, not by CPU")
OPS_PORT = 9100
# What the operator creates in the namespace (overlays/production reads no secret from the tree).
EXTERNAL = ({("ConfigMap", "chronir-bus-public-keys"), ("Secret", "chronir-gateway-ops-token"),
             ("Secret", "chronir-bus-gateway"), ("Secret", "chronir-key-encryption-key")}
            | {("Secret", f"chronir-bus-{s}") for s in SERVICES} | {("Secret", f"chronir-db-{s}") for s in SERVICES})
# checkov checks that may fail, per overlay, and why. Keep this short.
ACCEPTED = {
    ("dev", "CKV_K8S_43"): "dev runs an image built locally and loaded into the cluster "
                           "(kind load): it has a tag and no registry digest",
    ("dev", "CKV_K8S_15"): "with that local image, imagePullPolicy Always would try a registry "
                           "that does not have it; production pins a digest, which passes",
}
CHECKOV_SKIPPED: dict[str, str] = {}  # --skip-check, for every overlay: none so far


def log(message: str) -> None:
    print(message, flush=True)


# ---------------------------------------------------------------- the copy and its stand-ins

def prepare_copy(source: str, into: str) -> str:
    """A copy of deploy/k8s without the dev overlay's real local/ files, with stand-ins."""
    target = os.path.join(into, "k8s")
    shutil.copytree(source, target, ignore=lambda d, names: ["local"] if os.path.basename(d) == "dev" else [])
    local = os.path.join(target, "overlays", "dev", "local")
    for sub in ("keys/public", "keys/secret", "secrets"):
        os.makedirs(os.path.join(local, sub), exist_ok=True)
    for p in PRINCIPALS:
        write(os.path.join(local, "keys", "public", f"{p}.pub"), f"stand-in-public-key-of-{p}\n")
        write(os.path.join(local, "keys", "secret", f"{p}.key"), f"stand-in-secret-key-of-{p}\n")
    for s in SERVICES:
        write(os.path.join(local, "secrets", f"db_{s}"), f"stand-in-password-of-{s}\n")
    write(os.path.join(local, "ops-token"), "stand-in-ops-token-0123456789\n")
    write(os.path.join(local, "secrets", "key_encryption_key"), "c3RhbmQtaW4ta2V5LWVuY3J5cHRpb24ta2V5LTAxMjM=\n")
    return target


def write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# ---------------------------------------------------------------- 1. render

def kubectl() -> str | None:
    return shutil.which("kubectl")


def render(overlay_dir: str, failures: list[str], name: str) -> list[dict] | None:
    try:
        ours = k8s_render.render(overlay_dir)
    except (k8s_render.RenderError, yaml.YAMLError, OSError) as e:
        failures.append(f"{name}: render (scripts/k8s_render.py): {e}")
        return None
    if not kubectl():
        return ours
    run = subprocess.run([kubectl(), "kustomize", overlay_dir], capture_output=True, text=True)
    if run.returncode != 0:
        failures.append(f"{name}: kubectl kustomize: {run.stderr.strip()}")
        return None
    try:
        theirs = [d for d in yaml.safe_load_all(run.stdout) if d is not None]
    except yaml.YAMLError as e:
        failures.append(f"{name}: kubectl kustomize gave YAML that does not parse: {e}")
        return None
    a, b = without_hashes(theirs), without_hashes(ours)
    if a != b:
        ka, kb = set(a), set(b)
        for k in sorted(ka - kb):
            failures.append(f"{name}: kubectl kustomize has {'/'.join(k)}, scripts/k8s_render.py does not")
        for k in sorted(kb - ka):
            failures.append(f"{name}: scripts/k8s_render.py has {'/'.join(k)}, kubectl kustomize does not")
        for k in sorted(ka & kb):
            if a[k] != b[k]:
                failures.append(f"{name}: {'/'.join(k)} differs between kubectl kustomize and scripts/k8s_render.py")
    return theirs


HASHED = re.compile(r"^(.*)-[2456789bcdfghkmt]{10}$")


def without_hashes(objects: list[dict]) -> dict[tuple, Any]:
    """Objects by (kind, namespace, name), the hash suffixes of generated names replaced by -HASH
    (the kubectl build here hashes otherwise than upstream kustomize's hasher, which the
    renderer follows)."""
    renames = {}
    for o in objects:
        if o.get("kind") in ("ConfigMap", "Secret"):
            m = HASHED.match(o["metadata"]["name"])
            if m:
                renames[o["metadata"]["name"]] = m.group(1) + "-HASH"

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return renames.get(v, v) if isinstance(v, str) else v

    out = {}
    for o in objects:
        o = walk(o)
        out[(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])] = o
    return out


# ---------------------------------------------------------------- 2. schema

def validate_schema(objects: list[dict], failures: list[str], name: str) -> None:
    import functools
    import kubernetes_validate
    import kubernetes_validate.utils as utils
    if not hasattr(utils.schema_contents, "cache_info"):
        # Each call reads the JSON schemas again (_definitions.json is megabytes): read each once.
        utils.schema_contents = functools.lru_cache(maxsize=None)(utils.schema_contents)
    for o in objects:
        what = f"{name}: {o.get('kind')}/{(o.get('metadata') or {}).get('name')}"
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(o, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                path = ".".join(str(p) for p in e.path)
                failures.append(f"{what}: not valid in Kubernetes {e.version}: {path}: {e.message}")
                break
            except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as e:
                failures.append(f"{what}: {e.message}")
                break


# ---------------------------------------------------------------- 3. suite rules

def bus_ports() -> dict[str, int]:
    """The RPC ports of ServiceDirectory.swift (`case .accounts: 7101`)."""
    path = os.path.join(ROOT, "Shared", "ServiceKit", "Config", "ServiceDirectory.swift")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    ports = {m.group(1): int(m.group(2)) for m in re.finditer(r"case \.(\w+): (\d+)", text)}
    if set(ports) != set(SERVICES):
        raise SystemExit(f"check_k8s: could not read the ports of {path} (found {ports})")
    return ports


def pod_spec(o: dict) -> dict:
    return ((o.get("spec") or {}).get("template") or {}).get("spec") or {}


def selects(selector: dict, labels: dict) -> bool:
    match = (selector or {}).get("matchLabels") or {}
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def suite_rules(objects: list[dict], failures: list[str], name: str) -> None:
    ports = bus_ports()
    by_kind: dict[str, list[dict]] = {}
    for o in objects:
        by_kind.setdefault(o.get("kind", ""), []).append(o)
    deployments = {d["metadata"]["name"]: d for d in by_kind.get("Deployment", [])}
    services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
    expected = set(SERVICES) | {"gateway"}
    if set(deployments) != expected:
        failures.append(f"{name}: Deployments are {sorted(deployments)}, expected {sorted(expected)}")

    def fail(what: str, message: str) -> None:
        failures.append(f"{name}: {what}: {message}")

    replica_rules(objects, failures, name)
    for dname, d in deployments.items():
        what = f"Deployment/{dname}"
        spec = pod_spec(d)
        labels = ((d["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get("app.kubernetes.io/part-of") != "chronir":
            fail(what, "pods lack the label app.kubernetes.io/part-of: chronir (the NetworkPolicies select it)")
        if spec.get("automountServiceAccountToken") is not False:
            fail(what, "automountServiceAccountToken must be false")
        containers = spec.get("containers") or []
        if len(containers) != 1:
            fail(what, "one container expected")
            continue
        c = containers[0]
        env = {e.get("name"): e.get("value") for e in c.get("env") or []}
        if env.get("CHRONIR_SERVICE") != dname:
            fail(what, f"CHRONIR_SERVICE is {env.get('CHRONIR_SERVICE')!r}, not {dname!r}")
        named = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}
        if named.get("ops") != OPS_PORT:
            fail(what, f"the port named ops must be {OPS_PORT} (is {named.get('ops')})")
        probe_port = "http" if dname == "gateway" else "ops"
        for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz"), ("startupProbe", "/livez")):
            get = (c.get(probe) or {}).get("httpGet") or {}
            if get.get("path") != path or get.get("port") != probe_port:
                fail(what, f"{probe} must be GET {path} on port {probe_port} (is {get or 'missing'})")
        for kind in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                if not ((c.get("resources") or {}).get(kind) or {}).get(resource):
                    fail(what, f"resources.{kind}.{resource} is missing")
        sc = c.get("securityContext") or {}
        psc = spec.get("securityContext") or {}
        if not (sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False
                and (sc.get("capabilities") or {}).get("drop") == ["ALL"]
                and (sc.get("runAsNonRoot") or psc.get("runAsNonRoot")) is True
                and (sc.get("runAsUser") or psc.get("runAsUser")) == 10001
                and ((sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault")):
            fail(what, "securityContext must be: non-root 10001, read-only root, no privilege escalation, "
                       "capabilities drop ALL, seccomp RuntimeDefault")
        mounts = {m.get("mountPath"): m.get("name") for m in c.get("volumeMounts") or []}
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        if "emptyDir" not in volumes.get(mounts.get("/tmp"), {}):
            fail(what, "/tmp must be an emptyDir (the root filesystem is read-only)")
        if dname in ports:
            if named.get("rpc") != ports[dname]:
                fail(what, f"the port named rpc must be {ports[dname]} (ServiceDirectory.swift), is {named.get('rpc')}")
            events = named.get("events")
            if dname != "scheduler" and events != ports[dname] + 100:
                fail(what, f"the port named events must be {ports[dname] + 100}, is {events}")
            if env.get("PGUSER") != f"chronir_{dname}":
                fail(what, f"PGUSER must be chronir_{dname}")
            if dname == "accounts":
                kek = env.get("CHRONIR_KEY_ENCRYPTION_KEY_FILE") or ""
                if not any(kek.startswith(path.rstrip("/") + "/") for path in mounts):
                    fail(what, "CHRONIR_KEY_ENCRYPTION_KEY_FILE must name a file in a mounted Secret: "
                               "the JWT signing keys are sealed at rest (issue 57)")
            s = services.get(dname)
            if not s:
                fail(what, f"no Service {dname}: its peers reach it as {dname} (CHRONIR_PEER_HOST)")
            else:
                sspec = s.get("spec") or {}
                if sspec.get("clusterIP") != "None":
                    fail(f"Service/{dname}", "must be headless (clusterIP: None): the bus connects to the pods")
                if not selects({"matchLabels": sspec.get("selector")}, labels):
                    fail(f"Service/{dname}", f"does not select the pods of Deployment {dname}")
                sports = {p.get("port") for p in sspec.get("ports") or []}
                if ports[dname] not in sports:
                    fail(f"Service/{dname}", f"lacks the RPC port {ports[dname]}")
        pdbs = [p for p in by_kind.get("PodDisruptionBudget", []) if selects(p["spec"].get("selector"), labels)]
        if len(pdbs) != 1:
            fail(what, f"{len(pdbs)} PodDisruptionBudgets select it, expected 1")
        for p in pdbs:
            if "minAvailable" in p["spec"] or p["spec"].get("maxUnavailable") != 1:
                fail(f"PodDisruptionBudget/{p['metadata']['name']}",
                     "must be maxUnavailable: 1 (one replica at a time; minAvailable over a Deployment "
                     "at one replica, as in dev, blocks every node drain)")
    rendered = {(o["kind"], o["metadata"]["name"]) for o in objects}
    external = EXTERNAL if name == "production" else set()
    for dname, d in deployments.items():
        for ref in references(pod_spec(d)):
            if ref not in rendered and ref not in external:
                fail(f"Deployment/{dname}", f"mounts {ref[0]} {ref[1]}, which is neither rendered nor created "
                                            f"by the operator (EXTERNAL in scripts/check_k8s.py)")


def replica_rules(objects: list[dict], failures: list[str], name: str) -> None:
    """Replicas and HorizontalPodAutoscalers: every Deployment at MIN_REPLICAS[name] or more, set
    in its spec unless an autoscaler scales it; autoscalers for AUTOSCALED only."""
    minimum = MIN_REPLICAS[name]
    deployments = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Deployment"}
    autoscaled: dict[str, str] = {}

    def fail(what: str, message: str) -> None:
        failures.append(f"{name}: {what}: {message}")

    for h in (o for o in objects if o.get("kind") == "HorizontalPodAutoscaler"):
        what = f"HorizontalPodAutoscaler/{h['metadata']['name']}"
        spec = h.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        target = ref.get("name")
        if ref.get("kind") != "Deployment" or target not in deployments:
            fail(what, f"scales {ref.get('kind')} {target}, which is not a Deployment rendered here")
            continue
        if target not in AUTOSCALED:
            fail(what, f"scales {target}: only {', '.join(sorted(AUTOSCALED))} may have an autoscaler; "
                       f"{target} may not: {NOT_AUTOSCALED.get(target, NOT_AUTOSCALED_DEFAULT)}")
            continue
        if target in autoscaled:
            fail(what, f"scales {target}, which HorizontalPodAutoscaler/{autoscaled[target]} scales already")
            continue
        autoscaled[target] = h["metadata"]["name"]
        low, high = spec.get("minReplicas"), spec.get("maxReplicas")
        if not is_int(low) or low < minimum:
            fail(what, f"minReplicas must be set, {minimum} or more (is {low!r})")
        elif not is_int(high) or high < low:
            fail(what, f"minReplicas ({low}) must not be above maxReplicas ({high!r})")
    for dname, d in deployments.items():
        what = f"Deployment/{dname}"
        replicas = (d.get("spec") or {}).get("replicas")
        if dname in autoscaled:
            # The autoscaler owns the count: a replicas in the manifest would be set again by each
            # `kubectl apply`, undoing the autoscaler's.
            if replicas is not None:
                fail(what, f"replicas must not be set: HorizontalPodAutoscaler/{autoscaled[dname]} owns the "
                           f"count, and each apply would reset it to {replicas!r}")
        elif not is_int(replicas) or replicas < minimum:
            fail(what, f"replicas must be set, {minimum} or more (is {replicas!r})"
                 + ("; only a Deployment a HorizontalPodAutoscaler scales may leave it out" if replicas is None else ""))


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def references(spec: dict) -> set[tuple[str, str]]:
    refs = set()
    for v in spec.get("volumes") or []:
        if "configMap" in v:
            refs.add(("ConfigMap", v["configMap"].get("name")))
        if "secret" in v:
            refs.add(("Secret", v["secret"].get("secretName")))
    for c in spec.get("containers") or []:
        for e in c.get("envFrom") or []:
            if "configMapRef" in e:
                refs.add(("ConfigMap", e["configMapRef"].get("name")))
            if "secretRef" in e:
                refs.add(("Secret", e["secretRef"].get("name")))
        for e in c.get("env") or []:
            source = e.get("valueFrom") or {}
            if "configMapKeyRef" in source:
                refs.add(("ConfigMap", source["configMapKeyRef"].get("name")))
            if "secretKeyRef" in source:
                refs.add(("Secret", source["secretKeyRef"].get("name")))
    return refs


# ---------------------------------------------------------------- 4. checkov

def checkov(rendered: dict[str, list[dict]], failures: list[str], workdir: str) -> tuple[int, dict]:
    directory = os.path.join(workdir, "checkov")
    os.makedirs(directory, exist_ok=True)
    for name, objects in rendered.items():
        write(os.path.join(directory, f"{name}.yaml"), yaml.safe_dump_all(objects, sort_keys=False))
    exe = os.path.join(os.path.dirname(sys.executable), "checkov")
    command = [exe, "-d", directory, "--framework", "kubernetes", "--skip-download", "-o", "json", "--quiet"]
    for check in CHECKOV_SKIPPED:
        command += ["--skip-check", check]
    run = subprocess.run(command, capture_output=True, text=True, cwd=directory,
                         env=dict(os.environ, BC_SKIP_MAPPING="TRUE", LOG_LEVEL="WARNING"))
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        failures.append(f"checkov did not answer in JSON (exit {run.returncode}): {run.stderr.strip()[-2000:]}")
        return 0, {}
    reports = report if isinstance(report, list) else [report]
    count = sum(len(objects) for objects in rendered.values())
    scanned = sum((r.get("summary") or {}).get("resource_count", 0) for r in reports)
    parse_errors = sum((r.get("summary") or {}).get("parsing_errors", 0) for r in reports)
    if parse_errors or scanned < count:
        failures.append(f"checkov read {scanned} of {count} objects ({parse_errors} parsing errors)")
    passed, accepted = 0, {}
    for r in reports:
        passed += (r.get("summary") or {}).get("passed", 0)
        for f in (r.get("results") or {}).get("failed_checks") or []:
            overlay = os.path.splitext(os.path.basename(f.get("file_path", "")))[0]
            key = (overlay, f.get("check_id"))
            if key in ACCEPTED:
                accepted[key] = accepted.get(key, 0) + 1
                continue
            failures.append(f"{overlay}: checkov {f.get('check_id')} ({f.get('check_name')}) failed for "
                            f"{f.get('resource')}")
    return passed, accepted


# ---------------------------------------------------------------- the whole check

def check(k8s_dir: str, workdir: str, stop_early: bool = False, quiet: bool = False) -> list[str]:
    failures: list[str] = []
    rendered: dict[str, list[dict]] = {}
    say = (lambda m: None) if quiet else log
    for name in OVERLAYS:
        started = time.monotonic()
        objects = render(os.path.join(k8s_dir, "overlays", name), failures, name)
        if objects is None:
            continue
        rendered[name] = objects
        say(f"  {name}: {len(objects)} objects rendered"
            f" ({'kubectl kustomize, the same as scripts/k8s_render.py' if kubectl() else 'scripts/k8s_render.py'};"
            f" {time.monotonic() - started:.1f} s)")
    # The base alone, for the replica rules (the overlays may change the counts).
    base = render(os.path.join(k8s_dir, "base"), failures, "base")
    if base is not None:
        say(f"  base: {len(base)} objects rendered, for the replica rules")
    if failures and stop_early:
        return failures
    started = time.monotonic()
    for name, objects in rendered.items():
        validate_schema(objects, failures, name)
    say(f"  schemas: Kubernetes {', '.join(KUBERNETES_VERSIONS)}, strict ({time.monotonic() - started:.1f} s)")
    if failures and stop_early:
        return failures
    for name, objects in rendered.items():
        suite_rules(objects, failures, name)
    if base is not None:
        replica_rules(base, failures, "base")
    say("  suite rules checked (replicas: " + ", ".join(f"{n} {m}+" for n, m in MIN_REPLICAS.items())
        + f"; autoscaled: {', '.join(sorted(AUTOSCALED))})")
    if failures and stop_early:
        return failures
    started = time.monotonic()
    passed, accepted = checkov(rendered, failures, workdir)
    say(f"  checkov: {passed} checks passed, "
        + "".join(f"{n} × {check} accepted in {overlay} ({ACCEPTED[(overlay, check)]}), "
                  for (overlay, check), n in sorted(accepted.items()))
        + f"{len(CHECKOV_SKIPPED)} skipped ({time.monotonic() - started:.1f} s)")
    return failures


# ---------------------------------------------------------------- self-test

def edit_docs(path: str, change: Callable[[list[dict]], None]) -> Callable[[str], None]:
    def apply(k8s_dir: str) -> None:
        full = os.path.join(k8s_dir, path)
        with open(full, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        change(docs)
        write(full, yaml.safe_dump_all(docs, sort_keys=False))
    return apply


def deployment(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "Deployment")


def container(docs: list[dict]) -> dict:
    return pod_spec(deployment(docs))["containers"][0]


def append_doc(path: str, doc: dict) -> Callable[[str], None]:
    return edit_docs(path, lambda docs: docs.append(copy.deepcopy(doc)))


def text_edit(path: str, old: str, new: str) -> Callable[[str], None]:
    def apply(k8s_dir: str) -> None:
        full = os.path.join(k8s_dir, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        if old not in text:
            raise SystemExit(f"self-test: {old!r} is not in {path}")
        write(full, text.replace(old, new, 1))
    return apply


def min_available(docs: list[dict]) -> None:
    spec = next(x for x in docs if x["kind"] == "PodDisruptionBudget")["spec"]
    spec.pop("maxUnavailable")
    spec["minAvailable"] = 1


def autoscaler(target: str, low: int = 2, high: int = 4) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": target},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "minReplicas": low, "maxReplicas": high,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 70}}}]}}


def gateway_autoscaler(change: Callable[[dict], None]) -> Callable[[str], None]:
    return edit_docs("base/gateway.yaml",
                     lambda docs: change(next(d for d in docs if d["kind"] == "HorizontalPodAutoscaler")["spec"]))

def without_autoscaler(path: str) -> Callable[[str], None]:
    return edit_docs(path, lambda docs: docs.remove(next(d for d in docs if d["kind"] == "HorizontalPodAutoscaler")))


def both(*breakages: Callable[[str], None]) -> Callable[[str], None]:
    def apply(k8s_dir: str) -> None:
        for b in breakages:
            b(k8s_dir)
    return apply


# (name, the breakage, a pattern one of the failures must match)
CASES: list[tuple[str, Callable[[str], None], str]] = [
    ("replicas as a string", edit_docs("base/accounts.yaml", lambda d: deployment(d)["spec"].update(replicas="two")),
     r"Deployment/accounts: not valid .*spec\.replicas"),
    ("a container without its name", edit_docs("base/alarms.yaml", lambda d: container(d).pop("name")),
     r"Deployment/alarms: not valid .*'name' is a required property"),
    ("a misspelled field", text_edit("base/gateway.yaml", "readinessProbe:", "readinesProbe:"),
     r"Deployment/gateway: not valid .*readinesProbe"),
    ("a kind that does not exist", text_edit("base/invitations.yaml", "kind: PodDisruptionBudget",
                                             "kind: PodDisruptionBudgets"),
     r"Couldn't find schema for kind PodDisruptionBudgets"),
    ("accounts at one replica", edit_docs("base/accounts.yaml", lambda d: deployment(d)["spec"].update(replicas=1)),
     r"(base|production): Deployment/accounts: replicas must be set, 2 or more \(is 1\)"),
    ("alarms without replicas (and no autoscaler)",
     edit_docs("base/alarms.yaml", lambda d: deployment(d)["spec"].pop("replicas")),
     r"Deployment/alarms: replicas must be set, 2 or more \(is None\); only a Deployment a HorizontalPodAutoscaler"),
    ("an autoscaler for the scheduler", append_doc("base/scheduler.yaml", autoscaler("scheduler")),
     r"HorizontalPodAutoscaler/scheduler: scales scheduler: only gateway may .*bursts at whole minutes"),
    ("an autoscaler for billing", append_doc("base/billing.yaml", autoscaler("billing")),
     r"HorizontalPodAutoscaler/billing: scales billing: only gateway may .*CHRONIR_DB_POOL_SIZE"),
    ("a gateway autoscaler with minReplicas 1", gateway_autoscaler(lambda s: s.update(minReplicas=1)),
     r"production: HorizontalPodAutoscaler/gateway: minReplicas must be set, 2 or more \(is 1\)"),
    ("a gateway autoscaler without minReplicas (1 by default)", gateway_autoscaler(lambda s: s.pop("minReplicas")),
     r"HorizontalPodAutoscaler/gateway: minReplicas must be set, 2 or more \(is None\)"),
    ("a gateway autoscaler with minReplicas above maxReplicas",
     gateway_autoscaler(lambda s: s.update(minReplicas=4, maxReplicas=3)),
     r"HorizontalPodAutoscaler/gateway: minReplicas \(4\) must not be above maxReplicas \(3\)"),
    ("a gateway autoscaler whose target does not exist",
     gateway_autoscaler(lambda s: s["scaleTargetRef"].update(name="gatway")),
     r"HorizontalPodAutoscaler/gateway: scales Deployment gatway, which is not a Deployment rendered here"),
    ("replicas on the autoscaled gateway", edit_docs("base/gateway.yaml", lambda d: deployment(d)["spec"].update(replicas=2)),
     r"Deployment/gateway: replicas must not be set: HorizontalPodAutoscaler/gateway owns the count"),
    ("the gateway without its autoscaler", both(without_autoscaler("base/gateway.yaml"),
                                                without_autoscaler("overlays/dev/replicas.yaml")),
     r"production: Deployment/gateway: replicas must be set, 2 or more \(is None\)"),
    ("a bus port that is not ServiceDirectory's",
     edit_docs("base/invitations.yaml", lambda d: container(d)["ports"][0].update(containerPort=7115)),
     r"Deployment/invitations: the port named rpc must be 7105"),
    ("a PodDisruptionBudget that blocks drains", edit_docs("base/billing.yaml", min_available),
     r"PodDisruptionBudget/billing: must be maxUnavailable: 1"),
    ("accounts without its key-encryption key",
     edit_docs("base/accounts.yaml", lambda d: container(d).update(
         env=[e for e in container(d)["env"] if e["name"] != "CHRONIR_KEY_ENCRYPTION_KEY_FILE"])),
     r"Deployment/accounts: CHRONIR_KEY_ENCRYPTION_KEY_FILE must name a file in a mounted Secret"),
    ("a misspelled Secret", text_edit("base/notifications.yaml", "secretName: chronir-db-notifications",
                                      "secretName: chronir-db-notification"),
     r"production: Deployment/notifications: mounts Secret chronir-db-notification,"),
    ("a privileged container (checkov's to catch)",
     text_edit("base/billing.yaml", "allowPrivilegeEscalation: false",
               "allowPrivilegeEscalation: false\n            privileged: true"),
     r"checkov CKV_K8S_16 .*billing"),
]


def self_test() -> int:
    missed = 0
    for name, breakage, expected in CASES:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="check-k8s-") as tmp:
            k8s_dir = prepare_copy(K8S, tmp)
            breakage(k8s_dir)
            failures = check(k8s_dir, tmp, stop_early=True, quiet=True)
        caught = [f for f in failures if re.search(expected, f)]
        took = f"{time.monotonic() - started:.1f} s"
        if caught:
            log(f"caught: {name}: {caught[0]} ({took})")
        else:
            missed += 1
            log(f"MISSED: {name}: expected a failure matching {expected!r}; got {failures or 'none'} ({took})")
    log(f"{len(CASES) - missed} passed, {missed} failed")
    return 1 if missed else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:]:
        print("usage: scripts/check-k8s.sh [--self-test]", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="check-k8s-") as tmp:
        k8s_dir = prepare_copy(K8S, tmp)
        failures = check(k8s_dir, tmp)
    for f in failures:
        log(f"FAIL: {f}")
    if failures:
        log(f"deploy/k8s: {len(failures)} problem(s)")
        return 1
    log("deploy/k8s: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
