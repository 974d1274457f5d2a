#!/usr/bin/env python3
"""Validates the contracts in proto/: the OpenAPI document, the JSON Schemas, and envelopes
given on the command line against proto/envelope.v1.schema.json; the payload of an envelope
whose type has a schema in proto/events/<type>.schema.json is validated against it too.
Files may hold one envelope or JSON lines of envelopes.

    scripts/check_contracts.py [--require-event-schemas] [FILE ...]
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
for path in glob.glob(os.path.join(root, "proto", "events", "*.schema.json")):
    doc = json.load(open(path))
    schemas[os.path.basename(path)[:-len(".schema.json")]] = doc
registry = referencing.Registry().with_resources(
    [(doc["$id"], referencing.Resource.from_contents(doc)) for doc in schemas.values()])
require = "--require-event-schemas" in sys.argv
failures = 0
checked = 0
for path in [a for a in sys.argv[1:] if not a.startswith("--")]:
    text = open(path).read().strip()
    docs = [json.loads(l) for l in text.splitlines() if l.strip()] if "\n" in text else [json.loads(text)]
    for doc in docs:
        checked += 1
        for error in envelope.iter_errors(doc):
            print(f"{path}: {error.message}", file=sys.stderr)
            failures += 1
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
if failures:
    sys.exit(1)
print(f"contracts ok ({checked} envelopes)")
