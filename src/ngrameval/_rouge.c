/*
 * ngrameval._rouge: the alignment and skip-bigram kernels of ROUGE (Lin 2004), as ROUGE-1.5.5 computes them.
 *
 * Texts are token ids in sentences: sentence s is tok[soff[s] .. soff[s+1]), text t is sentences
 * toff[t] .. toff[t+1]. A pair (h, r) scores hypothesis text h against reference text r.
 *
 * lcs(hyp texts, ref texts, hyp clip texts, ref clip texts, pair_hyp, pair_ref, weight) -> hits double[P]
 *   (clip texts: one sentence per text, the tokens whose counts clip the hits)
 *   For every reference sentence, the union of one LCS with each hypothesis sentence (backtracking from
 *   the end: diagonal on a match, else up when c[i-1][j] >= c[i][j-1], else left) marks reference
 *   positions. Marked positions count as hits while both the reference and the hypothesis still have an
 *   unused occurrence of that token (unigram counts over the clip texts, decremented as they are used).
 *   weight = 0: ROUGE-L, hits = number of such positions. weight > 0: ROUGE-W, the DP maximises the
 *   weighted LCS (a run of k consecutive matches is worth k^weight) and hits = sum of run^weight over runs
 *   of counted positions, a run ending where the next position is unmarked or the sentence ends.
 *   With weight 0 and both texts one sentence that is its own clip text, the marked positions are one LCS
 *   and no clipping can cut it: hits = the LCS length, computed bit-parallel (lcs_length).
 *
 * skip(hyp texts, ref texts, pair_hyp, pair_ref, gap, unigrams) -> (hits, ref_total, hyp_total) int64[3 * P]
 *   Skip-bigrams (i < j, j - i <= gap + 1; gap < 0: any distance) of each whole text, plus with `unigrams`
 *   the unigram of every token but the last (ROUGE-SU); hits = sum over units of min(count_h, count_r).
 *
 * scores(hits, ref_len, hyp_len, sub, alpha, round5, out) -> served
 *   R, P and F of items scored by one pair each, from int64 counts (1-D, any stride): R = hits / (ref_len - sub)+
 *   and P = hits / (hyp_len - sub)+ (0 where that total is 0), F = P R / ((1 - alpha) P + alpha R) of the R and P
 *   as they are kept (0 where that denominator is not > 0); with round5, each as ngrameval.metrics.rouge._round5
 *   keeps it (the double nearest the value correctly rounded to 5 decimals). out: float64, R[0..n) P[n..2n)
 *   F[2n..3n). The same operations in the same order as the NumPy of ngrameval.metrics.rouge.combine (C99: no
 *   contraction into fused multiply-adds), so the same doubles. False when a value is outside [0, 2**30) (the
 *   caller computes those items in NumPy).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hash.h"
#include "_lcs.h"

typedef struct {
    Py_buffer tok, soff, toff;
} texts_t;

static void release_texts(texts_t *t) {
    if (t->tok.obj) PyBuffer_Release(&t->tok);
    if (t->soff.obj) PyBuffer_Release(&t->soff);
    if (t->toff.obj) PyBuffer_Release(&t->toff);
}

/* Reads and checks (tok int32, soff int64, toff int64); -1 with an exception on error. */
static int get_texts(PyObject *tok_o, PyObject *soff_o, PyObject *toff_o, texts_t *t) {
    if (PyObject_GetBuffer(tok_o, &t->tok, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(soff_o, &t->soff, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(toff_o, &t->toff, PyBUF_C_CONTIGUOUS) < 0) return -1;
    const int64_t *so = (const int64_t *)t->soff.buf, *to = (const int64_t *)t->toff.buf;
    Py_ssize_t ns = t->soff.len / 8 - 1, nt = t->toff.len / 8 - 1;
    int ok = t->tok.len % 4 == 0 && t->soff.len % 8 == 0 && t->toff.len % 8 == 0 && ns >= 0 && nt >= 0;
    ok = ok && so[0] == 0 && so[ns] == t->tok.len / 4 && to[0] == 0 && to[nt] == ns;
    for (Py_ssize_t s = 0; ok && s < ns; s++) ok = so[s + 1] >= so[s];
    for (Py_ssize_t s = 0; ok && s < nt; s++) ok = to[s + 1] >= to[s];
    const int32_t *tk = (const int32_t *)t->tok.buf;
    for (Py_ssize_t i = 0; ok && i < t->tok.len / 4; i++) ok = tk[i] >= 0;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "texts must be int32 ids >= 0 and non-decreasing int64 offsets covering them");
        return -1;
    }
    return 0;
}

static int get_pairs(PyObject *ph_o, PyObject *pr_o, Py_buffer *ph, Py_buffer *pr, const texts_t *h,
                     const texts_t *r) {
    if (PyObject_GetBuffer(ph_o, ph, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(pr_o, pr, PyBUF_C_CONTIGUOUS) < 0) return -1;
    Py_ssize_t P = ph->len / 8, nh = h->toff.len / 8 - 1, nr = r->toff.len / 8 - 1;
    int ok = ph->len % 8 == 0 && pr->len == ph->len;
    const int64_t *a = (const int64_t *)ph->buf, *b = (const int64_t *)pr->buf;
    for (Py_ssize_t p = 0; ok && p < P; p++) ok = a[p] >= 0 && a[p] < nh && b[p] >= 0 && b[p] < nr;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "pairs must be int64 text indices of equal length");
        return -1;
    }
    return 0;
}

static int32_t max_id(const texts_t *t) {
    const int32_t *tk = (const int32_t *)t->tok.buf;
    int32_t m = -1;
    for (Py_ssize_t i = 0; i < t->tok.len / 4; i++)
        if (tk[i] > m) m = tk[i];
    return m;
}

/* The bound on the cells of one alignment table / the skip-bigram units of one text (ngrameval.limits). */
static uint64_t max_cells = 1ULL << 28;

#define RAISE_HINT "raise the bound with ngrameval.limits.set_max_cells()"

/* a * b, saturating at UINT64_MAX (the builtin where GCC/Clang have it; else a division test, e.g. MSVC). */
static inline uint64_t mul_sat(uint64_t a, uint64_t b) {
#if defined(__GNUC__) || defined(__clang__)
    uint64_t c;
    return __builtin_mul_overflow(a, b, &c) ? UINT64_MAX : c;
#else
    return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
#endif
}

static inline uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* Scratch of `align`: two rolling rows of the (weighted) LCS values and of the run lengths, and one bit per
   cell for the backtrack (set where the move off a non-matching cell is up, as c[i-1][j] >= c[i][j-1]). */
typedef struct {
    double *row, *up, *lrow, *lup;
    size_t row_cap;
    uint64_t *dir;
    size_t dir_cap; /* in words */
} dp_t;

static void dp_free(dp_t *dp) {
    free(dp->row); free(dp->up); free(dp->lrow); free(dp->lup); free(dp->dir);
}

static int dp_reserve(dp_t *dp, size_t width, size_t words) {
    if (width > dp->row_cap) {
        double **rows[4] = {&dp->row, &dp->up, &dp->lrow, &dp->lup};
        for (int q = 0; q < 4; q++) {
            double *p = (double *)realloc(*rows[q], width * sizeof(double));
            if (!p) return -1;
            *rows[q] = p;
        }
        dp->row_cap = width;
    }
    if (words > dp->dir_cap) {
        uint64_t *d = (uint64_t *)realloc(dp->dir, words * sizeof(uint64_t));
        if (!d) return -1;
        dp->dir = d;
        dp->dir_cap = words;
    }
    return 0;
}

/* LCS (weight 0) or weighted LCS of r[0..m) x h[0..n), then marks the backtracked r positions: diagonal on a
   match, else up when c[i-1][j] >= c[i][j-1], else left. Two rows of values and m * n bits. -1 on error. */
static int align(const int32_t *r, size_t m, const int32_t *h, size_t n, double weight, dp_t *dp, uint8_t *mask,
                 kstate_t *k) {
    if (m == 0 || n == 0) return 0;
    const size_t stride = (n + 63) / 64; /* words per row of direction bits */
    if (dp_reserve(dp, n + 1, m * stride) < 0) return k_nomem(k);
    double *row = dp->row, *up = dp->up, *l = dp->lrow, *lu = dp->lup;
    const int weighted = weight > 0;
    for (size_t j = 0; j <= n; j++) up[j] = lu[j] = 0;
    for (size_t i = 1; i <= m; i++) {
        uint64_t *bits = dp->dir + (i - 1) * stride, word = 0;
        row[0] = 0;
        l[0] = 0;
        const int32_t t = r[i - 1];
        for (size_t j = 1; j <= n; j++) {
            if (t == h[j - 1]) {
                if (weighted) {
                    double q = lu[j - 1];
                    row[j] = up[j - 1] + pow(q + 1, weight) - pow(q, weight);
                    l[j] = q + 1;
                } else {
                    row[j] = up[j - 1] + 1;
                }
            } else {
                int go_up = up[j] >= row[j - 1];
                row[j] = go_up ? up[j] : row[j - 1];
                l[j] = 0;
                word |= (uint64_t)go_up << ((j - 1) % 64);
            }
            if (j % 64 == 0 || j == n) {
                bits[(j - 1) / 64] = word;
                word = 0;
            }
        }
        double *x = row; row = up; up = x;
        x = l; l = lu; lu = x;
        if (k_poll(k, n) < 0) return -1;
    }
    size_t i = m, j = n;
    while (i && j) {
        if (r[i - 1] == h[j - 1]) {
            mask[--i] = 1;
            j--;
        } else if (dp->dir[(i - 1) * stride + (j - 1) / 64] >> ((j - 1) % 64) & 1) {
            i--;
        } else {
            j--;
        }
    }
    return 0;
}

/* Whether text t is one sentence with the same tokens as its clip text t (so clipping cannot bind). */
static inline int sole_sentence(const int32_t *tok, const int64_t *so, const int64_t *to, int64_t t,
                                const int32_t *ctok, const int64_t *co) {
    if (to[t + 1] - to[t] != 1) return 0;
    int64_t a = so[to[t]], len = so[to[t] + 1] - a;
    if (len != co[t + 1] - co[t]) return 0;
    return len == 0 || tok + a == ctok + co[t] || memcmp(tok + a, ctok + co[t], (size_t)len * sizeof(int32_t)) == 0;
}

static PyObject *lcs(PyObject *self, PyObject *args) {
    PyObject *ht, *hs, *hto, *rt, *rs, *rto, *cht, *chs, *chto, *crt, *crs, *crto, *ph_o, *pr_o;
    double weight;
    texts_t H = {0}, R = {0}, CH = {0}, CR = {0};
    Py_buffer ph = {0}, pr = {0};
    PyObject *result = NULL;
    int64_t *cnt_r = NULL, *cnt_h = NULL;
    uint8_t *mask = NULL;
    double *hits = NULL;
    dp_t dp = {0};
    bits_t bits = {0};
    kstate_t k = {0};
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOd", &ht, &hs, &hto, &rt, &rs, &rto, &cht, &chs, &chto, &crt, &crs,
                          &crto, &ph_o, &pr_o, &weight))
        return NULL;
    if (!(weight >= 0) || isinf(weight)) {
        PyErr_Format(PyExc_ValueError, "weight must be a finite number >= 0, got %R", PyTuple_GET_ITEM(args, 14));
        return NULL;
    }
    if (get_texts(ht, hs, hto, &H) < 0 || get_texts(rt, rs, rto, &R) < 0) goto done;
    if (get_texts(cht, chs, chto, &CH) < 0 || get_texts(crt, crs, crto, &CR) < 0) goto done;
    /* clip texts: one sentence per text, so sentence offsets are text offsets */
    if (CH.soff.len != H.toff.len || CR.soff.len != R.toff.len || CH.toff.len != CH.soff.len ||
        CR.toff.len != CR.soff.len) {
        PyErr_SetString(PyExc_ValueError, "clip texts must be one sentence per text, matching the texts one to one");
        goto done;
    }
    if (get_pairs(ph_o, pr_o, &ph, &pr, &H, &R) < 0) goto done;
    {
        int32_t vmax = max_id(&CH), vr = max_id(&CR), va = max_id(&H), vb = max_id(&R);
        if (vr > vmax) vmax = vr;
        if (va > vmax) vmax = va;
        if (vb > vmax) vmax = vb;
        size_t V = (size_t)vmax + 2, longest = 1; /* + 2: never calloc(0) */
        const int64_t *rso = (const int64_t *)R.soff.buf;
        for (Py_ssize_t s = 0; s < R.soff.len / 8 - 1; s++)
            if ((size_t)(rso[s + 1] - rso[s]) > longest) longest = (size_t)(rso[s + 1] - rso[s]);
        Py_ssize_t P = ph.len / 8;
        const uint64_t limit = max_cells;
        const char *name = weight > 0 ? "ROUGE-W" : "ROUGE-L (summary level)";
        k_release(&k);
        cnt_r = (int64_t *)calloc(V, sizeof(int64_t));
        cnt_h = (int64_t *)calloc(V, sizeof(int64_t));
        mask = (uint8_t *)malloc(longest);
        hits = (double *)calloc((size_t)(P ? P : 1), sizeof(double));
        bits.loc = (int32_t *)malloc(V * sizeof(int32_t));
        if (!cnt_r || !cnt_h || !mask || !hits || !bits.loc) goto nomem;
        memset(bits.loc, 0xff, V * sizeof(int32_t));
        const int32_t *htk = (const int32_t *)H.tok.buf, *rtk = (const int32_t *)R.tok.buf;
        const int64_t *hso = (const int64_t *)H.soff.buf, *hto_ = (const int64_t *)H.toff.buf;
        const int64_t *rto_ = (const int64_t *)R.toff.buf;
        const int32_t *chk = (const int32_t *)CH.tok.buf, *crk = (const int32_t *)CR.tok.buf;
        const int64_t *cho = (const int64_t *)CH.soff.buf, *cro = (const int64_t *)CR.soff.buf;
        const int64_t *pa = (const int64_t *)ph.buf, *pb = (const int64_t *)pr.buf;
        for (Py_ssize_t p = 0; p < P; p++) {
            int64_t h = pa[p], r = pb[p];
            if (weight <= 0 && sole_sentence(htk, hso, hto_, h, chk, cho) && sole_sentence(rtk, rso, rto_, r, crk, cro)) {
                /* one sentence each: the marked positions are one LCS, which no clipping can cut */
                int64_t r0 = rso[rto_[r]], h0 = hso[hto_[h]];
                int64_t got = lcs_length(rtk + r0, (size_t)(rso[rto_[r] + 1] - r0), htk + h0,
                                         (size_t)(hso[hto_[h] + 1] - h0), &bits, &k);
                if (got < 0) goto done;
                hits[p] = (double)got;
                continue;
            }
            /* the alignment tables of this pair fit the bound? */
            for (int64_t rs_ = rto_[r]; rs_ < rto_[r + 1]; rs_++)
                for (int64_t hs_ = hto_[h]; hs_ < hto_[h + 1]; hs_++) {
                    uint64_t m = (uint64_t)(rso[rs_ + 1] - rso[rs_]), n = (uint64_t)(hso[hs_ + 1] - hso[hs_]);
                    if (mul_sat(m, n) > limit) {
                        k_limit(&k,
                                "segment %lld, reference %lld: %s needs %llu cells (a %llu x %llu token alignment "
                                "table), above max_cells=%llu; " RAISE_HINT,
                                (long long)h + 1, (long long)r + 1, name, (unsigned long long)mul_sat(m, n),
                                (unsigned long long)m, (unsigned long long)n, (unsigned long long)limit);
                        goto done;
                    }
                }
            for (int64_t q = cho[h]; q < cho[h + 1]; q++) cnt_h[chk[q]]++;
            for (int64_t q = cro[r]; q < cro[r + 1]; q++) cnt_r[crk[q]]++;
            double total = 0;
            for (int64_t rs_ = rto_[r]; rs_ < rto_[r + 1]; rs_++) {
                const int32_t *rt_ = rtk + rso[rs_];
                size_t m = (size_t)(rso[rs_ + 1] - rso[rs_]);
                if (m == 0) continue;
                memset(mask, 0, m);
                for (int64_t hs_ = hto_[h]; hs_ < hto_[h + 1]; hs_++)
                    if (align(rt_, m, htk + hso[hs_], (size_t)(hso[hs_ + 1] - hso[hs_]), weight, &dp, mask, &k) < 0)
                        goto done;
                size_t len = 0;
                for (size_t j = 0; j < m; j++) {
                    int32_t t = rt_[j];
                    if (!mask[j] || cnt_r[t] <= 0 || cnt_h[t] <= 0) continue;
                    cnt_r[t]--;
                    cnt_h[t]--;
                    if (weight <= 0) {
                        total += 1;
                        continue;
                    }
                    len++;
                    if (j + 1 == m || !mask[j + 1]) {
                        total += pow((double)len, weight);
                        len = 0;
                    }
                }
            }
            hits[p] = total;
            for (int64_t q = cho[h]; q < cho[h + 1]; q++) cnt_h[chk[q]] = 0;
            for (int64_t q = cro[r]; q < cro[r + 1]; q++) cnt_r[crk[q]] = 0;
            if (k_poll(&k, (uint64_t)(cho[h + 1] - cho[h] + cro[r + 1] - cro[r]) + 1) < 0) goto done;
        }
        if (k_finish(&k) == 0)
            result = PyBytes_FromStringAndSize((const char *)hits, (Py_ssize_t)(P * (Py_ssize_t)sizeof(double)));
    }
    goto done;
nomem:
    k_nomem(&k);
done:
    if (!result) k_finish(&k);
    free(cnt_r);
    free(cnt_h);
    free(mask);
    free(hits);
    dp_free(&dp);
    bits_free(&bits);
    release_texts(&H);
    release_texts(&R);
    release_texts(&CH);
    release_texts(&CR);
    if (ph.obj) PyBuffer_Release(&ph);
    if (pr.obj) PyBuffer_Release(&pr);
    return result;
}

#define EMPTY UINT64_MAX

/* Skip-bigram counts of one reference text; grows with the number of distinct units. */
typedef struct {
    uint64_t *keys; /* EMPTY where free */
    int64_t *count;
    size_t *used, n_used, cap; /* cap: a power of two */
} counter_t;

static void counter_free(counter_t *t) {
    free(t->keys); free(t->count); free(t->used);
}

static int counter_init(counter_t *t, size_t cap) {
    t->keys = (uint64_t *)malloc(cap * sizeof(uint64_t));
    t->count = (int64_t *)malloc(cap * sizeof(int64_t));
    t->used = (size_t *)malloc(cap / 2 * sizeof(size_t));
    if (!t->keys || !t->count || !t->used) return -1;
    memset(t->keys, 0xff, cap * sizeof(uint64_t));
    t->cap = cap;
    t->n_used = 0;
    return 0;
}

static inline size_t counter_slot(const counter_t *t, uint64_t key) {
    size_t j = mix64(key) & (t->cap - 1);
    while (t->keys[j] != EMPTY && t->keys[j] != key) j = (j + 1) & (t->cap - 1);
    return j;
}

/* Doubles the table (keeping its entries); -1 on OOM. */
static int counter_grow(counter_t *t) {
    counter_t n = {0};
    if (counter_init(&n, t->cap * 2) < 0) {
        counter_free(&n);
        return -1;
    }
    for (size_t q = 0; q < t->n_used; q++) {
        size_t s = t->used[q], j = counter_slot(&n, t->keys[s]);
        n.keys[j] = t->keys[s];
        n.count[j] = t->count[s];
        n.used[n.n_used++] = j;
    }
    counter_free(t);
    *t = n;
    return 0;
}

/* Number of skip-bigram (+ unigram) units of a text of L tokens (gap < 0: any distance), saturating. */
static uint64_t n_units(int64_t L, int64_t gap, int unigrams) {
    uint64_t pairs, l = (uint64_t)L, d = (uint64_t)gap + 1; /* each token pairs with the next d, fewer near the end */
    if (gap < 0 || l <= d)
        pairs = l < 2 ? 0 : mul_sat(l % 2 ? l : l / 2, l % 2 ? (l - 1) / 2 : l - 1);
    else
        pairs = add_sat(mul_sat(l - d, d), mul_sat(d % 2 ? d : d / 2, d % 2 ? (d - 1) / 2 : d - 1));
    return add_sat(pairs, unigrams && L > 0 ? l - 1 : 0);
}

/* Visits every unit of x[0..L): key a*(V+1) for the unigram a, a*(V+1) + b + 1 for the skip-bigram (a, b).
   mode 0 counts them into t; mode 1 takes them from t and sets *hits. -1 on error (k->err set). */
static int units(counter_t *t, const int32_t *x, int64_t L, uint64_t V, int64_t gap, int unigrams, int mode,
                 int64_t *hits, kstate_t *k) {
    int64_t hit = 0;
    for (int64_t i = 0; i + 1 < L; i++) {
        uint64_t a = (uint64_t)x[i] * (V + 1);
        int64_t last = gap < 0 || gap >= L ? L - 1 : (i + gap + 1 < L ? i + gap + 1 : L - 1);
        for (int64_t j = unigrams ? i : i + 1; j <= last; j++) {
            uint64_t key = j == i ? a : a + (uint64_t)x[j] + 1;
            size_t s = counter_slot(t, key);
            if (mode == 0) {
                if (t->keys[s] == EMPTY) {
                    if ((t->n_used + 1) * 2 > t->cap) {
                        if (counter_grow(t) < 0) return k_nomem(k);
                        s = counter_slot(t, key);
                    }
                    t->keys[s] = key;
                    t->count[s] = 0;
                    t->used[t->n_used++] = s;
                }
                t->count[s]++;
            } else if (t->keys[s] != EMPTY && t->count[s] > 0) {
                t->count[s]--;
                hit++;
            }
        }
        if (k_poll(k, (uint64_t)(last - i) + 1) < 0) return -1;
    }
    *hits = hit;
    return 0;
}

static PyObject *skip(PyObject *self, PyObject *args) {
    PyObject *ht, *hs, *hto, *rt, *rs, *rto, *ph_o, *pr_o, *gap_o;
    int unigrams;
    texts_t H = {0}, R = {0};
    Py_buffer ph = {0}, pr = {0};
    counter_t table = {0};
    int64_t *out = NULL;
    PyObject *result = NULL;
    kstate_t k = {0};
    if (!PyArg_ParseTuple(args, "OOOOOOOOOp", &ht, &hs, &hto, &rt, &rs, &rto, &ph_o, &pr_o, &gap_o, &unigrams))
        return NULL;
    /* gap: any int; negative means any distance, and a gap past every text is the same as any distance */
    int overflow = 0;
    long long gap_ll = PyLong_AsLongLongAndOverflow(gap_o, &overflow);
    if (gap_ll == -1 && PyErr_Occurred()) return NULL;
    int64_t gap = overflow > 0 || gap_ll > (1LL << 62) ? (1LL << 62) : overflow < 0 || gap_ll < 0 ? -1 : gap_ll;
    if (get_texts(ht, hs, hto, &H) < 0 || get_texts(rt, rs, rto, &R) < 0) goto done;
    if (get_pairs(ph_o, pr_o, &ph, &pr, &H, &R) < 0) goto done;
    {
        int32_t vh = max_id(&H), vr = max_id(&R);
        uint64_t V = (uint64_t)(vh > vr ? vh : vr) + 1;
        Py_ssize_t P = ph.len / 8;
        const uint64_t limit = max_cells;
        k_release(&k);
        out = (int64_t *)malloc((size_t)(P ? P : 1) * 3 * sizeof(int64_t));
        if (!out || counter_init(&table, 64) < 0) goto nomem;
        const int32_t *htk = (const int32_t *)H.tok.buf, *rtk = (const int32_t *)R.tok.buf;
        const int64_t *hso = (const int64_t *)H.soff.buf, *hto_ = (const int64_t *)H.toff.buf;
        const int64_t *rso = (const int64_t *)R.soff.buf, *rto_ = (const int64_t *)R.toff.buf;
        const int64_t *pa = (const int64_t *)ph.buf, *pb = (const int64_t *)pr.buf;
        for (Py_ssize_t p = 0; p < P; p++) {
            int64_t h0 = hso[hto_[pa[p]]], hL = hso[hto_[pa[p] + 1]] - h0;
            int64_t r0 = rso[rto_[pb[p]]], rL = rso[rto_[pb[p] + 1]] - r0;
            uint64_t n_ref = n_units(rL, gap, unigrams), n_hyp = n_units(hL, gap, unigrams);
            if (n_ref > limit || n_hyp > limit) {
                int ref_big = n_ref > limit;
                k_limit(&k,
                        "segment %lld, reference %lld: ROUGE-%s%s needs %llu cells (the skip-bigram units of the "
                        "%s's %lld tokens), above max_cells=%llu; " RAISE_HINT,
                        (long long)pa[p] + 1, (long long)pb[p] + 1, unigrams ? "SU" : "S", gap < 0 ? "*" : "",
                        (unsigned long long)(ref_big ? n_ref : n_hyp), ref_big ? "reference" : "hypothesis",
                        (long long)(ref_big ? rL : hL), (unsigned long long)limit);
                goto done;
            }
            if (units(&table, rtk + r0, rL, V, gap, unigrams, 0, &out[p], &k) < 0) goto done;
            if (units(&table, htk + h0, hL, V, gap, unigrams, 1, &out[p], &k) < 0) goto done;
            out[P + p] = (int64_t)n_ref;
            out[2 * P + p] = (int64_t)n_hyp;
            for (size_t q = 0; q < table.n_used; q++) table.keys[table.used[q]] = EMPTY;
            table.n_used = 0;
        }
        if (k_finish(&k) == 0)
            result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(3 * P * (Py_ssize_t)sizeof(int64_t)));
    }
    goto done;
nomem:
    k_nomem(&k);
done:
    if (!result) k_finish(&k);
    counter_free(&table);
    free(out);
    release_texts(&H);
    release_texts(&R);
    if (ph.obj) PyBuffer_Release(&ph);
    if (pr.obj) PyBuffer_Release(&pr);
    return result;
}

/* ngrameval.metrics.rouge._round5 of one x in [0, 2**30): rint(x * 1e5) / 1e5 unless x * 1e5 lies within
   1e-6 max(1, |y|) of a tie k + 1/2; then the side of the tie decided exactly (x = hi + lo, 26 bits each, so
   x * 200000 - (2k + 1) = (64 * 3125 hi - (2k + 1)) + 64 * 3125 lo without rounding), an exact tie to even.
   rint and floor of 0 <= y < 2**51 without a libm call: y + 1.5 * 2**52 rounds y to an integer (to even, as rint
   does in the default rounding mode) and subtracting the constant again is exact. */
static inline double round5(double x) {
    const double magic = 6755399441055744.0; /* 1.5 * 2**52 */
    double y = x * 1e5, r = (y + magic) - magic, bound = y;
    if (bound < 1.0) bound = 1.0;
    bound = bound * -1e-6;
    bound = bound + 0.5;
    if (fabs(y - r) <= bound) return r / 1e5;
    double k = r > y ? r - 1.0 : r, t = x * 134217729.0; /* floor(y); 2**27 + 1: Veltkamp's split */
    double hi = t - (t - x);
    double d = (hi * 3125.0 * 64.0 - (2.0 * k + 1.0)) + (x - hi) * 3125.0 * 64.0;
    double up = (d > 0 || (d == 0 && ((int64_t)k & 1))) ? 1.0 : 0.0;
    return (k + up) / 1e5;
}

/* An int64 vector's buffer (1-D, any stride); -1 with an exception otherwise. */
static int get_counts(PyObject *o, Py_buffer *b, const char *name) {
    if (PyObject_GetBuffer(o, b, PyBUF_RECORDS_RO) < 0) return -1;
    if (b->ndim != 1 || b->itemsize != 8 || !b->format || (strcmp(b->format, "q") && strcmp(b->format, "l"))) {
        PyErr_Format(PyExc_TypeError, "%s must be a 1-D int64 buffer", name);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

#define AT(b, i) (*(const int64_t *)((const char *)(b).buf + (i) * (b).strides[0]))

static PyObject *scores(PyObject *self, PyObject *args) {
    PyObject *hits_o, *ref_o, *hyp_o, *out_o;
    long long sub;
    double alpha;
    int rounded;
    if (!PyArg_ParseTuple(args, "OOOLdpO", &hits_o, &ref_o, &hyp_o, &sub, &alpha, &rounded, &out_o)) return NULL;
    Py_buffer hits = {0}, ref = {0}, hyp = {0}, out = {0};
    PyObject *result = NULL;
    if (get_counts(hits_o, &hits, "hits") < 0 || get_counts(ref_o, &ref, "ref_len") < 0 ||
        get_counts(hyp_o, &hyp, "hyp_len") < 0)
        goto done;
    if (PyObject_GetBuffer(out_o, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto done;
    Py_ssize_t n = hits.shape[0];
    if (ref.shape[0] != n || hyp.shape[0] != n || out.len != 3 * n * (Py_ssize_t)sizeof(double) || sub < 0) {
        PyErr_SetString(PyExc_ValueError, "scores: hits, ref_len and hyp_len of one length n, out of 3 n doubles");
        goto done;
    }
    double *R = (double *)out.buf, *P = R + n, *F = P + n, keep = 1.0 - alpha;
    int served = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && served; i++) {
        double h = (double)AT(hits, i), rl = (double)(AT(ref, i) > sub ? AT(ref, i) - sub : 0);
        double hl = (double)(AT(hyp, i) > sub ? AT(hyp, i) - sub : 0);
        double r = rl != 0 ? h / rl : 0.0, p = hl != 0 ? h / hl : 0.0;
        if (!(r >= 0.0 && r < 1073741824.0 && p >= 0.0 && p < 1073741824.0)) served = 0;
        if (rounded && served) r = round5(r), p = round5(p);
        double den = keep * p + alpha * r, f = den > 0 ? p * r / den : 0.0;
        if (!(f >= 0.0 && f < 1073741824.0)) served = 0;
        R[i] = r, P[i] = p, F[i] = rounded && served ? round5(f) : f;
    }
    Py_END_ALLOW_THREADS
    result = PyBool_FromLong(served);
done:
    if (hits.obj) PyBuffer_Release(&hits);
    if (ref.obj) PyBuffer_Release(&ref);
    if (hyp.obj) PyBuffer_Release(&hyp);
    if (out.obj) PyBuffer_Release(&out);
    return result;
}
#undef AT

/* set_max_cells(n) -> the previous bound (ngrameval.limits keeps the Python side in step). */
static PyObject *set_max_cells(PyObject *self, PyObject *arg) {
    unsigned long long n = PyLong_AsUnsignedLongLong(arg);
    if (n == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (n < 1 || n > (1ULL << 62)) {
        PyErr_SetString(PyExc_ValueError, "max_cells must be from 1 to 2**62");
        return NULL;
    }
    uint64_t previous = max_cells;
    max_cells = n;
    return PyLong_FromUnsignedLongLong(previous);
}

static PyMethodDef methods[] = {
    {"lcs", lcs, METH_VARARGS, "Union-LCS (weight 0) or weighted-LCS hits of every (hypothesis, reference) pair."},
    {"skip", skip, METH_VARARGS, "Skip-bigram hits and totals of every (hypothesis, reference) pair."},
    {"scores", scores, METH_VARARGS, "R, P and F (rounded to 5 decimals or not) of items scored by one pair each."},
    {"set_max_cells", set_max_cells, METH_O, "Sets the bound on the cells of one text pair; returns the previous."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rouge", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rouge(void) { return PyModule_Create(&module); }
