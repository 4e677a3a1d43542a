#!/usr/bin/env bash
# Builds the C kernels with AddressSanitizer + UndefinedBehaviorSanitizer into a temporary directory
# (never over the normal in-place build) and runs the kernel tests against that build.
#
#   tests/sanitize/run.sh [extra pytest args]        (PYTHON=... to use another interpreter)
#
# gcc's libasan is preloaded (the interpreter itself is not instrumented); leaks are not reported (CPython
# keeps allocations alive at exit); any UBSan finding stops the run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp -r "$ROOT/src/ngrameval" "$TMP/ngrameval"
rm -f "$TMP"/ngrameval/*.so
"$PY" "$ROOT/tests/sanitize/build_ext.py" "$TMP" -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -g -O1 >"$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; exit 1; }
LIBASAN=$(gcc -print-file-name=libasan.so)
export PYTHONPATH="$TMP" LD_PRELOAD="$LIBASAN" ASAN_OPTIONS=detect_leaks=0 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
"$PY" -c 'import sys, ngrameval._rouge as r; sys.exit(0 if r.__file__.startswith(sys.argv[1]) else f"not the sanitized build: {r.__file__}")' "$TMP"
cd "$ROOT"
"$PY" -m pytest -p no:randomly -p no:cacheprovider -q -m "not sanitize" tests/test_kernels_safety.py tests/test_rouge.py \
    tests/test_counting.py tests/test_tokenize.py tests/test_tokenize_fast.py tests/test_direct.py tests/test_bleu.py \
    tests/test_ter.py tests/test_ter_kernel.py tests/test_rouge_direct.py tests/test_fromfile.py tests/test_early.py tests/test_nist_jobs.py tests/test_nist.py \
    tests/test_golden_mteval.py "$@"
