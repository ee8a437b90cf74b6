#!/usr/bin/env python3
"""Prints "same results" when two pfsim --json documents agree on what the model
computed (everything but host-memory accounting, wall time and the echoed
configuration), else "RESULTS DIFFER". Non-JSON outputs must match byte for byte.
usage: bench/same_results.py A B"""
import json
import sys


def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if k not in ("touched_bytes", "wall_time_s", "config")}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d


def load(path):
    text = open(path, "rb").read()
    try:
        return strip(json.loads(text))
    except ValueError:
        return text


a, b = (load(p) for p in sys.argv[1:3])
print("same results" if a == b else "RESULTS DIFFER")
