#!/usr/bin/env python3
"""Checks that the contracts in proto/ are compatible with the last release, so that services
can be upgraded one at a time (docs/operations.md, the compatibility rule).

    scripts/check_compat.py [--against proto/releases/0.1.0] [--self-test] [--write-rpc-methods]

Compares proto/ with a release snapshot (default: the highest version directory under
proto/releases/). Breaking, each reported as `BREAKING: ...` (exit 1):

- events (proto/events/<stream>.<event>.schema.json; `x-chronir-version`, missing = 1): a type
  removed or its version lowered; for a type whose version is unchanged, comparing the old and
  the new schema with `$ref` followed into the shared parts: a property removed (at any depth),
  retyped (`type`, `format`, `const`, `$ref`), an enum value added or removed (consumers decode
  enums strictly), a property newly required or no longer required. A higher version is
  allowed without comparing fields (consumers stop at versions they do not know), as is a new
  type: both are printed as notes, since every consumer must be upgraded first;
- RPC methods (proto/rpc-methods.txt, which must equal the `static let type = "..."` of the
  RPCMethod structs under Shared/ and Core/Sources/; --write-rpc-methods rewrites it): a method removed;
- proto/openapi.yaml: a path or an operation removed; in components.schemas a schema removed,
  or a property removed, retyped (`$ref` compared by name) or newly required, at any depth;
- proto/envelope.v1.schema.json: a property removed, retyped, newly or no longer required.

Other changes (new optional properties, new paths, operations, methods and types) pass.

--self-test: applies deliberate breaking and additive changes to temporary copies of proto/
and checks that each break is caught and each additive change accepted.
--write-rpc-methods: writes proto/rpc-methods.txt from the Swift sources.

Cutting a release: copy proto/openapi.yaml, proto/envelope.v1.schema.json, proto/events/ and
proto/rpc-methods.txt into proto/releases/<version>/.
"""
import copy
import glob
import json
import os
import re
import shutil
import sys
import tempfile

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PROTO = os.path.join(ROOT, "proto")
RPC_HEADER = "# generated from Core/Sources/Contracts by scripts/check_compat.py --write-rpc-methods; checked in make test"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
RPC_DECLARATION = re.compile(r'static\s+let\s+type\s*=\s*"([^"]+)"')


# --- reading -------------------------------------------------------------------------------

def swift_rpc_methods(root=ROOT):
    """The `static let type = "<service>.<operation>"` of the RPCMethod structs under Shared/
    and Core/Sources/ (Contracts)."""
    found = set()
    paths = glob.glob(os.path.join(root, "Shared", "**", "*.swift"), recursive=True)
    paths += glob.glob(os.path.join(root, "Core", "Sources", "**", "*.swift"), recursive=True)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            found.update(RPC_DECLARATION.findall(f.read()))
    return sorted(found)


def read_rpc_list(path):
    """The methods of an rpc-methods.txt (comments and blank lines skipped), or None."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def rpc_list_text(methods):
    return RPC_HEADER + "\n" + "".join(m + "\n" for m in sorted(methods))


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def event_documents(proto_dir):
    """basename without .schema.json -> document, for every schema in <proto_dir>/events."""
    docs = {}
    for path in sorted(glob.glob(os.path.join(proto_dir, "events", "*.schema.json"))):
        docs[os.path.basename(path)[:-len(".schema.json")]] = load_json(path)
    return docs


def is_event_type(name):
    """`<stream>.<event>`: shared parts (alarm-state, schedule) have no dot."""
    return "." in name


def schema_version(doc):
    return doc.get("x-chronir-version", 1)


# --- comparing schemas ---------------------------------------------------------------------

class Schemas:
    """Resolves `$ref` within one set of documents: by `$id`, by file name, or `#/...` in the
    document the reference appears in. With `by_name`, references are not followed: a `$ref`
    is compared by its target's name (OpenAPI components)."""

    def __init__(self, documents, by_name=False):
        self.by_id = {}
        for name, doc in documents.items():
            if isinstance(doc, dict) and "$id" in doc:
                self.by_id[doc["$id"]] = doc
            self.by_id[name] = doc
            self.by_id[name + ".schema.json"] = doc
        self.by_name = by_name

    def resolve(self, ref, root):
        base, _, fragment = ref.partition("#")
        doc = root
        if base:
            doc = self.by_id.get(base)
            if doc is None:
                doc = self.by_id.get(base.rsplit("/", 1)[-1])
            if doc is None:
                return None, None
        target = doc
        for part in [p for p in fragment.split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return None, None
        return target, doc


def ref_name(ref):
    return ref.rstrip("/").rsplit("/", 1)[-1]


def flatten(parts, schemas, problems, where, depth=0):
    """The constraints of a list of (schema, root document) that all apply (an `allOf`,
    `$ref`s followed): the intersection of types and enums, every const, format and
    referenced name, the properties (name -> parts), the required set, items and
    additionalProperties (parts), and anyOf/oneOf alternatives."""
    view = {"type": None, "enum": None, "const": [], "format": set(), "ref": set(),
            "properties": {}, "required": set(), "items": [], "additional": [], "alternatives": {}}
    queue = list(parts)
    while queue:
        schema, root = queue.pop(0)
        if not isinstance(schema, dict):
            continue
        if "$ref" in schema:
            if schemas.by_name:
                view["ref"].add(ref_name(schema["$ref"]))
            elif depth > 64:
                problems.append(f"{where}: $ref nesting too deep at {schema['$ref']}")
            else:
                target, target_root = schemas.resolve(schema["$ref"], root)
                if target is None:
                    problems.append(f"{where}: $ref {schema['$ref']} does not resolve")
                else:
                    depth += 1
                    queue.append((target, target_root))
        if "type" in schema:
            types = set(schema["type"]) if isinstance(schema["type"], list) else {schema["type"]}
            view["type"] = types if view["type"] is None else view["type"] & types
        if "enum" in schema:
            values = {json.dumps(v, sort_keys=True) for v in schema["enum"]}
            view["enum"] = values if view["enum"] is None else view["enum"] & values
        if "const" in schema:
            view["const"].append(json.dumps(schema["const"], sort_keys=True))
        if "format" in schema:
            view["format"].add(schema["format"])
        for name, sub in schema.get("properties", {}).items():
            view["properties"].setdefault(name, []).append((sub, root))
        view["required"].update(schema.get("required", []))
        if isinstance(schema.get("items"), dict):
            view["items"].append((schema["items"], root))
        if isinstance(schema.get("additionalProperties"), dict):
            view["additional"].append((schema["additionalProperties"], root))
        for sub in schema.get("allOf", []):
            queue.append((sub, root))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                view["alternatives"].setdefault(key, []).extend((sub, root) for sub in schema[key])
    view["const"] = sorted(set(view["const"]))
    return view


def describe_type(view):
    bits = []
    if view["type"] is not None:
        bits.append("/".join(sorted(view["type"])) or "nothing")
    if view["format"]:
        bits.append("format " + ",".join(sorted(view["format"])))
    if view["const"]:
        bits.append("const " + ",".join(view["const"]))
    if view["ref"]:
        bits.append("$ref " + ",".join(sorted(view["ref"])))
    return " ".join(bits) or "any"


def compare(old_parts, new_parts, old_schemas, new_schemas, where, out, required_removal, depth=0):
    """Appends to `out` what in the new schema a reader of the old one would not accept."""
    problems = []
    old = flatten(old_parts, old_schemas, [], where)
    new = flatten(new_parts, new_schemas, problems, where)
    out.extend(problems)
    if depth > 64:
        return
    if (old["type"], old["format"], old["const"], old["ref"]) != \
            (new["type"], new["format"], new["const"], new["ref"]):
        out.append(f"{where} retyped: {describe_type(old)} -> {describe_type(new)}")
        if not new["properties"] and not new["items"] and not new["additional"]:
            return  # what it held is gone with it: no line per member
    if old["enum"] is not None or new["enum"] is not None:
        before, after = old["enum"] or set(), new["enum"] or set()
        if old["enum"] is None:
            out.append(f"{where} is now an enum: {', '.join(sorted(after))}")
        elif new["enum"] is None:
            out.append(f"{where} is no longer an enum (was {', '.join(sorted(before))})")
        else:
            if after - before:
                out.append(f"{where}: enum value(s) added: {', '.join(sorted(after - before))}")
            if before - after:
                out.append(f"{where}: enum value(s) removed: {', '.join(sorted(before - after))}")
    prefix = where + "." if where else ""
    for name in old["properties"]:
        if name not in new["properties"]:
            out.append(f"property {prefix}{name} removed")
        else:
            compare(old["properties"][name], new["properties"][name], old_schemas, new_schemas,
                    prefix + name, out, required_removal, depth + 1)
    for name in sorted(new["required"] - old["required"]):
        out.append(f"property {prefix}{name} newly required")
    if required_removal:
        for name in sorted(old["required"] - new["required"]):
            if name in new["properties"]:
                out.append(f"property {prefix}{name} no longer required")
    if old["items"] and new["items"]:
        compare(old["items"], new["items"], old_schemas, new_schemas, where + "[]", out,
                required_removal, depth + 1)
    if old["additional"] and new["additional"]:
        compare(old["additional"], new["additional"], old_schemas, new_schemas, where + "{*}", out,
                required_removal, depth + 1)
    for key in sorted(set(old["alternatives"]) | set(new["alternatives"])):
        before, after = old["alternatives"].get(key, []), new["alternatives"].get(key, [])
        if len(before) != len(after):
            out.append(f"{where} {key}: {len(before)} -> {len(after)} alternatives")
            continue
        for k, (a, b) in enumerate(zip(before, after)):
            compare([a], [b], old_schemas, new_schemas, f"{where}/{key}[{k}]", out,
                    required_removal, depth + 1)


# --- the check -----------------------------------------------------------------------------

def check(current_dir, snapshot_dir, rpc_list):
    """Compares the contracts in `current_dir` (a proto/ directory) and the RPC methods
    `rpc_list` with the release in `snapshot_dir`. Returns (breaking, notes, counts)."""
    breaking, notes = [], []

    # Events.
    old_docs, new_docs = event_documents(snapshot_dir), event_documents(current_dir)
    old_schemas, new_schemas = Schemas(old_docs), Schemas(new_docs)
    new_types = sorted(n for n in new_docs if is_event_type(n))
    for name in new_types:
        version = schema_version(new_docs[name])
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            breaking.append(f"event {name}: x-chronir-version {version!r} is not an integer >= 1")
    for name in sorted(n for n in old_docs if is_event_type(n)):
        old_doc = old_docs[name]
        if name not in new_docs:
            breaking.append(f"event type {name} removed")
            continue
        new_doc = new_docs[name]
        old_version, new_version = schema_version(old_doc), schema_version(new_doc)
        if not isinstance(new_version, int) or isinstance(new_version, bool):
            continue
        if new_version < old_version:
            breaking.append(f"event type {name}: x-chronir-version went down, v{old_version} -> v{new_version}")
        elif new_version > old_version:
            notes.append(f"{name} v{old_version} -> v{new_version}: consumers must be upgraded first")
        else:
            found = []
            compare([(old_doc, old_doc)], [(new_doc, new_doc)], old_schemas, new_schemas, "", found, True)
            breaking += [f"event {name} v{new_version}: {f}" for f in found]
    for name in new_types:
        if name not in old_docs:
            notes.append(f"new event type {name} v{schema_version(new_docs[name])}: "
                         "consumers must be upgraded first")

    # RPC methods.
    old_rpc = read_rpc_list(os.path.join(snapshot_dir, "rpc-methods.txt"))
    if old_rpc is None:
        notes.append(f"{snapshot_dir} has no rpc-methods.txt: RPC methods not compared")
    else:
        for method in sorted(set(old_rpc) - set(rpc_list)):
            breaking.append(f"RPC method {method} removed")

    # OpenAPI.
    paths = 0
    old_api_path, new_api_path = (os.path.join(d, "openapi.yaml") for d in (snapshot_dir, current_dir))
    if not os.path.exists(new_api_path):
        breaking.append("proto/openapi.yaml removed")
    elif os.path.exists(old_api_path):
        with open(old_api_path, encoding="utf-8") as f:
            old_api = yaml.safe_load(f) or {}
        with open(new_api_path, encoding="utf-8") as f:
            new_api = yaml.safe_load(f) or {}
        old_paths, new_paths = old_api.get("paths") or {}, new_api.get("paths") or {}
        paths = len(new_paths)
        for path, operations in old_paths.items():
            if path not in new_paths:
                breaking.append(f"openapi: path {path} removed")
                continue
            for method in HTTP_METHODS:
                if method in (operations or {}) and method not in (new_paths[path] or {}):
                    breaking.append(f"openapi: operation {method.upper()} {path} removed")
        old_components = (old_api.get("components") or {}).get("schemas") or {}
        new_components = (new_api.get("components") or {}).get("schemas") or {}
        by_name_old, by_name_new = Schemas({}, by_name=True), Schemas({}, by_name=True)
        for name, schema in old_components.items():
            if name not in new_components:
                breaking.append(f"openapi: schema {name} removed")
                continue
            found = []
            compare([(schema, old_api)], [(new_components[name], new_api)], by_name_old, by_name_new,
                    "", found, False)
            breaking += [f"openapi: schema {name}: {f}" for f in found]
    else:
        paths = len((yaml.safe_load(open(new_api_path, encoding="utf-8")) or {}).get("paths") or {})

    # The envelope.
    old_env_path, new_env_path = (os.path.join(d, "envelope.v1.schema.json") for d in (snapshot_dir, current_dir))
    if os.path.exists(old_env_path):
        if not os.path.exists(new_env_path):
            breaking.append("envelope.v1.schema.json removed")
        else:
            old_env, new_env = load_json(old_env_path), load_json(new_env_path)
            found = []
            compare([(old_env, old_env)], [(new_env, new_env)], Schemas({"envelope": old_env}),
                    Schemas({"envelope": new_env}), "", found, True)
            breaking += [f"envelope: {f}" for f in found]

    counts = {"events": len(new_types), "rpc": len(rpc_list), "paths": paths}
    return breaking, notes, counts


def latest_release(proto_dir=PROTO):
    releases = os.path.join(proto_dir, "releases")
    versions = []
    for name in os.listdir(releases) if os.path.isdir(releases) else []:
        if os.path.isdir(os.path.join(releases, name)) and re.fullmatch(r"\d+(\.\d+)*", name):
            versions.append((tuple(int(p) for p in name.split(".")), name))
    if not versions:
        return None
    return os.path.join(releases, max(versions)[1])


# --- self-test -----------------------------------------------------------------------------

def _edit_json(path, change):
    doc = load_json(path)
    change(doc)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")


def _edit_yaml(path, change):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    change(doc)
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(doc, f, sort_keys=False, allow_unicode=True)


def self_test():
    """Each case changes a copy of proto/ (`cur`) or of the release (`old`); a breaking case
    must fail naming what it broke (`expect`, a text of a BREAKING line), an additive one pass."""
    base = tempfile.mkdtemp(prefix="chronir-compat-")
    try:
        pristine = os.path.join(base, "pristine")
        shutil.copytree(PROTO, pristine, ignore=shutil.ignore_patterns("releases"))
        with open(os.path.join(pristine, "rpc-methods.txt"), "w", encoding="utf-8") as f:
            f.write(rpc_list_text(swift_rpc_methods()))
        docs = event_documents(pristine)
        types = sorted(n for n in docs if is_event_type(n))

        def events_path(d, name):
            return os.path.join(d, "events", name + ".schema.json")

        # Targets chosen from what proto/ holds, so the test follows the contracts as they change.
        with_props = [n for n in types if docs[n].get("properties") and "allOf" not in docs[n]]
        target = with_props[0]
        prop = sorted(docs[target]["properties"])[0]
        typed = next((n, p) for n in with_props for p, s in sorted(docs[n]["properties"].items())
                     if s.get("type") == "string" and "enum" not in s and "format" not in s)
        enumed = next((n, p) for n in with_props for p, s in sorted(docs[n]["properties"].items())
                      if "enum" in s)
        part_users = [n for n in types if "alarm-state" in json.dumps(docs[n])]
        part_prop = sorted(docs["alarm-state"]["properties"])[0] if "alarm-state" in docs and part_users else None
        with open(os.path.join(pristine, "openapi.yaml"), encoding="utf-8") as f:
            api = yaml.safe_load(f)
        api_path = sorted(api["paths"])[0]
        multi_path, multi_method = next((p, m) for p, ops in sorted(api["paths"].items())
                                        for m in HTTP_METHODS if m in ops and sum(x in ops for x in HTTP_METHODS) > 1)
        api_schema = next(n for n, s in sorted(api["components"]["schemas"].items()) if s.get("properties"))
        api_prop = sorted(api["components"]["schemas"][api_schema]["properties"])[0]
        rpc = read_rpc_list(os.path.join(pristine, "rpc-methods.txt"))
        dropped_method = rpc[len(rpc) // 2]

        def remove_prop(doc, name=None):
            name = name or prop
            del doc["properties"][name]
            if name in doc.get("required", []):
                doc["required"].remove(name)

        def write_rpc(d, methods):
            with open(os.path.join(d, "rpc-methods.txt"), "w", encoding="utf-8") as f:
                f.write(rpc_list_text(methods))

        def set_version(version):
            return lambda doc: doc.__setitem__("x-chronir-version", version)

        breaking_cases = [
            ("remove a property from an event schema", f"property {prop} removed",
             lambda cur, old: _edit_json(events_path(cur, target), remove_prop)),
            ("retype a property of an event schema", f"{typed[1]} retyped",
             lambda cur, old: _edit_json(events_path(cur, typed[0]),
                                         lambda d: d["properties"][typed[1]].__setitem__("type", "integer"))),
            ("add a required property to an event schema", "property compatSelfTest newly required",
             lambda cur, old: _edit_json(events_path(cur, target), lambda d: (
                 d["properties"].__setitem__("compatSelfTest", {"type": "string"}),
                 d.setdefault("required", []).append("compatSelfTest")))),
            ("add an enum value to an event schema", "enum value(s) added",
             lambda cur, old: _edit_json(events_path(cur, enumed[0]),
                                         lambda d: d["properties"][enumed[1]]["enum"].append("compat-self-test"))),
            ("remove an event type", f"event type {types[-1]} removed",
             lambda cur, old: os.remove(events_path(cur, types[-1]))),
            ("lower an event type's version", f"{target}: x-chronir-version went down",
             lambda cur, old: _edit_json(events_path(old, target), set_version(2))),
            ("remove an RPC method", f"RPC method {dropped_method} removed",
             lambda cur, old: write_rpc(cur, [m for m in rpc if m != dropped_method])),
            ("remove an openapi path", f"path {api_path} removed",
             lambda cur, old: _edit_yaml(os.path.join(cur, "openapi.yaml"), lambda d: d["paths"].pop(api_path))),
            ("remove an openapi operation", f"operation {multi_method.upper()} {multi_path} removed",
             lambda cur, old: _edit_yaml(os.path.join(cur, "openapi.yaml"),
                                         lambda d: d["paths"][multi_path].pop(multi_method))),
            ("remove a property from an openapi schema", f"schema {api_schema}: property {api_prop} removed",
             lambda cur, old: _edit_yaml(os.path.join(cur, "openapi.yaml"),
                                         lambda d: d["components"]["schemas"][api_schema]["properties"].pop(api_prop))),
            ("remove a property from the envelope", "envelope: property correlationId removed",
             lambda cur, old: _edit_json(os.path.join(cur, "envelope.v1.schema.json"),
                                         lambda d: d["properties"].pop("correlationId"))),
        ]
        if part_prop:
            breaking_cases.append(
                ("remove a property from a shared part ($ref)", f"property {part_prop} removed",
                 lambda cur, old: _edit_json(events_path(cur, "alarm-state"), lambda d: remove_prop(d, part_prop))))

        def new_type(cur, old):
            doc = copy.deepcopy(docs[target])
            doc["$id"] = doc["$id"].replace(target, "compat.self-test")
            doc["x-chronir-version"] = 1
            with open(events_path(cur, "compat.self-test"), "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2)

        additive_cases = [
            ("add an optional property to an event schema",
             lambda cur, old: _edit_json(events_path(cur, target),
                                         lambda d: d["properties"].__setitem__("compatSelfTest", {"type": "string"}))),
            ("add an event type", new_type),
            ("bump an event type's version and remove a property",
             lambda cur, old: _edit_json(events_path(cur, target),
                                         lambda d: (remove_prop(d), set_version(schema_version(d) + 1)(d)))),
            ("add an RPC method", lambda cur, old: write_rpc(cur, rpc + ["compat.self-test"])),
            ("add an openapi path and an optional property",
             lambda cur, old: _edit_yaml(os.path.join(cur, "openapi.yaml"), lambda d: (
                 d["paths"].__setitem__("/v1/compat-self-test", {"get": {"responses": {"200": {"description": "ok"}}}}),
                 d["components"]["schemas"][api_schema]["properties"].__setitem__("compatSelfTest", {"type": "string"})))),
        ]

        failed = 0

        def run(name, change):
            cur, old = os.path.join(base, "cur"), os.path.join(base, "old")
            for d in (cur, old):
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(pristine, d)
            change(cur, old)
            return check(cur, old, read_rpc_list(os.path.join(cur, "rpc-methods.txt")))

        breaking, _, _ = run("unchanged", lambda cur, old: None)
        if breaking:
            failed += 1
            print("self-test FAILED: the unchanged contracts do not pass:", file=sys.stderr)
            for b in breaking:
                print(f"  BREAKING: {b}", file=sys.stderr)
        caught = accepted = 0
        for name, expect, change in breaking_cases:
            breaking, _, _ = run(name, change)
            hits = [b for b in breaking if expect in b]
            if hits:
                caught += 1
                print(f"  caught: {name}: BREAKING: {hits[0]}")
            else:
                failed += 1
                print(f"self-test FAILED: {name}: no BREAKING line containing {expect!r}; got {breaking}",
                      file=sys.stderr)
        for name, change in additive_cases:
            breaking, notes, _ = run(name, change)
            if breaking:
                failed += 1
                print(f"self-test FAILED: {name} was reported as breaking: {breaking}", file=sys.stderr)
            else:
                accepted += 1
                shown = f" (note: {notes[0]})" if notes else ""
                print(f"  accepted: {name}{shown}")
        print(f"compat self-test: {caught} breaking changes caught, {accepted} additive changes accepted")
        return 1 if failed else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- main ----------------------------------------------------------------------------------

def main(argv):
    if "--write-rpc-methods" in argv:
        methods = swift_rpc_methods()
        with open(os.path.join(PROTO, "rpc-methods.txt"), "w", encoding="utf-8") as f:
            f.write(rpc_list_text(methods))
        print(f"wrote proto/rpc-methods.txt ({len(methods)} RPC methods)")
        return 0
    if "--self-test" in argv:
        return self_test()
    snapshot = None
    if "--against" in argv:
        i = argv.index("--against")
        if i + 1 >= len(argv):
            print("--against needs a directory", file=sys.stderr)
            return 2
        snapshot = argv[i + 1]
        if not os.path.isdir(snapshot) and os.path.isdir(os.path.join(ROOT, snapshot)):
            snapshot = os.path.join(ROOT, snapshot)
    else:
        snapshot = latest_release()
    if snapshot is None or not os.path.isdir(snapshot):
        print(f"compat: no release snapshot to check against ({snapshot or 'proto/releases/ is empty'})",
              file=sys.stderr)
        return 1
    extracted = swift_rpc_methods()
    listed = read_rpc_list(os.path.join(PROTO, "rpc-methods.txt"))
    if listed != extracted:
        missing = sorted(set(extracted) - set(listed or []))
        extra = sorted(set(listed or []) - set(extracted))
        print("compat: proto/rpc-methods.txt is stale (it must list the RPC methods declared under "
              "Shared/ and Core/Sources/, sorted): run scripts/check_compat.py --write-rpc-methods", file=sys.stderr)
        for m in missing:
            print(f"  not listed: {m}", file=sys.stderr)
        for m in extra:
            print(f"  no longer declared: {m}", file=sys.stderr)
        return 1
    breaking, notes, counts = check(PROTO, snapshot, extracted)
    shown = os.path.relpath(snapshot, ROOT) if os.path.abspath(snapshot).startswith(ROOT + os.sep) else snapshot
    for note in notes:
        print(f"note: {note}")
    for b in breaking:
        print(f"BREAKING: {b}")
    if breaking:
        print(f"compat: {len(breaking)} breaking change(s) against {shown}: make them additive, or give the "
              "event type a new x-chronir-version (docs/operations.md, the compatibility rule)", file=sys.stderr)
        return 1
    print(f"compat: {counts['events']} event types, {counts['rpc']} RPC methods, {counts['paths']} paths "
          f"checked against {shown}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
