/*
 * ngrameval._overlap: the n-gram co-occurrence kernel.
 *
 * One call interns every n-gram (orders 1..max_order) of a block of reference texts into an exact
 * hash table (key = (id of the (n-1)-gram prefix, token id), so no two n-grams ever share an id),
 * then, for every system given, counts per segment and per order:
 *
 *   match[s, n]  = sum over hyp n-grams g of min(count_hyp(g), max over refs of count_ref(g))
 *   rmatch[s, n] = sum over refs r, n-grams g of r of min(count_r(g), count_hyp(g))
 *
 * and, on request, the (segment, n-gram id, clipped count) triples of every matched hyp n-gram
 * (NIST weights them by information). Reference n-grams are interned once per call and shared by
 * every system of the call. All inputs and outputs are flat little buffers; the Python side wraps
 * them in numpy arrays (no numpy headers needed to build this file).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t *keys;     /* EMPTY_KEY where free */
    int32_t *vals;
    size_t cap;         /* power of two */
    size_t size;
} table_t;

#define EMPTY_KEY UINT64_MAX

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

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

/*
 * overlap(ref_tok, ref_off, ref_seg, hyps, max_order, emit_matches)
 *   ref_tok: int32[T], ref_off: int64[R + 1], ref_seg: int64[S + 1] (the references of segment s
 *   are texts ref_seg[s] .. ref_seg[s + 1] - 1), hyps: sequence of (tok int32[], off int64[S + 1]).
 * Returns (count int64[G], prefix int32[G], order int8[G], per_system) with per_system a list of
 * (match int64[S*N], rmatch int64[S*N], m_seg int64[M], m_gram int32[M], m_clip int64[M]).
 */
static PyObject *overlap(PyObject *self, PyObject *args) {
    PyObject *ref_tok_o, *ref_off_o, *ref_seg_o, *hyps_o;
    int max_order, emit;
    if (!PyArg_ParseTuple(args, "OOOOip", &ref_tok_o, &ref_off_o, &ref_seg_o, &hyps_o, &max_order, &emit))
        return NULL;
    if (max_order < 1 || max_order > 100) {
        PyErr_SetString(PyExc_ValueError, "max_order must be in 1..100");
        return NULL;
    }
    PyObject *hyps = PySequence_Fast(hyps_o, "hyps must be a sequence of (tok, off) pairs");
    if (!hyps) return NULL;

    stream_t refs;
    Py_buffer seg_buf = {0};
    table_t table = {0};
    gram_info_t info = {0};
    int32_t *ref_gid = NULL;
    int64_t *stamp_hyp = NULL, *stamp_ref = NULL, *stamp_max = NULL;
    int64_t *cnt_hyp = NULL, *cnt_ref = NULL, *cnt_max = NULL;
    int32_t *list_hyp = NULL, *list_ref = NULL;
    PyObject *result = NULL, *systems = NULL;
    int have_refs = 0;

    if (get_stream(ref_tok_o, ref_off_o, &refs) < 0) goto fail_early;
    have_refs = 1;
    if (PyObject_GetBuffer(ref_seg_o, &seg_buf, PyBUF_C_CONTIGUOUS) < 0) goto fail;
    if (seg_buf.len % 8 || seg_buf.len < 8) {
        PyErr_SetString(PyExc_ValueError, "ref_seg must be int64[S + 1]");
        goto fail;
    }
    const int32_t *rtok = (const int32_t *)refs.tok.buf;
    const int64_t *roff = (const int64_t *)refs.off.buf;
    const int64_t *rseg = (const int64_t *)seg_buf.buf;
    Py_ssize_t n_refs = refs.off.len / 8 - 1;
    Py_ssize_t n_seg = seg_buf.len / 8 - 1;
    if (rseg[0] != 0 || rseg[n_seg] != n_refs) {
        PyErr_SetString(PyExc_ValueError, "ref_seg must start at 0 and end at the number of references");
        goto fail;
    }
    for (Py_ssize_t s = 0; s < n_seg; s++) {
        if (rseg[s + 1] < rseg[s]) {
            PyErr_SetString(PyExc_ValueError, "ref_seg must be non-decreasing");
            goto fail;
        }
    }
    size_t T = (size_t)(refs.tok.len / 4);
    const size_t N = (size_t)max_order;

    /* 1. Intern the reference n-grams: ref_gid[pos * N + (n - 1)], -1 past the text's end. */
    ref_gid = (int32_t *)malloc((T ? T : 1) * N * sizeof(int32_t));
    if (!ref_gid || table_init(&table, T * N / 2 + 16) < 0) goto nomem;
    for (Py_ssize_t r = 0; r < n_refs; r++) {
        int64_t a = roff[r], b = roff[r + 1];
        for (int64_t i = a; i < b; i++) {
            int32_t prev = -1;
            for (size_t n = 0; n < N; n++) {
                if (i + (int64_t)n >= b) {
                    ref_gid[i * N + n] = -1;
                    continue;
                }
                int32_t id = table_insert(&table, make_key(prev, rtok[i + n]), (int32_t)info.size);
                if (id == -2) goto nomem;
                if (id == (int32_t)info.size && info_push(&info, prev, (int8_t)(n + 1)) < 0) goto nomem;
                info.count[id]++;
                ref_gid[i * N + n] = id;
                prev = id;
            }
        }
    }
    size_t G = info.size;
    size_t Gs = G ? G : 1;
    stamp_hyp = (int64_t *)calloc(Gs, sizeof(int64_t));
    stamp_ref = (int64_t *)calloc(Gs, sizeof(int64_t));
    stamp_max = (int64_t *)calloc(Gs, sizeof(int64_t));
    cnt_hyp = (int64_t *)calloc(Gs, sizeof(int64_t));
    cnt_ref = (int64_t *)calloc(Gs, sizeof(int64_t));
    cnt_max = (int64_t *)calloc(Gs, sizeof(int64_t));
    list_hyp = (int32_t *)malloc(Gs * sizeof(int32_t));
    list_ref = (int32_t *)malloc(Gs * sizeof(int32_t));
    if (!stamp_hyp || !stamp_ref || !stamp_max || !cnt_hyp || !cnt_ref || !cnt_max || !list_hyp || !list_ref)
        goto nomem;

    systems = PyList_New(0);
    if (!systems) goto fail;
    int64_t tick = 0;
    Py_ssize_t n_sys = PySequence_Fast_GET_SIZE(hyps);
    for (Py_ssize_t k = 0; k < n_sys; k++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(hyps, k);
        PyObject *tok_o, *off_o;
        if (!PyArg_ParseTuple(pair, "OO", &tok_o, &off_o)) goto fail;
        stream_t hyp;
        if (get_stream(tok_o, off_o, &hyp) < 0) goto fail;
        if (hyp.off.len / 8 - 1 != n_seg) {
            PyErr_SetString(PyExc_ValueError, "every system must have one text per segment");
            release_stream(&hyp);
            goto fail;
        }
        const int32_t *htok = (const int32_t *)hyp.tok.buf;
        const int64_t *hoff = (const int64_t *)hyp.off.buf;
        int64_t *match = (int64_t *)calloc((size_t)(n_seg ? n_seg : 1) * N, sizeof(int64_t));
        int64_t *rmatch = (int64_t *)calloc((size_t)(n_seg ? n_seg : 1) * N, sizeof(int64_t));
        size_t m_cap = 1024, m_len = 0;
        int64_t *m_seg = NULL, *m_clip = NULL;
        int32_t *m_gram = NULL;
        if (emit) {
            m_seg = (int64_t *)malloc(m_cap * sizeof(int64_t));
            m_clip = (int64_t *)malloc(m_cap * sizeof(int64_t));
            m_gram = (int32_t *)malloc(m_cap * sizeof(int32_t));
        }
        if (!match || !rmatch || (emit && (!m_seg || !m_clip || !m_gram))) {
            free(match); free(rmatch); free(m_seg); free(m_clip); free(m_gram);
            release_stream(&hyp);
            goto nomem;
        }
        int oom = 0;
        for (Py_ssize_t s = 0; s < n_seg && !oom; s++) {
            int64_t seg_tick = ++tick;
            size_t n_hyp = 0;
            /* 2. Count the hyp n-grams that exist among the references of this call. */
            for (int64_t i = hoff[s]; i < hoff[s + 1]; i++) {
                int32_t prev = -1;
                for (size_t n = 0; n < N && i + (int64_t)n < hoff[s + 1]; n++) {
                    int32_t id = table_find(&table, make_key(prev, htok[i + n]));
                    if (id < 0) break; /* no longer n-gram from here can be a reference n-gram */
                    if (stamp_hyp[id] != seg_tick) {
                        stamp_hyp[id] = seg_tick;
                        cnt_hyp[id] = 0;
                        list_hyp[n_hyp++] = id;
                    }
                    cnt_hyp[id]++;
                    prev = id;
                }
            }
            /* 3. Each reference: its counts, recall clipping, and the max over references. */
            for (int64_t r = rseg[s]; r < rseg[s + 1]; r++) {
                int64_t ref_tick = ++tick;
                size_t n_ref = 0;
                for (int64_t i = roff[r]; i < roff[r + 1]; i++) {
                    for (size_t n = 0; n < N; n++) {
                        int32_t id = ref_gid[i * N + n];
                        if (id < 0) break;
                        if (stamp_ref[id] != ref_tick) {
                            stamp_ref[id] = ref_tick;
                            cnt_ref[id] = 0;
                            list_ref[n_ref++] = id;
                        }
                        cnt_ref[id]++;
                    }
                }
                for (size_t q = 0; q < n_ref; q++) {
                    int32_t id = list_ref[q];
                    int64_t c = cnt_ref[id];
                    int64_t h = stamp_hyp[id] == seg_tick ? cnt_hyp[id] : 0;
                    rmatch[s * N + (size_t)(info.order[id] - 1)] += c < h ? c : h;
                    if (stamp_max[id] != seg_tick) {
                        stamp_max[id] = seg_tick;
                        cnt_max[id] = c;
                    } else if (c > cnt_max[id]) {
                        cnt_max[id] = c;
                    }
                }
            }
            /* 4. Precision clipping against the max reference count. */
            for (size_t q = 0; q < n_hyp; q++) {
                int32_t id = list_hyp[q];
                int64_t m = stamp_max[id] == seg_tick ? cnt_max[id] : 0;
                int64_t h = cnt_hyp[id];
                int64_t clip = h < m ? h : m;
                if (!clip) continue;
                match[s * N + (size_t)(info.order[id] - 1)] += clip;
                if (emit) {
                    if (m_len == m_cap) {
                        m_cap *= 2;
                        int64_t *a = (int64_t *)realloc(m_seg, m_cap * sizeof(int64_t));
                        if (a) m_seg = a;
                        int64_t *c2 = (int64_t *)realloc(m_clip, m_cap * sizeof(int64_t));
                        if (c2) m_clip = c2;
                        int32_t *g2 = (int32_t *)realloc(m_gram, m_cap * sizeof(int32_t));
                        if (g2) m_gram = g2;
                        if (!a || !c2 || !g2) { oom = 1; break; }
                    }
                    m_seg[m_len] = s;
                    m_gram[m_len] = id;
                    m_clip[m_len] = clip;
                    m_len++;
                }
            }
        }
        release_stream(&hyp);
        PyObject *entry = NULL;
        if (!oom) {
            entry = Py_BuildValue(
                "(NNNNN)",
                bytes_of(match, (size_t)n_seg * N * sizeof(int64_t)),
                bytes_of(rmatch, (size_t)n_seg * N * sizeof(int64_t)),
                bytes_of(m_seg, m_len * sizeof(int64_t)),
                bytes_of(m_gram, m_len * sizeof(int32_t)),
                bytes_of(m_clip, m_len * sizeof(int64_t)));
        }
        free(match); free(rmatch); free(m_seg); free(m_clip); free(m_gram);
        if (oom) goto nomem;
        if (!entry) goto fail;
        int rc = PyList_Append(systems, entry);
        Py_DECREF(entry);
        if (rc < 0) goto fail;
    }
    result = Py_BuildValue(
        "(NNNN)",
        bytes_of(info.count, G * sizeof(int64_t)),
        bytes_of(info.prefix, G * sizeof(int32_t)),
        bytes_of(info.order, G * sizeof(int8_t)),
        systems);
    systems = NULL; /* stolen by N */
    goto done;

nomem:
    PyErr_NoMemory();
fail:
    result = NULL;
done:
    Py_XDECREF(systems);
    free(stamp_hyp); free(stamp_ref); free(stamp_max);
    free(cnt_hyp); free(cnt_ref); free(cnt_max);
    free(list_hyp); free(list_ref);
    free(ref_gid);
    free(info.count); free(info.prefix); free(info.order);
    if (table.keys) table_free(&table);
    if (seg_buf.obj) PyBuffer_Release(&seg_buf);
    if (have_refs) release_stream(&refs);
fail_early:
    Py_DECREF(hyps);
    return result;
}

static PyMethodDef methods[] = {
    {"overlap", overlap, METH_VARARGS, "Clipped n-gram matches of systems against shared references."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_overlap", NULL, -1, methods};

PyMODINIT_FUNC PyInit__overlap(void) { return PyModule_Create(&module); }
