"""Rendering results (never computing them): text tables, JSON, CSV."""

from ngrameval.report.render import render

__all__ = ["render"]
