#!/bin/sh
# Every reproduction of docs/reproductions.md, from the shared data, into repro/ (gitignored).
#   . .venv/bin/activate && sh reproductions/run_all.sh [../shared/data]
# Re-running recomputes every score with the installed ngrameval (no metric value is cached between runs).
set -eu
DATA=${1:-../shared/data}
for d in summeval:summeval realsumm:realsumm-texts e2e:e2e wmt19:wmt19 mrpc:mrpc d2t:bagel-sfhot-sfres; do
  python reproductions/prepare.py "${d%%:*}" "$DATA/${d##*:}" "repro/${d%%:*}"
done
python reproductions/wmt19_official.py "$DATA/wmt19" --out repro/wmt19-official
python reproductions/wmt19_official.py "$DATA/wmt19" --out repro/wmt19-official --aligned-fraction
python reproductions/summeval_table2.py "$DATA/summeval" --out repro/summeval-table2
sh reproductions/belz_reiter.sh "$DATA" repro
