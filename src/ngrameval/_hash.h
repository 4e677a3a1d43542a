/*
 * Shared by the C kernels (include after Python.h):
 *   - mix64, the 64-bit finaliser of MurmurHash3 (fmix64): spreads n-gram and skip-bigram keys over
 *     open-addressing tables;
 *   - kstate_t: runs a kernel's pure-C loops with the GIL released, re-taking it every K_POLL_WORK units of
 *     work to run PyErr_CheckSignals (so Ctrl-C stops a kernel within milliseconds), and defers the errors
 *     found without the GIL (out of memory, a documented limit) until the GIL is back;
 *   - k_raise_limit: raises ngrameval.errors.LimitError (a ValueError) with a message;
 *   - PREFETCH: asks for the cache line of an address the hardware's prefetch cannot guess (GCC, Clang).
 */
#ifndef NGRAMEVAL_HASH_H
#define NGRAMEVAL_HASH_H
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* The 32-bit ids of the kernels (tokens, n-grams, local ids) are below this. */
#define K_MAX_ID INT32_MAX

/* Work units (simple inner-loop steps) between two signal checks: a few milliseconds. */
#define K_POLL_WORK (1u << 22)

enum { K_OK = 0, K_NOMEM = 1, K_RAISED = 2, K_LIMIT = 3 };

typedef struct {
    PyThreadState *ts; /* non-NULL while the GIL is released */
    uint64_t work;     /* work units since the last signal check */
    int err;           /* K_OK, or the deferred error */
    int quiet;         /* 1: a thread other than the main one, where signals are never handled (no checks) */
    char msg[512];     /* K_LIMIT's message */
} kstate_t;

/* Whether the calling thread is known not to be the main thread. Only the main thread handles signals
   (PyErr_CheckSignals returns 0 at once anywhere else), so a kernel on a pool thread need not take the GIL back to
   check them: taken back while the main thread runs Python, it waits up to the interpreter's switch interval
   (5 ms) every time. _PyOS_IsMainThread (intrcheck.h) runs no Python code, so no pending signal is handled here;
   where it is not declared, every thread is checked as before. */
static inline int k_quiet_here(void) {
#if PY_VERSION_HEX < 0x030D0000 /* (3.13 removed many private functions: not relied on there) */
    return !_PyOS_IsMainThread();
#else
    return 0;
#endif
}

/* Releases the GIL (no Python object may be touched until k_acquire). */
static inline void k_release(kstate_t *k) {
    if (!k->ts) {
        k->quiet = k_quiet_here();
        k->ts = PyEval_SaveThread();
    }
}

static inline void k_acquire(kstate_t *k) {
    if (k->ts) {
        PyEval_RestoreThread(k->ts);
        k->ts = NULL;
    }
}

/* Checks for signals with the GIL; on an exception keeps the GIL and returns -1 (err = K_RAISED). */
static inline int k_check(kstate_t *k) {
    int released = k->ts != NULL;
    k->work = 0;
    k_acquire(k);
    if (PyErr_CheckSignals() < 0) {
        k->err = K_RAISED;
        return -1;
    }
    if (released) k_release(k);
    return 0;
}

/* Counts `units` of work; every K_POLL_WORK units checks for signals. -1 when interrupted. */
static inline int k_poll(kstate_t *k, uint64_t units) {
    k->work += units;
    if (k->work < K_POLL_WORK) return 0;
    if (k->quiet) {
        k->work = 0;
        return 0;
    }
    return k_check(k);
}

/* Records an out-of-memory error (callable without the GIL); returns -1. */
static inline int k_nomem(kstate_t *k) {
    k->err = K_NOMEM;
    return -1;
}

/* Records a LimitError with a printf-style message (callable without the GIL); returns -1. */
static inline int k_limit(kstate_t *k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->msg, sizeof k->msg, fmt, ap);
    va_end(ap);
    k->err = K_LIMIT;
    return -1;
}

/* Raises ngrameval.errors.LimitError(msg) (ValueError when that cannot be imported). GIL held. */
static inline void k_raise_limit(const char *msg) {
    PyObject *mod = PyImport_ImportModule("ngrameval.errors");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "LimitError") : NULL;
    Py_XDECREF(mod);
    if (!cls) {
        PyErr_Clear();
        cls = PyExc_ValueError;
        Py_INCREF(cls);
    }
    PyErr_SetString(cls, msg);
    Py_DECREF(cls);
}

/* Takes the GIL back and raises the deferred error, if any; -1 when an exception is set. */
static inline int k_finish(kstate_t *k) {
    k_acquire(k);
    switch (k->err) {
    case K_NOMEM: PyErr_NoMemory(); return -1;
    case K_LIMIT: k_raise_limit(k->msg); return -1;
    case K_RAISED: return -1;
    default: return 0;
    }
}

#endif
