"""Shared test helpers: random corpora that exercise tokenization and counting edge cases."""

from __future__ import annotations

from hypothesis import strategies as st

# Words and characters chosen to hit every 13a/intl rule: punctuation, digits around . , -, entities,
# non-ASCII letters, symbols and Unicode spaces; repeated words exercise clipping.
WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "The",
    "a",
    "dog",
    "3.5",
    "1,000",
    "2019-2020",
    "state-of-the-art",
    "don't",
    "U.S.",
    "e.g.,",
    "(see",
    "below)",
    "&amp;",
    "&quot;hi&quot;",
    "<skipped>",
    "x-ray",
    "...",
    "!",
    "?",
    "café",
    "Zürich",
    "€5",
    "10m².",
    "“quoted”",
    "—",
    "«non»",
    "¿qué?",
    "ΣΊΣΥΦΟΣ",
    "İstanbul",
    "$1,200.50",
    "a.b",
    ",",
    ".",
    "-",
    "'",
    "5-",
    ".5",
    "5.",
    "50%",
    "@user",
    "#tag",
    "~",
    "`",
    "|",
]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\u00a0", "\u2009", "\u3000", ""]

word = st.sampled_from(WORDS)
line = st.lists(st.tuples(word, st.sampled_from(SEPARATORS)), max_size=14).map(
    lambda parts: "".join(w + s for w, s in parts)
)
text_char = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")
free_line = st.text(text_char, max_size=30)
# Segments given through the API may hold line breaks (mteval joins "-\n" and reads "\n" as a space).
broken_line = st.lists(st.tuples(word, st.sampled_from([*SEPARATORS, "\n", "-\n", "\r\n"])), max_size=10).map(
    lambda parts: "".join(w + s for w, s in parts)
)


@st.composite
def corpus(draw: st.DrawFn, max_refs: int = 4, max_segments: int = 12) -> tuple[list[str], list[list[str]]]:
    """(hyps, segment-major refs) with 1..max_refs references per segment."""
    n = draw(st.integers(1, max_segments))
    hyps = [draw(line) for _ in range(n)]
    refs = [[draw(line) for _ in range(draw(st.integers(1, max_refs)))] for _ in range(n)]
    return hyps, refs


def streams(refs: list[list[str]]) -> list[list[str | None]]:
    """sacreBLEU's stream-major layout, None for a missing reference."""
    k = max(len(r) for r in refs)
    return [[r[i] if i < len(r) else None for r in refs] for i in range(k)]
