/*
 * The length of a longest common subsequence of two token-id sequences, bit-parallel (include after Python.h and
 * _hash.h): used by ngrameval._rouge (ROUGE-L of vocabulary ids) and ngrameval._direct (ROUGE-L of one segment's
 * local ids).
 */
#ifndef NGRAMEVAL_LCS_H
#define NGRAMEVAL_LCS_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The number of set bits of x (the builtin where GCC/Clang have it; else the SWAR count, e.g. MSVC). */
static inline int popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/* Scratch of lcs_length: loc[token] = its row (-1: not in the sentence); the rows of tokens occurring at
   least `dense_min` times are bit vectors in pm, the others lists of positions (pos[start[row] ..]) set into
   the bit vector `one` when needed, so memory stays linear in the sentence length. */
typedef struct {
    int32_t *loc;
    int64_t *dense;            /* per row: its bit vector's index in pm, or -1 */
    int64_t *start, *fill;     /* per row + 1: its positions in pos */
    int64_t *pos;
    uint64_t *pm, *v, *one;
    size_t row_cap, pos_cap, pm_cap, v_cap, one_cap; /* the last three in words */
} bits_t;

static void bits_free(bits_t *s) {
    free(s->loc); free(s->dense); free(s->start); free(s->fill); free(s->pos); free(s->pm); free(s->v); free(s->one);
}

static int grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    void *q = realloc(*p, need * size);
    if (!q) return -1;
    *p = q;
    *cap = need;
    return 0;
}

/* Length of an LCS of a[0..m) and b[0..n), bit-parallel (Allison & Dix 1986; Hyyro 2004): bit i of v is 0
   where the LCS row of a grows at position i; each b token updates v = (v + (v & pm)) | (v & ~pm), with
   pm the positions of that token in a. O(n m / 64) time, O(m) memory. -1 on error (k->err set). */
static int64_t lcs_length(const int32_t *a, size_t m, const int32_t *b, size_t n, bits_t *s, kstate_t *k) {
    size_t words = (m + 63) / 64, rows = 0, cap;
    int64_t zeros = -1;
    for (size_t i = 0; i < m; i++)
        if (s->loc[a[i]] < 0) s->loc[a[i]] = (int32_t)rows++;
    /* dense, start and fill share row_cap: each grows to rows + 1 before it is updated */
    cap = s->row_cap;
    if (grow((void **)&s->dense, &cap, rows + 1, sizeof(int64_t)) < 0) goto nomem;
    cap = s->row_cap;
    if (grow((void **)&s->start, &cap, rows + 1, sizeof(int64_t)) < 0) goto nomem;
    if (grow((void **)&s->fill, &s->row_cap, rows + 1, sizeof(int64_t)) < 0) goto nomem;
    if (grow((void **)&s->pos, &s->pos_cap, m ? m : 1, sizeof(int64_t)) < 0) goto nomem;
    if (grow((void **)&s->v, &s->v_cap, words, sizeof(uint64_t)) < 0) goto nomem;
    {
        /* the positions of each row, in order */
        memset(s->start, 0, (rows + 1) * sizeof(int64_t));
        for (size_t i = 0; i < m; i++) s->start[s->loc[a[i]] + 1]++;
        for (size_t q = 0; q < rows; q++) s->start[q + 1] += s->start[q];
        memcpy(s->fill, s->start, (rows + 1) * sizeof(int64_t));
        for (size_t i = 0; i < m; i++) s->pos[s->fill[s->loc[a[i]]]++] = (int64_t)i;
        /* dense rows: all when small, else the rows of >= m / 64 positions (at most 64 of them) */
        size_t dense_min = rows * words <= (1u << 16) ? 1 : (m + 63) / 64, n_dense = 0;
        for (size_t q = 0; q < rows; q++)
            s->dense[q] = (size_t)(s->start[q + 1] - s->start[q]) >= dense_min ? (int64_t)n_dense++ : -1;
        if (grow((void **)&s->pm, &s->pm_cap, n_dense * words + 1, sizeof(uint64_t)) < 0) goto nomem;
        if (grow((void **)&s->one, &s->one_cap, words + 1, sizeof(uint64_t)) < 0) goto nomem;
        memset(s->pm, 0, n_dense * words * sizeof(uint64_t));
        memset(s->one, 0, words * sizeof(uint64_t));
        for (size_t q = 0; q < rows; q++) {
            if (s->dense[q] < 0) continue;
            uint64_t *pm = s->pm + (size_t)s->dense[q] * words;
            for (int64_t e = s->start[q]; e < s->start[q + 1]; e++) pm[s->pos[e] / 64] |= 1ULL << (s->pos[e] % 64);
        }
        for (size_t q = 0; q < words; q++) s->v[q] = ~0ULL;
        for (size_t j = 0; j < n; j++) {
            int32_t r = s->loc[b[j]];
            if (r < 0) continue;
            const uint64_t *pm = s->one;
            if (s->dense[r] >= 0)
                pm = s->pm + (size_t)s->dense[r] * words;
            else
                for (int64_t e = s->start[r]; e < s->start[r + 1]; e++) s->one[s->pos[e] / 64] |= 1ULL << (s->pos[e] % 64);
            uint64_t carry = 0;
            for (size_t q = 0; q < words; q++) {
                uint64_t v = s->v[q], u = v & pm[q], x = v + u, y = x + carry;
                carry = (x < u) | (y < carry);
                s->v[q] = y | (v & ~pm[q]);
            }
            if (s->dense[r] < 0)
                for (int64_t e = s->start[r]; e < s->start[r + 1]; e++) s->one[s->pos[e] / 64] = 0;
            if (k_poll(k, words) < 0) goto reset;
        }
        zeros = 0;
        for (size_t q = 0; q < words; q++) {
            uint64_t live = q + 1 < words || m % 64 == 0 ? ~0ULL : (1ULL << (m % 64)) - 1;
            zeros += popcount64(~s->v[q] & live);
        }
    }
    goto reset;
nomem:
    k_nomem(k);
reset:
    for (size_t i = 0; i < m; i++) s->loc[a[i]] = -1;
    return zeros;
}

#endif
