/*
 * ngrameval._direct's entries that count straight from a file's UTF-8 bytes (included by _direct.c after its
 * kernels, whose segment tables and counting they reuse): no str is made for a line the scanner serves, and the
 * line splitting, the checks and all counting run without the GIL.
 *
 * lines(buf, every, drop=False, grain=0) -> (n_lines, plain, cuts, fine)
 *   The lines of a file's bytes as ngrameval.io.read gives them (split at LF, the last one without its LF, an empty
 *   file none): their number, whether the bytes are `plain` (valid UTF-8 as Python's strict decoder takes it, no
 *   CR, no U+FEFF: io.read's rules then leave every line as it is) and the byte offsets (int64) of lines 0, every,
 *   2 * every, ... followed by len(buf); `fine` the same for `grain` (empty when grain is 0), from the same pass:
 *   the places where a chunk of `every` lines may be cut into pieces without reading it again. When not plain,
 *   io.read's own reading names the fault (or converts CRLF).
 *   drop: buf is a read-only mmap (mmap.ACCESS_READ: shared, so its pages stay in the page cache; anything else is
 *   refused) whose pages are let go (madvise) once read, 16 MB of lines at a time, so checking a file of any size
 *   holds little of it in memory.
 *
 * count_bytes(texts, n_refs, n, first, total, mode, lowercase, max_order, want_lcs, prep, out) -> bool
 *   Counts the n aligned lines of each of `texts` (buffers of whole lines of plain bytes: n_refs reference files,
 *   then one per system, K in all) as segments first .. first + n of a corpus of `total`, in place into `out`:
 *   - mode 0 (plain) or 1 (v13a): out = (rows,), float64[K * total * (3 + 5 max_order)], the Stats rows of
 *     counts(..., rows) (system-major); a line the scanner alone would not serve (v13a markup or entities, a
 *     non-ASCII line with lowercase) is decoded and given to `prep` with the GIL, as counts() does with its str;
 *   - mode 2 (ROUGE, counts' rouge() profile without line breaks): out = (hyp_len int64[K * total], ref_len
 *     int64[total * n_refs], hits int64[K * total * n_refs * max_order], lcs int64[K * total * n_refs]), pair
 *     index k * (total * n_refs) + segment * n_refs + j, as rouge() numbers them.
 *   False (nothing promised about `out` for these segments) where the bytes path does not serve the chunk: a ROUGE
 *   text with a byte above 0x7F (its str.lower() and its lost-token warning are Python's), a segment past the
 *   kernel's 32-bit bounds, a file with fewer lines than n, or (prep None) a line that needs `prep`. The caller
 *   then counts the chunk from str.
 *
 * A line's tokens are those counts() makes of its str: an ASCII line is scanned as it is; any other line in the
 * UTF-8 form utf8_line writes (whitespace above ASCII as one space), which for UTF-8 input is its own bytes with
 * those code points replaced; counts() scans every line of a segment with a wide character in that form and the
 * tokens of a segment of 1-byte lines are the same characters (tests/test_fromfile.py compares the two).
 *
 * watch(buf, path) and exit_on_bus_error(): a file that another program truncates while it is mapped makes the
 * reads of its lost pages fault (SIGBUS), which would end the process with no word said. watch records where a
 * mapped file's bytes lie and its path (the last WATCHED files); once the command line has called
 * exit_on_bus_error (never the library: the handler is the process's), a fault in a watched range writes one line
 * naming the file and the byte, and the process exits 2 at once (write and _exit: all a handler may call). A fault
 * anywhere else gets the default action, as before. remove_on_fault(path) records a temporary directory of flat
 * files (a streamed run's spill files; the last FAULT_DIRS) that the handler removes before it exits (Linux: its
 * entries read with getdents64 and unlinked, then the directory: system calls, which a handler may make);
 * keep_on_fault(path) forgets it once the run removed it itself.
 */
#ifndef NGRAMEVAL_LINES_H
#define NGRAMEVAL_LINES_H
#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
#endif

/* ---- the bytes of a file ------------------------------------------------------------------------------- */

/* Whether b[0 .. n) is valid UTF-8 as Python decodes it strictly (no overlong form, no surrogate, nothing above
   U+10FFFF) and holds no CR and no U+FEFF (EF BB BF). */
static int plain_utf8(const uint8_t *b, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) { /* 8 ASCII bytes at once: no high bit, and no CR among them */
            uint64_t w;
            memcpy(&w, b + i, 8);
            uint64_t cr = w ^ UINT64_C(0x0d0d0d0d0d0d0d0d);
            uint64_t has_cr = (cr - UINT64_C(0x0101010101010101)) & ~cr & UINT64_C(0x8080808080808080);
            if (!(w & UINT64_C(0x8080808080808080)) && !has_cr) {
                i += 8;
                continue;
            }
        }
        uint8_t c = b[i];
        if (c < 0x80) {
            if (c == '\r') return 0;
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2, cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3, cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4, cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + len > n) return 0;
        for (size_t k = 1; k < len; k++) {
            if ((b[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (b[i + k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFEFF)) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += len;
    }
    return 1;
}

/* Drops the whole pages of b[lo .. hi) from the process (a read-only file mapping: they stay in the page cache). */
static void drop_pages(const uint8_t *b, size_t lo, size_t hi) {
#if defined(MADV_DONTNEED)
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)(b + lo) + page - 1) / page * page;
    const uintptr_t z = (uintptr_t)(b + hi) / page * page;
    if (z > a) madvise((void *)a, z - a, MADV_DONTNEED);
#endif
}

#define LINES_WINDOW ((size_t)1 << 24) /* bytes checked (and with `drop` let go) at a time */

/* Appends `at` to the growing offsets *a (*n of *cap); 0, or -1 when out of memory. */
static int push_cut(int64_t **a, size_t *n, size_t *cap, size_t at) {
    if (*n + 2 > *cap) { /* room for this one and the final len(buf) */
        int64_t *p = (int64_t *)realloc(*a, 2 * *cap * sizeof(int64_t));
        if (!p) return -1;
        *a = p;
        *cap *= 2;
    }
    (*a)[(*n)++] = (int64_t)at;
    return 0;
}

static PyObject *lines(PyObject *self, PyObject *args) {
    Py_buffer view = {0};
    Py_ssize_t every, grain = 0;
    int drop = 0;
    if (!PyArg_ParseTuple(args, "y*n|pn", &view, &every, &drop, &grain)) return NULL;
    if (every < 1 || grain < 0 ||
        (drop && (!view.obj || strcmp(Py_TYPE(view.obj)->tp_name, "mmap.mmap") != 0 || !view.readonly))) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError,
                        "lines: every must be >= 1, grain >= 0, and drop needs a read-only mmap");
        return NULL;
    }
    const uint8_t *b = (const uint8_t *)view.buf;
    const size_t n = (size_t)view.len;
    size_t count = 0, n_cuts = 0, cap = 64, n_fine = 0, fine_cap = 64;
    size_t to_cut = 0, to_fine = 0; /* lines before the next offset of each kind is kept */
    int64_t *cuts = (int64_t *)malloc(cap * sizeof(int64_t)), *fine = (int64_t *)malloc(fine_cap * sizeof(int64_t));
    int plain = 1, oom = !cuts || !fine;
    Py_BEGIN_ALLOW_THREADS
    /* windows of whole lines: each checked, its lines counted, then (drop) its pages let go */
    for (size_t at = 0, start = 0; !oom && start < n; start = at) {
        const uint8_t *nl = start + LINES_WINDOW < n ? (const uint8_t *)memchr(b + start + LINES_WINDOW, '\n',
                                                                                n - start - LINES_WINDOW) : NULL;
        const size_t end = nl ? (size_t)(nl - b) + 1 : n;
        plain = plain && plain_utf8(b + start, end - start);
        while (at < end) {
            if (to_cut-- == 0) {
                to_cut = (size_t)every - 1;
                if (push_cut(&cuts, &n_cuts, &cap, at) < 0) {
                    oom = 1;
                    break;
                }
            }
            if (grain && to_fine-- == 0) {
                to_fine = (size_t)grain - 1;
                if (push_cut(&fine, &n_fine, &fine_cap, at) < 0) {
                    oom = 1;
                    break;
                }
            }
            const uint8_t *e = (const uint8_t *)memchr(b + at, '\n', end - at);
            at = e ? (size_t)(e - b) + 1 : end;
            count++;
        }
        if (drop) drop_pages(b, start, end);
    }
    if (!oom) {
        cuts[n_cuts++] = (int64_t)n;
        if (grain) fine[n_fine++] = (int64_t)n;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (oom) {
        free(cuts);
        free(fine);
        return PyErr_NoMemory();
    }
    PyObject *out = Py_BuildValue("(nOy#y#)", (Py_ssize_t)count, plain ? Py_True : Py_False, (const char *)cuts,
                                  (Py_ssize_t)(n_cuts * sizeof(int64_t)), (const char *)fine,
                                  (Py_ssize_t)(n_fine * sizeof(int64_t)));
    free(cuts);
    free(fine);
    return out;
}

/* ---- counting ---------------------------------------------------------------------------------------- */

typedef struct {
    const uint8_t *p, *end; /* the next line starts at p */
} cursor_t;

/* The next line of `c` (its bytes at *line, *len without the LF); 0 when the buffer has no more line. */
static int next_line(cursor_t *c, const uint8_t **line, size_t *len) {
    if (c->p >= c->end) return 0;
    const uint8_t *nl = (const uint8_t *)memchr(c->p, '\n', (size_t)(c->end - c->p));
    *line = c->p;
    *len = (size_t)((nl ? nl : c->end) - c->p);
    c->p = nl ? nl + 1 : c->end;
    return 1;
}

static int all_ascii(const uint8_t *b, size_t n) {
    size_t i = 0;
    uint64_t acc = 0, w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        acc |= w;
    }
    for (; i < n; i++) acc |= b[i];
    return !(acc & UINT64_C(0x8080808080808080));
}

/* A plain UTF-8 line in the form of utf8_line (lower 0): each code point above ASCII that Python's str.isspace
   takes for whitespace as one space, every other byte as it is. */
static int u8_form(bbuf_t *out, const uint8_t *b, size_t n) {
    out->len = 0;
    if (bbuf_push(out, b, n) < 0) return -1;
    uint8_t *o = (uint8_t *)out->p;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        uint8_t c = b[i];
        if (c < 0x80) {
            o[w++] = c;
            i++;
            continue;
        }
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        Py_UCS4 cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
        for (size_t k = 1; k < len; k++) cp = cp << 6 | (b[i + k] & 0x3F);
        if (cp == 0x85 || cp == 0xA0 || (cp >= 0x1680 && Py_UNICODE_ISSPACE(cp))) {
            o[w++] = ' ';
        } else {
            memmove(o + w, b + i, len);
            w += len;
        }
        i += len;
    }
    out->len = w;
    return 0;
}

/* One text of a segment: its bytes, or (src non-NULL) the str `prep` made of it. */
typedef struct {
    const uint8_t *p;
    size_t len;
    int ascii, prepared;
    PyObject *src;
} text_t;

/* The tokens of a text into the segment table: as seg_scan scans a str of a wide segment. */
static int scan_text(seg_t *g, const text_t *t, int v13a, int lower) {
    if (t->src) return seg_scan(g, t->src, v13a, lower && !t->prepared, 1);
    if (!t->len) return 0;
    if (!t->ascii) {
        if (u8_form(&g->low, t->p, t->len) < 0) return -1;
        return scan_bytes(g, seg_token, seg_word, (const uint8_t *)g->low.p, g->low.len,
                          v13a ? CLASS_V13A_U8 : CLASS_PLAIN_U8);
    }
    const uint8_t *b = t->p;
    if (lower) {
        g->low.len = 0;
        if (bbuf_push(&g->low, b, t->len) < 0) return -1;
        uint8_t *q = (uint8_t *)g->low.p;
        for (size_t i = 0; i < t->len; i++)
            if (q[i] >= 'A' && q[i] <= 'Z') q[i] += 32;
        b = q;
    }
    return scan_bytes(g, seg_token, seg_word, b, t->len, v13a ? CLASS_V13A : CLASS_PLAIN);
}

/* ROUGE's tokens of an ASCII text (seg_scan_rouge of its str). */
static int scan_rouge_text(seg_t *g, const text_t *t) {
    if (!t->len) return 0;
    if (g->low.cap < t->len + 64) {
        size_t c = g->low.cap ? g->low.cap : 65536;
        while (c < t->len + 64) c *= 2;
        char *p = (char *)realloc(g->low.p, c);
        if (!p) return -1;
        g->low.p = p;
        g->low.cap = c;
    }
    uint8_t *o = (uint8_t *)g->low.p;
    rouge_map_u8(t->p, o, t->len);
    memset(o + t->len, ' ', 64);
    return rouge_tokens(g, o, t->len);
}

/* A call of count_bytes. */
typedef struct {
    size_t F, K, n, first, total, N;
    int mode, lowercase, want_lcs;
    PyObject *prep;
    cursor_t *cur; /* F + K */
    text_t *txt;   /* F + K: the current segment's texts */
    double *rows;
    int64_t *hyp_len, *ref_len, *hits, *lcs;
} bytes_call_t;

enum { B_DONE = 0, B_NOMEM = -1, B_ERR = -2, B_DECLINE = -3 };

/* Segment s's texts from the cursors, the str of those `prep` must make (GIL taken for them), their size in
   *ch. B_DECLINE for a ROUGE text above ASCII or a file short of lines; B_ERR with an exception (GIL held). */
static int segment_texts(bytes_call_t *a, kstate_t *ks, size_t *ch) {
    const int v13a = a->mode == MODE_V13A;
    *ch = 0;
    for (size_t f = 0; f < a->F + a->K; f++)
        if (a->txt[f].src) { /* the last segment's str: dropped with the GIL */
            k_acquire(ks);
            for (f = 0; f < a->F + a->K; f++) Py_CLEAR(a->txt[f].src);
            k_release(ks);
        }
    for (size_t f = 0; f < a->F + a->K; f++) {
        text_t *t = a->txt + f;
        if (!next_line(a->cur + f, &t->p, &t->len)) return B_DECLINE;
        t->ascii = all_ascii(t->p, t->len);
        if (a->mode == MODE_ROUGE) {
            if (!t->ascii) return B_DECLINE;
        } else {
            int need = (a->lowercase && !t->ascii) ||
                       (v13a && (t->ascii ? needs_prep_u8(t->p, t->len)
                                          : memchr(t->p, '&', t->len) || memchr(t->p, '<', t->len)));
            if (need) {
                if (a->prep == Py_None) return B_DECLINE; /* (ngrameval.scale.early: the command counts it) */
                k_acquire(ks);
                PyObject *line = PyUnicode_DecodeUTF8((const char *)t->p, (Py_ssize_t)t->len, "strict");
                t->src = line ? line_source(line, 0, v13a, a->lowercase, a->prep, &t->prepared) : NULL;
                Py_XDECREF(line);
                if (!t->src) {
                    ks->err = K_RAISED;
                    return B_ERR;
                }
                k_release(ks);
                *ch += (size_t)PyUnicode_GET_LENGTH(t->src);
                continue;
            }
        }
        *ch += t->len;
    }
    return B_DONE;
}

static int count_bytes_run(bytes_call_t *a, kstate_t *ks) {
    seg_t g = {0};
    count_t c = {0};
    rouge_t o = {0};
    bits_t bits = {0};
    size_t *ro = (size_t *)malloc((a->F + 1) * sizeof(size_t)), one[2];
    const size_t F = a->F, K = a->K, N = a->N, RT = a->total * F;
    const int rouge = a->mode == MODE_ROUGE, v13a = a->mode == MODE_V13A;
    size_t *hoff = (size_t *)malloc((K + 1) * sizeof(size_t));
    int64_t *rl = (int64_t *)malloc((F + 1) * sizeof(int64_t)), match[MAX_ORDER + 1], rmatch[MAX_ORDER + 1];
    int got = hoff && rl && ro ? B_DONE : B_NOMEM;
    for (size_t i = 0; i < a->n && got == B_DONE; i++) {
        const size_t s = a->first + i;
        size_t ch;
        if ((got = segment_texts(a, ks, &ch)) != B_DONE) break;
        if (ch >= (size_t)K_MAX_ID / (rouge ? N + 2 : 1)) {
            got = B_DECLINE; /* counts() names the bound of its characters (fewer than these bytes) */
            break;
        }
        if (seg_reset(&g, ch) < 0) {
            got = B_NOMEM;
            break;
        }
        for (size_t k = 0; k < K && got == B_DONE; k++) {
            hoff[k] = g.n;
            if ((rouge ? scan_rouge_text(&g, a->txt + F + k) : scan_text(&g, a->txt + F + k, v13a, a->lowercase)) < 0)
                got = B_NOMEM;
        }
        hoff[K] = g.n;
        g.lookup = 1;
        g.miss = g.n_ids;
        ro[0] = 0;
        for (size_t j = 0; j < F && got == B_DONE; j++) {
            if ((rouge ? scan_rouge_text(&g, a->txt + j) : scan_text(&g, a->txt + j, v13a, a->lowercase)) < 0)
                got = B_NOMEM;
            ro[j + 1] = g.n - hoff[K];
            rl[j] = (int64_t)(ro[j + 1] - ro[j]);
        }
        g.lookup = 0;
        if (got != B_DONE) break;
        const int32_t V = g.miss + 1, *r = g.ids + hoff[K];
        if (rouge) {
            if ((N && count_reserve(&c, (size_t)V + (g.n + 1) * N + 1) < 0) ||
                (a->want_lcs && rouge_room(&o, &bits, (size_t)V) < 0)) {
                got = B_NOMEM;
                break;
            }
            for (size_t j = 0; j < F; j++) a->ref_len[s * F + j] = rl[j];
            for (size_t k = 0; k < K && got == B_DONE; k++) {
                size_t H = hoff[k + 1] - hoff[k];
                const int32_t *h = g.ids + hoff[k];
                a->hyp_len[k * a->total + s] = (int64_t)H;
                for (size_t j = 0; j < F; j++) {
                    size_t pair = k * RT + s * F + j, L = ro[j + 1] - ro[j];
                    one[0] = 0;
                    one[1] = L;
                    if (N) seg_counts(&c, h, H, r + ro[j], one, 1, V, N, a->hits + pair * N, rmatch);
                    if (a->want_lcs) {
                        int64_t q = L <= H ? lcs_local(r + ro[j], L, h, H, o.pm, &bits, ks)
                                           : lcs_local(h, H, r + ro[j], L, o.pm, &bits, ks);
                        if (q < 0) {
                            got = ks->err == K_NOMEM ? B_NOMEM : B_ERR;
                            break;
                        }
                        a->lcs[pair] = q;
                    }
                }
            }
        } else {
            for (size_t k = 0; k < K; k++) {
                size_t H = hoff[k + 1] - hoff[k], n_tok = ro[F] + H;
                if (N && n_tok >= (size_t)K_MAX_ID / (N + 1)) {
                    got = B_DECLINE;
                    break;
                }
                if (N && count_reserve(&c, (size_t)V + n_tok * N + 1) < 0) {
                    got = B_NOMEM;
                    break;
                }
                if (N && (F != 1 || seg_counts_one(&c, g.ids + hoff[k], H, r, ro[1], V, N, match)))
                    seg_counts(&c, g.ids + hoff[k], H, r, ro, F, V, N, match, rmatch);
                else if (N)
                    memcpy(rmatch, match, N * sizeof(int64_t));
                stats_row(a->rows + (k * a->total + s) * (3 + 5 * N), (int64_t)H, rl, F, match, rmatch, N);
            }
        }
        if (got == B_DONE && k_poll(ks, ch * (N + 1) * (rouge ? F + 1 : 1) + 1) < 0) got = B_ERR;
    }
    seg_free(&g);
    count_free(&c);
    bits.loc = NULL; /* o.loc's */
    bits_free(&bits);
    free(o.pm); free(o.loc);
    free(ro); free(hoff); free(rl);
    return got;
}

/* A writable C-contiguous buffer of `want` items of format `fmt` ("d" or "q"); -1 with an exception. */
static int out_buffer(PyObject *obj, Py_buffer *view, const char *fmt, size_t want, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = view->format && (view->format[0] == '<' || view->format[0] == '=') ? view->format + 1 : view->format;
    int ok = f && view->itemsize == 8 && (strcmp(f, fmt) == 0 || (fmt[0] == 'q' && strcmp(f, "l") == 0)) &&
             (size_t)view->len == want * 8;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "count_bytes: %s must be a C-contiguous buffer of %zu %s", what, want,
                     fmt[0] == 'd' ? "float64" : "int64");
        return -1;
    }
    return 0;
}

static PyObject *count_bytes(PyObject *self, PyObject *args) {
    PyObject *texts, *prep, *out;
    Py_ssize_t F, n, first, total;
    int mode, lowercase, max_order, want_lcs;
    if (!PyArg_ParseTuple(args, "O!nnnnipipOO!", &PyTuple_Type, &texts, &F, &n, &first, &total, &mode, &lowercase,
                          &max_order, &want_lcs, &prep, &PyTuple_Type, &out))
        return NULL;
    Py_ssize_t T = PyTuple_GET_SIZE(texts);
    if (F < 1 || T <= F || n < 0 || first < 0 || total < first + n || mode < MODE_PLAIN || mode > MODE_ROUGE ||
        max_order < 0 || max_order > MAX_ORDER || (mode != MODE_ROUGE && prep != Py_None && !PyCallable_Check(prep)) ||
        PyTuple_GET_SIZE(out) != (mode == MODE_ROUGE ? 4 : 1)) {
        PyErr_SetString(PyExc_ValueError, "count_bytes: arguments out of range");
        return NULL;
    }
    bytes_call_t a = {.F = (size_t)F, .K = (size_t)(T - F), .n = (size_t)n, .first = (size_t)first,
                      .total = (size_t)total, .N = (size_t)max_order, .mode = mode, .lowercase = lowercase,
                      .want_lcs = want_lcs, .prep = prep};
    Py_buffer *views = (Py_buffer *)calloc((size_t)T + 4, sizeof(Py_buffer));
    a.cur = (cursor_t *)calloc((size_t)T, sizeof(cursor_t));
    a.txt = (text_t *)calloc((size_t)T, sizeof(text_t));
    PyObject *result = NULL;
    Py_ssize_t held = 0, outs = 0;
    if (!views || !a.cur || !a.txt) {
        PyErr_NoMemory();
        goto done;
    }
    for (; held < T; held++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(texts, held), views + held, PyBUF_SIMPLE) < 0) goto done;
        a.cur[held].p = (const uint8_t *)views[held].buf;
        a.cur[held].end = a.cur[held].p + views[held].len;
    }
    size_t KT = a.K * a.total, RT = a.total * a.F;
    if (mode == MODE_ROUGE) {
        const size_t want[4] = {KT, RT, a.K * RT * a.N, a.K * RT};
        const char *what[4] = {"hyp_len", "ref_len", "hits", "lcs"};
        for (; outs < 4; outs++)
            if (out_buffer(PyTuple_GET_ITEM(out, outs), views + T + outs, "q", want[outs], what[outs]) < 0) goto done;
        a.hyp_len = (int64_t *)views[T].buf;
        a.ref_len = (int64_t *)views[T + 1].buf;
        a.hits = (int64_t *)views[T + 2].buf;
        a.lcs = (int64_t *)views[T + 3].buf;
    } else {
        if (out_buffer(PyTuple_GET_ITEM(out, 0), views + T, "d", KT * (3 + 5 * a.N), "rows") < 0) goto done;
        outs = 1;
        a.rows = (double *)views[T].buf;
    }
    kstate_t ks = {0};
    k_release(&ks);
    int got = count_bytes_run(&a, &ks);
    if (got == B_NOMEM) k_nomem(&ks);
    if (k_finish(&ks) < 0 || got == B_ERR) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "count_bytes: failed");
        goto done;
    }
    result = got == B_DECLINE ? Py_False : Py_True;
    Py_INCREF(result);
done:
    if (a.txt)
        for (Py_ssize_t f = 0; f < T; f++) Py_XDECREF(a.txt[f].src);
    for (Py_ssize_t f = 0; f < held; f++) PyBuffer_Release(views + f);
    for (Py_ssize_t f = 0; f < outs; f++) PyBuffer_Release(views + T + f);
    free(views); free(a.cur); free(a.txt);
    return result;
}

/* ---- a mapped file truncated while it is read ------------------------------------------------------------- */

#define WATCHED 64
#define WATCHED_PATH 400
/* hi is written last and cleared first, so the handler never reads a half-written entry as whole */
static struct {
    volatile uintptr_t lo, hi;
    char path[WATCHED_PATH];
} watched[WATCHED];
static int watch_next;

#define FAULT_DIRS 16
/* set is written last and cleared first, as watched's hi */
static struct {
    volatile sig_atomic_t set;
    char path[WATCHED_PATH];
} fault_dirs[FAULT_DIRS];
static int fault_dir_next;

#if defined(SIGBUS) && (defined(__unix__) || defined(__APPLE__))
#if defined(__linux__)
/* Every recorded directory's entries unlinked (flat files: the spill files), then the directory removed. Entries
   are read with getdents64 (a linux_dirent64: ino 8 bytes, off 8, reclen 2, type 1, then the name); an entry
   unlinked after it was read does not hide the others. */
static void remove_dirs(void) {
    for (int i = 0; i < FAULT_DIRS; i++) {
        if (!fault_dirs[i].set) continue;
        int fd = open(fault_dirs[i].path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        union {
            char bytes[4096];
            uint64_t align;
        } buf;
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf.bytes, sizeof buf.bytes)) > 0) {
            for (long off = 0; off + 19 < n;) {
                unsigned short reclen;
                memcpy(&reclen, buf.bytes + off + 16, sizeof reclen);
                const char *name = buf.bytes + off + 19;
                if (!(name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))) unlinkat(fd, name, 0);
                if (!reclen) break;
                off += reclen;
            }
        }
        close(fd);
        rmdir(fault_dirs[i].path);
    }
}
#else
static void remove_dirs(void) {}
#endif

static void say(const char *s, size_t n) {
    while (n) {
        ssize_t w = write(2, s, n);
        if (w <= 0) return;
        s += w, n -= (size_t)w;
    }
}

static void on_bus_error(int sig, siginfo_t *info, void *context) {
    uintptr_t at = (uintptr_t)info->si_addr;
    for (int i = 0; i < WATCHED; i++) {
        uintptr_t lo = watched[i].lo, hi = watched[i].hi;
        if (!hi || at < lo || at >= hi) continue;
        char num[24], *e = num + sizeof num, *d = e;
        uintptr_t off = at - lo;
        do *--d = (char)('0' + off % 10); while ((off /= 10) != 0);
        static const char a[] = "ngrameval: error: ", b[] = ": the file was truncated while it was being read (byte ",
                          c[] = " is gone): another program changed it; nothing was written\n";
        say(a, sizeof a - 1), say(watched[i].path, strnlen(watched[i].path, WATCHED_PATH)), say(b, sizeof b - 1);
        say(d, (size_t)(e - d)), say(c, sizeof c - 1);
        remove_dirs();
        _exit(2);
    }
    struct sigaction dfl; /* not a watched file: the default action when the access faults again */
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL);
}
#endif

/* watch(buf, path) -> None: buf's bytes are path's, mapped (see the note at the top). */
static PyObject *watch(PyObject *self, PyObject *args) {
    PyObject *buf_o;
    const char *path;
    Py_ssize_t path_len;
    if (!PyArg_ParseTuple(args, "Oy#", &buf_o, &path, &path_len)) return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(buf_o, &b, PyBUF_SIMPLE) < 0) return NULL;
    uintptr_t lo = (uintptr_t)b.buf, hi = lo + (uintptr_t)b.len;
    PyBuffer_Release(&b);
    if (hi == lo) Py_RETURN_NONE;
    int slot = watch_next;
    for (int i = 0; i < WATCHED; i++) /* a range that overlaps this one was unmapped since: its slot is reused */
        if (watched[i].hi && watched[i].lo < hi && lo < watched[i].hi) slot = i;
    if (slot == watch_next) watch_next = (watch_next + 1) % WATCHED;
    watched[slot].hi = 0;
    watched[slot].lo = lo;
    size_t n = (size_t)path_len < WATCHED_PATH - 1 ? (size_t)path_len : WATCHED_PATH - 1;
    memcpy(watched[slot].path, path, n);
    watched[slot].path[n] = 0;
    watched[slot].hi = hi;
    Py_RETURN_NONE;
}

/* remove_on_fault(path) -> bool: path, a temporary directory of flat files, removed by the handler (see the note
   at the top); False when the path is too long to keep (the directory is then left, as before). */
static PyObject *remove_on_fault(PyObject *self, PyObject *args) {
    const char *path;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y#", &path, &n)) return NULL;
    if (n >= WATCHED_PATH || memchr(path, 0, (size_t)n)) Py_RETURN_FALSE;
    int slot = fault_dir_next;
    fault_dir_next = (fault_dir_next + 1) % FAULT_DIRS;
    fault_dirs[slot].set = 0;
    memcpy(fault_dirs[slot].path, path, (size_t)n);
    fault_dirs[slot].path[n] = 0;
    fault_dirs[slot].set = 1;
    Py_RETURN_TRUE;
}

/* keep_on_fault(path) -> None: path is no longer removed by the handler. */
static PyObject *keep_on_fault(PyObject *self, PyObject *args) {
    const char *path;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y#", &path, &n)) return NULL;
    for (int i = 0; i < FAULT_DIRS; i++)
        if (fault_dirs[i].set && (Py_ssize_t)strnlen(fault_dirs[i].path, WATCHED_PATH) == n &&
            !memcmp(fault_dirs[i].path, path, (size_t)n))
            fault_dirs[i].set = 0;
    Py_RETURN_NONE;
}

/* exit_on_bus_error() -> bool: the handler installed (False where there is no SIGBUS). */
static PyObject *exit_on_bus_error(PyObject *self, PyObject *unused) {
#if defined(SIGBUS) && (defined(__unix__) || defined(__APPLE__))
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_bus_error;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, NULL) < 0) return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

#define LINES_METHODS                                                                                        \
    {"lines", lines, METH_VARARGS, "Line count, plain-ness, chunk and piece offsets of a file's bytes."},      \
    {"count_bytes", count_bytes, METH_VARARGS, "BLEU-family or ROUGE counts straight from files' UTF-8 bytes."},  \
    {"watch", watch, METH_VARARGS, "Records a mapped file's bytes and path, named if it shrinks while read."},   \
    {"exit_on_bus_error", exit_on_bus_error, METH_NOARGS, "A watched file's fault: one line, exit 2 (the CLI)."},  \
    {"remove_on_fault", remove_on_fault, METH_VARARGS, "A directory of flat files a watched file's fault removes."}, \
    {"keep_on_fault", keep_on_fault, METH_VARARGS, "Forgets a directory remove_on_fault() recorded."},

#endif
