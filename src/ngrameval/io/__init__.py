"""Strict reading of inputs and safe writing of outputs (never onto an input, atomic for regular files)."""

from ngrameval.io.read import read_ids, read_lines, read_ratings, read_refs, read_text
from ngrameval.io.write import check_not_input, dumps_json, json_ready, write_atomic

__all__ = [
    "check_not_input",
    "dumps_json",
    "json_ready",
    "read_ids",
    "read_lines",
    "read_ratings",
    "read_refs",
    "read_text",
    "write_atomic",
]
