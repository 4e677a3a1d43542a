/*
 * ngrameval._text: split text into tokens and map each token to an integer id, in one pass.
 *
 * A vocabulary (a PyCapsule) interns token strings exactly (code points compared, not hashes) and
 * gives each distinct token the next id. `encode` reads many lines at once (one str, lines separated
 * by '\n'), optionally applies the mteval-v13a tokenization rules to each line, splits on the
 * whitespace of Python's str.split, and returns the ids and per-line offsets as int32/int64 buffers.
 *
 * The v13a rules, as mteval-v13a.pl and sacreBLEU apply them to " " + line + " ":
 *   1. pad every ASCII symbol except ' , - . and alphanumerics with spaces;
 *   2. ([^0-9])([.,])  ->  "\1 \2 "
 *   3. ([.,])([^0-9])  ->  " \1 \2"
 *   4. ([0-9])(-)      ->  "\1 \2 "
 * Rules 2-4 are two-character patterns; a regex substitution of such a pattern scans left to right
 * and resumes after each match, which is exactly what `rule_pass` does (pinned against sacreBLEU by
 * property tests).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CAPSULE_NAME "ngrameval._text.vocab"

typedef struct {
    int32_t *slots;   /* token id, or -1 where free */
    size_t cap;       /* power of two */
    uint64_t *hash;   /* per id */
    int64_t *start;   /* per id: first code point in the arena */
    int32_t *len;     /* per id: number of code points */
    size_t n, ncap;
    Py_UCS4 *arena;
    size_t used, acap;
} vocab_t;

static void vocab_free(vocab_t *v) {
    if (!v) return;
    free(v->slots); free(v->hash); free(v->start); free(v->len); free(v->arena);
    free(v);
}

static void capsule_free(PyObject *cap) { vocab_free((vocab_t *)PyCapsule_GetPointer(cap, CAPSULE_NAME)); }

static PyObject *vocab_new(PyObject *self, PyObject *noargs) {
    vocab_t *v = (vocab_t *)calloc(1, sizeof(vocab_t));
    if (!v) return PyErr_NoMemory();
    v->cap = 1024;
    v->slots = (int32_t *)malloc(v->cap * sizeof(int32_t));
    if (!v->slots) { vocab_free(v); return PyErr_NoMemory(); }
    memset(v->slots, 0xff, v->cap * sizeof(int32_t));
    PyObject *cap = PyCapsule_New(v, CAPSULE_NAME, capsule_free);
    if (!cap) vocab_free(v);
    return cap;
}

static inline uint64_t hash_tok(const Py_UCS4 *s, Py_ssize_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h ^ (h >> 32);
}

static int vocab_rehash(vocab_t *v) {
    size_t cap = v->cap * 2;
    int32_t *slots = (int32_t *)malloc(cap * sizeof(int32_t));
    if (!slots) return -1;
    memset(slots, 0xff, cap * sizeof(int32_t));
    for (size_t id = 0; id < v->n; id++) {
        size_t j = v->hash[id] & (cap - 1);
        while (slots[j] >= 0) j = (j + 1) & (cap - 1);
        slots[j] = (int32_t)id;
    }
    free(v->slots);
    v->slots = slots;
    v->cap = cap;
    return 0;
}

/* The id of token s[0..n), added when absent and `grow`; -1 when absent and not `grow`, -2 on OOM. */
static int32_t vocab_id(vocab_t *v, const Py_UCS4 *s, Py_ssize_t n, int grow) {
    uint64_t h = hash_tok(s, n);
    size_t j = h & (v->cap - 1);
    for (int32_t id; (id = v->slots[j]) >= 0; j = (j + 1) & (v->cap - 1)) {
        if (v->hash[id] == h && v->len[id] == n && !memcmp(v->arena + v->start[id], s, (size_t)n * sizeof(Py_UCS4)))
            return id;
    }
    if (!grow) return -1;
    if (v->n >= INT32_MAX) return -2;
    if (v->n == v->ncap) {
        size_t ncap = v->ncap ? v->ncap * 2 : 4096;
        uint64_t *hh = (uint64_t *)realloc(v->hash, ncap * sizeof(uint64_t));
        if (!hh) return -2;
        v->hash = hh;
        int64_t *st = (int64_t *)realloc(v->start, ncap * sizeof(int64_t));
        if (!st) return -2;
        v->start = st;
        int32_t *ln = (int32_t *)realloc(v->len, ncap * sizeof(int32_t));
        if (!ln) return -2;
        v->len = ln;
        v->ncap = ncap;
    }
    if (v->used + (size_t)n > v->acap) {
        size_t acap = v->acap ? v->acap : 65536;
        while (acap < v->used + (size_t)n) acap *= 2;
        Py_UCS4 *a = (Py_UCS4 *)realloc(v->arena, acap * sizeof(Py_UCS4));
        if (!a) return -2;
        v->arena = a;
        v->acap = acap;
    }
    int32_t id = (int32_t)v->n++;
    memcpy(v->arena + v->used, s, (size_t)n * sizeof(Py_UCS4));
    v->hash[id] = h;
    v->start[id] = (int64_t)v->used;
    v->len[id] = (int32_t)n;
    v->used += (size_t)n;
    v->slots[j] = id;
    if (v->n * 2 > v->cap && vocab_rehash(v) < 0) return -2;
    return id;
}

/* Growable scratch buffers. */
typedef struct {
    Py_UCS4 *p;
    size_t len, cap;
} ubuf_t;

static int ubuf_reserve(ubuf_t *b, size_t cap) {
    if (cap <= b->cap) return 0;
    size_t c = b->cap ? b->cap : 256;
    while (c < cap) c *= 2;
    Py_UCS4 *p = (Py_UCS4 *)realloc(b->p, c * sizeof(Py_UCS4));
    if (!p) return -1;
    b->p = p;
    b->cap = c;
    return 0;
}

typedef struct {
    char *p;
    size_t len, cap;  /* in bytes */
} bbuf_t;

static int bbuf_push(bbuf_t *b, const void *x, size_t size) {
    if (b->len + size > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 65536;
        while (c < b->len + size) c *= 2;
        char *p = (char *)realloc(b->p, c);
        if (!p) return -1;
        b->p = p;
        b->cap = c;
    }
    memcpy(b->p + b->len, x, size);
    b->len += size;
    return 0;
}

static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int is_dot_comma(Py_UCS4 c) { return c == '.' || c == ','; }

/* Rule 1: the ASCII symbols that v13a pads: 0x20-0x26, 0x28-0x2B, '/', 0x3A-0x40, 0x5B-0x60, 0x7B-0x7E. */
static inline int is_padded(Py_UCS4 c) {
    return (c >= 0x20 && c <= 0x26) || (c >= 0x28 && c <= 0x2B) || c == 0x2F || (c >= 0x3A && c <= 0x40) ||
           (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

/* One non-overlapping left-to-right substitution of a two-character rule (2, 3 or 4) from `in` to `out`. */
static int rule_pass(int rule, const ubuf_t *in, ubuf_t *out) {
    if (ubuf_reserve(out, in->len * 2 + 2) < 0) return -1;
    const Py_UCS4 *s = in->p;
    Py_UCS4 *o = out->p;
    size_t n = in->len, k = 0, i = 0;
    while (i < n) {
        if (i + 1 < n) {
            Py_UCS4 a = s[i], b = s[i + 1];
            int hit = rule == 2   ? (!is_digit(a) && is_dot_comma(b))
                      : rule == 3 ? (is_dot_comma(a) && !is_digit(b))
                                  : (is_digit(a) && b == '-');
            if (hit) {
                if (rule == 3) {
                    o[k++] = ' '; o[k++] = a; o[k++] = ' '; o[k++] = b;
                } else {
                    o[k++] = a; o[k++] = ' '; o[k++] = b; o[k++] = ' ';
                }
                i += 2;
                continue;
            }
        }
        o[k++] = s[i++];
    }
    out->len = k;
    return 0;
}

/* Intern the whitespace-separated tokens of s[0..n); append ids. Returns the token count, -1 on OOM. */
static Py_ssize_t split_intern(vocab_t *v, const Py_UCS4 *s, size_t n, int grow, bbuf_t *ids) {
    Py_ssize_t count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && Py_UNICODE_ISSPACE(s[i])) i++;
        size_t a = i;
        while (i < n && !Py_UNICODE_ISSPACE(s[i])) i++;
        if (i > a) {
            int32_t id = vocab_id(v, s + a, (Py_ssize_t)(i - a), grow);
            if (id == -2 || bbuf_push(ids, &id, sizeof id) < 0) return -1;
            count++;
        }
    }
    return count;
}

/*
 * encode(vocab, text, v13a, grow) -> (ids int32[T], off int64[L + 1])
 *   text: the lines joined by '\n' (L = text.count('\n') + 1 lines; an empty line has no tokens).
 *   v13a: apply the mteval-v13a rules to " " + line + " " before splitting.
 *   grow: add unseen tokens to the vocabulary (else they get id -1).
 */
static PyObject *encode(PyObject *self, PyObject *args) {
    PyObject *cap, *text;
    int v13a, grow;
    if (!PyArg_ParseTuple(args, "OUpp", &cap, &text, &v13a, &grow)) return NULL;
    vocab_t *v = (vocab_t *)PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!v) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t L = PyUnicode_GET_LENGTH(text);
    ubuf_t a = {0}, b = {0};
    bbuf_t ids = {0}, off = {0};
    PyObject *result = NULL;
    int64_t total = 0;
    if (bbuf_push(&off, &total, sizeof total) < 0) goto nomem;
    Py_ssize_t pos = 0;
    while (pos <= L) {
        Py_ssize_t end = pos;
        while (end < L && PyUnicode_READ(kind, data, end) != '\n') end++;
        size_t n = (size_t)(end - pos);
        if (ubuf_reserve(&a, n * 3 + 2) < 0) goto nomem;
        size_t k = 0;
        if (v13a) {
            a.p[k++] = ' ';
            for (Py_ssize_t i = pos; i < end; i++) {
                Py_UCS4 c = PyUnicode_READ(kind, data, i);
                if (is_padded(c)) {
                    a.p[k++] = ' '; a.p[k++] = c; a.p[k++] = ' ';
                } else {
                    a.p[k++] = c;
                }
            }
            a.p[k++] = ' ';
            a.len = k;
            if (rule_pass(2, &a, &b) < 0 || rule_pass(3, &b, &a) < 0 || rule_pass(4, &a, &b) < 0) goto nomem;
        } else {
            for (Py_ssize_t i = pos; i < end; i++) a.p[k++] = PyUnicode_READ(kind, data, i);
            a.len = k;
        }
        const ubuf_t *last = v13a ? &b : &a;
        Py_ssize_t got = split_intern(v, last->p, last->len, grow, &ids);
        if (got < 0) goto nomem;
        total += got;
        if (bbuf_push(&off, &total, sizeof total) < 0) goto nomem;
        pos = end + 1;
    }
    result = Py_BuildValue("(y#y#)", ids.p ? ids.p : "", (Py_ssize_t)ids.len, off.p, (Py_ssize_t)off.len);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(a.p); free(b.p); free(ids.p); free(off.p);
    return result;
}

/* tokens(vocab, start) -> the token strings of ids start, start + 1, ... */
static PyObject *tokens(PyObject *self, PyObject *args) {
    PyObject *cap;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "On", &cap, &start)) return NULL;
    vocab_t *v = (vocab_t *)PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!v) return NULL;
    if (start < 0) start = 0;
    Py_ssize_t n = (Py_ssize_t)v->n > start ? (Py_ssize_t)v->n - start : 0;
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t id = (size_t)(start + i);
        PyObject *s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, v->arena + v->start[id], v->len[id]);
        if (!s) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, s);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"vocab_new", vocab_new, METH_NOARGS, "A new, empty vocabulary."},
    {"encode", encode, METH_VARARGS, "Token ids and per-line offsets of '\\n'-joined lines."},
    {"tokens", tokens, METH_VARARGS, "The strings of the vocabulary's ids from `start` on."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_text", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__text(void) { return PyModule_Create(&module); }
