"""Unicode normalisation of the texts before anything else reads them (``--normalize``, ``normalize=``).

``nfc`` composes (``e`` + U+0301 -> ``é``), so text typed or exported in decomposed form matches its composed
spelling; ``nfkc`` also folds compatibility characters (``ﬁ`` -> ``fi``, full-width ``Ａ`` -> ``A``, ``²`` ->
``2``). Off by default: the reference implementations normalise nothing, so neither does ngrameval unless asked.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Literal

NORMS = ("nfc", "nfkc")


def check_norm(form: str | None) -> None:
    """ValueError-style ConfigError for anything but None, ``nfc`` or ``nfkc``."""
    from ngrameval.errors import ConfigError

    if form is not None and form not in NORMS:
        raise ConfigError(f"unknown Unicode normalisation {form!r}; valid: {', '.join(NORMS)} (or none)")


def normalize_texts(texts: Sequence[str], form: str | None) -> Sequence[str]:
    """``texts`` in normal form ``form`` (``None``: unchanged, the same object); ASCII texts are already normal."""
    if form is None:
        return texts
    nf: Literal["NFC", "NFKC"] = "NFC" if form == "nfc" else "NFKC"
    return [t if t.isascii() or unicodedata.is_normalized(nf, t) else unicodedata.normalize(nf, t) for t in texts]
