#!/usr/bin/env python3
"""Validates the contracts in proto/: the OpenAPI document, the JSON Schemas, and envelopes
given on the command line against proto/envelope.v1.schema.json; the payload of an envelope
whose type has a schema in proto/events/<type>.schema.json is validated against it too.
Files may hold one envelope or JSON lines of envelopes.

The event schemas must be closed: every object they describe says which members it allows
(`additionalProperties` false or a schema, or `unevaluatedProperties: false` where members
come from an `allOf`), and lists as `required` only members it describes.

    scripts/check_contracts.py [--require-event-schemas] [--require-all-types] [FILE ...]

--require-event-schemas: an event (a dotted type other than rpc.*, system.*, test.*) without
    a schema in proto/events fails.
--require-all-types: every event type with a schema in proto/events (a file name with a dot;
    alarm-state and schedule are parts, not types) must be among the envelopes checked.
"""
import glob
import json
import os
import sys

import jsonschema
import referencing
import yaml
from openapi_spec_validator import validate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
validate(yaml.safe_load(open(os.path.join(root, "proto", "openapi.yaml"))))
for path in [os.path.join(root, "proto", "envelope.v1.schema.json")] + sorted(glob.glob(os.path.join(root, "proto", "events", "*.json"))):
    jsonschema.Draft202012Validator.check_schema(json.load(open(path)))
envelope = jsonschema.Draft202012Validator(json.load(open(os.path.join(root, "proto", "envelope.v1.schema.json"))),
                                            format_checker=jsonschema.FormatChecker())
schemas = {}
for path in sorted(glob.glob(os.path.join(root, "proto", "events", "*.schema.json"))):
    doc = json.load(open(path))
    schemas[os.path.basename(path)[:-len(".schema.json")]] = doc
registry = referencing.Registry().with_resources(
    [(doc["$id"], referencing.Resource.from_contents(doc)) for doc in schemas.values()])
failures = 0


def open_objects(schema, where):
    """Where `schema` describes an object that allows members it does not name, or requires
    members it does not describe."""
    found = []
    if isinstance(schema, dict):
        is_object = "properties" in schema or schema.get("type") == "object" or (
            isinstance(schema.get("type"), list) and "object" in schema["type"])
        extra = schema.get("additionalProperties", True)
        closed = extra is not True and extra != {} or \
            schema.get("unevaluatedProperties") is False
        if is_object and not closed:
            found.append(f"{where}: an object open to any member (no additionalProperties: false)")
        if "required" in schema and "allOf" not in schema:
            unknown = [k for k in schema["required"] if k not in schema.get("properties", {})]
            if unknown:
                found.append(f"{where}: requires {unknown}, which it does not describe")
        for name, sub in schema.get("properties", {}).items():
            found += open_objects(sub, f"{where}.{name}")
        for key in ("items", "additionalProperties", "unevaluatedProperties", "not", "if", "then", "else"):
            if isinstance(schema.get(key), dict):
                found += open_objects(schema[key], f"{where}/{key}")
        for key in ("allOf", "anyOf", "oneOf", "prefixItems"):
            for k, sub in enumerate(schema.get(key, [])):
                found += open_objects(sub, f"{where}/{key}[{k}]")
        for name, sub in schema.get("$defs", {}).items():
            found += open_objects(sub, f"{where}/$defs/{name}")
    return found


for name, doc in sorted(schemas.items()):
    for problem in open_objects(doc, f"proto/events/{name}.schema.json"):
        print(problem, file=sys.stderr)
        failures += 1

require = "--require-event-schemas" in sys.argv
require_all = "--require-all-types" in sys.argv
checked = 0
seen = set()
for path in [a for a in sys.argv[1:] if not a.startswith("--")]:
    text = open(path).read().strip()
    docs = [json.loads(l) for l in text.splitlines() if l.strip()] if "\n" in text else ([json.loads(text)] if text else [])
    for doc in docs:
        checked += 1
        for error in envelope.iter_errors(doc):
            print(f"{path}: {error.message}", file=sys.stderr)
            failures += 1
        seen.add(doc.get("type", ""))
        schema = schemas.get(doc.get("type", ""))
        if schema is None:
            if require and "." in doc.get("type", "") and not doc["type"].startswith(("rpc.", "system.", "test.")):
                print(f"{path}: no schema in proto/events for {doc['type']}", file=sys.stderr)
                failures += 1
            continue
        validator = jsonschema.Draft202012Validator(schema, registry=registry, format_checker=jsonschema.FormatChecker())
        for error in validator.iter_errors(doc.get("payload")):
            print(f"{path}: {doc['type']} payload: {error.message} at {list(error.absolute_path)}", file=sys.stderr)
            failures += 1
if require_all:
    for name in sorted(n for n in schemas if "." in n and n not in seen):
        print(f"no {name} event was checked: produce one in a test (Tests/GatewayServiceTests/EventCoverageTests.swift)", file=sys.stderr)
        failures += 1
if failures:
    sys.exit(1)
print(f"contracts ok ({checked} envelopes)")
