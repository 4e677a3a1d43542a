"""Porter stemming (Porter 1980) through PyStemmer's C implementation of the original algorithm."""

from __future__ import annotations

from functools import lru_cache

import Stemmer


@lru_cache(maxsize=1)
def _porter() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("porter")


def porter_stem(words: list[str]) -> list[str]:
    """Stem each word with the original Porter algorithm.

    >>> porter_stem(["running", "generalizations", "ponies"])
    ['run', 'gener', 'poni']
    """
    return list(_porter().stemWords(words))
