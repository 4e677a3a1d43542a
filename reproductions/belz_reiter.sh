#!/bin/sh
# Belz & Reiter's NLG finding (NIST best, ROUGE / string-edit worst) on the public rated data-to-text sets.
#   sh reproductions/belz_reiter.sh [../shared/data] [repro]        (docs/reproductions.md)
# Writes <repro>/belz-reiter/<set>.txt (correlations with 95 % bootstrap intervals, Williams / permutation tests);
# every run recomputes (the metric code in use is the installed one).
set -eu
DATA=${1:-../shared/data}
OUT=${2:-repro}
NE=${NE:-ngrameval}
PY=${PY:-python}
M=nist,bleu:eff=yes,rouge-2,rouge-l,rouge-su4,se,aev:mt-adequacy
# E2E: NIST with the E2E challenge script's reference length (mteval-v13a-sig.pl; docs/exactness.md, NIST ref_len)
M_E2E=nist:ref_len=average,bleu:eff=yes,rouge-2,rouge-l,rouge-su4,se,aev:mt-adequacy
mkdir -p "$OUT/belz-reiter"
[ -f "$OUT/d2t/sfres/ratings.csv" ] || $PY reproductions/prepare.py d2t "$DATA/bagel-sfhot-sfres" "$OUT/d2t"
[ -f "$OUT/e2e/quality.csv" ] || $PY reproductions/prepare.py e2e "$DATA/e2e" "$OUT/e2e"
for s in bagel sfhot sfres; do
  $NE correlate "$OUT/d2t/$s/sys/d2t" -r "$OUT/d2t/$s/refs.tsv" --tsv --missing-empty-refs \
    -j "$OUT/d2t/$s/ratings.csv" --segment-column id --segment-ids "$OUT/d2t/$s/ids.txt" \
    --score-columns informativeness,naturalness,quality --level segment -m "$M" \
    --coefficients pearson,spearman --n-resamples 1000 --compare-metrics -w 3 -o "$OUT/belz-reiter/$s.txt"
done
for c in quality naturalness; do
  $NE correlate "$OUT"/e2e/sys/* -r "$OUT/e2e/refs.tsv" --tsv --missing-empty-refs -j "$OUT/e2e/$c.csv" \
    --segment-column mr_id --segment-ids "$OUT/e2e/ids.txt" --judge-column worker --score-columns $c \
    -m "$M_E2E" --coefficients pearson,spearman --n-resamples 1000 --compare-metrics -w 3 -o "$OUT/belz-reiter/e2e-$c.txt"
done
