"""Language identification on short texts, to choose the package behind the collect app's language check: run it
with the Python of an environment that has the candidate installed (standard library otherwise).

Texts: MSVD descriptions (English, as crowd workers wrote them: ``sgn-split-csv/test.csv``) whole, and the first
``--words`` words of WMT19 news sentences in de, fi, gu, kk, lt, ru, en (zh: the first 2 x words characters).
Prints import and set-up time, time per text, accuracy per language, and for a study declared English the share
of texts flagged ("detected another language with confidence >= t") at several t: on English texts that is the
false-flag rate, on the others the detection rate.

    python benchmarks/bench_langid.py --candidate py3langid [--data ../shared/data] [-n 500] [--words 6] [--msvd 5000]

Candidates: py3langid, langid, langdetect, lingua (lingua-language-detector), pycld2.
"""

from __future__ import annotations

import argparse
import csv
import random
import time
from collections.abc import Callable
from pathlib import Path

Detect = Callable[[str], tuple[str, float]]
THRESHOLDS = (0.3, 0.5, 0.7, 0.9)
WMT = {
    "de": "de-en/newstest2019-deen-src.de",
    "fi": "fi-en/newstest2019-fien-src.fi",
    "en": "de-en/newstest2019-deen-ref.en",
}
WMT |= {k: f"{k}-en/newstest2019-{k}en-src.{k}" for k in ("gu", "kk", "lt", "ru", "zh")}


def detector(name: str, languages: list[str]) -> Detect:
    """The candidate's (ISO 639-1 code, confidence in [0, 1]) of a text; imports it. ``languages``: the
    candidate languages (py3langid and langid only; empty: all)."""
    if name in ("py3langid", "langid"):
        if name == "py3langid":
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        else:
            from langid.langid import LanguageIdentifier, model

            ident = LanguageIdentifier.from_modelstring(model, norm_probs=True)
        if languages:
            ident.set_languages([x for x in languages if x in ident.nb_classes])
        return lambda text: (lambda r: (str(r[0]), float(r[1])))(ident.classify(text))
    if name == "langdetect":
        from langdetect import DetectorFactory, detect_langs
        from langdetect.lang_detect_exception import LangDetectException

        DetectorFactory.seed = 0

        def langdetect(text: str) -> tuple[str, float]:
            try:
                best = detect_langs(text)[0]
            except LangDetectException:
                return "un", 0.0
            return best.lang.split("-")[0], float(best.prob)

        return langdetect
    if name == "lingua":
        from lingua import LanguageDetectorBuilder

        det = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

        def lingua(text: str) -> tuple[str, float]:
            values = det.compute_language_confidence_values(text)
            if not values:
                return "un", 0.0
            return values[0].language.iso_code_639_1.name.lower(), float(values[0].value)

        return lingua
    if name == "pycld2":
        import pycld2

        def cld2(text: str) -> tuple[str, float]:
            reliable, _, details = pycld2.detect(text)
            return details[0][1], details[0][2] / 100 if reliable else 0.0

        return cld2
    raise SystemExit(f"unknown candidate {name!r}")


def texts(data: Path, n: int, words: int, seed: int, n_msvd: int) -> dict[str, list[str]]:
    """Language label -> sample texts (``n_msvd`` MSVD descriptions, ``n`` or all lines of each WMT file)."""
    rng = random.Random(seed)
    with (data / "msvd" / "sgn-split-csv" / "test.csv").open(encoding="utf-8") as f:
        msvd = [r["Description"] for r in csv.DictReader(f) if r["Language"] == "English" and r["Description"].strip()]
    out = {"en (MSVD)": rng.sample(msvd, min(n_msvd, len(msvd)))}
    for lang, rel in WMT.items():
        lines = [x for x in (data / "wmt19" / rel).read_text(encoding="utf-8").splitlines() if x.strip()]
        pick = rng.sample(lines, min(n, len(lines)))
        out[lang] = [x[: 2 * words] if lang == "zh" else " ".join(x.split()[:words]) for x in pick]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("--words", type=int, default=6)
    ap.add_argument("--languages", default="", help="comma-separated ISO codes the identifier may answer")
    ap.add_argument("--msvd", type=int, default=5000, help="MSVD descriptions (English) to check")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sample = texts(args.data, args.n, args.words, args.seed, args.msvd)
    t0 = time.perf_counter()
    detect = detector(args.candidate, [x for x in args.languages.split(",") if x])
    t1 = time.perf_counter()
    detect("a man is slicing a tomato")
    t2 = time.perf_counter()
    results = {lang: [detect(x) for x in xs] for lang, xs in sample.items()}
    t3 = time.perf_counter()
    count = sum(len(xs) for xs in sample.values())
    print(
        f"{args.candidate}: import and set-up {1000 * (t1 - t0):.0f} ms, first text {1000 * (t2 - t1):.0f} ms, "
        f"{1e6 * (t3 - t2) / count:.0f} us a text ({count} texts, {args.words} words; "
        f"languages {args.languages or 'all'})"
    )
    print("| texts | accuracy | " + " | ".join(f"flagged at >= {t:g}" for t in THRESHOLDS) + " |")
    print("|---|---:|" + "---:|" * len(THRESHOLDS))
    for lang, res in results.items():
        code = lang.split()[0]
        acc = sum(got == code for got, _ in res) / len(res)
        flagged = [sum(got != "en" and conf >= t for got, conf in res) / len(res) for t in THRESHOLDS]
        print(f"| {lang} | {acc:.3f} | " + " | ".join(f"{x:.3f}" for x in flagged) + " |")


if __name__ == "__main__":
    main()
