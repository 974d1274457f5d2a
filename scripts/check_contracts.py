#!/usr/bin/env python3
"""Validates the contracts in proto/: the OpenAPI document, the JSON Schemas, and any
envelope files given on the command line against proto/envelope.v1.schema.json.

    scripts/check_contracts.py [ENVELOPE.json ...]
"""
import glob
import json
import os
import sys

import jsonschema
import yaml
from openapi_spec_validator import validate

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
validate(yaml.safe_load(open(os.path.join(root, "proto", "openapi.yaml"))))
for path in [os.path.join(root, "proto", "envelope.v1.schema.json")] + sorted(glob.glob(os.path.join(root, "proto", "events", "*.json"))):
    jsonschema.Draft202012Validator.check_schema(json.load(open(path)))
envelope = jsonschema.Draft202012Validator(json.load(open(os.path.join(root, "proto", "envelope.v1.schema.json"))),
                                            format_checker=jsonschema.FormatChecker())
failures = 0
for path in sys.argv[1:]:
    for error in envelope.iter_errors(json.load(open(path))):
        print(f"{path}: {error.message}", file=sys.stderr)
        failures += 1
if failures:
    sys.exit(1)
print("contracts ok")
