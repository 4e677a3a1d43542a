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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hash.h"

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

typedef struct {
    double *c;
    size_t cap;
} dp_t;

static int dp_reserve(dp_t *dp, size_t cells) {
    if (cells <= dp->cap) return 0;
    double *c = (double *)realloc(dp->c, cells * 2 * sizeof(double));
    if (!c) return -1;
    dp->c = c;
    dp->cap = cells * 2;
    return 0;
}

/* LCS (weight 0) or weighted LCS table of r[0..m) x h[0..n), then marks the backtracked r positions. */
static int align(const int32_t *r, size_t m, const int32_t *h, size_t n, double weight, dp_t *dp, dp_t *run,
                 uint8_t *mask) {
    if (m == 0 || n == 0) return 0;
    const size_t w = n + 1;
    if (dp_reserve(dp, (m + 1) * w) < 0) return -1;
    double *c = dp->c, *l = NULL;
    if (weight > 0) {
        if (dp_reserve(run, (m + 1) * w) < 0) return -1;
        l = run->c;
        for (size_t j = 0; j <= n; j++) l[j] = 0;
    }
    for (size_t j = 0; j <= n; j++) c[j] = 0;
    for (size_t i = 1; i <= m; i++) {
        double *row = c + i * w, *up = row - w;
        row[0] = 0;
        if (l) l[i * w] = 0;
        for (size_t j = 1; j <= n; j++) {
            if (r[i - 1] == h[j - 1]) {
                if (l) {
                    double k = l[(i - 1) * w + j - 1];
                    row[j] = up[j - 1] + pow(k + 1, weight) - pow(k, weight);
                    l[i * w + j] = k + 1;
                } else {
                    row[j] = up[j - 1] + 1;
                }
            } else {
                row[j] = up[j] >= row[j - 1] ? up[j] : row[j - 1];
                if (l) l[i * w + j] = 0;
            }
        }
    }
    size_t i = m, j = n;
    while (i && j) {
        if (r[i - 1] == h[j - 1]) {
            mask[--i] = 1;
            j--;
        } else if (c[(i - 1) * w + j] >= c[i * w + j - 1]) {
            i--;
        } else {
            j--;
        }
    }
    return 0;
}

/* Scratch of lcs_length: loc[token] = its row of pm (-1: not in the sentence); pm and v grow as needed. */
typedef struct {
    int32_t *loc;
    uint64_t *pm, *v;
    size_t pm_cap, v_cap; /* in words */
} bits_t;

static int grow_words(uint64_t **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    uint64_t *q = (uint64_t *)realloc(*p, need * sizeof(uint64_t));
    if (!q) return -1;
    *p = q;
    *cap = need;
    return 0;
}

/* Length of an LCS of a[0..m) and b[0..n), bit-parallel (Allison & Dix 1986; Hyyro 2004): bit i of v is 0
   where the LCS row of a grows at position i; each b token updates v = (v + (v & pm)) | (v & ~pm), with
   pm the positions of that token in a. O(n m / 64) time and (distinct tokens of a) m / 64 words instead of
   the O(n m) table. -1 on OOM. */
static int64_t lcs_length(const int32_t *a, size_t m, const int32_t *b, size_t n, bits_t *s) {
    size_t words = (m + 63) / 64, rows = 0;
    for (size_t i = 0; i < m; i++)
        if (s->loc[a[i]] < 0) s->loc[a[i]] = (int32_t)rows++;
    int64_t zeros = -1;
    if (grow_words(&s->pm, &s->pm_cap, rows * words) < 0 || grow_words(&s->v, &s->v_cap, words) < 0) goto reset;
    memset(s->pm, 0, rows * words * sizeof(uint64_t));
    for (size_t i = 0; i < m; i++) s->pm[(size_t)s->loc[a[i]] * words + i / 64] |= 1ULL << (i % 64);
    for (size_t k = 0; k < words; k++) s->v[k] = ~0ULL;
    for (size_t j = 0; j < n; j++) {
        int32_t r = s->loc[b[j]];
        if (r < 0) continue;
        const uint64_t *pm = s->pm + (size_t)r * words;
        uint64_t carry = 0;
        for (size_t k = 0; k < words; k++) {
            uint64_t v = s->v[k], u = v & pm[k], x = v + u, y = x + carry;
            carry = (x < u) | (y < carry);
            s->v[k] = y | (v & ~pm[k]);
        }
    }
    zeros = 0;
    for (size_t k = 0; k < words; k++) {
        uint64_t live = k + 1 < words || m % 64 == 0 ? ~0ULL : (1ULL << (m % 64)) - 1;
        zeros += __builtin_popcountll(~s->v[k] & live);
    }
reset:
    for (size_t i = 0; i < m; i++) s->loc[a[i]] = -1;
    return zeros;
}

/* Whether text t is one sentence spanning exactly clip text t of the same tokens (so clipping cannot bind). */
static inline int sole_sentence(const int32_t *tok, const int64_t *so, const int64_t *to, int64_t t,
                                const int32_t *ctok, const int64_t *co) {
    return tok == ctok && to[t + 1] - to[t] == 1 && so[to[t]] == co[t] && so[to[t] + 1] == co[t + 1];
}

static PyObject *lcs(PyObject *self, PyObject *args) {
    PyObject *ht, *hs, *hto, *rt, *rs, *rto, *cht, *chs, *chto, *crt, *crs, *crto, *ph_o, *pr_o;
    double weight;
    texts_t H = {0}, R = {0}, CH = {0}, CR = {0};
    Py_buffer ph = {0}, pr = {0};
    PyObject *result = NULL;
    int32_t *cnt_r = NULL, *cnt_h = NULL;
    uint8_t *mask = NULL;
    double *hits = NULL;
    dp_t dp = {0}, run = {0};
    bits_t bits = {0};
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOd", &ht, &hs, &hto, &rt, &rs, &rto, &cht, &chs, &chto, &crt, &crs,
                          &crto, &ph_o, &pr_o, &weight))
        return NULL;
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
        size_t V = (size_t)vmax + 1, longest = 1;
        const int64_t *rso = (const int64_t *)R.soff.buf;
        for (Py_ssize_t s = 0; s < R.soff.len / 8 - 1; s++)
            if ((size_t)(rso[s + 1] - rso[s]) > longest) longest = (size_t)(rso[s + 1] - rso[s]);
        Py_ssize_t P = ph.len / 8;
        cnt_r = (int32_t *)calloc(V, sizeof(int32_t));
        cnt_h = (int32_t *)calloc(V, sizeof(int32_t));
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
                                         (size_t)(hso[hto_[h] + 1] - h0), &bits);
                if (got < 0) goto nomem;
                hits[p] = (double)got;
                continue;
            }
            for (int64_t k = cho[h]; k < cho[h + 1]; k++) cnt_h[chk[k]]++;
            for (int64_t k = cro[r]; k < cro[r + 1]; k++) cnt_r[crk[k]]++;
            double total = 0;
            for (int64_t rs_ = rto_[r]; rs_ < rto_[r + 1]; rs_++) {
                const int32_t *rt_ = rtk + rso[rs_];
                size_t m = (size_t)(rso[rs_ + 1] - rso[rs_]);
                if (m == 0) continue;
                memset(mask, 0, m);
                for (int64_t hs_ = hto_[h]; hs_ < hto_[h + 1]; hs_++)
                    if (align(rt_, m, htk + hso[hs_], (size_t)(hso[hs_ + 1] - hso[hs_]), weight, &dp, &run, mask) < 0)
                        goto nomem;
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
            for (int64_t k = cho[h]; k < cho[h + 1]; k++) cnt_h[chk[k]] = 0;
            for (int64_t k = cro[r]; k < cro[r + 1]; k++) cnt_r[crk[k]] = 0;
        }
        result = PyBytes_FromStringAndSize((const char *)hits, (Py_ssize_t)(P * (Py_ssize_t)sizeof(double)));
    }
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(cnt_r);
    free(cnt_h);
    free(mask);
    free(hits);
    free(dp.c);
    free(run.c);
    free(bits.loc);
    free(bits.pm);
    free(bits.v);
    release_texts(&H);
    release_texts(&R);
    release_texts(&CH);
    release_texts(&CR);
    if (ph.obj) PyBuffer_Release(&ph);
    if (pr.obj) PyBuffer_Release(&pr);
    return result;
}

#define EMPTY UINT64_MAX

typedef struct {
    uint64_t *keys; /* EMPTY where free */
    int64_t *count;
    size_t *used, n_used, cap; /* cap: a power of two */
} counter_t;

static int counter_reserve(counter_t *t, size_t need) {
    if (need * 2 <= t->cap) return 0;
    size_t cap = 64;
    while (cap < need * 2) cap <<= 1;
    free(t->keys);
    free(t->count);
    free(t->used);
    t->keys = (uint64_t *)malloc(cap * sizeof(uint64_t));
    t->count = (int64_t *)malloc(cap * sizeof(int64_t));
    t->used = (size_t *)malloc(cap * sizeof(size_t));
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

/* Number of skip-bigram (+ unigram) units of a text of L tokens. */
static int64_t n_units(int64_t L, int gap, int unigrams) {
    int64_t pairs, d = (int64_t)gap + 1; /* each token pairs with the next d, fewer near the end */
    if (gap < 0 || L <= d)
        pairs = L * (L - 1) / 2;
    else
        pairs = (L - d) * d + d * (d - 1) / 2;
    return pairs + (unigrams && L > 0 ? L - 1 : 0);
}

/* Visits every unit of x[0..L): key a*(V+1) for the unigram a, a*(V+1) + b + 1 for the skip-bigram (a, b).
   mode 0 counts them into t; mode 1 takes them from t and returns the hits. */
static int64_t units(counter_t *t, const int32_t *x, int64_t L, uint64_t V, int gap, int unigrams, int mode) {
    int64_t hit = 0;
    for (int64_t i = 0; i + 1 < L; i++) {
        uint64_t a = (uint64_t)x[i] * (V + 1);
        for (int64_t j = unigrams ? i : i + 1; j < L && (gap < 0 || j <= i + gap + 1); j++) {
            uint64_t key = j == i ? a : a + (uint64_t)x[j] + 1;
            size_t s = counter_slot(t, key);
            if (mode == 0) {
                if (t->keys[s] == EMPTY) {
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
    }
    return hit;
}

static PyObject *skip(PyObject *self, PyObject *args) {
    PyObject *ht, *hs, *hto, *rt, *rs, *rto, *ph_o, *pr_o;
    int gap, unigrams;
    texts_t H = {0}, R = {0};
    Py_buffer ph = {0}, pr = {0};
    counter_t table = {0};
    int64_t *out = NULL;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOOOip", &ht, &hs, &hto, &rt, &rs, &rto, &ph_o, &pr_o, &gap, &unigrams))
        return NULL;
    if (get_texts(ht, hs, hto, &H) < 0 || get_texts(rt, rs, rto, &R) < 0) goto done;
    if (get_pairs(ph_o, pr_o, &ph, &pr, &H, &R) < 0) goto done;
    {
        int32_t vh = max_id(&H), vr = max_id(&R);
        uint64_t V = (uint64_t)(vh > vr ? vh : vr) + 1;
        Py_ssize_t P = ph.len / 8;
        out = (int64_t *)malloc((size_t)(P ? P : 1) * 3 * sizeof(int64_t));
        if (!out) goto nomem;
        const int32_t *htk = (const int32_t *)H.tok.buf, *rtk = (const int32_t *)R.tok.buf;
        const int64_t *hso = (const int64_t *)H.soff.buf, *hto_ = (const int64_t *)H.toff.buf;
        const int64_t *rso = (const int64_t *)R.soff.buf, *rto_ = (const int64_t *)R.toff.buf;
        const int64_t *pa = (const int64_t *)ph.buf, *pb = (const int64_t *)pr.buf;
        for (Py_ssize_t p = 0; p < P; p++) {
            int64_t h0 = hso[hto_[pa[p]]], hL = hso[hto_[pa[p] + 1]] - h0;
            int64_t r0 = rso[rto_[pb[p]]], rL = rso[rto_[pb[p] + 1]] - r0;
            int64_t n_ref = n_units(rL, gap, unigrams);
            if (counter_reserve(&table, (size_t)n_ref + 1) < 0) goto nomem;
            units(&table, rtk + r0, rL, V, gap, unigrams, 0);
            out[p] = units(&table, htk + h0, hL, V, gap, unigrams, 1);
            out[P + p] = n_ref;
            out[2 * P + p] = n_units(hL, gap, unigrams);
            for (size_t q = 0; q < table.n_used; q++) table.keys[table.used[q]] = EMPTY;
            table.n_used = 0;
        }
        result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(3 * P * (Py_ssize_t)sizeof(int64_t)));
    }
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(table.keys);
    free(table.count);
    free(table.used);
    free(out);
    release_texts(&H);
    release_texts(&R);
    if (ph.obj) PyBuffer_Release(&ph);
    if (pr.obj) PyBuffer_Release(&pr);
    return result;
}

static PyMethodDef methods[] = {
    {"lcs", lcs, METH_VARARGS, "Union-LCS (weight 0) or weighted-LCS hits of every (hypothesis, reference) pair."},
    {"skip", skip, METH_VARARGS, "Skip-bigram hits and totals of every (hypothesis, reference) pair."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rouge", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rouge(void) { return PyModule_Create(&module); }
