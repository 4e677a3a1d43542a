"""Makes tests/golden/mqm/: a generated MQM ratings file in Google's TSV layout (ratings.tsv) and the scores
mt-metrics-eval's own ``converters/score_mqm.py`` gives it at its default weights (scores.tsv). Run from the
repository root with mt-metrics-eval's tree extracted at MTME and absl-py importable from ABSL (a directory):

    .venv/bin/python tests/golden/mqm/make_mqm_golden.py /tmp/mtme /tmp/absl-lib

Only mt-metrics-eval's script computes the scores; this script makes its input (see README.md here).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
ERRORS = [  # (severity, category): the weights' special cases, the core typology, unweighted severities, odd case
    ("Major", "Accuracy/Mistranslation"), ("Minor", "Accuracy/Mistranslation"), ("Major", "Non-translation!"),
    ("Minor", "Fluency/Punctuation"), ("Major", "Fluency/Punctuation"), ("Minor", "Fluency/Grammar"),
    ("Neutral", "Fluency/Punctuation"), ("Minor", "Style/Awkward"), ("Major", "Accuracy/Omission"),
    ("MAJOR", "Terminology/Inappropriate for context"), ("minor", "fluency/punctuation"), ("Critical", "Other"),
    ("Major", "Locale convention/Date format"), ("Minor", "Source error"),
]  # fmt: skip


def ratings(path: Path, seed: int = 31) -> None:
    """3 systems x 2 docs x 4 segments, 2-3 raters each, 0-4 errors per rater (a No-error row for none)."""
    rng = np.random.default_rng(seed)
    head = ["system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity"]
    lines = ["\t".join(head)]
    seg = 0
    for system in ("sysA", "sysB", "Human-ref"):
        seg = 0
        for doc in ("news-1", "news-2"):
            for doc_id in range(1, 5):
                seg += 1
                target = f"Target sentence {seg} of {system} in {doc} ."
                for rater in rng.choice(["rater1", "rater2", "rater3"], size=rng.integers(2, 4), replace=False):
                    n = int(rng.integers(0, 5))
                    if n == 0:
                        lines.append("\t".join([system, doc, str(doc_id), str(seg), str(rater), f"Source {seg} .",
                                                target, "No-error", "No-error"]))  # fmt: skip
                    for _ in range(n):
                        sev, cat = ERRORS[int(rng.integers(0, len(ERRORS)))]
                        a = int(rng.integers(0, len(target) - 3))
                        b = int(rng.integers(a + 1, len(target)))
                        marked = target[:a] + "<v>" + target[a:b] + "</v>" + target[b:]
                        lines.append("\t".join([system, doc, str(doc_id), str(seg), str(rater), f"Source {seg} .",
                                                marked, cat, sev]))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    mtme, absl = sys.argv[1], sys.argv[2]
    ratings(HERE / "ratings.tsv")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([absl, mtme])}
    script = Path(mtme) / "mt_metrics_eval" / "converters" / "score_mqm.py"
    cmd = [sys.executable, str(script), f"--input={HERE / 'ratings.tsv'}", f"--output={HERE / 'scores.tsv'}"]
    subprocess.run(cmd, check=True, env=env)
