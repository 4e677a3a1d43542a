"""Griffe extension for the API reference: the docstrings' doctest examples (``>>>`` lines and their output, up
to the next blank line) shown as Python console blocks instead of Markdown text (where ``[...]`` in an output
would read as a link), and Sphinx roles (``:func:`~a.b```) shown as code (``b``). Registered in mkdocs.yml
under the python handler's ``extensions``."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc):`~?([^`]+)`")


def plain_roles(text: str) -> str:
    """Sphinx cross-reference roles as code spans; ``~`` keeps the last name only, as Sphinx shows it."""
    return ROLE.sub(lambda m: f"`{m[1].rsplit('.', 1)[-1] if m[0].count('~') else m[1]}`", text)


def fence_doctests(text: str) -> str:
    """``text`` with every doctest block wrapped in a ```pycon fence at the left margin (a block indented as an
    rST literal would otherwise be a Markdown code block holding the fence)."""
    out: list[str] = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if block and line.strip():
            block.append(line)
            continue
        if block:
            cut = min(len(b) - len(b.lstrip()) for b in block)
            out += ["", "```pycon", *(b[cut:] for b in block), "```"]
            block = []
        if line.lstrip().startswith(">>>"):
            block.append(line)
        else:
            out.append(line)
    return "\n".join(out[:-1])


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain_roles(fence_doctests(obj.docstring.value))
