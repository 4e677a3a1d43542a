"""Small studies on disk for the collect tests (describe, rate, da)."""

from __future__ import annotations

from pathlib import Path

DESCRIBE = """
[study]
name = "pilot"
kind = "describe"
title = "Describe a short video"
target = 2
completion_code = "NGE-OK"
manifest = "stimuli.csv"
[instructions]
text = "Write one sentence that describes the main action or event."
good = ["A man slices a tomato."]
bad = ["cooking"]
[tiers]
tier1_rate = 0.01
tier2_rate = 0.05
"""

STIMULI = (
    "id,kind,src,start,end,text\n"
    "vid1_2_5,video,clip.mp4,2,5,\n"
    "txt1,text,,,,A cat is playing the piano.\n"
    "txt2,text,,,,A man is slicing a tomato.\n"
)

RATE = """
[study]
name = "rating"
kind = "rate"
title = "Rate these sentences"
completion_code = "RATE-OK"
manifest = "items.csv"
[instructions]
text = "Rate each sentence."
[[criteria]]
name = "fluency"
scale = "likert"
points = 5
[[criteria]]
name = "accuracy"
scale = "likert"
points = 5
[rating]
repeats = 1
seed = 3
"""

DA = """
[study]
name = "da"
kind = "da"
title = "How much do you agree?"
manifest = "items.csv"
[rating]
repeats = 1
bad_references = 5
"""

SYSTEMS = ("A", "B", "C")


def items_csv(n_items: int = 6) -> str:
    rows = ["item,system,output,source"]
    for i in range(n_items):
        for s in SYSTEMS:
            words = " ".join(f"w{i}{s}{k}" for k in range(6))
            rows.append(f"s{i},{s},output {s} {words},the reference of sentence {i}")
    return "\n".join(rows) + "\n"


def write_study(root: Path, kind: str = "describe") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if kind == "describe":
        (root / "stimuli.csv").write_text(STIMULI)
        (root / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
        text = DESCRIBE
    else:
        (root / "items.csv").write_text(items_csv())
        text = RATE if kind == "rate" else DA
    (root / "study.toml").write_text(text)
    return root / "study.toml"
