"""The house keeps its floors (docs/contributing.md, "The floors"): every import of the package, lazy ones
included, goes to the same floor or down; no two rooms import each other, directly or round a circle; the package
root holds at most nine modules besides the packages."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ngrameval"
DOCS = ROOT / "docs" / "contributing.md"


def floors() -> dict[str, int]:
    """Room -> floor, read from the table of docs/contributing.md ("| floor | rooms | ..." rows)."""
    text = DOCS.read_text("utf-8")
    section = text[text.index("## The floors") :]
    out: dict[str, int] = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|([^|]+)\|", line)
        if m:
            for room in re.findall(r"`([\w.]+)/?`", m.group(2)):
                out[room.removesuffix(".py")] = int(m.group(1))
    return out


def room_of(module: str) -> str:
    """``ngrameval.meta.plane`` -> ``meta``; ``ngrameval.api`` -> ``api``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports() -> dict[str, set[str]]:
    """Module -> the ngrameval modules it imports (anywhere in its body)."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                out[name] |= {a.name for a in node.names if a.name.startswith("ngrameval")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                assert not node.level, f"{path}: a relative import (the house uses absolute ones)"
                if base.startswith("ngrameval"):
                    out[name] |= {f"{base}.{a.name}" if base == "ngrameval" else base for a in node.names}
    return out


def test_every_room_has_a_floor() -> None:
    table = floors()
    rooms = {room_of(m) for m in imports()} - {"__init__", "__main__"}
    assert rooms <= set(table), sorted(rooms - set(table))


def test_imports_go_down_or_stay() -> None:
    table = floors()
    up = []
    for module, targets in imports().items():
        src = room_of(module)
        if src in ("__init__", "__main__"):
            continue  # the package's front door re-exports from every floor
        for t in targets:
            dst = room_of(t)
            if dst in table and src in table and table[dst] > table[src]:
                up.append(f"{module} -> {t}")
    assert not up, up


def test_no_circles_between_rooms() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in imports().items():
        for t in targets:
            a, b = room_of(module), room_of(t)
            if a != b and a not in ("__init__", "__main__") and b != "__init__":
                graph[a].add(b)
    seen: dict[str, int] = {}
    circle: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == 1 and not circle:
                circle.extend([*path[path.index(nxt) :], nxt])
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [node])
    assert not circle, " -> ".join(circle)


def test_the_root_holds_at_most_nine_modules() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 9, modules
