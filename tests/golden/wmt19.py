"""The WMT19 to-English test sets of ``/work/shared/data/wmt19`` as the golden-making scripts read them."""

from __future__ import annotations

from pathlib import Path

DATA = Path("/work/shared/data")


def read_wmt19(lp: str) -> tuple[list[str], dict[str, list[str]]]:
    """The reference lines of ``lp`` (e.g. ``kk-en``) and every system's output lines, by system name."""
    src, tgt = lp.split("-")
    root = DATA / "wmt19" / lp
    ref = (root / f"newstest2019-{src}{tgt}-ref.en").read_text(encoding="utf-8").split("\n")[:-1]
    outs = {}
    for p in sorted((root / "system-outputs").iterdir()):
        name = p.name.removeprefix("newstest2019.").removesuffix(f".{lp}")
        outs[name] = p.read_text(encoding="utf-8").split("\n")[:-1]
    return ref, outs
