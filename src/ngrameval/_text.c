/*
 * ngrameval._text: split text into tokens and map each token to an integer id, in one pass.
 *
 * A vocabulary (a PyCapsule) interns token strings exactly (code points compared, not hashes) and
 * gives each distinct token the next id. `encode` reads many lines at once (one str, lines separated
 * by '\n'), optionally applies the mteval-v13a tokenization rules or ROUGE's character rule to each line,
 * splits on the whitespace of Python's str.split, and returns the ids and per-line offsets as int32/int64
 * buffers. `encode_lines` gives the same ids and offsets for the v13a and plain modes from the lines
 * themselves (no joined text), scanning each line once (see the note above it).
 *
 * `encode_rouge` does the same for the ROUGE profiles, texts given as a list and split into sentences at
 * '\n', with ROUGE's character rule in the same pass (no intermediate string).
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

#include "_hash.h"
#include "_scan.h"

#define CAPSULE_NAME "ngrameval._text.vocab"

/* A slot of the open-addressing table. A token of at most 7 code points below 256 is its own key (the
   points and the length packed in 64 bits), so probing for it reads the slot and nothing else; that
   matters once the vocabulary outgrows the caches. Longer tokens have key LONG_TOKEN (_scan.h) and are compared
   with their arena entry. */
typedef struct {
    uint64_t key;
    uint32_t tag;     /* the hash's high half: most probes for a long token that miss stop here */
    int32_t id;       /* token id, or -1 where free */
} slot_t;

/* Token t's arena entry, at start[t]: its length, then its code points. */
typedef struct {
    slot_t *slots;
    size_t cap;       /* power of two */
    uint64_t *hash;   /* per id */
    int64_t *start;   /* per id */
    size_t n, ncap;
    Py_UCS4 *arena;
    size_t used, acap;
    int busy;         /* a call is using it (with the GIL released): another thread must not */
} vocab_t;

/* The vocabulary of a capsule, marked busy; NULL with an exception when it is not one or already busy. */
static vocab_t *vocab_take(PyObject *cap) {
    vocab_t *v = (vocab_t *)PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!v) return NULL;
    if (v->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this vocabulary is in use by another thread; give each thread its own");
        return NULL;
    }
    v->busy = 1;
    return v;
}

static void vocab_free(vocab_t *v) {
    if (!v) return;
    free(v->slots); free(v->hash); free(v->start); free(v->arena);
    free(v);
}

static void capsule_free(PyObject *cap) { vocab_free((vocab_t *)PyCapsule_GetPointer(cap, CAPSULE_NAME)); }

static PyObject *vocab_new(PyObject *self, PyObject *noargs) {
    vocab_t *v = (vocab_t *)calloc(1, sizeof(vocab_t));
    if (!v) return PyErr_NoMemory();
    v->cap = 1024;
    v->slots = (slot_t *)malloc(v->cap * sizeof(slot_t));
    if (!v->slots) { vocab_free(v); return PyErr_NoMemory(); }
    memset(v->slots, 0xff, v->cap * sizeof(slot_t));
    PyObject *cap = PyCapsule_New(v, CAPSULE_NAME, capsule_free);
    if (!cap) vocab_free(v);
    return cap;
}

/* A token's hash. A short token (token_key not LONG_TOKEN) hashes its key with mix64; a longer one its code
   points one at a time (so a scanner can hash while it reads), then its length. Either way it is a function
   of the code points only, so a token gets the same hash (and id) from a 1-byte and from a UCS-4 source. */
#define ID_LIMIT "more than 2**31-1 distinct tokens (or a token that long): above the 32-bit id bound of the tokenizer; split the input"

static inline uint64_t hash_tok(const Py_UCS4 *s, Py_ssize_t n) {
    uint64_t h = HASH_SEED;
    for (Py_ssize_t i = 0; i < n; i++) h = hash_step(h, s[i]);
    return hash_end(h, n);
}

/* Token equality; tokens are short, so a loop beats a call to memcmp. */
static inline int same(const Py_UCS4 *a, const Py_UCS4 *b, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static inline int same_u8(const Py_UCS4 *a, const uint8_t *b, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static inline uint64_t token_key(const Py_UCS4 *s, Py_ssize_t n) {
    if (n > 7) return LONG_TOKEN;
    uint64_t key = (uint64_t)n << 56;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] > 255) return LONG_TOKEN;
        key |= (uint64_t)s[i] << (8 * i);
    }
    return key;
}

static inline uint64_t key_hash(uint64_t key, const Py_UCS4 *s, Py_ssize_t n) {
    return key != LONG_TOKEN ? mix64(key) : hash_tok(s, n);
}

static inline void slot_set(slot_t *slot, uint64_t h, int32_t id, uint64_t key) {
    slot->key = key;
    slot->tag = (uint32_t)(h >> 32);
    slot->id = id;
}

static int vocab_rehash(vocab_t *v) {
    size_t cap = v->cap * 2;
    slot_t *slots = (slot_t *)malloc(cap * sizeof(slot_t));
    if (!slots) return -1;
    memset(slots, 0xff, cap * sizeof(slot_t));
    for (size_t id = 0; id < v->n; id++) {
        size_t j = v->hash[id] & (cap - 1);
        while (slots[j].id >= 0) j = (j + 1) & (cap - 1);
        const Py_UCS4 *entry = v->arena + v->start[id];
        slot_set(slots + j, v->hash[id], (int32_t)id, token_key(entry + 1, (Py_ssize_t)entry[0]));
    }
    free(v->slots);
    v->slots = slots;
    v->cap = cap;
    return 0;
}

/* Adds token s[0..n) (code points as Py_UCS4, or as bytes when !wide) of hash h and key token_key into free
   slot j; its id, -2 on OOM, -3 past the 32-bit bound (K_MAX_ID tokens, or a token that long). */
static int32_t vocab_add(vocab_t *v, size_t j, const void *s, Py_ssize_t n, uint64_t h, uint64_t key, int wide) {
    if (v->n >= K_MAX_ID || n >= K_MAX_ID) return -3;
    if (v->n == v->ncap) {
        size_t ncap = v->ncap ? v->ncap * 2 : 4096;
        uint64_t *hh = (uint64_t *)realloc(v->hash, ncap * sizeof(uint64_t));
        if (!hh) return -2;
        v->hash = hh;
        int64_t *st = (int64_t *)realloc(v->start, ncap * sizeof(int64_t));
        if (!st) return -2;
        v->start = st;
        v->ncap = ncap;
    }
    if (v->used + (size_t)n + 1 > v->acap) {
        size_t acap = v->acap ? v->acap : 65536;
        while (acap < v->used + (size_t)n + 1) acap *= 2;
        Py_UCS4 *a = (Py_UCS4 *)realloc(v->arena, acap * sizeof(Py_UCS4));
        if (!a) return -2;
        v->arena = a;
        v->acap = acap;
    }
    int32_t id = (int32_t)v->n++;
    Py_UCS4 *dst = v->arena + v->used;
    dst[0] = (Py_UCS4)n;
    if (wide) {
        memcpy(dst + 1, s, (size_t)n * sizeof(Py_UCS4));
    } else {
        for (Py_ssize_t i = 0; i < n; i++) dst[i + 1] = ((const uint8_t *)s)[i];
    }
    v->hash[id] = h;
    v->start[id] = (int64_t)v->used;
    v->used += (size_t)n + 1;
    slot_set(v->slots + j, h, id, key);
    if (v->n * 2 > v->cap && vocab_rehash(v) < 0) return -2;
    return id;
}

/* The id of token s[0..n) (Py_UCS4 code points, or bytes when !wide) of hash key_hash and key token_key,
   added when absent and `grow`; -1 when absent and not `grow`, -2 on OOM, -3 past the 32-bit bound. */
static inline int32_t vocab_find(vocab_t *v, const void *s, Py_ssize_t n, uint64_t h, uint64_t key, int grow,
                                 int wide) {
    uint32_t tag = (uint32_t)(h >> 32);
    size_t j = h & (v->cap - 1);
    for (const slot_t *slot; (slot = v->slots + j)->id >= 0; j = (j + 1) & (v->cap - 1)) {
        if (slot->key != key) continue;
        if (key != LONG_TOKEN) return slot->id;
        const Py_UCS4 *entry = v->arena + v->start[slot->id];
        if (slot->tag == tag && entry[0] == (Py_UCS4)n &&
            (wide ? same(entry + 1, (const Py_UCS4 *)s, n) : same_u8(entry + 1, (const uint8_t *)s, n)))
            return slot->id;
    }
    return grow ? vocab_add(v, j, s, n, h, key, wide) : -1;
}

static inline int32_t vocab_id(vocab_t *v, const Py_UCS4 *s, Py_ssize_t n, int grow) {
    uint64_t key = token_key(s, n);
    return vocab_find(v, s, n, key_hash(key, s, n), key, grow, 1);
}

/* Intern the whitespace-separated tokens of s[0..n); append ids. Returns the token count, -1 on OOM, -3 past
   the 32-bit bound. */
static Py_ssize_t split_intern(vocab_t *v, const Py_UCS4 *s, size_t n, int grow, bbuf_t *ids) {
    Py_ssize_t count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && Py_UNICODE_ISSPACE(s[i])) i++;
        size_t a = i;
        while (i < n && !Py_UNICODE_ISSPACE(s[i])) i++;
        if (i > a) {
            int32_t id = vocab_id(v, s + a, (Py_ssize_t)(i - a), grow);
            if (id == -3) return -3;
            if (id == -2 || bbuf_push(ids, &id, sizeof id) < 0) return -1;
            count++;
        }
    }
    return count;
}


/*
 * encode(vocab, text, mode, grow) -> (ids int32[T], off int64[L + 1])
 *   text: the lines joined by '\n' (L = text.count('\n') + 1 lines; an empty line has no tokens).
 *   mode: 0 split as it is; 1 apply the mteval-v13a rules to " " + line + " " first; 2 ROUGE's characters
 *         (rouge_char; every other character separates).
 *   grow: add unseen tokens to the vocabulary (else they get id -1).
 */
static PyObject *encode(PyObject *self, PyObject *args) {
    PyObject *cap, *text;
    int mode, grow;
    if (!PyArg_ParseTuple(args, "OUip", &cap, &text, &mode, &grow)) return NULL;
    int v13a = mode == MODE_V13A;
    vocab_t *v = vocab_take(cap);
    if (!v) return NULL;
    kstate_t ks = {0};
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t L = PyUnicode_GET_LENGTH(text);
    ubuf_t a = {0}, b = {0};
    bbuf_t ids = {0}, off = {0};
    PyObject *result = NULL;
    int64_t total = 0;
    k_release(&ks); /* `text` is immutable and held by the caller's arguments */
    if (bbuf_push(&off, &total, sizeof total) < 0) goto nomem;
    Py_ssize_t pos = 0;
    while (pos <= L) {
        Py_ssize_t end = pos;
        while (end < L && PyUnicode_READ(kind, data, end) != '\n') end++;
        size_t n = (size_t)(end - pos);
        if (k_poll(&ks, n * 4 + 1) < 0) goto done;
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
            for (Py_ssize_t i = pos; i < end; i++) {
                Py_UCS4 c = PyUnicode_READ(kind, data, i);
                if (mode == MODE_ROUGE) c = rouge_char(c) ? rouge_char(c) : ' ';
                a.p[k++] = c;
            }
            a.len = k;
        }
        const ubuf_t *last = v13a ? &b : &a;
        Py_ssize_t got = split_intern(v, last->p, last->len, grow, &ids);
        if (got == -3) {
            k_limit(&ks, "line %zd: " ID_LIMIT, (Py_ssize_t)(off.len / sizeof total));
            goto done;
        }
        if (got < 0) goto nomem;
        total += got;
        if (bbuf_push(&off, &total, sizeof total) < 0) goto nomem;
        pos = end + 1;
    }
    if (k_finish(&ks) == 0)
        result = Py_BuildValue("(y#y#)", ids.p ? ids.p : "", (Py_ssize_t)ids.len, off.p, (Py_ssize_t)off.len);
    goto done;
nomem:
    k_nomem(&ks);
done:
    if (!result) k_finish(&ks);
    v->busy = 0;
    free(a.p); free(b.p); free(ids.p); free(off.p);
    return result;
}

/* Tokens of a 1-byte line waiting for their ids: their slots are prefetched when they are found, and looked up
   (in order, so ids still follow first appearance) a batch later, which hides the vocabulary's cache misses. */
#define PENDING 32

typedef struct {
    const uint8_t *s;
    size_t n;
    uint64_t key, h;
} pending_t;

typedef struct {
    vocab_t *v;
    int grow;
    int32_t *ids;
    size_t n_ids, cap_ids;
    ubuf_t a, b;   /* rule_pass scratch */
    bbuf_t low;    /* a lower-cased line */
    pending_t pend[PENDING];
    int n_pend;
} lines_out_t;

/* Appends one id (a token's, or -1 when absent and not growing); -1 on OOM. */
static inline int put_id(lines_out_t *o, int32_t id) {
    if (o->n_ids == o->cap_ids) {
        size_t cap = o->cap_ids ? o->cap_ids * 2 : 65536;
        int32_t *p = (int32_t *)realloc(o->ids, cap * sizeof(int32_t));
        if (!p) return -1;
        o->ids = p;
        o->cap_ids = cap;
    }
    o->ids[o->n_ids++] = id;
    return 0;
}

/* vocab lookup result -> put_id: 0, -1 on OOM, -3 past the 32-bit bound. */
static inline int put_found(lines_out_t *o, int32_t id) {
    if (id == -3) return -3;
    if (id == -2) return -1;
    return put_id(o, id);
}

/* The whitespace-separated tokens of s[0..n) (UCS-4); 0, -1 on OOM, -3 past the bound. */
static int put_split(lines_out_t *o, const Py_UCS4 *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i < n && Py_UNICODE_ISSPACE(s[i])) i++;
        size_t a = i;
        while (i < n && !Py_UNICODE_ISSPACE(s[i])) i++;
        if (i > a) {
            int got = put_found(o, vocab_id(o->v, s + a, (Py_ssize_t)(i - a), o->grow));
            if (got < 0) return got;
        }
    }
    return 0;
}

/* The ids of the pending tokens, in order. */
static inline int resolve(lines_out_t *o) {
    for (int q = 0; q < o->n_pend; q++) {
        const pending_t *p = o->pend + q;
        int got = put_found(o, vocab_find(o->v, p->s, (Py_ssize_t)p->n, p->h, p->key, o->grow, 0));
        if (got < 0) return got;
    }
    o->n_pend = 0;
    return 0;
}

/* scan_bytes' token sink: the token joins the batch (its slot prefetched). */
static inline int vocab_token(void *sink, const uint8_t *s, size_t n, const uint8_t *end) {
    lines_out_t *o = (lines_out_t *)sink;
    int got;
    if (o->n_pend == PENDING && (got = resolve(o)) < 0) return got;
    pending_t *p = o->pend + o->n_pend++;
    p->s = s;
    p->n = n;
    p->key = key_u8(s, n, end, &p->h);
    PREFETCH(o->v->slots + (p->h & (o->v->cap - 1)));
    return 0;
}

/* scan_bytes' word sink: the batch first, then the word's tokens after rules 2-4. */
static int vocab_word(void *sink, const uint8_t *w, size_t n) {
    lines_out_t *o = (lines_out_t *)sink;
    int got = resolve(o);
    if (got < 0) return got;
    if (rules_on_word(w, n, &o->a, &o->b) < 0) return -1;
    return put_split(o, o->b.p, o->b.len);
}

/* The tokens of a 1-byte line s[0..n) under a class table (CLASS_V13A or CLASS_PLAIN). */
static int scan_u8(lines_out_t *o, const uint8_t *s, size_t n, const uint8_t *cls) {
    int got = scan_bytes(o, vocab_token, vocab_word, s, n, cls);
    return got < 0 ? got : resolve(o);
}

/* A line of any kind as `encode` treats it: rule 1 (v13a) into UCS-4, rules 2-4, split. */
static int scan_wide(lines_out_t *o, int kind, const void *data, Py_ssize_t len, int v13a) {
    if (ubuf_reserve(&o->a, (size_t)len * 3 + 2) < 0) return -1;
    size_t k = 0;
    if (v13a) o->a.p[k++] = ' ';
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (v13a && is_padded(c)) {
            o->a.p[k++] = ' '; o->a.p[k++] = c; o->a.p[k++] = ' ';
        } else {
            o->a.p[k++] = c;
        }
    }
    if (v13a) o->a.p[k++] = ' ';
    o->a.len = k;
    if (!v13a) return put_split(o, o->a.p, o->a.len);
    if (rule_pass(2, &o->a, &o->b) < 0 || rule_pass(3, &o->b, &o->a) < 0 || rule_pass(4, &o->a, &o->b) < 0) return -1;
    return put_split(o, o->b.p, o->b.len);
}

/* The tokens of one line (from line_source); 0, -1 on OOM, -3 past the bound. */
static int scan_line(lines_out_t *o, PyObject *s, int v13a, int lower) {
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    size_t len = (size_t)PyUnicode_GET_LENGTH(s);
    if (!len) return 0;
    if (kind != PyUnicode_1BYTE_KIND) return scan_wide(o, kind, data, (Py_ssize_t)len, v13a);
    const uint8_t *b = (const uint8_t *)data;
    if (lower) { /* an ASCII line: str.lower() is A-Z -> a-z */
        o->low.len = 0;
        if (bbuf_push(&o->low, b, len) < 0) return -1;
        uint8_t *p = (uint8_t *)o->low.p;
        for (size_t i = 0; i < len; i++)
            if (p[i] >= 'A' && p[i] <= 'Z') p[i] += 32;
        b = p;
    }
    return scan_u8(o, b, len, v13a ? CLASS_V13A : CLASS_PLAIN);
}

/*
 * encode_lines(vocab, lines, mode, lowercase, grow, prep) -> (ids int32[T], off int64[L + 1])
 *   The tokens of every line (a sequence of str, L of them) under mode 0 (split as it is) or 1 (the
 *   mteval-v13a rules, as `encode` applies them), with str.lower() first when `lowercase`; the same ids and
 *   offsets as `encode` of the tokenizer's joined text. prep(line) -> str: the tokenizer's preprocessing of
 *   one line (rstrip, lower-casing, and for v13a "<skipped>", line breaks and entities), called only for the
 *   lines the scanner cannot take as they are (line_source). Lines are copied into a tuple first (strong
 *   references) and scanned in chunks with the GIL released.
 */
static PyObject *encode_lines(PyObject *self, PyObject *args) {
    PyObject *cap, *lines, *prep;
    int mode, lowercase, grow;
    if (!PyArg_ParseTuple(args, "OOippO", &cap, &lines, &mode, &lowercase, &grow, &prep)) return NULL;
    if (mode != MODE_PLAIN && mode != MODE_V13A) {
        PyErr_Format(PyExc_ValueError, "encode_lines: mode must be 0 (plain) or 1 (v13a), got %d", mode);
        return NULL;
    }
    if (!PyCallable_Check(prep)) {
        PyErr_SetString(PyExc_TypeError, "encode_lines: prep must be callable");
        return NULL;
    }
    if (!PyCapsule_IsValid(cap, CAPSULE_NAME)) {
        PyErr_SetString(PyExc_TypeError, "vocab must be a vocabulary of ngrameval._text.vocab_new()");
        return NULL;
    }
    PyObject *seq = PySequence_Tuple(lines);
    if (!seq) return NULL;
    vocab_t *v = vocab_take(cap);
    if (!v) {
        Py_DECREF(seq);
        return NULL;
    }
    int v13a = mode == MODE_V13A;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    lines_out_t o = {.v = v, .grow = grow};
    int64_t *off = (int64_t *)malloc((size_t)(n + 1) * sizeof(int64_t));
    PyObject *result = NULL, *chunk[CHUNK_TEXTS];
    int prepared[CHUNK_TEXTS];
    Py_ssize_t n_chunk = 0;
    kstate_t k = {0};
    if (!off) goto nomem;
    off[0] = 0;
    for (Py_ssize_t t = 0; t < n;) {
        /* with the GIL: the strings of the next chunk */
        Py_ssize_t chars = 0, first = t;
        while (t < n && n_chunk < CHUNK_TEXTS && chars < CHUNK_CHARS) {
            PyObject *src = line_source(PyTuple_GET_ITEM(seq, t), t, v13a, lowercase, prep, &prepared[n_chunk]);
            if (!src) goto done;
            chunk[n_chunk++] = src;
            chars += PyUnicode_GET_LENGTH(src);
            t++;
        }
        /* without it: their tokens */
        k_release(&k);
        for (Py_ssize_t q = 0; q < n_chunk; q++) {
            int got = scan_line(&o, chunk[q], v13a, lowercase && !prepared[q]);
            if (got == -3) {
                k_limit(&k, "line %zd: " ID_LIMIT, first + q + 1);
                break;
            }
            if (got < 0) {
                k_nomem(&k);
                break;
            }
            off[first + q + 1] = (int64_t)o.n_ids;
            if (k_poll(&k, (uint64_t)PyUnicode_GET_LENGTH(chunk[q]) + 1) < 0) break;
        }
        if (k_finish(&k) < 0) goto done;
        for (; n_chunk; n_chunk--) Py_DECREF(chunk[n_chunk - 1]);
    }
    result = Py_BuildValue("(y#y#)", o.ids ? (const char *)o.ids : "", (Py_ssize_t)(o.n_ids * sizeof(int32_t)),
                           (const char *)off, (Py_ssize_t)((size_t)(n + 1) * sizeof(int64_t)));
    goto done;
nomem:
    PyErr_NoMemory();
done:
    for (; n_chunk; n_chunk--) Py_DECREF(chunk[n_chunk - 1]);
    v->busy = 0;
    Py_DECREF(seq);
    free(off); free(o.ids); free(o.a.p); free(o.b.p); free(o.low.p);
    return result;
}

typedef struct {
    vocab_t *v;
    int grow;
    ubuf_t tok;      /* the current token */
    uint64_t hash;   /* its hash_step's so far */
    uint64_t packed; /* its first 7 code points, as token_key packs them */
    bbuf_t ids, soff, toff;
    int64_t n_tok, n_sent;
} rouge_out_t;

/* Ends the current token (if any) and appends its id; -1 on OOM, -3 past the 32-bit bound. */
static inline int rouge_flush(rouge_out_t *o) {
    size_t n = o->tok.len;
    if (!n) return 0;
    uint64_t key = n <= 7 ? o->packed | (uint64_t)n << 56 : LONG_TOKEN; /* ROUGE's code points are < 128 */
    uint64_t h = key != LONG_TOKEN ? mix64(key) : hash_end(o->hash, (Py_ssize_t)n);
    int32_t id = vocab_find(o->v, o->tok.p, (Py_ssize_t)n, h, key, o->grow, 1);
    o->tok.len = 0;
    o->hash = HASH_SEED;
    o->packed = 0;
    if (id == -3) return -3;
    if (id == -2 || bbuf_push(&o->ids, &id, sizeof id) < 0) return -1;
    o->n_tok++;
    return 0;
}

/* The tokens and sentences of one text; `kind` is a constant after inlining, so each kind gets its loop.
   -1 on OOM, -3 past the 32-bit bound. */
static inline int rouge_scan(rouge_out_t *o, int kind, const void *data, Py_ssize_t len) {
    if (ubuf_reserve(&o->tok, (size_t)len + 1) < 0) return -1;
    for (Py_ssize_t i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i), k = rouge_char(c);
        if (k) {
            if (o->tok.len < 7) o->packed |= (uint64_t)k << (8 * o->tok.len);
            o->tok.p[o->tok.len++] = k;
            o->hash = hash_step(o->hash, k);
            continue;
        }
        int got = rouge_flush(o);
        if (got < 0) return got;
        if (c == '\n') {
            o->n_sent++;
            if (bbuf_push(&o->soff, &o->n_tok, sizeof o->n_tok) < 0) return -1;
        }
    }
    int got = rouge_flush(o);
    if (got < 0) return got;
    o->n_sent++;
    if (bbuf_push(&o->soff, &o->n_tok, sizeof o->n_tok) < 0) return -1;
    return bbuf_push(&o->toff, &o->n_sent, sizeof o->n_sent);
}

/*
 * encode_rouge(vocab, texts, full_lower, grow) -> (ids int32[T], soff int64[S + 1], toff int64[N + 1])
 *   The ROUGE profiles' tokens of every text in one pass: sentences are the text's '\n'-separated lines
 *   (sentence s = ids[soff[s]:soff[s+1]], text t = sentences toff[t]..toff[t+1]), tokens the runs of
 *   [a-z0-9] after ASCII lower-casing. full_lower: str.lower() first (rouge-score), which matters only
 *   for a text with non-ASCII characters (e.g. KELVIN SIGN -> 'k'); without it every non-ASCII character
 *   separates, as ROUGE-1.5.5 does with each byte of its UTF-8.
 */
static int rouge_scan_str(rouge_out_t *o, PyObject *s) {
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    return kind == PyUnicode_1BYTE_KIND   ? rouge_scan(o, PyUnicode_1BYTE_KIND, data, len)
           : kind == PyUnicode_2BYTE_KIND ? rouge_scan(o, PyUnicode_2BYTE_KIND, data, len)
                                          : rouge_scan(o, PyUnicode_4BYTE_KIND, data, len);
}


/*
 * encode_rouge(vocab, texts, full_lower, grow) -> (ids int32[T], soff int64[S + 1], toff int64[N + 1])
 *   The ROUGE profiles' tokens of every text in one pass: sentences are the text's '\n'-separated lines
 *   (sentence s = ids[soff[s]:soff[s+1]], text t = sentences toff[t]..toff[t+1]), tokens the runs of
 *   [a-z0-9] after ASCII lower-casing. full_lower: str.lower() first (rouge-score), which matters only
 *   for a text with non-ASCII characters (e.g. KELVIN SIGN -> 'k'); without it every non-ASCII character
 *   separates, as ROUGE-1.5.5 does with each byte of its UTF-8. The texts are copied into a tuple first
 *   (strong references) and scanned in chunks with the GIL released.
 */
static PyObject *encode_rouge(PyObject *self, PyObject *args) {
    PyObject *cap, *texts;
    int full_lower, grow;
    if (!PyArg_ParseTuple(args, "OOpp", &cap, &texts, &full_lower, &grow)) return NULL;
    if (!PyCapsule_IsValid(cap, CAPSULE_NAME)) {
        PyErr_SetString(PyExc_TypeError, "vocab must be a vocabulary of ngrameval._text.vocab_new()");
        return NULL;
    }
    PyObject *seq = PySequence_Tuple(texts);
    if (!seq) return NULL;
    vocab_t *v = vocab_take(cap);
    if (!v) {
        Py_DECREF(seq);
        return NULL;
    }
    rouge_out_t o = {v, grow, {0}, HASH_SEED, 0, {0}, {0}, {0}, 0, 0};
    PyObject *result = NULL, *chunk[CHUNK_TEXTS];
    Py_ssize_t n_chunk = 0;
    kstate_t k = {0};
    int64_t zero = 0;
    if (bbuf_push(&o.soff, &zero, sizeof zero) < 0 || bbuf_push(&o.toff, &zero, sizeof zero) < 0) goto nomem;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    for (Py_ssize_t t = 0; t < n;) {
        /* with the GIL: the strings of the next chunk */
        Py_ssize_t chars = 0;
        while (t < n && n_chunk < CHUNK_TEXTS && chars < CHUNK_CHARS) {
            PyObject *src = rouge_source(PyTuple_GET_ITEM(seq, t), t, full_lower);
            if (!src) goto done;
            chunk[n_chunk++] = src;
            chars += PyUnicode_GET_LENGTH(src);
            t++;
        }
        /* without it: their tokens */
        k_release(&k);
        for (Py_ssize_t q = 0; q < n_chunk; q++) {
            int got = rouge_scan_str(&o, chunk[q]);
            if (got == -3) {
                k_limit(&k, "text %zd: " ID_LIMIT, t - n_chunk + q + 1);
                break;
            }
            if (got < 0) {
                k_nomem(&k);
                break;
            }
            if (k_poll(&k, (uint64_t)PyUnicode_GET_LENGTH(chunk[q]) + 1) < 0) break;
        }
        if (k_finish(&k) < 0) goto done;
        for (; n_chunk; n_chunk--) Py_DECREF(chunk[n_chunk - 1]);
    }
    result = Py_BuildValue("(y#y#y#)", o.ids.p ? o.ids.p : "", (Py_ssize_t)o.ids.len, o.soff.p,
                           (Py_ssize_t)o.soff.len, o.toff.p, (Py_ssize_t)o.toff.len);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    for (; n_chunk; n_chunk--) Py_DECREF(chunk[n_chunk - 1]);
    v->busy = 0;
    Py_DECREF(seq);
    free(o.tok.p); free(o.ids.p); free(o.soff.p); free(o.toff.p);
    return result;
}

/* tokens(vocab, start) -> the token strings of ids start, start + 1, ... */
static PyObject *tokens(PyObject *self, PyObject *args) {
    PyObject *cap;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "On", &cap, &start)) return NULL;
    vocab_t *v = (vocab_t *)PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (!v) return NULL;
    if (v->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this vocabulary is in use by another thread; give each thread its own");
        return NULL;
    }
    if (start < 0) start = 0;
    Py_ssize_t n = (Py_ssize_t)v->n > start ? (Py_ssize_t)v->n - start : 0;
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t id = (size_t)(start + i);
        const Py_UCS4 *entry = v->arena + v->start[id];
        PyObject *s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, entry + 1, (Py_ssize_t)entry[0]);
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
    {"encode_lines", encode_lines, METH_VARARGS, "Token ids and per-line offsets of a sequence of lines."},
    {"encode_rouge", encode_rouge, METH_VARARGS, "ROUGE-profile token ids, sentence and text offsets of texts."},
    {"tokens", tokens, METH_VARARGS, "The strings of the vocabulary's ids from `start` on."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_text", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__text(void) {
    init_classes();
    return PyModule_Create(&module);
}
