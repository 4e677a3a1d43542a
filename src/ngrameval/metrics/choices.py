"""The values metric options take, in a module that imports nothing: the spec parser (:mod:`.registry`) and the
command line's ``--help`` read them without loading any metric (``score -m bleu`` starts without ROUGE, NIST,
PINC or AEv); each metric module imports its own from here."""

from __future__ import annotations

NIST_PROFILES = ("mteval", "plain")  # NIST's profile= (ngrameval.metrics.nist)
NIST_REF_LENS = ("mean", "average")  # NIST's ref_len=
PINC_AVERAGES = ("present", "all")  # PINC's avg=
ROUGE_MULTI = ("A", "B", "jk", "max-f")  # ROUGE's multi= (several references)
ROUGE_STATS = ("f", "r", "p")  # ROUGE's stat=

# The AEv presets: the best members Soricut & Brill (2004) found (SPEC §2), name -> (alpha, N, what it serves best)
AEV_PRESETS: dict[str, tuple[float, int, str]] = {
    "mt-adequacy": (0.0, 4, "MT adequacy: AEv(0, 4), R² 83.04%"),
    "mt-fluency": (1.0, 3, "MT fluency: AEv(1, 3), R² 79.04%"),
    "summary-coverage": (0.0, 1, "summary coverage (200/400 words): AEv(0, 1), R² 90.77% / 92.28%"),
    "qa-flooding-accepted": (0.0, 2, "QA correctness, flooded answers accepted: AEv(0, 2), R² 91.72%"),
    "qa-flooding-penalised": (0.3, 2, "QA correctness, flooded answers penalised: AEv(0.3, 2), R² 86.26%"),
}
