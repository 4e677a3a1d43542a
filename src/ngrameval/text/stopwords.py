"""Stop-word lists: the SMART list that ROUGE-1.5.5 ships (598 words), or a user's file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ngrameval.errors import InputError

BUILTIN = {"smart": "smart_common_words.txt"}


def _parse(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in text.split())


@lru_cache(maxsize=8)
def load_stopwords(name_or_path: str) -> frozenset[str]:
    """A built-in list by name (``smart``) or a UTF-8 file with one word per line (case-folded).

    >>> "the" in load_stopwords("smart")
    True
    """
    if name_or_path in BUILTIN:
        from importlib import resources  # (~3 ms: loaded when a run first removes stop words)

        data = resources.files("ngrameval.data").joinpath(BUILTIN[name_or_path]).read_text("utf-8")
        return _parse(data)
    path = Path(name_or_path)
    try:
        return _parse(path.read_text("utf-8"))
    except FileNotFoundError:
        raise InputError(
            f"stop-word list {name_or_path!r}: no such file (built-in lists: {', '.join(BUILTIN)})"
        ) from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not valid UTF-8") from None
    except OSError as exc:  # a directory, no permission, ...
        raise InputError(f"stop-word list {name_or_path!r}: {exc.strerror or exc}") from None
