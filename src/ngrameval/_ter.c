/*
 * ngrameval._ter: the edit search of TER (Snover et al. 2006) as Tercom and sacreBLEU 2.x make it.
 *
 * The readable reference is ngrameval.metrics.ter (BeamAligner, _spans, _best_shift, edits); this kernel
 * makes the same moves in the same order, so its counts are the same (tests/test_ter_kernel.py).
 *
 * edits(hyp_tok, hyp_off, ref_tok, ref_off, ref_seg, max_candidates) -> int64[S] (bytes)
 *   Hypothesis s is hyp_tok[hyp_off[s] .. hyp_off[s+1]) (int32 word ids, any value), its references are
 *   texts ref_seg[s] .. ref_seg[s+1]) of ref_tok/ref_off (at least one). Result: for every hypothesis the
 *   fewest edits over its references, edits = shifts made + beam edit distance after them:
 *
 *   - beam edit distance: row i (hypothesis prefix of i words) covers the columns lo .. hi) around
 *     floor(i * m / n) (m, n: reference and hypothesis lengths; beam 25, or ceil(m / 2n + 25) when
 *     m / 2n > 25; the last row is open to the right); a cell takes match/substitution, else (strictly
 *     cheaper) a skipped hypothesis word, else an added reference word. Rows are stored as bands (memory
 *     linear in n * beam + m); a candidate shift recomputes only the rows after its first changed word,
 *     in two rolling rows.
 *   - the shift search: while the search has tried fewer than max_candidates candidates, align the
 *     hypothesis (backtrack: align[r] = hypothesis position of reference word r, or of the word before
 *     it; the words not matched exactly are errors), then try every block of 1..10 words equal to the
 *     reference at a start at most 50 away, that covers a hypothesis and a reference error and is not
 *     aligned to itself, moved before each place the alignment puts the block's reference words (and the
 *     word before them); keep the best by (gain, length, earlier start, earlier target). Stop when it
 *     gains nothing, or (without making it) when the candidates tried reach max_candidates.
 *
 * The GIL is released for the whole search; signals are checked every K_POLL_WORK cells. A hypothesis
 * and reference of n + m >= 2**30 words stop with LimitError (costs are int32).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hash.h"

#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define BEAM_WIDTH 25
#define TER_INF 0x40000000 /* above every cost: n + m < TER_INF */

enum { MATCH = 0, SUB = 1, SKIP_HYP = 2, ADD_REF = 3, NONE = 4 };

/* Scratch of one search, grown as needed and reused across pairs. */
typedef struct {
    int64_t *lo, *hi; /* per row 0..n: its columns lo .. hi) */
    size_t *off;      /* per row 0..n+1: its first cell */
    size_t rows_cap;
    int32_t *cost; /* the band of the current hypothesis */
    uint8_t *op;
    size_t cells_cap;
    int32_t *ra, *rb; /* two rolling rows of a candidate */
    size_t width_cap;
    int32_t *hyp, *cand; /* the current hypothesis, a candidate */
    uint8_t *hyp_err;
    size_t hyp_cap;
    int64_t *align; /* per reference word */
    uint8_t *ref_err;
    size_t ref_cap;
} ter_t;

static void ter_free(ter_t *t) {
    free(t->lo); free(t->hi); free(t->off); free(t->cost); free(t->op); free(t->ra); free(t->rb);
    free(t->hyp); free(t->cand); free(t->hyp_err); free(t->align); free(t->ref_err);
}

static int grow(void **p, size_t need, size_t size) {
    void *q = realloc(*p, (need ? need : 1) * size);
    if (!q) return -1;
    *p = q;
    return 0;
}

/* The bands of an n-word hypothesis against an m-word reference; -1 on OOM. */
static int bands(ter_t *t, int64_t n, int64_t m) {
    size_t rows = (size_t)n + 2;
    if (rows > t->rows_cap) {
        if (grow((void **)&t->lo, rows, sizeof(int64_t)) < 0 || grow((void **)&t->hi, rows, sizeof(int64_t)) < 0 ||
            grow((void **)&t->off, rows, sizeof(size_t)) < 0)
            return -1;
        t->rows_cap = rows;
    }
    const double ratio = n ? (double)m / (double)n : 1.0, half = ratio / 2;
    const int64_t beam = half > BEAM_WIDTH ? (int64_t)ceil(half + BEAM_WIDTH) : BEAM_WIDTH;
    size_t width = (size_t)m + 1;
    t->lo[0] = 0;
    t->hi[0] = m + 1;
    t->off[0] = 0;
    t->off[1] = (size_t)m + 1;
    for (int64_t i = 1; i <= n; i++) {
        int64_t diag = (int64_t)floor((double)i * ratio), lo = diag - beam, hi = diag + beam;
        if (lo < 0) lo = 0;
        if (i == n || hi > m + 1) hi = m + 1;
        if (hi < lo) hi = lo;
        t->lo[i] = lo;
        t->hi[i] = hi;
        t->off[i + 1] = t->off[i] + (size_t)(hi - lo);
        if ((size_t)(hi - lo) > width) width = (size_t)(hi - lo);
    }
    size_t cells = t->off[n + 1];
    if (cells > t->cells_cap) {
        if (grow((void **)&t->cost, cells, sizeof(int32_t)) < 0 || grow((void **)&t->op, cells, 1) < 0) return -1;
        t->cells_cap = cells;
    }
    if (width > t->width_cap) {
        if (grow((void **)&t->ra, width, sizeof(int32_t)) < 0 || grow((void **)&t->rb, width, sizeof(int32_t)) < 0)
            return -1;
        t->width_cap = width;
    }
    return 0;
}

/* Row cc (columns lo .. hi) after word w, from row pc (columns plo .. phi); ops (may be NULL) gets the
   moves. Costs at or above TER_INF mean unreachable and stay at TER_INF. */
static inline void step(const int32_t *pc, int64_t plo, int64_t phi, int32_t *cc, uint8_t *ops, int64_t lo,
                        int64_t hi, int32_t w, const int32_t *ref) {
    int64_t j = lo;
    if (j == 0 && j < hi) {
        int32_t up = plo == 0 && phi > 0 ? pc[0] : TER_INF;
        cc[0] = up < TER_INF ? up + 1 : TER_INF;
        if (ops) ops[0] = SKIP_HYP;
        j = 1;
    }
    int32_t left = j > lo ? cc[j - 1 - lo] : TER_INF;
    for (; j < hi; j++) {
        int32_t best = TER_INF, c;
        uint8_t op = NONE;
        int32_t diag = j - 1 >= plo && j - 1 < phi ? pc[j - 1 - plo] : TER_INF;
        int same = w == ref[j - 1];
        c = diag + !same;
        if (c < best) {
            best = c;
            op = same ? MATCH : SUB;
        }
        c = (j >= plo && j < phi ? pc[j - plo] : TER_INF) + 1;
        if (c < best) {
            best = c;
            op = SKIP_HYP;
        }
        c = left + 1;
        if (c < best) {
            best = c;
            op = ADD_REF;
        }
        cc[j - lo] = left = best;
        if (ops) ops[j - lo] = op;
    }
}

/* Rows first+1 .. n of the current hypothesis (rows 0 .. first are up to date). */
static void rows_from(ter_t *t, int64_t first, int64_t n, const int32_t *ref) {
    for (int64_t i = first + 1; i <= n; i++)
        step(t->cost + t->off[i - 1], t->lo[i - 1], t->hi[i - 1], t->cost + t->off[i], t->op + t->off[i], t->lo[i],
             t->hi[i], t->hyp[i - 1], ref);
}

/* Backtracks the current hypothesis' band: align, ref_err, hyp_err. -1 if the path leaves the band (cannot
   happen: the last row is complete and every finite cell comes from a finite one). */
static int backtrack(ter_t *t, int64_t n, int64_t m) {
    int64_t i = n, j = m;
    while (i > 0 || j > 0) {
        if (j < t->lo[i] || j >= t->hi[i]) return -1;
        uint8_t op = t->op[t->off[i] + (size_t)(j - t->lo[i])];
        if ((op == MATCH || op == SUB) && i > 0 && j > 0) {
            t->align[j - 1] = i - 1;
            t->ref_err[j - 1] = op;
            t->hyp_err[i - 1] = op;
            i--;
            j--;
        } else if (op == ADD_REF && j > 0) {
            t->align[j - 1] = i - 1;
            t->ref_err[j - 1] = 1;
            j--;
        } else if (op == SKIP_HYP && i > 0) {
            t->hyp_err[i - 1] = 1;
            i--;
        } else {
            return -1;
        }
    }
    return 0;
}

/* The words of the current hypothesis with the block s .. s+len-1 moved before target (a target inside or
   right after the block moves it target - s places right), written from position `from` on (the first
   changed one) into cand. Returns `from`. */
static int64_t shift_into(const int32_t *w, int64_t n, int64_t s, int64_t len, int64_t target, int32_t *out) {
    if (target < s) {
        memcpy(out + target, w + s, (size_t)len * sizeof(int32_t));
        memcpy(out + target + len, w + target, (size_t)(s - target) * sizeof(int32_t));
        return target; /* the rest (from s + len) is unchanged */
    }
    int64_t mid_end = target > s + len ? target : (len + target < n ? len + target : n);
    memcpy(out + s, w + s + len, (size_t)(mid_end - s - len) * sizeof(int32_t));
    memcpy(out + mid_end - len, w + s, (size_t)len * sizeof(int32_t));
    return s; /* the rest (from mid_end) is unchanged */
}

/* End (exclusive) of the part of a shifted hypothesis that differs from the current one. */
static inline int64_t shift_end(int64_t n, int64_t s, int64_t len, int64_t target) {
    if (target < s) return s + len;
    return target > s + len ? target : (len + target < n ? len + target : n);
}

/* Edit distance of cand (equal to the current hypothesis before `from` and from `end` on) in the beam. */
static int32_t distance(ter_t *t, int64_t from, int64_t end, int64_t n, int64_t m, const int32_t *ref) {
    const int32_t *pc = t->cost + t->off[from];
    int32_t *cur = t->ra, *other = t->rb;
    for (int64_t i = from + 1; i <= n; i++) {
        int32_t w = i - 1 < end ? t->cand[i - 1] : t->hyp[i - 1];
        step(pc, t->lo[i - 1], t->hi[i - 1], cur, NULL, t->lo[i], t->hi[i], w, ref);
        pc = cur;
        cur = other;
        other = (int32_t *)pc;
    }
    return pc[m - t->lo[n]];
}

/* Fewest TER edits of hyp[0..n) against ref[0..m) (m > 0). -1: interrupted, -2: OOM, -3: left the beam. */
static int64_t pair_edits(ter_t *t, const int32_t *hyp, int64_t n, const int32_t *ref, int64_t m,
                          int64_t max_candidates, kstate_t *k) {
    if (bands(t, n, m) < 0) return -2;
    if ((size_t)n > t->hyp_cap) {
        if (grow((void **)&t->hyp, (size_t)n, sizeof(int32_t)) < 0 || grow((void **)&t->cand, (size_t)n, sizeof(int32_t)) < 0 ||
            grow((void **)&t->hyp_err, (size_t)n, 1) < 0)
            return -2;
        t->hyp_cap = (size_t)n;
    }
    if ((size_t)m > t->ref_cap) {
        if (grow((void **)&t->align, (size_t)m, sizeof(int64_t)) < 0 || grow((void **)&t->ref_err, (size_t)m, 1) < 0)
            return -2;
        t->ref_cap = (size_t)m;
    }
    if (n) memcpy(t->hyp, hyp, (size_t)n * sizeof(int32_t));
    for (int64_t j = 0; j <= m; j++) {
        t->cost[j] = (int32_t)j;
        t->op[j] = ADD_REF;
    }
    int64_t tried = 0, shifts = 0, valid = 0; /* rows 0 .. valid are those of the current hypothesis */
    const size_t width = (size_t)(t->off[n + 1] / (size_t)(n + 1)) + 1;
    for (;;) {
        rows_from(t, valid, n, ref);
        valid = n;
        if (k_poll(k, (uint64_t)(n + 1) * width) < 0) return -1;
        const int32_t dist = t->cost[t->off[n] + (size_t)(m - t->lo[n])];
        if (backtrack(t, n, m) < 0) return -3;
        int have = 0;
        int64_t b_gain = 0, b_len = 0, b_sh = 0, b_t = 0;
        for (int64_t sh = 0; sh < n; sh++) {
            int64_t sr_end = sh + MAX_SHIFT_DIST + 1 < m ? sh + MAX_SHIFT_DIST + 1 : m;
            for (int64_t sr = sh - MAX_SHIFT_DIST > 0 ? sh - MAX_SHIFT_DIST : 0; sr < sr_end; sr++) {
                int any_h = 0, any_r = 0;
                for (int64_t len = 1; len <= MAX_SHIFT_SIZE && sh + len <= n && sr + len <= m &&
                                      t->hyp[sh + len - 1] == ref[sr + len - 1];
                     len++) {
                    any_h |= t->hyp_err[sh + len - 1];
                    any_r |= t->ref_err[sr + len - 1];
                    if (!any_h || !any_r) continue;
                    if (sh <= t->align[sr] && t->align[sr] < sh + len) continue;
                    int64_t last = -1;
                    for (int64_t r = sr - 1; r < sr + len; r++) {
                        int64_t target = r < 0 ? 0 : t->align[r] + 1;
                        if (target == last) continue;
                        last = target;
                        int64_t from = shift_into(t->hyp, n, sh, len, target, t->cand);
                        int64_t end = shift_end(n, sh, len, target);
                        int64_t gain = (int64_t)dist - distance(t, from, end, n, m, ref);
                        tried++;
                        if (!have || gain > b_gain ||
                            (gain == b_gain &&
                             (len > b_len || (len == b_len && (sh < b_sh || (sh == b_sh && target < b_t)))))) {
                            have = 1;
                            b_gain = gain;
                            b_len = len;
                            b_sh = sh;
                            b_t = target;
                        }
                        if (k_poll(k, (uint64_t)(n - from) * width + 1) < 0) return -1;
                    }
                    if (tried >= max_candidates) goto searched;
                }
            }
            if (k_poll(k, (uint64_t)(sr_end > sh ? sr_end - sh : 0) + 1) < 0) return -1;
        }
    searched:
        if (tried >= max_candidates || !have || b_gain <= 0) return shifts + dist;
        shifts++;
        int64_t from = shift_into(t->hyp, n, b_sh, b_len, b_t, t->cand);
        int64_t end = shift_end(n, b_sh, b_len, b_t);
        memcpy(t->hyp + from, t->cand + from, (size_t)(end - from) * sizeof(int32_t));
        valid = from;
    }
}

typedef struct {
    Py_buffer tok, off;
} texts_t;

static void release_texts(texts_t *t) {
    if (t->tok.obj) PyBuffer_Release(&t->tok);
    if (t->off.obj) PyBuffer_Release(&t->off);
}

/* Reads (tok int32, off int64) and copies the checked offsets (non-decreasing from 0 to the token count)
   into *copy (freed by the caller); -1 with an exception on error. */
static int get_texts(PyObject *tok_o, PyObject *off_o, texts_t *t, int64_t **copy, Py_ssize_t *count,
                     const char *what) {
    if (PyObject_GetBuffer(tok_o, &t->tok, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(off_o, &t->off, PyBUF_C_CONTIGUOUS) < 0) return -1;
    Py_ssize_t nt = t->off.len / 8 - 1;
    int ok = t->tok.len % 4 == 0 && t->off.len % 8 == 0 && nt >= 0;
    if (ok) {
        *copy = (int64_t *)malloc((size_t)(nt + 1) * sizeof(int64_t));
        if (!*copy) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(*copy, t->off.buf, (size_t)(nt + 1) * sizeof(int64_t));
        const int64_t *o = *copy;
        ok = o[0] == 0 && o[nt] == t->tok.len / 4;
        for (Py_ssize_t s = 0; ok && s < nt; s++) ok = o[s + 1] >= o[s];
    }
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "%s must be int32 ids and non-decreasing int64 offsets from 0 covering them",
                     what);
        return -1;
    }
    *count = nt;
    return 0;
}

static PyObject *edits(PyObject *self, PyObject *args) {
    PyObject *ht, *ho, *rt, *ro, *seg_o, *cand_o, *result = NULL;
    texts_t H = {0}, R = {0};
    Py_buffer seg = {0};
    int64_t *hoff = NULL, *roff = NULL, *sg = NULL, *out = NULL;
    ter_t t = {0};
    kstate_t k = {0};
    Py_ssize_t S = 0, NR = 0;
    if (!PyArg_ParseTuple(args, "OOOOOO", &ht, &ho, &rt, &ro, &seg_o, &cand_o)) return NULL;
    int overflow = 0;
    long long max_candidates = PyLong_AsLongLongAndOverflow(cand_o, &overflow);
    if (max_candidates == -1 && PyErr_Occurred()) return NULL;
    if (overflow > 0) max_candidates = INT64_MAX;
    if (overflow < 0 || max_candidates < 0) {
        PyErr_Format(PyExc_ValueError, "max_candidates must be an integer >= 0, got %R", cand_o);
        return NULL;
    }
    if (get_texts(ht, ho, &H, &hoff, &S, "hypotheses") < 0 || get_texts(rt, ro, &R, &roff, &NR, "references") < 0)
        goto done;
    if (PyObject_GetBuffer(seg_o, &seg, PyBUF_C_CONTIGUOUS) < 0) goto done;
    if (seg.len != (S + 1) * 8) {
        PyErr_SetString(PyExc_ValueError, "ref_seg must be int64 with one offset per hypothesis + 1");
        goto done;
    }
    sg = (int64_t *)malloc((size_t)(S + 1) * sizeof(int64_t));
    out = (int64_t *)malloc((size_t)(S ? S : 1) * sizeof(int64_t));
    if (!sg || !out) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(sg, seg.buf, (size_t)(S + 1) * sizeof(int64_t));
    if (sg[0] != 0 || sg[S] != NR) {
        PyErr_SetString(PyExc_ValueError, "ref_seg must run from 0 to the number of references");
        goto done;
    }
    for (Py_ssize_t s = 0; s < S; s++)
        if (sg[s + 1] <= sg[s]) {
            PyErr_Format(PyExc_ValueError, "segment %zd has no reference; every segment needs at least one", s + 1);
            goto done;
        }
    {
        const int32_t *htk = (const int32_t *)H.tok.buf, *rtk = (const int32_t *)R.tok.buf;
        int64_t code = 0;
        k_release(&k);
        for (Py_ssize_t s = 0; s < S && code >= 0; s++) {
            int64_t n = hoff[s + 1] - hoff[s], best = INT64_MAX;
            for (int64_t q = sg[s]; q < sg[s + 1]; q++) {
                int64_t m = roff[q + 1] - roff[q];
                if (m == 0) {
                    code = n;
                } else if (n + m >= TER_INF) {
                    k_limit(&k,
                            "segment %lld, reference %lld: TER aligns at most 2**30 - 1 words (hypothesis + "
                            "reference), got %lld + %lld",
                            (long long)s + 1, (long long)(q - sg[s]) + 1, (long long)n, (long long)m);
                    code = -1;
                    break;
                } else {
                    code = pair_edits(&t, htk + hoff[s], n, rtk + roff[q], m, (int64_t)max_candidates, &k);
                    if (code < 0) break;
                }
                if (code < best) best = code;
            }
            out[s] = best;
        }
        if (code == -2) k_nomem(&k);
        if (code == -3) {
            k_acquire(&k);
            PyErr_SetString(PyExc_SystemError, "TER alignment left the beam (a bug in ngrameval._ter)");
            goto done;
        }
        if (k_finish(&k) == 0)
            result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(S * (Py_ssize_t)sizeof(int64_t)));
    }
done:
    if (!result) k_acquire(&k);
    ter_free(&t);
    free(hoff);
    free(roff);
    free(sg);
    free(out);
    release_texts(&H);
    release_texts(&R);
    if (seg.obj) PyBuffer_Release(&seg);
    return result;
}

static PyMethodDef methods[] = {
    {"edits", edits, METH_VARARGS, "Fewest TER edits of every hypothesis over its references (int64 bytes)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ter", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ter(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "MAX_WORDS", TER_INF - 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
