/*
 * ngrameval._overlap: the n-gram co-occurrence kernel.
 *
 * N-grams are interned exactly in hash tables keyed by (id of the (n-1)-gram prefix, token id), so
 * no two n-grams ever share an id. `overlap` works one segment at a time: it interns the n-grams
 * (orders 1..max_order) of the segment's references into a small table that stays in cache, then,
 * for every system given, counts per segment and per order:
 *
 *   match[s, n]  = sum over hyp n-grams g of min(count_hyp(g), max over refs of count_ref(g))
 *   rmatch[s, n] = sum over refs r, n-grams g of r of min(count_r(g), count_hyp(g))
 *
 * The reference side of a segment is counted once and shared by every system of the call.
 * `intern` numbers the reference n-grams of a whole block globally (with counts and prefixes, for
 * NIST's information weights); given those ids, `overlap` also emits the (segment, n-gram id,
 * clipped count) triple of every matched hyp n-gram. All inputs and outputs are flat buffers; the
 * Python side wraps them in numpy arrays (no numpy headers needed to build this file).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hash.h"

typedef struct {
    uint64_t *keys;     /* EMPTY_KEY where free */
    int32_t *vals;
    size_t cap;         /* power of two */
    size_t size;
} table_t;

#define EMPTY_KEY UINT64_MAX

static inline uint64_t make_key(int32_t prefix, int32_t tok) {
    return ((uint64_t)(uint32_t)(prefix + 1) << 32) | (uint64_t)(uint32_t)tok;
}

static int table_init(table_t *t, size_t expected) {
    size_t cap = 1024;
    while (cap < expected * 2) cap <<= 1;
    t->keys = (uint64_t *)malloc(cap * sizeof(uint64_t));
    t->vals = (int32_t *)malloc(cap * sizeof(int32_t));
    if (!t->keys || !t->vals) return -1;
    memset(t->keys, 0xff, cap * sizeof(uint64_t));
    t->cap = cap;
    t->size = 0;
    return 0;
}

static void table_free(table_t *t) {
    free(t->keys);
    free(t->vals);
}

static int table_grow(table_t *t) {
    table_t n;
    if (table_init(&n, t->cap) < 0) return -1; /* doubles the capacity */
    for (size_t i = 0; i < t->cap; i++) {
        if (t->keys[i] == EMPTY_KEY) continue;
        size_t j = mix64(t->keys[i]) & (n.cap - 1);
        while (n.keys[j] != EMPTY_KEY) j = (j + 1) & (n.cap - 1);
        n.keys[j] = t->keys[i];
        n.vals[j] = t->vals[i];
    }
    n.size = t->size;
    table_free(t);
    *t = n;
    return 0;
}

static inline int32_t table_find(const table_t *t, uint64_t key) {
    size_t j = mix64(key) & (t->cap - 1);
    while (t->keys[j] != EMPTY_KEY) {
        if (t->keys[j] == key) return t->vals[j];
        j = (j + 1) & (t->cap - 1);
    }
    return -1;
}

/* Returns the id of key, inserting it with id `next` when absent; -2 on allocation failure. */
static inline int32_t table_insert(table_t *t, uint64_t key, int32_t next) {
    if ((t->size + 1) * 2 > t->cap && table_grow(t) < 0) return -2;
    size_t j = mix64(key) & (t->cap - 1);
    while (t->keys[j] != EMPTY_KEY) {
        if (t->keys[j] == key) return t->vals[j];
        j = (j + 1) & (t->cap - 1);
    }
    t->keys[j] = key;
    t->vals[j] = next;
    t->size++;
    return next;
}

/* Growable per-n-gram arrays. */
typedef struct {
    int64_t *count;
    int32_t *prefix;
    int8_t *order;
    size_t size, cap;
} gram_info_t;

static int info_push(gram_info_t *g, int32_t prefix, int8_t order) {
    if (g->size == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4096;
        int64_t *c = (int64_t *)realloc(g->count, cap * sizeof(int64_t));
        if (!c) return -1;
        g->count = c;
        int32_t *p = (int32_t *)realloc(g->prefix, cap * sizeof(int32_t));
        if (!p) return -1;
        g->prefix = p;
        int8_t *o = (int8_t *)realloc(g->order, cap * sizeof(int8_t));
        if (!o) return -1;
        g->order = o;
        g->cap = cap;
    }
    g->count[g->size] = 0;
    g->prefix[g->size] = prefix;
    g->order[g->size] = order;
    g->size++;
    return 0;
}

typedef struct {
    Py_buffer tok;  /* int32 token ids, all texts of the stream concatenated */
    Py_buffer off;  /* int64 offsets, one text per segment (hyps) or per reference (refs) */
} stream_t;

static int get_stream(PyObject *tok, PyObject *off, stream_t *s) {
    memset(s, 0, sizeof(*s));
    if (PyObject_GetBuffer(tok, &s->tok, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(off, &s->off, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&s->tok);
        return -1;
    }
    if (s->tok.len % 4 || s->off.len % 8 || s->off.len < 8) {
        PyErr_SetString(PyExc_ValueError, "token buffer must be int32, offsets int64 (n + 1 of them)");
        PyBuffer_Release(&s->tok);
        PyBuffer_Release(&s->off);
        return -1;
    }
    const int64_t *o = (const int64_t *)s->off.buf;
    Py_ssize_t n = s->off.len / 8;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        if (o[i] < 0 || o[i + 1] < o[i] || o[i + 1] > s->tok.len / 4) {
            PyErr_SetString(PyExc_ValueError, "offsets must be non-decreasing and within the token buffer");
            PyBuffer_Release(&s->tok);
            PyBuffer_Release(&s->off);
            return -1;
        }
    }
    return 0;
}

static void release_stream(stream_t *s) {
    if (s->tok.obj) PyBuffer_Release(&s->tok);
    if (s->off.obj) PyBuffer_Release(&s->off);
}

static PyObject *bytes_of(const void *data, size_t nbytes) {
    return PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)nbytes);
}

static int get_offsets(PyObject *seg_o, Py_buffer *seg, Py_ssize_t n_texts) {
    if (PyObject_GetBuffer(seg_o, seg, PyBUF_C_CONTIGUOUS) < 0) return -1;
    const int64_t *rs = (const int64_t *)seg->buf;
    Py_ssize_t n = seg->len / 8 - 1;
    int ok = seg->len % 8 == 0 && seg->len >= 8 && rs[0] == 0 && rs[n] == n_texts;
    for (Py_ssize_t s = 0; ok && s < n; s++) ok = rs[s + 1] >= rs[s];
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "ref_seg must be int64[S + 1], non-decreasing, from 0 to the number of references");
        PyBuffer_Release(seg);
        return -1;
    }
    return 0;
}

/* The highest n-gram order the kernel takes (orders are stored in int8). */
#define MAX_ORDER 100

/* max_order from any int: ValueError naming the bound outside 1..MAX_ORDER (never OverflowError). */
static int get_order(PyObject *o, int *max_order) {
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (n == -1 && PyErr_Occurred()) return -1;
    if (overflow || n < 1 || n > MAX_ORDER) {
        PyErr_Format(PyExc_ValueError, "max_order must be an n-gram order from 1 to %d (ngrameval._overlap.MAX_ORDER), got %R",
                     MAX_ORDER, o);
        return -1;
    }
    *max_order = (int)n;
    return 0;
}

#define ID_HINT "above the 32-bit id bound 2**31-1 of the counting kernel; split the input"

/* Parses (tok, off, max_order) into a stream; -1 with an exception set on error. */
static int parse_texts(PyObject *args, stream_t *s, int *max_order) {
    PyObject *tok_o, *off_o, *order_o;
    if (!PyArg_ParseTuple(args, "OOO", &tok_o, &off_o, &order_o)) return -1;
    if (get_order(order_o, max_order) < 0) return -1;
    return get_stream(tok_o, off_o, s);
}

/* Makes the (empty) table `t` fit `need` keys and `used` hold as many slot numbers; -1 on OOM. */
static int reserve_segment(table_t *t, size_t need, size_t **used, size_t *used_cap) {
    if (need * 2 > t->cap) {
        table_free(t);
        if (table_init(t, need) < 0) return -1;
    }
    if (need > *used_cap) {
        size_t *u = (size_t *)realloc(*used, need * 2 * sizeof(size_t));
        if (!u) return -1;
        *used = u;
        *used_cap = need * 2;
    }
    return 0;
}

/*
 * Interning the reference n-grams of a whole block, in parts that can run on threads at once (NIST's weights).
 *
 * An n-gram of order >= 2 belongs to the bucket of its first two tokens (the top bits of their Fibonacci hash), so
 * an n-gram and every prefix of it from the bigram up share a bucket; no two buckets share an n-gram. Ids:
 * unigrams first, 0..U-1 in order of first occurrence, then the n-grams of bucket 0, bucket 1, ..., each bucket's
 * in order of first occurrence among its positions (a position's orders in increasing order). The numbering
 * depends on the tokens alone, never on how the buckets are shared among threads.
 *
 *   intern_plan(tok, off, max_order, gid, bits) -> (pos int64[P], bstart int64[2**bits + 1], count int64[U])
 *       gid: writable int32[T * N]; fills gid[i * N] with the unigram id of token i, gid[i * N + n] with -1 past
 *       the end of its text and 0 elsewhere (the parts fill those); pos: the positions starting a bigram, by bucket
 *       (bucket b's are pos[bstart[b] .. bstart[b + 1] - 1], in increasing order); count: the unigrams' counts.
 *   intern_part(tok, gid, max_order, pos, bstart, lo, hi, U, base, count, prefix, order) -> G
 *       the n-grams of orders >= 2 of buckets lo..hi-1, numbered base..base+G-1 (written to their gid entries),
 *       their count, prefix and order (2..N) written to count[:G], prefix[:G] and order[:G] (writable int64, int32,
 *       int8, room for N - 1 a position of the range); a bigram's prefix is its unigram's id, a longer n-gram's the
 *       id of its (n-1)-gram prefix. U: the number of unigrams.
 *   intern_rebase(gid, max_order, pos, bstart, lo, hi, shift, count, prefix, order, unigrams, context): the part's
 *       ids moved up by shift, in gid and in the prefixes of its n-grams of orders >= 3 (`count`, `prefix`, `order`:
 *       the part's G n-grams), and unless context is None, context[q] (writable float64) = the count of n-gram q's
 *       prefix: unigrams[prefix] for a bigram, else the part's own count (NIST's weight is log2(context / count)).
 * The parts of disjoint bucket ranges write disjoint gid entries; each releases the GIL.
 */

/* The bucket of the n-grams starting with tokens a, b among 2**bits. */
static inline size_t gram_bucket(int32_t a, int32_t b, unsigned bits) {
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint64_t)(uint32_t)b;
    return bits ? (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - bits)) : 0;
}

#define MAX_BUCKET_BITS 16
#define PART_AHEAD 16 /* positions whose rows are prefetched ahead */

static PyObject *intern_plan(PyObject *self, PyObject *args) {
    PyObject *tok_o, *off_o, *order_o, *gid_o;
    int bits_i, max_order;
    if (!PyArg_ParseTuple(args, "OOOOi", &tok_o, &off_o, &order_o, &gid_o, &bits_i)) return NULL;
    if (get_order(order_o, &max_order) < 0) return NULL;
    if (bits_i < 0 || bits_i > MAX_BUCKET_BITS) {
        PyErr_Format(PyExc_ValueError, "bits must be from 0 to %d, got %d", MAX_BUCKET_BITS, bits_i);
        return NULL;
    }
    stream_t refs;
    if (get_stream(tok_o, off_o, &refs) < 0) return NULL;
    Py_buffer gid_buf = {0};
    const int32_t *rtok = (const int32_t *)refs.tok.buf;
    const int64_t *roff = (const int64_t *)refs.off.buf;
    Py_ssize_t n_refs = refs.off.len / 8 - 1;
    size_t T = (size_t)(refs.tok.len / 4), N = (size_t)max_order, B = (size_t)1 << bits_i;
    unsigned bits = (unsigned)bits_i;
    table_t table = {0};
    gram_info_t info = {0};
    int64_t *pos = NULL, *bstart = NULL;
    PyObject *result = NULL;
    kstate_t ks = {0};
    if (PyObject_GetBuffer(gid_o, &gid_buf, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) goto done;
    if (T > (size_t)PY_SSIZE_T_MAX / 4 / N || (size_t)gid_buf.len != T * N * sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "gid must be a writable int32[T * max_order]");
        goto done;
    }
    int32_t *gid = (int32_t *)gid_buf.buf;
    k_release(&ks);
    pos = (int64_t *)malloc((T ? T : 1) * sizeof(int64_t));
    bstart = (int64_t *)calloc(B + 1, sizeof(int64_t));
    if (!pos || !bstart || table_init(&table, 1024) < 0) goto nomem;
    /* 1. unigram ids, the gid entries' shape, and the size of every bucket */
    for (Py_ssize_t r = 0; r < n_refs; r++) {
        int64_t a = roff[r], b = roff[r + 1];
        if (k_poll(&ks, 1) < 0) goto done;
        for (int64_t i = a; i < b; i++) {
            if (k_poll(&ks, N) < 0) goto done; /* per token: one text may be the whole input */
            if (info.size >= K_MAX_ID) {
                k_limit(&ks, "reference %zd: more than %d distinct reference n-grams, " ID_HINT, r + 1, K_MAX_ID);
                goto done;
            }
            int32_t id = table_insert(&table, make_key(-1, rtok[i]), (int32_t)info.size);
            if (id == -2) goto nomem;
            if (id == (int32_t)info.size && info_push(&info, -1, 1) < 0) goto nomem;
            info.count[id]++;
            int32_t *row = gid + (size_t)i * N;
            row[0] = id;
            for (size_t n = 1; n < N; n++) row[n] = i + (int64_t)n < b ? 0 : -1;
            if (N > 1 && i + 1 < b) bstart[gram_bucket(rtok[i], rtok[i + 1], bits) + 1]++;
        }
    }
    for (size_t k = 0; k < B; k++) bstart[k + 1] += bstart[k];
    /* 2. the positions by bucket (a counting sort: increasing within a bucket) */
    if (N > 1) {
        int64_t *fill = (int64_t *)malloc(B * sizeof(int64_t));
        if (!fill) goto nomem;
        memcpy(fill, bstart, B * sizeof(int64_t));
        for (Py_ssize_t r = 0; r < n_refs; r++) {
            int64_t a = roff[r], b = roff[r + 1];
            if (k_poll(&ks, (uint64_t)(b - a) + 1) < 0) {
                free(fill);
                goto done;
            }
            for (int64_t i = a; i + 1 < b; i++) pos[fill[gram_bucket(rtok[i], rtok[i + 1], bits)]++] = i;
        }
        free(fill);
    }
    if (k_finish(&ks) == 0)
        result = Py_BuildValue("(NNN)", bytes_of(pos, (size_t)bstart[B] * sizeof(int64_t)),
                               bytes_of(bstart, (B + 1) * sizeof(int64_t)),
                               bytes_of(info.count, info.size * sizeof(int64_t)));
    goto done;
nomem:
    k_nomem(&ks);
done:
    if (!result) k_finish(&ks);
    free(pos);
    free(bstart);
    free(info.count); free(info.prefix); free(info.order);
    if (table.keys) table_free(&table);
    if (gid_buf.obj) PyBuffer_Release(&gid_buf);
    release_stream(&refs);
    return result;
}

/* The buffers of a part: gid (writable, int32[T * N]), pos (int64[P]), bstart (int64[B + 1]) and the bucket
   range lo..hi checked against each other; -1 with an exception set on error. */
typedef struct {
    Py_buffer gid, pos, bstart;
    size_t N, lo, hi;
} part_t;

static void part_release(part_t *p) {
    if (p->gid.obj) PyBuffer_Release(&p->gid);
    if (p->pos.obj) PyBuffer_Release(&p->pos);
    if (p->bstart.obj) PyBuffer_Release(&p->bstart);
}

static int get_part(PyObject *gid_o, PyObject *order_o, PyObject *pos_o, PyObject *bstart_o, Py_ssize_t lo,
                    Py_ssize_t hi, part_t *p) {
    int max_order;
    memset(p, 0, sizeof(*p));
    if (get_order(order_o, &max_order) < 0) return -1;
    p->N = (size_t)max_order;
    if (PyObject_GetBuffer(gid_o, &p->gid, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0 ||
        PyObject_GetBuffer(pos_o, &p->pos, PyBUF_C_CONTIGUOUS) < 0 ||
        PyObject_GetBuffer(bstart_o, &p->bstart, PyBUF_C_CONTIGUOUS) < 0)
        goto fail;
    size_t rows = (size_t)p->gid.len / 4 / p->N, n_pos = (size_t)p->pos.len / 8;
    Py_ssize_t B = p->bstart.len / 8 - 1;
    const int64_t *bs = (const int64_t *)p->bstart.buf, *ps = (const int64_t *)p->pos.buf;
    int ok = p->gid.len % (4 * (Py_ssize_t)p->N) == 0 && p->pos.len % 8 == 0 && p->bstart.len % 8 == 0 && B >= 1 &&
             0 <= lo && lo <= hi && hi <= B && bs[0] == 0 && (size_t)bs[B] == n_pos;
    for (Py_ssize_t b = 0; ok && b < B; b++) ok = bs[b] <= bs[b + 1];
    for (int64_t k = ok ? bs[lo] : 0; ok && k < bs[hi]; k++) ok = 0 <= ps[k] && (size_t)ps[k] + 1 < rows;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "gid, pos and bstart must be intern_plan's (and lo <= hi within its buckets)");
        goto fail;
    }
    p->lo = (size_t)lo;
    p->hi = (size_t)hi;
    return 0;
fail:
    part_release(p);
    return -1;
}

/* The output of a part: count int64, prefix int32, order int8, writable, room for `cap` n-grams each. */
typedef struct {
    Py_buffer count, prefix, order;
    size_t cap;
} grams_out_t;

static void grams_release(grams_out_t *g) {
    if (g->count.obj) PyBuffer_Release(&g->count);
    if (g->prefix.obj) PyBuffer_Release(&g->prefix);
    if (g->order.obj) PyBuffer_Release(&g->order);
}

static int get_grams(PyObject *count_o, PyObject *prefix_o, PyObject *order_o, grams_out_t *g) {
    memset(g, 0, sizeof(*g));
    if (PyObject_GetBuffer(count_o, &g->count, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0 ||
        PyObject_GetBuffer(prefix_o, &g->prefix, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0 ||
        PyObject_GetBuffer(order_o, &g->order, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        grams_release(g);
        return -1;
    }
    g->cap = (size_t)g->order.len;
    if ((size_t)g->count.len / 8 < g->cap) g->cap = (size_t)g->count.len / 8;
    if ((size_t)g->prefix.len / 4 < g->cap) g->cap = (size_t)g->prefix.len / 4;
    return 0;
}

static PyObject *intern_part(PyObject *self, PyObject *args) {
    PyObject *tok_o, *gid_o, *order_o, *pos_o, *bstart_o, *out_count, *out_prefix, *out_order;
    Py_ssize_t lo, hi, U, base;
    if (!PyArg_ParseTuple(args, "OOOOOnnnnOOO", &tok_o, &gid_o, &order_o, &pos_o, &bstart_o, &lo, &hi, &U, &base,
                          &out_count, &out_prefix, &out_order))
        return NULL;
    part_t p;
    if (get_part(gid_o, order_o, pos_o, bstart_o, lo, hi, &p) < 0) return NULL;
    Py_buffer tok_buf = {0};
    grams_out_t g = {0};
    table_t table = {0};
    size_t *used = NULL, used_cap = 0, G = 0;
    PyObject *result = NULL;
    kstate_t ks = {0};
    if (get_grams(out_count, out_prefix, out_order, &g) < 0 || PyObject_GetBuffer(tok_o, &tok_buf, PyBUF_C_CONTIGUOUS) < 0)
        goto done;
    const size_t N = p.N, rows = (size_t)p.gid.len / 4 / N;
    const int64_t *ps = (const int64_t *)p.pos.buf, *bs = (const int64_t *)p.bstart.buf;
    if ((size_t)tok_buf.len != rows * 4 || U < 0 || U > K_MAX_ID || base < U || base > K_MAX_ID ||
        g.cap < (size_t)(bs[p.hi] - bs[p.lo]) * (N - 1)) {
        PyErr_SetString(PyExc_ValueError,
                        "tok must be gid's tokens, U the unigrams, base >= U an id, the outputs room for N - 1 a position");
        goto done;
    }
    const int32_t *rtok = (const int32_t *)tok_buf.buf;
    int32_t *gid = (int32_t *)p.gid.buf;
    int64_t *count = (int64_t *)g.count.buf;
    int32_t *prefix = (int32_t *)g.prefix.buf;
    int8_t *order = (int8_t *)g.order.buf;
    k_release(&ks);
    if (table_init(&table, 64) < 0) goto nomem;
    for (size_t b = p.lo; b < p.hi; b++) {
        size_t n_pos = (size_t)(bs[b + 1] - bs[b]), n_used = 0;
        if (k_poll(&ks, 1) < 0) goto done;
        if (reserve_segment(&table, n_pos * (N - 1) + 1, &used, &used_cap) < 0) goto nomem;
        const size_t mask = table.cap - 1;
        for (int64_t k = bs[b]; k < bs[b + 1]; k++) {
            int32_t *row = gid + (size_t)ps[k] * N;
            const int32_t *t = rtok + ps[k];
            if (k_poll(&ks, N) < 0) goto done;
            if (k + PART_AHEAD < bs[p.hi]) { /* a bucket's positions are far apart: each row is a cache miss */
                PREFETCH(gid + (size_t)ps[k + PART_AHEAD] * N);
                PREFETCH(rtok + ps[k + PART_AHEAD]);
            }
            int64_t prev = row[0]; /* the unigram's id; a part's ids follow the U unigrams in the key space */
            for (size_t n = 1; n < N && (size_t)ps[k] + n < rows && row[n] >= 0; n++) {
                uint64_t key = make_key((int32_t)prev, t[n]);
                size_t j = mix64(key) & mask;
                while (table.keys[j] != EMPTY_KEY && table.keys[j] != key) j = (j + 1) & mask;
                size_t id;
                if (table.keys[j] == EMPTY_KEY) {
                    if ((size_t)base + G >= K_MAX_ID) {
                        k_limit(&ks, "more than %d distinct reference n-grams, " ID_HINT, K_MAX_ID);
                        goto done;
                    }
                    id = G++;
                    count[id] = 0;
                    prefix[id] = (int32_t)(n == 1 ? prev : prev - U + base);
                    order[id] = (int8_t)(n + 1);
                    table.keys[j] = key;
                    table.vals[j] = (int32_t)id;
                    used[n_used++] = j;
                } else {
                    id = (size_t)table.vals[j];
                }
                count[id]++;
                row[n] = (int32_t)(base + (int64_t)id);
                prev = U + (int64_t)id;
            }
        }
        for (size_t q = 0; q < n_used; q++) table.keys[used[q]] = EMPTY_KEY;
    }
    if (k_finish(&ks) == 0) result = PyLong_FromSize_t(G);
    goto done;
nomem:
    k_nomem(&ks);
done:
    if (!result) k_finish(&ks);
    free(used);
    if (table.keys) table_free(&table);
    if (tok_buf.obj) PyBuffer_Release(&tok_buf);
    grams_release(&g);
    part_release(&p);
    return result;
}

static PyObject *intern_rebase(PyObject *self, PyObject *args) {
    PyObject *gid_o, *order_o, *pos_o, *bstart_o, *out_count, *out_prefix, *out_order, *uni_o, *ctx_o;
    Py_ssize_t lo, hi, shift;
    if (!PyArg_ParseTuple(args, "OOOOnnnOOOOO", &gid_o, &order_o, &pos_o, &bstart_o, &lo, &hi, &shift, &out_count,
                          &out_prefix, &out_order, &uni_o, &ctx_o))
        return NULL;
    part_t p;
    grams_out_t g;
    Py_buffer uni = {0}, ctx = {0};
    const int want_ctx = ctx_o != Py_None;
    if (get_part(gid_o, order_o, pos_o, bstart_o, lo, hi, &p) < 0) return NULL;
    if (get_grams(out_count, out_prefix, out_order, &g) < 0) {
        part_release(&p);
        return NULL;
    }
    int err = -1;
    if (PyObject_GetBuffer(uni_o, &uni, PyBUF_C_CONTIGUOUS) < 0 ||
        (want_ctx && PyObject_GetBuffer(ctx_o, &ctx, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0))
        goto done;
    const size_t U = (size_t)uni.len / 8, G = g.cap;
    if (shift < 0 || shift > K_MAX_ID || uni.len % 8 || (want_ctx && (size_t)ctx.len / 8 < G) || U > K_MAX_ID) {
        PyErr_SetString(PyExc_ValueError, "shift must be an n-gram id, unigrams int64, context float64 of the part");
        goto done;
    }
    int32_t *gid = (int32_t *)p.gid.buf, *prefix = (int32_t *)g.prefix.buf;
    const int8_t *order = (const int8_t *)g.order.buf;
    const int64_t *count = (const int64_t *)g.count.buf, *uc = (const int64_t *)uni.buf;
    double *context = want_ctx ? (double *)ctx.buf : NULL;
    const int64_t first = (int64_t)U + shift; /* the part's first id */
    const int64_t *ps = (const int64_t *)p.pos.buf, *bs = (const int64_t *)p.bstart.buf;
    const size_t N = p.N, rows = (size_t)p.gid.len / 4 / N;
    kstate_t ks = {0};
    k_release(&ks);
    for (int64_t k = bs[p.lo]; shift && k < bs[p.hi]; k++) {
        if (k_poll(&ks, N) < 0) break;
        int32_t *row = gid + (size_t)ps[k] * N;
        if (k + PART_AHEAD < bs[p.hi]) PREFETCH(gid + (size_t)ps[k + PART_AHEAD] * N);
        for (size_t n = 1; n < N && (size_t)ps[k] + n < rows && row[n] >= 0; n++) row[n] = (int32_t)(row[n] + shift);
    }
    for (size_t q = 0; q < G && ks.err == K_OK; q++) {
        int64_t at = order[q] == 2 ? prefix[q] : prefix[q] + shift - first; /* a unigram, or an n-gram of the part */
        if (order[q] >= 3) prefix[q] = (int32_t)(prefix[q] + shift);
        if (at < 0 || (size_t)at >= (order[q] == 2 ? U : G)) {
            k_limit(&ks, "intern_rebase: a prefix outside the unigrams and the part (not intern_part's output)");
            break;
        }
        if (context) context[q] = (double)(order[q] == 2 ? uc[at] : count[at]); /* exact: counts < 2**53 */
    }
    err = k_finish(&ks);
done:
    if (uni.obj) PyBuffer_Release(&uni);
    if (ctx.obj) PyBuffer_Release(&ctx);
    grams_release(&g);
    part_release(&p);
    if (err < 0) return NULL;
    Py_RETURN_NONE;
}

/* Per-system inputs and outputs of `overlap`. */
typedef struct {
    stream_t hyp;
    int64_t *match, *rmatch, *dmatch;
    double *winfo, *wzero; /* NIST: per segment and order, per segment */
} system_t;

/* NIST's weights of the reference n-grams: gid as intern lays it out, info by id, and the few ids with mteval's extra
   weight (sorted) and its value. */
typedef struct {
    Py_buffer gid, info, zero;
    const int32_t *gid_p, *zero_p;
    const double *info_p;
    size_t n_info, n_zero;
    double extra;
} nist_t;

static void nist_release(nist_t *w) {
    if (w->gid.obj) PyBuffer_Release(&w->gid);
    if (w->info.obj) PyBuffer_Release(&w->info);
    if (w->zero.obj) PyBuffer_Release(&w->zero);
}

/* (gid, info, zero_ids, extra) with gid int32[T * N] for T reference tokens; -1 with an exception set. */
static int get_nist(PyObject *o, size_t T, size_t N, nist_t *w) {
    PyObject *gid_o, *info_o, *zero_o;
    memset(w, 0, sizeof(*w));
    if (!PyTuple_Check(o) || !PyArg_ParseTuple(o, "OOOd", &gid_o, &info_o, &zero_o, &w->extra)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "nist must be None or (gid, info, zero_ids, extra)");
        return -1;
    }
    if (PyObject_GetBuffer(gid_o, &w->gid, PyBUF_C_CONTIGUOUS) < 0 ||
        PyObject_GetBuffer(info_o, &w->info, PyBUF_C_CONTIGUOUS) < 0 ||
        PyObject_GetBuffer(zero_o, &w->zero, PyBUF_C_CONTIGUOUS) < 0)
        goto fail;
    if ((size_t)w->gid.len != T * N * sizeof(int32_t) || w->info.len % 8 || w->zero.len % 4) {
        PyErr_SetString(PyExc_ValueError, "nist: gid must be int32[T * max_order], info float64, zero_ids int32");
        goto fail;
    }
    w->gid_p = (const int32_t *)w->gid.buf;
    w->info_p = (const double *)w->info.buf;
    w->zero_p = (const int32_t *)w->zero.buf;
    w->n_info = (size_t)w->info.len / 8;
    w->n_zero = (size_t)w->zero.len / 4;
    for (size_t q = 1; q < w->n_zero; q++)
        if (w->zero_p[q - 1] >= w->zero_p[q]) {
            PyErr_SetString(PyExc_ValueError, "nist: zero_ids must be increasing");
            goto fail;
        }
    return 0;
fail:
    nist_release(w);
    return -1;
}

static int sorted_has(const int32_t *a, size_t n, int32_t x) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && a[lo] == x;
}

/* The slot of `key` in a segment's table of 2**(64 - shift) slots: Fibonacci hashing (one multiply, the top bits),
   enough for the few hundred keys of one segment; the table never grows while it is in use. */
static inline size_t seg_slot(uint64_t key, unsigned shift) { return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> shift); }

static unsigned seg_shift(size_t cap) {
    unsigned shift = 64;
    for (; cap > 1; cap >>= 1) shift--;
    return shift;
}

/* Scratch of one segment's reference n-grams, indexed by local id (reused across segments). */
typedef struct {
    int8_t *order;
    int64_t *first;  /* i * N + n of the first occurrence, to find its global id */
    int64_t *cmax, *rcnt, *hcnt, *rstamp;
    int32_t *list;
    size_t cap;
} local_t;

static int local_reserve(local_t *l, size_t need) {
    if (need <= l->cap) return 0;
    size_t cap = l->cap ? l->cap : 1024;
    while (cap < need) cap *= 2;
#define GROW(field, type)                                                   \
    do {                                                                    \
        type *p = (type *)realloc(l->field, cap * sizeof(type));            \
        if (!p) return -1;                                                  \
        l->field = p;                                                       \
    } while (0)
    GROW(order, int8_t); GROW(first, int64_t); GROW(cmax, int64_t); GROW(rcnt, int64_t); GROW(hcnt, int64_t);
    GROW(list, int32_t);
#undef GROW
    int64_t *rs = (int64_t *)calloc(cap, sizeof(int64_t));
    if (!rs) return -1;
    free(l->rstamp);
    l->rstamp = rs;   /* stamps restart at 0 < every tick */
    l->cap = cap;
    return 0;
}

static void local_free(local_t *l) {
    free(l->order); free(l->first); free(l->cmax); free(l->rcnt); free(l->hcnt); free(l->rstamp);
    free(l->list);
}

/*
 * overlap(ref_tok, ref_off, ref_seg, hyps, max_order, nist)
 *   ref_tok: int32[T], ref_off: int64[R + 1], ref_seg: int64[S + 1] (the references of segment s
 *   are texts ref_seg[s] .. ref_seg[s + 1] - 1), hyps: sequence of (tok int32[], off int64[S + 1]),
 *   nist: None, or (gid, info, zero_ids, extra): gid as intern_plan/intern_part lay out the ids of the n-grams of
 *   ref_tok (its texts may be more than ref_off's), info float64 by id, zero_ids int32 increasing, extra a float.
 * Returns a list, per system, of (match int64[S*N], rmatch int64[S*N], dmatch int64[S*N], winfo float64[S*N],
 * wzero float64[S]); dmatch counts the distinct hyp n-grams that occur in a reference of the segment; with nist,
 * winfo sums info[g] * clip and wzero extra * clip (g in zero_ids) over the matched n-grams g of each segment, in
 * order of their first occurrence in the hypothesis (NIST's information-weighted matches, the sums np.bincount
 * makes of the same products in that order), else both are empty.
 */
static PyObject *overlap(PyObject *self, PyObject *args) {
    PyObject *ref_tok_o, *ref_off_o, *ref_seg_o, *hyps_o, *nist_o, *order_o;
    int max_order;
    if (!PyArg_ParseTuple(args, "OOOOOO", &ref_tok_o, &ref_off_o, &ref_seg_o, &hyps_o, &order_o, &nist_o))
        return NULL;
    if (get_order(order_o, &max_order) < 0) return NULL;
    /* a tuple copy: its items stay alive whatever Python code (a __buffer__, ...) runs below */
    PyObject *hyps = PySequence_Tuple(hyps_o);
    if (!hyps) return NULL;
    Py_ssize_t K = PyTuple_GET_SIZE(hyps);
    kstate_t ks = {0};
    system_t *sys = (system_t *)calloc((size_t)(K ? K : 1), sizeof(system_t));
    stream_t refs = {0};
    Py_buffer seg_buf = {0};
    nist_t w = {0};
    table_t table = {0};
    local_t loc = {0};
    size_t *used = NULL, used_cap = 0;
    int64_t *pair_cnt = NULL;
    int32_t *pair_id = NULL;
    size_t pair_cap = 0;
    PyObject *result = NULL;
    if (!sys) { PyErr_NoMemory(); goto fail; }
    if (get_stream(ref_tok_o, ref_off_o, &refs) < 0) goto fail;
    const int32_t *rtok = (const int32_t *)refs.tok.buf;
    const int64_t *roff = (const int64_t *)refs.off.buf;
    Py_ssize_t n_refs = refs.off.len / 8 - 1;
    if (get_offsets(ref_seg_o, &seg_buf, n_refs) < 0) goto fail;
    const int64_t *rseg = (const int64_t *)seg_buf.buf;
    Py_ssize_t n_seg = seg_buf.len / 8 - 1;
    const size_t N = (size_t)max_order;
    const int weigh = nist_o != Py_None;
    if (weigh && get_nist(nist_o, (size_t)refs.tok.len / 4, N, &w) < 0) goto fail;
    for (Py_ssize_t k = 0; k < K; k++) {
        PyObject *tok_o, *off_o, *pair = PyTuple_GET_ITEM(hyps, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_Format(PyExc_TypeError, "hyps[%zd] must be a (tok, off) tuple, not %.100s", k, Py_TYPE(pair)->tp_name);
            goto fail;
        }
        tok_o = PyTuple_GET_ITEM(pair, 0);
        off_o = PyTuple_GET_ITEM(pair, 1);
        if (get_stream(tok_o, off_o, &sys[k].hyp) < 0) goto fail;
        if (sys[k].hyp.off.len / 8 - 1 != n_seg) {
            PyErr_SetString(PyExc_ValueError, "every system must have one text per segment");
            goto fail;
        }
        sys[k].match = (int64_t *)calloc((size_t)(n_seg ? n_seg : 1) * N, sizeof(int64_t));
        sys[k].rmatch = (int64_t *)calloc((size_t)(n_seg ? n_seg : 1) * N, sizeof(int64_t));
        sys[k].dmatch = (int64_t *)calloc((size_t)(n_seg ? n_seg : 1) * N, sizeof(int64_t));
        if (!sys[k].match || !sys[k].rmatch || !sys[k].dmatch) goto nomem;
        if (weigh) {
            sys[k].winfo = (double *)calloc((size_t)(n_seg ? n_seg : 1) * N, sizeof(double));
            sys[k].wzero = (double *)calloc((size_t)(n_seg ? n_seg : 1), sizeof(double));
            if (!sys[k].winfo || !sys[k].wzero) goto nomem;
        }
    }
    k_release(&ks);
    if (table_init(&table, 64) < 0) goto nomem;

    int64_t tick = 0;
    for (Py_ssize_t s = 0; s < n_seg; s++) {
        /* 1. Intern this segment's reference n-grams into the (cleared) small table: local ids 0..G-1 with
              their order and the maximum count over the references (cmax). */
        size_t n_tok = (size_t)(roff[rseg[s + 1]] - roff[rseg[s]]);
        if (n_tok >= (size_t)K_MAX_ID / N) {
            k_limit(&ks, "segment %zd: %zu reference tokens x max_order %zu n-grams, " ID_HINT, s + 1, n_tok, N);
            goto fail;
        }
        size_t need = n_tok * N + 1;
        if (k_poll(&ks, 1) < 0) goto fail;
        if (reserve_segment(&table, need, &used, &used_cap) < 0 || local_reserve(&loc, need) < 0) goto nomem;
        if (need > pair_cap) {
            pair_cap = need * 2;
            int32_t *pi = (int32_t *)realloc(pair_id, pair_cap * sizeof(int32_t));
            if (!pi) goto nomem;
            pair_id = pi;
            int64_t *pc = (int64_t *)realloc(pair_cnt, pair_cap * sizeof(int64_t));
            if (!pc) goto nomem;
            pair_cnt = pc;
        }
        size_t G = 0, n_used = 0, n_pairs = 0;
        const size_t mask = table.cap - 1;
        const unsigned shift = seg_shift(table.cap);
        /* one reference: its counts are the maximum, and the recall side equals the precision side, so no
           per-reference bookkeeping */
        const int single = rseg[s + 1] - rseg[s] == 1;
        for (int64_t r = rseg[s]; r < rseg[s + 1]; r++) {
            int64_t ref_tick = ++tick;
            size_t n_list = 0;
            int64_t b = roff[r + 1];
            for (int64_t i = roff[r]; i < b; i++) {
                if (k_poll(&ks, N) < 0) goto fail; /* per token: one segment may be the whole input */
                int32_t prev = -1;
                for (size_t n = 0; n < N && i + (int64_t)n < b; n++) {
                    uint64_t key = make_key(prev, rtok[i + n]);
                    size_t j = seg_slot(key, shift);
                    while (table.keys[j] != EMPTY_KEY && table.keys[j] != key) j = (j + 1) & mask;
                    int32_t id;
                    if (table.keys[j] == EMPTY_KEY) {
                        id = (int32_t)G++;
                        table.keys[j] = key;
                        table.vals[j] = id;
                        used[n_used++] = j;
                        loc.order[id] = (int8_t)n;
                        loc.first[id] = i * (int64_t)N + (int64_t)n;
                        loc.cmax[id] = 0;
                    } else {
                        id = table.vals[j];
                    }
                    if (single) {
                        loc.cmax[id]++;
                    } else {
                        if (loc.rstamp[id] != ref_tick) {
                            loc.rstamp[id] = ref_tick;
                            loc.rcnt[id] = 0;
                            loc.list[n_list++] = id;
                        }
                        loc.rcnt[id]++;
                    }
                    prev = id;
                }
            }
            for (size_t q = 0; q < n_list; q++) {
                int32_t id = loc.list[q];
                int64_t c = loc.rcnt[id];
                pair_id[n_pairs] = id;
                pair_cnt[n_pairs++] = c;
                if (c > loc.cmax[id]) loc.cmax[id] = c;
            }
        }
        /* 2. Every system: its n-grams found in the table (hcnt, zeroed per system), then both clippings. */
        for (Py_ssize_t k = 0; k < K; k++) {
            system_t *y = &sys[k];
            const int32_t *htok = (const int32_t *)y->hyp.tok.buf;
            const int64_t *hoff = (const int64_t *)y->hyp.off.buf;
            size_t n_hyp = 0;
            int64_t e = hoff[s + 1];
            if (k_poll(&ks, n_pairs + G + 1) < 0) goto fail;
            if (G) memset(loc.hcnt, 0, G * sizeof(int64_t));
            for (int64_t i = hoff[s]; i < e; i++) {
                if (k_poll(&ks, N) < 0) goto fail;
                int32_t prev = -1;
                for (size_t n = 0; n < N && i + (int64_t)n < e; n++) {
                    uint64_t key = make_key(prev, htok[i + n]);
                    size_t j = seg_slot(key, shift);
                    while (table.keys[j] != EMPTY_KEY && table.keys[j] != key) j = (j + 1) & mask;
                    if (table.keys[j] == EMPTY_KEY) break; /* no longer n-gram from here is a reference n-gram */
                    int32_t id = table.vals[j];
                    if (loc.hcnt[id]++ == 0) loc.list[n_hyp++] = id; /* in order of first occurrence */
                    prev = id;
                }
            }
            int64_t *match = y->match + (size_t)s * N, *rmatch = y->rmatch + (size_t)s * N;
            int64_t *dmatch = y->dmatch + (size_t)s * N;
            for (size_t q = 0; q < n_hyp; q++) {
                int32_t id = loc.list[q];
                int64_t h = loc.hcnt[id], m = loc.cmax[id];
                int64_t clip = h < m ? h : m;
                match[loc.order[id]] += clip;
                dmatch[loc.order[id]]++;
                if (weigh) { /* one product, then one sum, as np.bincount's (no contraction into an FMA in C99) */
                    int32_t g = w.gid_p[loc.first[id]];
                    if (g < 0 || (size_t)g >= w.n_info) {
                        k_limit(&ks, "nist: the gid of a reference n-gram (%ld) is outside info", (long)g);
                        goto fail;
                    }
                    double add = w.info_p[g] * (double)clip;
                    y->winfo[(size_t)s * N + (size_t)loc.order[id]] += add;
                    if (w.n_zero && sorted_has(w.zero_p, w.n_zero, g)) {
                        double extra = w.extra * (double)clip;
                        y->wzero[s] += extra;
                    }
                }
            }
            if (single) {
                memcpy(rmatch, match, N * sizeof(int64_t));
                continue;
            }
            for (size_t q = 0; q < n_pairs; q++) {
                int32_t id = pair_id[q];
                int64_t h = loc.hcnt[id], c = pair_cnt[q];
                rmatch[loc.order[id]] += c < h ? c : h;
            }
        }
        for (size_t q = 0; q < n_used; q++) table.keys[used[q]] = EMPTY_KEY;
    }

    if (k_finish(&ks) < 0) goto fail;
    result = PyList_New(K);
    if (!result) goto fail;
    for (Py_ssize_t k = 0; k < K; k++) {
        system_t *y = &sys[k];
        PyObject *entry = Py_BuildValue(
            "(NNNNN)", bytes_of(y->match, (size_t)n_seg * N * sizeof(int64_t)),
            bytes_of(y->rmatch, (size_t)n_seg * N * sizeof(int64_t)),
            bytes_of(y->dmatch, (size_t)n_seg * N * sizeof(int64_t)),
            bytes_of(y->winfo, weigh ? (size_t)n_seg * N * sizeof(double) : 0),
            bytes_of(y->wzero, weigh ? (size_t)n_seg * sizeof(double) : 0));
        if (!entry) {
            Py_CLEAR(result);
            goto fail;
        }
        PyList_SET_ITEM(result, k, entry);
    }
    goto done;

nomem:
    k_nomem(&ks);
fail:
    k_finish(&ks);
    Py_CLEAR(result);
done:
    if (sys) {
        for (Py_ssize_t k = 0; k < K; k++) {
            release_stream(&sys[k].hyp);
            free(sys[k].match); free(sys[k].rmatch); free(sys[k].dmatch); free(sys[k].winfo); free(sys[k].wzero);
        }
        free(sys);
    }
    local_free(&loc);
    free(used); free(pair_id); free(pair_cnt);
    if (table.keys) table_free(&table);
    nist_release(&w);
    if (seg_buf.obj) PyBuffer_Release(&seg_buf);
    release_stream(&refs);
    Py_DECREF(hyps);
    return result;
}

/* distinct(tok, off, max_order) -> int64[L*N]: number of distinct n-grams of each order in each text. */
static PyObject *distinct(PyObject *self, PyObject *args) {
    int max_order;
    stream_t txt;
    if (parse_texts(args, &txt, &max_order) < 0) return NULL;
    const int32_t *tok = (const int32_t *)txt.tok.buf;
    const int64_t *off = (const int64_t *)txt.off.buf;
    Py_ssize_t L = txt.off.len / 8 - 1;
    const size_t N = (size_t)max_order;
    table_t table = {0};
    size_t *used = NULL, used_cap = 0;
    PyObject *result = NULL;
    kstate_t ks = {0};
    k_release(&ks);
    int64_t *out = (int64_t *)calloc((size_t)(L ? L : 1) * N, sizeof(int64_t));
    if (!out || table_init(&table, 64) < 0) goto nomem;
    for (Py_ssize_t t = 0; t < L; t++) {
        int64_t a = off[t], b = off[t + 1];
        if ((size_t)(b - a) >= (size_t)K_MAX_ID / N) {
            k_limit(&ks, "text %zd: %lld tokens x max_order %zu n-grams, " ID_HINT, t + 1, (long long)(b - a), N);
            goto done;
        }
        size_t need = (size_t)(b - a) * N + 1, n_used = 0;
        if (k_poll(&ks, 1) < 0) goto done;
        if (reserve_segment(&table, need, &used, &used_cap) < 0) goto nomem;
        const size_t mask = table.cap - 1;
        int32_t next = 0;
        for (int64_t i = a; i < b; i++) {
            if (k_poll(&ks, N) < 0) goto done; /* per token: one text may be the whole input */
            int32_t prev = -1;
            for (size_t n = 0; n < N && i + (int64_t)n < b; n++) {
                uint64_t key = make_key(prev, tok[i + n]);
                size_t j = mix64(key) & mask;
                while (table.keys[j] != EMPTY_KEY && table.keys[j] != key) j = (j + 1) & mask;
                if (table.keys[j] == EMPTY_KEY) {
                    table.keys[j] = key;
                    table.vals[j] = next++;
                    used[n_used++] = j;
                    out[(size_t)t * N + n]++;
                }
                prev = table.vals[j];
            }
        }
        for (size_t q = 0; q < n_used; q++) table.keys[used[q]] = EMPTY_KEY;
    }
    if (k_finish(&ks) == 0) result = bytes_of(out, (size_t)L * N * sizeof(int64_t));
    goto done;
nomem:
    k_nomem(&ks);
done:
    if (!result) k_finish(&ks);
    free(out);
    free(used);
    if (table.keys) table_free(&table);
    release_stream(&txt);
    return result;
}

static PyMethodDef methods[] = {
    {"intern_plan", intern_plan, METH_VARARGS, "Unigram ids of a block's references and its positions by bucket."},
    {"intern_part", intern_part, METH_VARARGS, "Ids, counts and prefixes of the n-grams of a range of buckets."},
    {"intern_rebase", intern_rebase, METH_VARARGS, "A part's gid entries moved to the part's first global id."},
    {"overlap", overlap, METH_VARARGS, "Clipped n-gram matches of systems against shared references."},
    {"distinct", distinct, METH_VARARGS, "Number of distinct n-grams of each order in each text."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_overlap", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__overlap(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "MAX_ORDER", MAX_ORDER) < 0 || PyModule_AddIntConstant(m, "MAX_ID", K_MAX_ID) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
