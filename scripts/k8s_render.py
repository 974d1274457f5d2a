#!/usr/bin/env python3
"""Renders a kustomization the way `kubectl kustomize` does, for the subset deploy/k8s uses.

    scripts/k8s_render.py deploy/k8s/overlays/production > rendered.yaml

scripts/check-k8s.sh uses `kubectl kustomize` when kubectl is installed and checks that this
renderer gives the same objects; without kubectl it renders with this alone. The subset:

- resources: YAML files (several documents each) and directories holding a kustomization;
- namespace;
- images: name, newName, newTag, digest;
- patches: `path:` or `patch:` strategic-merge patches of one object, found by kind and name
  (lists merge by key where Kubernetes does: containers, env, volumes, ports, …; other lists
  are replaced);
- configMapGenerator / secretGenerator: literals and files (`key=path` or `path`), behavior
  create or merge, options.disableNameSuffixHash and generatorOptions; names get kustomize's
  content hash suffix and the references to them in pod specs follow.

Anything else in a kustomization is refused with a message rather than ignored. Needs PyYAML.
"""
from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import sys
from typing import Any

import yaml

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUPPORTED_FIELDS = {"apiVersion", "kind", "resources", "namespace", "images", "patches",
                    "configMapGenerator", "secretGenerator", "generatorOptions"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
                  "PersistentVolume", "StorageClass", "PriorityClass", "IngressClass",
                  "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}
# kustomize's legacy output order (api/resid/gvk.go), the rest by kind between the two lists.
ORDER_FIRST = ["Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
               "ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding",
               "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints", "Service", "LimitRange",
               "PriorityClass", "PersistentVolume", "PersistentVolumeClaim", "Deployment",
               "StatefulSet", "CronJob", "PodDisruptionBudget"]
ORDER_LAST = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
# Lists a strategic merge patch merges element by element, and the key that matches elements.
MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name",
              "env": "name", "volumes": "name", "volumeMounts": "mountPath",
              "imagePullSecrets": "name", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey"}
POD_SPEC_PATHS = {"Deployment": ("spec", "template", "spec"), "StatefulSet": ("spec", "template", "spec"),
                  "DaemonSet": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
                  "Job": ("spec", "template", "spec"), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
                  "Pod": ("spec",)}


class RenderError(Exception):
    pass


class Generated:
    """What a generator made: the object, and whether its name takes the hash suffix."""

    def __init__(self, obj: dict, hashed: bool):
        self.obj = obj
        self.hashed = hashed


def load_documents(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    for d in docs:
        if not isinstance(d, dict) or "kind" not in d or "metadata" not in d:
            raise RenderError(f"{path}: a document that is not a Kubernetes object")
    return docs


def kustomization_file(directory: str) -> str:
    for name in KUSTOMIZATION_FILES:
        p = os.path.join(directory, name)
        if os.path.isfile(p):
            return p
    raise RenderError(f"{directory}: no kustomization.yaml")


def ident(obj: dict) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (obj.get("kind", ""), meta.get("namespace") or "", meta.get("name", ""))


def build(directory: str) -> list[Any]:
    """The objects of the kustomization in `directory`: dicts, and Generated for generators."""
    path = kustomization_file(directory)
    with open(path, encoding="utf-8") as f:
        k = yaml.safe_load(f) or {}
    unknown = set(k) - SUPPORTED_FIELDS
    if unknown:
        raise RenderError(f"{path}: not supported by scripts/k8s_render.py: {', '.join(sorted(unknown))}")
    objects: list[Any] = []
    for entry in k.get("resources") or []:
        target = os.path.normpath(os.path.join(directory, entry))
        if os.path.isdir(target):
            objects.extend(build(target))
        elif os.path.isfile(target):
            objects.extend(load_documents(target))
        else:
            raise RenderError(f"{path}: resource {entry} does not exist")
    default_hash = not ((k.get("generatorOptions") or {}).get("disableNameSuffixHash", False))
    for kind, entries in (("ConfigMap", k.get("configMapGenerator") or []), ("Secret", k.get("secretGenerator") or [])):
        for g in entries:
            generate(kind, g, directory, default_hash, objects, path)
    for p in k.get("patches") or []:
        apply_patches(p, directory, objects, path)
    for image in k.get("images") or []:
        for obj in objects:
            set_images(obj.obj if isinstance(obj, Generated) else obj, image)
    if "namespace" in k:
        for obj in objects:
            o = obj.obj if isinstance(obj, Generated) else obj
            if o["kind"] not in CLUSTER_SCOPED:
                o.setdefault("metadata", {})["namespace"] = k["namespace"]
    return objects


def generate(kind: str, g: dict, directory: str, default_hash: bool, objects: list[Any], path: str) -> None:
    unknown = set(g) - {"name", "behavior", "literals", "files", "options", "type"}
    if unknown:
        raise RenderError(f"{path}: generator {g.get('name')}: not supported: {', '.join(sorted(unknown))}")
    data: dict[str, str] = {}
    binary: dict[str, str] = {}
    for literal in g.get("literals") or []:
        key, sep, value = str(literal).partition("=")
        if not sep:
            raise RenderError(f"{path}: literal {literal!r} is not KEY=VALUE")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        data[key] = value
    for entry in g.get("files") or []:
        key, sep, file = str(entry).partition("=")
        if not sep:
            key, file = os.path.basename(entry), entry
        full = os.path.normpath(os.path.join(directory, file))
        if not full.startswith(os.path.normpath(directory) + os.sep):
            raise RenderError(f"{path}: {file} is outside the kustomization's directory (kustomize refuses it)")
        try:
            with open(full, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise RenderError(f"{path}: generator {g['name']}: {e}") from e
        if kind == "Secret":
            data[key] = base64.b64encode(raw).decode()
        else:
            try:
                data[key] = raw.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(raw).decode()
    if kind == "Secret":
        obj = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": g["name"]},
               "type": g.get("type", "Opaque"), "data": data}
    else:
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": g["name"]}, "data": data}
        if binary:
            obj["binaryData"] = binary
    options = g.get("options") or {}
    hashed = not options.get("disableNameSuffixHash", not default_hash)
    behavior = g.get("behavior", "create")
    existing = [o for o in objects if isinstance(o, Generated) and o.obj["kind"] == kind
                and o.obj["metadata"]["name"] == g["name"]]
    if behavior == "create":
        if existing:
            raise RenderError(f"{path}: {kind} {g['name']} is generated twice (use behavior: merge)")
        objects.append(Generated(obj, hashed))
    elif behavior in ("merge", "replace"):
        if not existing:
            raise RenderError(f"{path}: {kind} {g['name']}: nothing to {behavior}")
        target = existing[0]
        if behavior == "merge":
            target.obj.setdefault("data", {}).update(data)
            if binary:
                target.obj.setdefault("binaryData", {}).update(binary)
        else:
            target.obj["data"] = data
        if "options" in g:
            target.hashed = hashed
    else:
        raise RenderError(f"{path}: generator {g['name']}: behavior {behavior!r} is not supported")


def apply_patches(p: dict, directory: str, objects: list[Any], path: str) -> None:
    if set(p) - {"path", "patch"}:
        raise RenderError(f"{path}: patches: only `path:` or `patch:` (the target named inside) are supported")
    if "path" in p:
        docs = load_documents(os.path.join(directory, p["path"]))
    else:
        docs = [d for d in yaml.safe_load_all(p["patch"]) if d is not None]
    for patch in docs:
        kind, name = patch.get("kind"), (patch.get("metadata") or {}).get("name")
        matches = [o for o in objects if (o.obj if isinstance(o, Generated) else o).get("kind") == kind
                   and (o.obj if isinstance(o, Generated) else o)["metadata"].get("name") == name]
        if len(matches) != 1:
            raise RenderError(f"{path}: patch of {kind} {name} matches {len(matches)} objects")
        target = matches[0].obj if isinstance(matches[0], Generated) else matches[0]
        strategic_merge(target, patch, ())


def strategic_merge(target: dict, patch: dict, where: tuple) -> None:
    for key, value in patch.items():
        if isinstance(key, str) and key.startswith("$"):
            raise RenderError(f"patch directive {key} at {'.'.join(where)} is not supported")
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            strategic_merge(target[key], value, where + (key,))
        elif isinstance(value, list) and isinstance(target.get(key), list) and merge_key(key, value + target[key]):
            mk = merge_key(key, value + target[key])
            for item in value:
                found = [t for t in target[key] if isinstance(t, dict) and t.get(mk) == item.get(mk)]
                if found:
                    strategic_merge(found[0], item, where + (key,))
                else:
                    target[key].append(copy.deepcopy(item))
        else:
            target[key] = copy.deepcopy(value)


def merge_key(field: str, items: list) -> str | None:
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    if field == "ports":  # a container's ports merge on containerPort, a Service's on port
        for key in ("containerPort", "port"):
            if all(key in i for i in items):
                return key
        return None
    key = MERGE_KEYS.get(field)
    return key if key and all(key in i for i in items) else None


def split_image(image: str) -> tuple[str, str, str]:
    """name, ":tag" or "", "@digest" or ""."""
    digest = ""
    if "@" in image:
        image, digest = image.split("@", 1)
        digest = "@" + digest
    tag = ""
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        image, tag = image[:colon], image[colon:]
    return image, tag, digest


def pod_spec(obj: dict) -> Any:
    """The pod spec of a workload (None for other kinds, or when it has none)."""
    spec_path = POD_SPEC_PATHS.get(obj.get("kind", ""))
    if not spec_path:
        return None
    spec: Any = obj
    for part in spec_path:
        spec = (spec or {}).get(part)
    return spec


def set_images(obj: dict, rule: dict) -> None:
    spec = pod_spec(obj)
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c in (spec or {}).get(field) or []:
            name, tag, digest = split_image(c.get("image", ""))
            if name != rule["name"]:
                continue
            name = rule.get("newName", name)
            if "digest" in rule:
                tag, digest = "", "@" + rule["digest"]
            elif "newTag" in rule:
                tag, digest = ":" + str(rule["newTag"]), ""
            c["image"] = name + tag + digest


def content_hash(obj: dict) -> str:
    """kustomize's name suffix (api/hasher): sha256 of the object's JSON, 10 characters."""
    if obj["kind"] == "ConfigMap":
        m: dict[str, Any] = {"kind": "ConfigMap", "name": obj["metadata"]["name"], "data": obj.get("data") or ""}
        if obj.get("binaryData"):
            m["binaryData"] = obj["binaryData"]
    else:
        m = {"kind": "Secret", "type": obj.get("type", ""), "name": obj["metadata"]["name"], "data": obj.get("data") or ""}
    # Go's json.Marshal: sorted keys, no spaces, <, > and & escaped.
    text = json.dumps(m, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return digest.translate(str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"}))


def rename_references(obj: dict, renames: dict[tuple[str, str], str]) -> None:
    spec = pod_spec(obj)
    if not spec:
        return

    def ref(kind: str, holder: dict | None, field: str) -> None:
        if holder and (kind, holder.get(field)) in renames:
            holder[field] = renames[(kind, holder[field])]

    for v in spec.get("volumes") or []:
        ref("ConfigMap", v.get("configMap"), "name")
        ref("Secret", v.get("secret"), "secretName")
        for source in (v.get("projected") or {}).get("sources") or []:
            ref("ConfigMap", source.get("configMap"), "name")
            ref("Secret", source.get("secret"), "name")
    for s in spec.get("imagePullSecrets") or []:
        ref("Secret", s, "name")
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(field) or []:
            for e in c.get("envFrom") or []:
                ref("ConfigMap", e.get("configMapRef"), "name")
                ref("Secret", e.get("secretRef"), "name")
            for e in c.get("env") or []:
                source = e.get("valueFrom") or {}
                ref("ConfigMap", source.get("configMapKeyRef"), "name")
                ref("Secret", source.get("secretKeyRef"), "name")


def render(directory: str) -> list[dict]:
    objects = build(directory)
    renames: dict[tuple[str, str], str] = {}
    out: list[dict] = []
    for o in objects:
        if isinstance(o, Generated):
            if o.hashed:
                old = o.obj["metadata"]["name"]
                new = f"{old}-{content_hash(o.obj)}"
                o.obj["metadata"]["name"] = new
                renames[(o.obj["kind"], old)] = new
            out.append(o.obj)
        else:
            out.append(o)
    for o in out:
        rename_references(o, renames)
    seen: set[tuple[str, str, str]] = set()
    for o in out:
        if ident(o) in seen:
            raise RenderError(f"{'/'.join(ident(o))} is defined twice")
        seen.add(ident(o))

    def order(o: dict) -> tuple:
        kind = o["kind"]
        if kind in ORDER_FIRST:
            rank = (0, ORDER_FIRST.index(kind), "")
        elif kind in ORDER_LAST:
            rank = (2, ORDER_LAST.index(kind), "")
        else:
            rank = (1, 0, kind)
        return rank + (o["metadata"].get("namespace") or "", o["metadata"]["name"])

    return sorted(out, key=order)


def dump(objects: list[dict]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=True, default_flow_style=False)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: scripts/k8s_render.py DIRECTORY (a kustomization)", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(dump(render(argv[1])))
    except (RenderError, yaml.YAMLError) as e:
        print(f"k8s_render: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
