"""One small module per metric; each metric is a frozen configuration (called on :class:`Stats`, or, for
ROUGE, PINC and SE, scoring texts per segment).

Every name below is imported on first use (PEP 562, as the package root does): ``score -m bleu`` loads the BLEU
module, not TER's edit distances, CIDEr or coco-caption's (:mod:`.registry` loads a metric when a spec names it)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "AEv": "aev",
    "BLEU": "bleu",
    "ChrF": "chrf",
    "Cider": "cider",
    "CocoBleu": "coco",
    "CocoRougeL": "coco",
    "NIST": "nist",
    "Rouge": "rouge",
    "TER": "ter",
}

if TYPE_CHECKING:
    from ngrameval.metrics.aev import AEv
    from ngrameval.metrics.bleu import BLEU
    from ngrameval.metrics.chrf import ChrF
    from ngrameval.metrics.cider import Cider
    from ngrameval.metrics.coco import CocoBleu, CocoRougeL
    from ngrameval.metrics.nist import NIST
    from ngrameval.metrics.rouge import Rouge
    from ngrameval.metrics.ter import TER


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value  # found: later uses skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BLEU", "NIST", "TER", "AEv", "ChrF", "Cider", "CocoBleu", "CocoRougeL", "Rouge"]
