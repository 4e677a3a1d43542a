/*
 * ngrameval._direct: BLEU-family n-gram statistics straight from the lines, one segment at a time, without
 * a vocabulary.
 *
 * A segment's texts (each system's hypothesis, then its references) are scanned by the v13a or plain rules of
 * _scan.h, and the hypotheses' tokens interned in a table of that segment alone (a few dozen entries, in cache), so
 * two tokens get the same local id exactly when their characters are equal; a reference token is only looked up
 * (one shared id when no hypothesis holds it: it cannot match). Counting then goes order by order
 * over local ids and keeps only the n-grams that can match. An n-gram g that occurs in the hypothesis and in
 * a reference (a *common* n-gram) has a common prefix and a common suffix, both of order n - 1, and so does
 * every occurrence of g on either side; so the n-grams of order n are interned only at the positions whose
 * two (n - 1)-grams are common, and every occurrence of every common n-gram is counted. The others add 0 to
 *
 *   match[n]  = sum over hyp n-grams g of min(count_hyp(g), max over refs of count_ref(g))
 *   rmatch[n] = sum over refs r, n-grams g of r of min(count_r(g), count_hyp(g))
 *
 * the same numbers as ngrameval._overlap.overlap on the vocabulary's ids. When order n has no common n-gram,
 * no higher order has one. A segment with one reference (rmatch = match then) is counted without n-gram tables
 * (seg_counts_one): each hypothesis position is compared with the positions of its token on both sides.
 *
 * counts(systems, refs, mode, lowercase, max_order, prep)
 *     -> (hyp_len int64[K*S], ref_len int64[R], seg int64[S + 1], match int64[K*S*N], rmatch int64[K*S*N])
 *   systems: K sequences of S str; refs: S items, each the references of a segment (a str, or a list or tuple of
 *   str), R in all: those of segment s have ref_len[seg[s] .. seg[s + 1]). mode 0 (split as it is) or 1
 *   (mteval-v13a), lowercase and prep as in ngrameval._text.encode_lines. Any str is counted here: a segment
 *   with a text of wider characters (a code point above 255, after prep) is scanned in UTF-8 form (seg_scan).
 *   max_order 0 only tokenizes (the lengths; benchmarks/bench_bleu.py times it so).
 * counts(systems, refs, mode, lowercase, max_order, prep, rows) -> None
 *   the same counting, written as ngrameval.ngrams.stats.Stats rows into `rows` (a writable C-contiguous float64
 *   buffer of K * S * (3 + 5 * max_order) values, system-major; info columns 0): no intermediate arrays.
 *
 * ascii(seq) -> whether every item of seq is a str of ASCII characters only (str.isascii of each, in one C loop).
 * sizes(seq) -> the distinct len() of the items of seq, sorted (one C pass when they are all equal).
 * layout(seq) -> 0 when every item of seq is a str, 1 when every item is a non-empty list of str, else 2 (the
 *   fast answer to the argument checks of ngrameval.text.validate; exact types, as type(x) is str).
 * The GIL is released while segments are scanned and counted (in chunks), and signals are checked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_hash.h"
#include "_lcs.h"
#include "_scan.h"

#define MAX_ORDER 100 /* as ngrameval._overlap */

static uint8_t RMAP[256]; /* ROUGE's characters below 256 (rouge_char), every other one a space */

/* ---- one segment's tokens ---------------------------------------------------------------------------- */

typedef struct {
    uint64_t key, h;
    uint64_t w0, w1; /* a long token's first and last 8 bytes (the whole token up to 16 bytes) */
    size_t at, len;  /* a long token's bytes past 16: bytes.p[at .. at + len) */
} token_t;

typedef struct {
    int32_t *slots;  /* token ids; -1 where free: slots 0 .. mask in use by this segment */
    size_t cap, mask; /* slots allocated (a power of two); mask + 1 <= cap, at least twice the distinct tokens */
    size_t *used;    /* per token id, its slot (to free them for the next segment) */
    token_t *tok;    /* per token id */
    size_t tcap;     /* room in used and tok */
    size_t grow_at;  /* a new token past this many grows the table first: min((mask + 1) / 2, tcap) */
    int32_t n_ids;   /* distinct tokens so far */
    bbuf_t bytes;    /* long tokens' bytes */
    int32_t *ids;    /* token ids of the texts scanned so far (at most one per character) */
    size_t n, icap;
    ubuf_t a, b;     /* rules 2-4 */
    int lookup;      /* seg_token only looks tokens up: a token new to the table gets id `miss` (counts' references,
                        scanned after the hypotheses: a token no hypothesis has cannot match) */
    int32_t miss;
    bbuf_t low, word; /* a lower-cased line (or a line's UTF-8 form, utf8_line); a token of a rule word as bytes */
} seg_t;

/* The distinct tokens a segment's table is first sized for (its characters, up to this): an ordinary segment never
   grows its table; a huge one grows it with its distinct tokens, not its characters. */
#define FIRST_TOKENS ((size_t)1 << 16)

/* Resizes slots to `slots` (a power of two) in use and puts every token back; -1 on OOM. */
static int seg_rehash(seg_t *g, size_t slots) {
    if (slots > g->cap) {
        int32_t *s = (int32_t *)realloc(g->slots, slots * sizeof(int32_t));
        if (!s) return -1;
        g->slots = s;
        g->cap = slots;
    }
    g->mask = slots - 1;
    g->grow_at = (g->mask + 1) / 2 < g->tcap ? (g->mask + 1) / 2 : g->tcap;
    for (size_t j = 0; j <= g->mask; j++) g->slots[j] = -1;
    for (int32_t q = 0; q < g->n_ids; q++) {
        size_t j = (size_t)g->tok[q].h & g->mask;
        while (g->slots[j] >= 0) j = (j + 1) & g->mask;
        g->slots[j] = q;
        g->used[q] = j;
    }
    return 0;
}

/* Room in used and tok for `tcap` distinct tokens; -1 on OOM. */
static int seg_tokens(seg_t *g, size_t tcap) {
    size_t *u = (size_t *)realloc(g->used, tcap * sizeof(size_t));
    if (!u) return -1;
    g->used = u;
    token_t *tok = (token_t *)realloc(g->tok, tcap * sizeof(token_t));
    if (!tok) return -1;
    g->tok = tok;
    g->tcap = tcap;
    g->grow_at = (g->mask + 1) / 2 < tcap ? (g->mask + 1) / 2 : tcap;
    return 0;
}

/* Room for a segment of at most `chars` characters (so at most `chars` tokens), its table cleared; -1 on OOM. */
static int seg_reset(seg_t *g, size_t chars) {
    for (int32_t q = 0; q < g->n_ids; q++) g->slots[g->used[q]] = -1;
    g->n_ids = 0;
    g->bytes.len = 0;
    g->n = 0;
    if (g->icap < chars + 1) {
        int32_t *ids = (int32_t *)realloc(g->ids, (chars + 1) * sizeof(int32_t));
        if (!ids) return -1;
        g->ids = ids;
        g->icap = chars + 1;
    }
    size_t first = (chars < FIRST_TOKENS ? chars : FIRST_TOKENS) + 1, slots = 64;
    while (slots < 2 * first) slots *= 2;
    if (g->tcap < first && seg_tokens(g, first) < 0) return -1;
    if (slots > g->cap) {
        int32_t *s = (int32_t *)realloc(g->slots, slots * sizeof(int32_t));
        if (!s) return -1;
        memset(s, 0xff, slots * sizeof(int32_t));
        g->slots = s;
        g->cap = slots;
    }
    g->mask = slots - 1; /* every slot is free: the used ones were just cleared */
    g->grow_at = (g->mask + 1) / 2 < g->tcap ? (g->mask + 1) / 2 : g->tcap;
    return 0;
}

/* Room for one more distinct token: tok and used grown, the table doubled past half full; -1 on OOM. */
static int seg_room(seg_t *g) {
    if ((size_t)g->n_ids + 1 > g->tcap && seg_tokens(g, g->tcap * 2) < 0) return -1;
    return ((size_t)g->n_ids + 1) * 2 > g->mask + 1 ? seg_rehash(g, (g->mask + 1) * 2) : 0;
}

/* The hash of a long token s[0..n) (n > 7) within one segment's table: 8 bytes a step (one multiply each, not one
   per byte as hash_tok_u8), the last 1-8 as short_key reads them (`end` bounds what may be read past s + n).
   Only equal bytes must hash alike: the table compares a long token's bytes on a hash hit. */
static inline uint64_t hash_long(const uint8_t *s, size_t n, const uint8_t *end) {
    uint64_t h = HASH_SEED ^ (uint64_t)n, w;
    size_t i = 0;
    for (; i + 8 < n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = n - i == 8 ? 0 : short_key(s + i, n - i, end); /* n - i is 1..8 */
    if (n - i == 8) memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

/* The hash of a token s[0..n) of 8 to 16 bytes, its first and last 8 bytes w0 and w1 (which overlap below 16): two
   multiplies. */
static inline uint64_t hash_mid(uint64_t w0, uint64_t w1, size_t n) {
    uint64_t h = (w0 ^ (uint64_t)n) * 0xff51afd7ed558ccdULL;
    h = (h ^ (h >> 32) ^ w1) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

/* scan_bytes' token sink: the token's local id (a new one when its characters are new to the segment). A long token
   (8 bytes or more) is compared by its length, hash, first and last 8 bytes, and only past 16 bytes by the bytes
   between them (kept in g->bytes): no call to memcmp for most. */
static ALWAYS_INLINE int seg_token(void *sink, const uint8_t *s, size_t n, const uint8_t *end) {
    seg_t *g = (seg_t *)sink;
    /* a table of a few hundred slots: one multiply spreads a short token's key (its bytes) well enough */
    uint64_t key, h, w0 = 0, w1 = 0;
    if (n <= 7) {
        key = short_key(s, n, end);
        h = (key * 0x9e3779b97f4a7c15ULL) >> 32;
    } else {
        key = LONG_TOKEN;
        memcpy(&w0, s, 8);
        memcpy(&w1, s + n - 8, 8);
        h = n <= 16 ? hash_mid(w0, w1, n) : hash_long(s, n, end);
    }
    size_t j = (size_t)h & g->mask;
    int32_t id;
    for (;; j = (j + 1) & g->mask) {
        id = g->slots[j];
        if (id < 0) {
            if (g->lookup) {
                id = g->miss;
                break;
            }
            if ((size_t)g->n_ids >= g->grow_at) { /* past half full, or no room in tok */
                if (seg_room(g) < 0) return -1; /* a segment past FIRST_TOKENS distinct tokens */
                j = (size_t)h & g->mask;
                while (g->slots[j] >= 0) j = (j + 1) & g->mask;
            }
            token_t *e = g->tok + g->n_ids;
            if (n > 16) {
                e->at = g->bytes.len;
                if (bbuf_push(&g->bytes, s + 8, n - 16) < 0) return -1;
            }
            e->w0 = w0;
            e->w1 = w1;
            e->key = key;
            e->h = h;
            e->len = n;
            g->used[g->n_ids] = j;
            g->slots[j] = id = g->n_ids++;
            break;
        }
        const token_t *e = g->tok + id;
        if (e->key == key && (key != LONG_TOKEN || (e->h == h && e->len == n && e->w0 == w0 && e->w1 == w1 &&
                                                     (n <= 16 || !memcmp(g->bytes.p + e->at, s + 8, n - 16)))))
            break;
    }
    g->ids[g->n++] = id;
    return 0;
}

/* scan_bytes' word sink: rules 2-4, then each piece (the word's bytes, split at the spaces the rules put in: a word
   holds no whitespace, and a byte of a UTF-8 form such as 0xA0 is not one). */
static int seg_word(void *sink, const uint8_t *w, size_t n) {
    seg_t *g = (seg_t *)sink;
    if (rules_on_word(w, n, &g->a, &g->b) < 0) return -1;
    const Py_UCS4 *s = g->b.p;
    size_t len = g->b.len, i = 0;
    g->word.len = 0;
    if (bbuf_push(&g->word, w, n) < 0) return -1; /* room for any piece: no piece is longer than the word */
    uint8_t *piece = (uint8_t *)g->word.p;
    while (i < len) {
        while (i < len && s[i] == ' ') i++;
        size_t a = i;
        while (i < len && s[i] != ' ') i++;
        if (i > a) {
            for (size_t k = a; k < i; k++) piece[k - a] = (uint8_t)s[k];
            if (seg_token(g, piece, i - a, piece + (i - a)) < 0) return -1;
        }
    }
    return 0;
}

/* The tokens of a line (lower-cased first when `lower`: an ASCII line, as line_source leaves it). In a segment
   whose texts are all 1-byte str (`u8` 0) a line is scanned as its Latin-1 bytes; in any other segment (`u8` 1)
   every line is scanned in its UTF-8 form (utf8_line; an ASCII line is its own), so that equal tokens of a
   segment are equal bytes whatever the kind of the str that held them. */
static int seg_scan(seg_t *g, PyObject *line, int v13a, int lower, int u8) {
    size_t len = (size_t)PyUnicode_GET_LENGTH(line);
    if (!len) return 0;
    const uint8_t *b = (const uint8_t *)PyUnicode_DATA(line);
    if (u8) {
        if (!PyUnicode_IS_ASCII(line)) {
            if (utf8_line(&g->low, line, lower) < 0) return -1;
            return scan_bytes(g, seg_token, seg_word, (const uint8_t *)g->low.p, g->low.len,
                              v13a ? CLASS_V13A_U8 : CLASS_PLAIN_U8);
        }
    }
    if (lower) {
        g->low.len = 0;
        if (bbuf_push(&g->low, b, len) < 0) return -1;
        uint8_t *p = (uint8_t *)g->low.p;
        for (size_t i = 0; i < len; i++)
            if (p[i] >= 'A' && p[i] <= 'Z') p[i] += 32;
        b = p;
    }
    return scan_bytes(g, seg_token, seg_word, b, len, v13a ? CLASS_V13A : CLASS_PLAIN);
}

static void seg_free(seg_t *g) {
    free(g->slots); free(g->used); free(g->tok); free(g->ids); free(g->bytes.p); free(g->a.p); free(g->b.p); free(g->low.p);
    free(g->word.p);
}

/* ---- counting one segment ------------------------------------------------------------------------------ */

#define EMPTY_KEY UINT64_MAX

/* N-gram ids of a segment: a unigram's is its token's local id (below V); a longer n-gram's is V + its rank
   among them, interned by the key (id of its (n-1)-gram prefix, last token id), so keys of different orders
   never meet. */
typedef struct {
    /* per n-gram id */
    int32_t *cmax, *rc, *rstamp, *hc, *hlist, *rlist, *pair_id, *pair_cnt;
    int8_t *order;
    uint8_t *in_hyp; /* per token id: occurs in the hypothesis */
    /* n-grams of order >= 2 */
    uint64_t *keys;
    int32_t *vals;
    size_t *used, n_used, cap, room;
    size_t mask; /* this segment's part of the table: slots 0 .. mask (a power of two minus one, < cap) */
} count_t;

/* Room for `need` n-gram ids (and a table of at least 2 * need slots). */
static int count_reserve(count_t *c, size_t need) {
    if (need <= c->room) return 0;
    size_t room = 64, cap;
    while (room < need) room *= 2;
    cap = 2 * room;
#define GROW(f, type, n)                                     \
    do {                                                     \
        type *p = (type *)realloc(c->f, (n) * sizeof(type)); \
        if (!p) return -1;                                   \
        c->f = p;                                            \
    } while (0)
    GROW(cmax, int32_t, room); GROW(rc, int32_t, room); GROW(rstamp, int32_t, room); GROW(hc, int32_t, room);
    GROW(hlist, int32_t, room); GROW(rlist, int32_t, room); GROW(pair_id, int32_t, room);
    GROW(pair_cnt, int32_t, room); GROW(order, int8_t, room); GROW(in_hyp, uint8_t, room);
    GROW(keys, uint64_t, cap); GROW(vals, int32_t, cap); GROW(used, size_t, cap);
#undef GROW
    for (size_t j = 0; j < cap; j++) c->keys[j] = EMPTY_KEY;
    c->n_used = 0;
    c->cap = cap;
    c->room = room;
    return 0;
}

static void count_free(count_t *c) {
    free(c->cmax); free(c->rc); free(c->rstamp); free(c->hc); free(c->hlist); free(c->rlist); free(c->pair_id);
    free(c->pair_cnt); free(c->order); free(c->in_hyp); free(c->keys); free(c->vals); free(c->used);
}

static inline size_t gram_slot(const count_t *c, uint64_t key) {
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & c->mask;
}

/* The id of the n-gram (prefix id, token id) of order n + 1, a new one (counts zeroed) when it is new. */
static inline int32_t gram_add(count_t *c, int32_t prefix, int32_t tok, int32_t *G, size_t n) {
    uint64_t key = (uint64_t)(uint32_t)prefix << 32 | (uint32_t)tok;
    size_t j = gram_slot(c, key);
    while (c->keys[j] != EMPTY_KEY) {
        if (c->keys[j] == key) return c->vals[j];
        j = (j + 1) & c->mask;
    }
    int32_t id = (*G)++;
    c->keys[j] = key;
    c->vals[j] = id;
    c->used[c->n_used++] = j;
    c->cmax[id] = c->hc[id] = 0;
    c->rstamp[id] = -1;
    c->order[id] = (int8_t)n;
    return id;
}

/* The id of the n-gram (prefix id, token id), or -1 when no reference has it. */
static inline int32_t gram_find(const count_t *c, int32_t prefix, int32_t tok) {
    uint64_t key = (uint64_t)(uint32_t)prefix << 32 | (uint32_t)tok;
    size_t j = gram_slot(c, key);
    while (c->keys[j] != EMPTY_KEY) {
        if (c->keys[j] == key) return c->vals[j];
        j = (j + 1) & c->mask;
    }
    return -1;
}

/* match[n], rmatch[n] (n < N) of hypothesis h[0..H) against the references r[ro[j] .. ro[j + 1]) (j < R), token
   ids below V; count_reserve must have made room for V + (ro[R] + H) * N ids. A reference n-gram is interned only
   while its tokens occur in the hypothesis (no other can match), a hypothesis n-gram looked up only while its
   prefix is a reference n-gram. */
static void seg_counts(count_t *c, const int32_t *h, size_t H, const int32_t *r, const size_t *ro, size_t R, int32_t V,
                       size_t N, int64_t *match, int64_t *rmatch) {
    for (size_t q = 0; q < c->n_used; q++) c->keys[c->used[q]] = EMPTY_KEY;
    c->n_used = 0;
    size_t slots = 64; /* at least twice the n-grams of order >= 2 the references can add */
    while (slots < 2 * (ro[R] * (N - 1) + 1) && slots < c->cap) slots *= 2;
    c->mask = slots - 1;
    memset(c->in_hyp, 0, (size_t)V);
    memset(c->cmax, 0, (size_t)V * sizeof(int32_t));
    memset(c->hc, 0, (size_t)V * sizeof(int32_t));
    memset(c->rstamp, 0xff, (size_t)V * sizeof(int32_t));
    memset(c->order, 0, (size_t)V);
    for (size_t i = 0; i < H; i++) c->in_hyp[h[i]] = 1;
    int32_t G = V;
    size_t n_pairs = 0;
    const int single = R == 1; /* its counts are the maxima, and the recall side equals the precision side */
    for (size_t j = 0; j < R; j++) {
        size_t nr = 0, e = ro[j + 1];
        for (size_t p = ro[j]; p < e; p++) {
            int32_t id = -1;
            for (size_t n = 0; n < N && p + n < e; n++) {
                int32_t tok = r[p + n];
                if (!c->in_hyp[tok]) break;
                id = n ? gram_add(c, id, tok, &G, n) : tok;
                if (single) {
                    c->cmax[id]++;
                } else {
                    if (c->rstamp[id] != (int32_t)j) {
                        c->rstamp[id] = (int32_t)j;
                        c->rc[id] = 0;
                        c->rlist[nr++] = id;
                    }
                    c->rc[id]++;
                }
            }
        }
        for (size_t q = 0; q < nr; q++) {
            int32_t id = c->rlist[q], k = c->rc[id];
            c->pair_id[n_pairs] = id;
            c->pair_cnt[n_pairs++] = k;
            if (k > c->cmax[id]) c->cmax[id] = k;
        }
    }
    size_t nh = 0;
    for (size_t i = 0; i < H; i++) {
        int32_t id = -1;
        for (size_t n = 0; n < N && i + n < H; n++) {
            id = n ? gram_find(c, id, h[i + n]) : h[i];
            if (id < 0 || !c->cmax[id]) break; /* no longer n-gram from here is a reference n-gram */
            c->hlist[nh] = id; /* kept (nh moves on) at its first occurrence only: no branch to mispredict */
            nh += c->hc[id]++ == 0;
        }
    }
    memset(match, 0, N * sizeof(int64_t));
    memset(rmatch, 0, N * sizeof(int64_t));
    for (size_t q = 0; q < nh; q++) {
        int32_t id = c->hlist[q], hc = c->hc[id], m = c->cmax[id];
        match[c->order[id]] += hc < m ? hc : m;
    }
    if (single) {
        memcpy(rmatch, match, N * sizeof(int64_t));
        return;
    }
    for (size_t q = 0; q < n_pairs; q++) {
        int32_t id = c->pair_id[q], k = c->pair_cnt[q], hc = c->hc[id];
        rmatch[c->order[id]] += k < hc ? k : hc;
    }
}

/* a[0..n) = 0 for a tally of at least 8 entries: the usual n <= 8 (orders up to 7) as one fixed-size store, not a
   call to memset */
static inline void zero_counts(int32_t *a, size_t n) {
    if (n <= 8)
        memset(a, 0, 8 * sizeof(int32_t));
    else
        memset(a, 0, n * sizeof(int32_t));
}

/* match[n] (n < N) of hypothesis h[0..H) against one reference r[0..L) (token ids below V; room in c's arrays for
   V ids and H + L positions), without an n-gram table: the n-gram of order n at hypothesis position i occurs at
   reference position p exactly when the two sequences agree for n tokens from i and p, so each position i whose
   token the reference holds is compared with the reference positions of its token (the length of agreement, up to
   N, gives every order at once: count_ref of each order is the number of those reaching it) and with the other
   hypothesis positions of its token (count_hyp; and an earlier one reaching order n means the n-gram was counted
   there already). Every distinct hypothesis n-gram thus adds min(count_hyp, count_ref) once, at its first
   occurrence: match[n] exactly as seg_counts counts it. The comparisons grow with the square of a token's
   repeats, so a segment whose comparisons number above 8 (H + L) + 64 is left to seg_counts (return 1; else 0).
   A token held once on each side (the common case) needs one comparison and no tally. */
static int seg_counts_one(count_t *c, const int32_t *h, size_t H, const int32_t *r, size_t L, int32_t V, size_t N,
                          int64_t *match) {
    /* per token id its first position on each side (-1: none), per position the next one of its token */
    int32_t *hfirst = c->hc, *rfirst = c->rc, *hnext = c->hlist, *rnext = c->rlist;
    memset(hfirst, 0xff, (size_t)V * sizeof(int32_t));
    memset(rfirst, 0xff, (size_t)V * sizeof(int32_t));
    for (size_t i = H; i-- > 0;) {
        hnext[i] = hfirst[h[i]];
        hfirst[h[i]] = (int32_t)i;
    }
    for (size_t p = L; p-- > 0;) {
        rnext[p] = rfirst[r[p]];
        rfirst[r[p]] = (int32_t)p;
    }
    memset(match, 0, N * sizeof(int64_t));
    const size_t bound = 8 * (H + L) + 64;
    size_t pairs = 0;
    int32_t crl[MAX_ORDER + 1], chl[MAX_ORDER + 1]; /* how many positions agree with i for exactly l tokens */
    /* the hypothesis positions whose token the reference holds, listed without a branch (whether a token is in the
       reference is a coin toss the CPU cannot predict) */
    int32_t *at = c->pair_id;
    size_t n_at = 0;
    for (size_t i = 0; i < H; i++) {
        at[n_at] = (int32_t)i;
        n_at += rfirst[h[i]] >= 0;
    }
    for (size_t k = 0; k < n_at; k++) {
        const size_t i = (size_t)at[k];
        const int32_t t = h[i], p0 = rfirst[t];
        const size_t top = N < H - i ? N : H - i;
        const int once = hfirst[t] == (int32_t)i && hnext[i] < 0; /* the hypothesis holds t at i only */
        if (once && rnext[p0] < 0) { /* and the reference once: each order it agrees for occurs once on both sides */
            /* the length l of agreement and the orders it adds to, in loops of a fixed count (top: N but at the end) */
            size_t p = (size_t)p0, lim = top < L - p ? top : L - p, l = 1, alive = 1;
            for (size_t n = 1; n < lim; n++) {
                alive &= h[i + n] == r[p + n];
                l += alive;
            }
            for (size_t n = 0; n < top; n++) match[n] += n < l;
            continue;
        }
        size_t best = 0, seen = 0;
        zero_counts(crl, top + 1);
        for (int32_t q = p0; q >= 0; q = rnext[q]) {
            size_t p = (size_t)q, lim = top < L - p ? top : L - p, l = 1;
            while (l < lim && h[i + l] == r[p + l]) l++;
            crl[l]++;
            best = l > best ? l : best;
            pairs++;
        }
        zero_counts(chl, best + 1);
        if (!once)
            for (int32_t q = hfirst[t]; q >= 0; q = hnext[q]) { /* (q ascending: the earlier positions first) */
                size_t j = (size_t)q, lim = best < H - j ? best : H - j, l = 1;
                pairs++;
                if (j == i) continue;
                while (l < lim && h[i + l] == h[j + l]) l++;
                if (j < i && l == best) { /* every order i's n-grams match in was counted at j: i adds nothing */
                    seen = best;
                    break;
                }
                chl[l]++;
                if (j < i && l > seen) seen = l; /* the orders up to l were counted at j */
            }
        if (pairs > bound) return 1;
        int32_t cr = 0, ch = 1;
        for (size_t n = best; n > seen; n--) {
            cr += crl[n];
            ch += chl[n];
            match[n - 1] += ch < cr ? ch : cr;
        }
    }
    return 0;
}

/* ---- the call ------------------------------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t K, S, R, N;
    PyObject **sys; /* K lists or tuples of S str (PySequence_Fast: the caller's own list, not a copy) */
    PyObject *refs; /* a list or tuple of S items (PySequence_Fast): a str, or a list or tuple of str */
    int64_t *seg;
    int64_t *hyp_len, *ref_len, *match, *rmatch;
    uint8_t *wide; /* per segment: a text of it is not a 1-byte str (scanned in UTF-8 form) */
    double *rows;  /* counts' `rows` (K x S rows of 3 + 5N: ngrameval.ngrams.stats.Stats), or NULL */
} call_t;

/* Release what a call holds: its system tuples and arrays (the rows buffer is the caller's). */
static void call_free(call_t *a) {
    if (a->sys)
        for (Py_ssize_t k = 0; k < a->K; k++) Py_XDECREF(a->sys[k]);
    free(a->sys); free(a->seg); free(a->hyp_len); free(a->ref_len); free(a->match); free(a->rmatch); free(a->wide);
}

/* A chunk of segments' sources (strong references), gathered with the GIL: per segment its references, then
   one hypothesis per system. */
typedef struct {
    PyObject **src;
    int *prepared;
    size_t n, cap;
} sources_t;

static int sources_push(sources_t *q, PyObject *s, int prepared) {
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 1024;
        PyObject **p = (PyObject **)realloc(q->src, cap * sizeof(PyObject *));
        if (!p) return -1;
        q->src = p;
        int *f = (int *)realloc(q->prepared, cap * sizeof(int));
        if (!f) return -1;
        q->prepared = f;
        q->cap = cap;
    }
    q->src[q->n] = s;
    q->prepared[q->n++] = prepared;
    return 0;
}

static void sources_clear(sources_t *q) {
    for (; q->n; q->n--) Py_DECREF(q->src[q->n - 1]);
}

/* Whether the systems and the references (the caller's lists, not copies) still have the sizes parse found: Python
   code (prep, a signal handler, another thread while the GIL is released) could have changed them. -1 with an
   exception when not. */
static int call_unchanged(const call_t *a) {
    int same = PySequence_Fast_GET_SIZE(a->refs) == a->S;
    for (Py_ssize_t k = 0; same && k < a->K; k++) same = PySequence_Fast_GET_SIZE(a->sys[k]) == a->S;
    if (same) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the systems or the references changed size during the call");
    return -1;
}

/* Reference j of segment s (borrowed); NULL with an exception when its list changed since parse (prep is Python
   code: it could). */
static PyObject *ref_item(const call_t *a, Py_ssize_t s, Py_ssize_t j) {
    PyObject *item = PySequence_Fast_GET_ITEM(a->refs, s);
    Py_ssize_t n = PyUnicode_Check(item) ? 1 : PyList_Check(item) ? PyList_GET_SIZE(item)
                                           : PyTuple_Check(item)  ? PyTuple_GET_SIZE(item)
                                                                  : -1;
    if (PyUnicode_Check(item) && n == a->seg[s + 1] - a->seg[s]) return item;
    if (n != a->seg[s + 1] - a->seg[s] || PyUnicode_Check(item)) {
        PyErr_Format(PyExc_RuntimeError, "the references of segment %zd changed during the call", s + 1);
        return NULL;
    }
    return PyList_Check(item) ? PyList_GET_ITEM(item, j) : PyTuple_GET_ITEM(item, j);
}

/* The texts a few segments after s on their way to the cache while gather reads segment s, in stages as they are
   reached (a reference list 8 ahead, its item array 4 ahead, then the str objects 2 ahead, whose addresses are then
   in the cache): the lists and str objects of a corpus lie anywhere in memory. Reads nothing it has not checked. */
static inline void gather_ahead(const call_t *a, Py_ssize_t s) {
    if (s + 8 < a->S) PREFETCH(PySequence_Fast_GET_ITEM(a->refs, s + 8));
    if (s + 4 < a->S) {
        PyObject *item = PySequence_Fast_GET_ITEM(a->refs, s + 4);
        if (PyList_CheckExact(item)) PREFETCH(((PyListObject *)item)->ob_item);
    }
    if (s + 2 >= a->S) return;
    PyObject *item = PySequence_Fast_GET_ITEM(a->refs, s + 2);
    if (PyList_CheckExact(item) && PyList_GET_SIZE(item)) item = PyList_GET_ITEM(item, 0);
    const char *o = (const char *)item;
    PREFETCH(o);
    PREFETCH(o + 64);
    PREFETCH(o + 128);
    for (Py_ssize_t k = 0; k < a->K; k++) {
        o = (const char *)PySequence_Fast_GET_ITEM(a->sys[k], s + 2);
        PREFETCH(o);
        PREFETCH(o + 64);
        PREFETCH(o + 128);
    }
}

/* Segments first .. *stop (exclusive) of the next chunk: their sources and character counts; -1 with an
   exception. */
static int gather(const call_t *a, sources_t *q, Py_ssize_t first, Py_ssize_t *stop, size_t *chars, int v13a,
                  int lowercase, PyObject *prep) {
    /* prep None: ROUGE's sources (rouge_source; lowercase is its full_lower) */
    Py_ssize_t s = first, total = 0;
    if (call_unchanged(a) < 0) return -1;
    for (; s < a->S && (s == first || (q->n < CHUNK_TEXTS && total < CHUNK_CHARS)); s++) {
        gather_ahead(a, s);
        size_t here = 0;
        int wide = 0;
        for (Py_ssize_t t = a->seg[s]; t < a->seg[s + 1] + a->K; t++) {
            int is_ref = t < a->seg[s + 1];
            PyObject *line = is_ref ? ref_item(a, s, t - a->seg[s]) : PySequence_Fast_GET_ITEM(a->sys[t - a->seg[s + 1]], s);
            if (!line) return -1;
            int prepared = 0;
            PyObject *src = prep == Py_None ? rouge_source(line, is_ref ? t : s, lowercase)
                                            : line_source(line, is_ref ? t : s, v13a, lowercase, prep, &prepared);
            if (!src || (prepared && call_unchanged(a) < 0)) { /* (prep ran Python code) */
                Py_XDECREF(src);
                return -1;
            }
            if (sources_push(q, src, prepared) < 0) {
                Py_DECREF(src);
                PyErr_NoMemory();
                return -1;
            }
            wide |= PyUnicode_KIND(src) != PyUnicode_1BYTE_KIND;
            here += (size_t)PyUnicode_GET_LENGTH(src);
        }
        a->wide[s] = (uint8_t)wide;
        chars[s - first] = here;
        total += (Py_ssize_t)here;
    }
    *stop = s;
    return 0;
}

static int seg_scan_rouge(seg_t *g, PyObject *text, int *nl);

/* Segment s's table reset for its `ch` characters (a LimitError in `ks` from `bound` up) and room in ro for its
   R references; -1 on OOM, -2 with the error in `ks`. */
static int seg_begin(seg_t *g, size_t **ro, size_t *ro_cap, size_t R, size_t ch, size_t bound, Py_ssize_t s,
                     kstate_t *ks) {
    if (ch >= bound) {
        k_limit(ks, "segment %zd: %zu characters, above the 32-bit id bound of the counting kernel; split it",
                s + 1, ch);
        return -2;
    }
    if (seg_reset(g, ch) < 0) return -1;
    if (R + 1 > *ro_cap) {
        size_t *p = (size_t *)realloc(*ro, (R + 1) * sizeof(size_t));
        if (!p) return -1;
        *ro = p;
        *ro_cap = R + 1;
    }
    return 0;
}

/* Segment s's hypotheses (q->src[*at + R + k], k < K) scanned into its table at ids[hoff[k] .. hoff[k + 1]), then
   its references (q->src[*at ..], *at moved past all of them) with lookups only: a reference token that no
   hypothesis holds cannot be part of a match, so it gets the one id `miss` (the next free id, in no
   hypothesis) instead of its own; the references' token offsets from ids + hoff[K] in ro[0 .. R], their lengths
   in ref_len. By seg_scan, or with `nl` (ROUGE) by seg_scan_rouge (inlined: each caller's branch is fixed). -1 on
   OOM. */
static ALWAYS_INLINE int scan_segment(const call_t *a, const sources_t *q, Py_ssize_t s, int v13a, int lowercase,
                                      int *nl, seg_t *g, size_t *ro, size_t *hoff, size_t *at) {
    const size_t R = (size_t)(a->seg[s + 1] - a->seg[s]), K = (size_t)a->K;
    for (size_t k = 0; k <= K; k++) {
        size_t t = *at + (k < K ? R + k : 0);
        hoff[k] = g->n;
        if (k == K) break;
        int got = nl ? seg_scan_rouge(g, q->src[t], nl)
                     : seg_scan(g, q->src[t], v13a, lowercase && !q->prepared[t], a->wide[s]);
        if (got < 0) return -1;
    }
    g->lookup = 1;
    g->miss = g->n_ids;
    ro[0] = 0;
    for (size_t j = 0; j < R; j++) {
        size_t t = *at + j;
        int got = nl ? seg_scan_rouge(g, q->src[t], nl)
                     : seg_scan(g, q->src[t], v13a, lowercase && !q->prepared[t], a->wide[s]);
        ro[j + 1] = g->n - hoff[K];
        a->ref_len[a->seg[s] + (Py_ssize_t)j] = (int64_t)(ro[j + 1] - ro[j]);
        if (got < 0) {
            g->lookup = 0;
            return -1;
        }
    }
    g->lookup = 0;
    *at += R + K;
    return 0;
}

/* The first 256 bytes of the n texts from q->src[at] (a str's header and the start of its characters, which follow
   it in a compact str) on their way to the cache while the segment before them is counted: the str objects lie
   anywhere in memory, where the hardware's own prefetch does not look. */
static inline void prefetch_texts(const sources_t *q, size_t at, size_t n) {
    for (size_t t = at; t < at + n; t++) {
        const char *o = (const char *)q->src[t];
        PREFETCH(o);
        PREFETCH(o + 64);
        PREFETCH(o + 128);
        PREFETCH(o + 192);
    }
}

/* The Stats row (ngrameval.ngrams.stats: hyp_len | ref_len closest, ties to the shorter | ref_len_mean | match[N]
   | total[N] | rmatch[N] | rtotal[N] | info[N] = 0) of a hypothesis of H tokens against references of lengths
   rl[0 .. R), from its match and rmatch: the numbers ngrameval.ngrams.count.RefSide.fill writes. */
static void stats_row(double *row, int64_t H, const int64_t *rl, size_t R, const int64_t *match, const int64_t *rmatch,
                      size_t N) {
    int64_t best = rl[0], sum = 0;
    for (size_t j = 0; j < R; j++) {
        int64_t d = rl[j] > H ? rl[j] - H : H - rl[j], bd = best > H ? best - H : H - best;
        if (d < bd || (d == bd && rl[j] < best)) best = rl[j];
        sum += rl[j];
    }
    row[0] = (double)H;
    row[1] = (double)best;
    row[2] = (double)sum / (double)R;
    double *m = row + 3, *t = m + N, *rm = t + N, *rt = rm + N, *info = rt + N;
    for (size_t n = 0; n < N; n++) {
        int64_t rtotal = 0;
        for (size_t j = 0; j < R; j++) rtotal += rl[j] > (int64_t)n ? rl[j] - (int64_t)n : 0;
        m[n] = (double)match[n];
        t[n] = H > (int64_t)n ? (double)(H - (int64_t)n) : 0.0;
        rm[n] = (double)rmatch[n];
        rt[n] = (double)rtotal;
        info[n] = 0.0;
    }
}

/* Scans and counts segments first .. stop of a gathered chunk (no GIL needed); -1 on OOM, -2 with the error in
   `ks` (a documented limit, or a signal). A segment's hypotheses are scanned first (their tokens interned, at
   ids[hoff[k] .. hoff[k + 1])), then its references with lookups only: a reference token that no hypothesis
   holds cannot be part of a match, so it gets the one id `miss` (V - 1, in no hypothesis) instead of its own. */
static int count_chunk(const call_t *a, const sources_t *q, Py_ssize_t first, Py_ssize_t stop, const size_t *chars,
                       int v13a, int lowercase, seg_t *g, count_t *c, size_t **ro, size_t *ro_cap, size_t *hoff,
                       kstate_t *ks) {
    size_t at = 0;
    const size_t N = (size_t)a->N, K = (size_t)a->K;
    for (Py_ssize_t s = first; s < stop; s++) {
        size_t R = (size_t)(a->seg[s + 1] - a->seg[s]), ch = chars[s - first];
        int got = seg_begin(g, ro, ro_cap, R, ch, (size_t)K_MAX_ID, s, ks);
        if (got < 0) return got;
        if (scan_segment(a, q, s, v13a, lowercase, NULL, g, *ro, hoff, &at) < 0) return -1;
        prefetch_texts(q, at, s + 1 < stop ? (size_t)(a->seg[s + 2] - a->seg[s + 1]) + K : 0);
        const int32_t V = g->miss + 1, *r = g->ids + hoff[K];
        for (size_t k = 0; k < K; k++) {
            size_t row = k * (size_t)a->S + (size_t)s, H = hoff[k + 1] - hoff[k], n_tok = (*ro)[R] + H;
            a->hyp_len[row] = (int64_t)H;
            if (N && n_tok >= (size_t)K_MAX_ID / (N + 1)) {
                k_limit(ks, "segment %zd: %zu tokens x max_order %zu n-grams, above the 32-bit id bound of the "
                        "counting kernel; split it", s + 1, n_tok, N);
                return -2;
            }
            if (N && count_reserve(c, (size_t)V + n_tok * N + 1) < 0) return -1;
            /* with rows: one row's counts at a time (no K x S x N arrays to fill, page by page, and drop) */
            int64_t *match = a->match + (a->rows ? 0 : row * N), *rmatch = a->rmatch + (a->rows ? 0 : row * N);
            if (N && (R != 1 || seg_counts_one(c, g->ids + hoff[k], H, r, (*ro)[1], V, N, match)))
                seg_counts(c, g->ids + hoff[k], H, r, *ro, R, V, N, match, rmatch);
            else if (N)
                memcpy(rmatch, match, N * sizeof(int64_t)); /* one reference: the same */
            if (a->rows)
                stats_row(a->rows + row * (3 + 5 * N), a->hyp_len[row], a->ref_len + a->seg[s], R,
                          match, rmatch, N);
        }
        if (k_poll(ks, ch * N + 1) < 0) return -2;
    }
    return 0;
}

/* The call's arrays; `per_row`: match and rmatch of one row only (counts' rows, and rouge, which has its own). */
static int parse(call_t *a, PyObject *systems, PyObject *refs, int per_row) {
    a->S = PySequence_Fast_GET_SIZE(refs);
    a->seg = (int64_t *)malloc(((size_t)a->S + 1) * sizeof(int64_t));
    if (!a->seg) {
        PyErr_NoMemory();
        return -1;
    }
    a->seg[0] = 0;
    for (Py_ssize_t s = 0; s < a->S; s++) {
        PyObject *item = PySequence_Fast_GET_ITEM(refs, s);
        Py_ssize_t n;
        if (PyUnicode_Check(item)) {
            n = 1;
        } else if (PyList_Check(item) || PyTuple_Check(item)) {
            n = PyList_Check(item) ? PyList_GET_SIZE(item) : PyTuple_GET_SIZE(item);
        } else {
            PyErr_Format(PyExc_TypeError, "refs[%zd] must be a str or a list of str, not %.100s", s,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        if (!n) {
            PyErr_Format(PyExc_ValueError, "segment %zd has no reference; every segment needs at least one", s + 1);
            return -1;
        }
        a->seg[s + 1] = a->seg[s] + n;
    }
    a->R = a->seg[a->S];
    a->K = PyTuple_GET_SIZE(systems);
    a->sys = (PyObject **)calloc((size_t)(a->K ? a->K : 1), sizeof(PyObject *));
    if (!a->sys) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < a->K; k++) {
        a->sys[k] = PySequence_Fast(PyTuple_GET_ITEM(systems, k), "each system must be a sequence of str");
        if (!a->sys[k]) return -1;
        if (PySequence_Fast_GET_SIZE(a->sys[k]) != a->S) {
            PyErr_Format(PyExc_ValueError, "system %zd has %zd texts, not one per segment (%zd)", k + 1,
                         PySequence_Fast_GET_SIZE(a->sys[k]), a->S);
            return -1;
        }
    }
    size_t KS = (size_t)(a->K * a->S), KSN = per_row ? (size_t)a->N : KS * (size_t)a->N;
    a->hyp_len = (int64_t *)calloc(KS + 1, sizeof(int64_t));
    a->ref_len = (int64_t *)calloc((size_t)a->R + 1, sizeof(int64_t));
    a->match = (int64_t *)calloc(KSN + 1, sizeof(int64_t));
    a->rmatch = (int64_t *)calloc(KSN + 1, sizeof(int64_t));
    a->wide = (uint8_t *)calloc((size_t)a->S + 1, 1);
    if (!a->hyp_len || !a->ref_len || !a->match || !a->rmatch || !a->wide) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *counts(PyObject *self, PyObject *args) {
    PyObject *systems_o, *refs_o, *prep, *rows_o = Py_None;
    int mode, lowercase, max_order;
    if (!PyArg_ParseTuple(args, "OOipiO|O", &systems_o, &refs_o, &mode, &lowercase, &max_order, &prep, &rows_o))
        return NULL;
    if (mode != MODE_PLAIN && mode != MODE_V13A) {
        PyErr_Format(PyExc_ValueError, "counts: mode must be 0 (plain) or 1 (v13a), got %d", mode);
        return NULL;
    }
    if (max_order < 0 || max_order > MAX_ORDER) {
        PyErr_Format(PyExc_ValueError, "counts: max_order must be 0..%d, got %d", MAX_ORDER, max_order);
        return NULL;
    }
    if (!PyCallable_Check(prep)) {
        PyErr_SetString(PyExc_TypeError, "counts: prep must be callable");
        return NULL;
    }
    call_t a = {.N = max_order};
    sources_t q = {0};
    seg_t g = {0};
    count_t c = {0};
    size_t *ro = NULL, ro_cap = 0, *chars = NULL, *hoff = NULL;
    kstate_t ks = {0};
    Py_buffer view = {0};
    PyObject *result = NULL, *systems = PySequence_Tuple(systems_o), *refs = PySequence_Fast(refs_o, "refs must be a sequence");
    a.refs = refs;
    if (!systems || !refs || parse(&a, systems, refs, rows_o != Py_None) < 0) goto done;
    if (rows_o != Py_None) {
        if (PyObject_GetBuffer(rows_o, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto done;
        size_t want = (size_t)(a.K * a.S) * (3 + 5 * (size_t)a.N);
        if (!view.format || strcmp(view.format, "d") != 0 || view.itemsize != sizeof(double) ||
            (size_t)view.len != want * sizeof(double)) {
            PyErr_Format(PyExc_ValueError, "counts: rows must be a C-contiguous float64 buffer of %zu values", want);
            goto done;
        }
        a.rows = (double *)view.buf;
    }
    chars = (size_t *)malloc(((size_t)(a.S < CHUNK_TEXTS ? a.S : CHUNK_TEXTS) + 1) * sizeof(size_t));
    hoff = (size_t *)malloc(((size_t)a.K + 1) * sizeof(size_t));
    if (!chars || !hoff) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t first = 0, stop; first < a.S; first = stop) {
        if (gather(&a, &q, first, &stop, chars, mode == MODE_V13A, lowercase, prep) < 0) goto done;
        k_release(&ks);
        int got = count_chunk(&a, &q, first, stop, chars, mode == MODE_V13A, lowercase, &g, &c, &ro, &ro_cap, hoff,
                              &ks);
        if (got == -1) k_nomem(&ks); /* -2: the error (a limit, Ctrl-C) is recorded already */
        if (k_finish(&ks) < 0) goto done;
        sources_clear(&q);
    }
    size_t KS = (size_t)(a.K * a.S), KSN = KS * (size_t)a.N;
    if (a.rows) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    result = Py_BuildValue("(y#y#y#y#y#)", (const char *)a.hyp_len, (Py_ssize_t)(KS * sizeof(int64_t)),
                           (const char *)a.ref_len, (Py_ssize_t)((size_t)a.R * sizeof(int64_t)), (const char *)a.seg,
                           (Py_ssize_t)(((size_t)a.S + 1) * sizeof(int64_t)), (const char *)a.match,
                           (Py_ssize_t)(KSN * sizeof(int64_t)), (const char *)a.rmatch,
                           (Py_ssize_t)(KSN * sizeof(int64_t)));
done:
    if (view.obj) PyBuffer_Release(&view);
    sources_clear(&q);
    free(q.src); free(q.prepared);
    seg_free(&g);
    count_free(&c);
    free(ro); free(chars); free(hoff);
    call_free(&a);
    Py_XDECREF(systems);
    Py_XDECREF(refs);
    return result;
}

/* ---- ROUGE ------------------------------------------------------------------------------------------- */

/* o[i] = RMAP[b[i]] for i < len (16 bytes a step with SSE2: A-Z lower-cased, a-z and 0-9 kept, any other byte a
   space); whether b holds a line break. */
static int rouge_map_u8(const uint8_t *b, uint8_t *o, size_t len) {
    size_t i = 0;
    int nl = 0;
#if defined(__SSE2__)
    __m128i lines = _mm_setzero_si128();
    for (; i + 16 <= len; i += 16) {
        __m128i raw = _mm_loadu_si128((const __m128i *)(b + i));
        __m128i v = _mm_xor_si128(raw, _mm_set1_epi8((char)0x80));
        __m128i upper = in_range(v, 'A', 'Z');
        __m128i keep = _mm_or_si128(upper, _mm_or_si128(in_range(v, 'a', 'z'), in_range(v, '0', '9')));
        __m128i low = _mm_add_epi8(raw, _mm_and_si128(upper, _mm_set1_epi8(32)));
        __m128i out = _mm_or_si128(_mm_and_si128(keep, low), _mm_andnot_si128(keep, _mm_set1_epi8(' ')));
        _mm_storeu_si128((__m128i *)(o + i), out);
        lines = _mm_or_si128(lines, _mm_cmpeq_epi8(raw, _mm_set1_epi8('\n')));
    }
    nl = _mm_movemask_epi8(lines) != 0;
#endif
    for (; i < len; i++) {
        o[i] = RMAP[b[i]];
        nl |= b[i] == '\n';
    }
    return nl;
}

/* ROUGE's tokens of a text (rouge_char: runs of [a-z0-9] after ASCII lower-casing) in the segment table; *nl set
   when the text holds a line break. */
/* Bit j of the result: s[j] is not a space, for j < m <= 64 (s readable up to s + 64). */
static inline uint64_t word_mask(const uint8_t *s, size_t m) {
    uint64_t w = 0;
#if defined(__SSE2__)
    for (unsigned k = 0; k < 64; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + k));
        w |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))) << k;
    }
    w = ~w;
#else
    for (unsigned j = 0; j < 64; j++) w |= (uint64_t)(s[j] != ' ') << j;
#endif
    return m == 64 ? w : w & ((UINT64_C(1) << m) - 1);
}

/* The tokens of a text in ROUGE's character form o[0 .. len) (bytes [a-z0-9] or a space; o readable up to
   o + len + 64), to seg_token: the runs of non-spaces, found 64 bytes at a time as the edges of a word mask. */
static int rouge_tokens(seg_t *g, const uint8_t *o, size_t len) {
    const uint8_t *end = o + len;
    size_t start = 0;
    uint64_t in = 0; /* the byte before the block is a word's */
    for (size_t base = 0; base < len; base += 64) {
        uint64_t w = word_mask(o + base, len - base < 64 ? len - base : 64);
        uint64_t edges = w ^ (w << 1 | in);
        while (edges) {
            unsigned j = CTZ64(edges);
            edges &= edges - 1;
            if (w >> j & 1)
                start = base + j;
            else if (seg_token(g, o + start, base + j - start, end) < 0)
                return -1;
        }
        in = w >> 63;
    }
    return in ? seg_token(g, o + start, len - start, end) : 0;
}

static int seg_scan_rouge(seg_t *g, PyObject *text, int *nl) {
    size_t len = (size_t)PyUnicode_GET_LENGTH(text);
    if (!len) return 0;
    if (g->low.cap < len + 64) {
        size_t c = g->low.cap ? g->low.cap : 65536;
        while (c < len + 64) c *= 2;
        char *p = (char *)realloc(g->low.p, c);
        if (!p) return -1;
        g->low.p = p;
        g->low.cap = c;
    }
    uint8_t *o = (uint8_t *)g->low.p;
    const int kind = PyUnicode_KIND(text);
    const void *d = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        *nl |= rouge_map_u8((const uint8_t *)d, o, len);
    } else {
        for (size_t i = 0; i < len; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, d, i);
            o[i] = c < 256 ? RMAP[c] : ' ';
            *nl |= c == '\n';
        }
    }
    memset(o + len, ' ', 64); /* word_mask reads whole blocks */
    return rouge_tokens(g, o, len);
}

/* The LCS length of a[0..m) and b[0..n), local token ids below V: one 64-bit word when m <= 64 (pm[V] zero on
   entry and on return), else lcs_length (bits->loc: V entries of -1). -1 on OOM (k->err set). */
static int64_t lcs_local(const int32_t *a, size_t m, const int32_t *b, size_t n, uint64_t *pm, bits_t *bits,
                         kstate_t *k) {
    if (m > 64) return lcs_length(a, m, b, n, bits, k);
    for (size_t i = 0; i < m; i++) pm[a[i]] |= UINT64_C(1) << i;
    uint64_t v = ~UINT64_C(0);
    for (size_t j = 0; j < n; j++) {
        uint64_t u = v & pm[b[j]];
        v = (v + u) | (v - u);
    }
    for (size_t i = 0; i < m; i++) pm[a[i]] = 0;
    uint64_t live = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
    return popcount64(~v & live);
}

typedef struct {
    int64_t *hits; /* per (system k, reference j, order n): sum over n-grams g of min(count_hyp(g), count_ref(g)) */
    int64_t *lcs;  /* per (k, j): the LCS length of the two whole texts (their tokens as one sequence) */
    uint64_t *pm;  /* lcs_local's one-word rows, per local id */
    int32_t *loc;  /* lcs_length's rows, per local id */
    size_t cap;    /* entries of pm and loc */
    int nl;        /* a text held a line break */
} rouge_t;

/* Room in pm and loc for V local ids (new entries zero / -1); -1 on OOM. */
static int rouge_room(rouge_t *o, bits_t *bits, size_t V) {
    if (V <= o->cap) return 0;
    size_t cap = o->cap ? o->cap : 1024;
    while (cap < V) cap *= 2;
    uint64_t *pm = (uint64_t *)realloc(o->pm, cap * sizeof(uint64_t));
    if (!pm) return -1;
    o->pm = pm;
    int32_t *loc = (int32_t *)realloc(bits->loc, cap * sizeof(int32_t));
    if (!loc) return -1;
    bits->loc = o->loc = loc;
    memset(pm + o->cap, 0, (cap - o->cap) * sizeof(uint64_t));
    memset(loc + o->cap, 0xff, (cap - o->cap) * sizeof(int32_t));
    o->cap = cap;
    return 0;
}

/* ROUGE's counts of segments first .. stop of a gathered chunk, every (hypothesis, reference) pair (no GIL
   needed); -1 on OOM, -2 with the error in `ks`. */
static int rouge_chunk(const call_t *a, const sources_t *q, Py_ssize_t first, Py_ssize_t stop, const size_t *chars,
                       int want_lcs, seg_t *g, count_t *c, rouge_t *o, bits_t *bits, size_t **ro, size_t *ro_cap,
                       size_t *hoff, kstate_t *ks) {
    size_t at = 0, one[2];
    const size_t N = (size_t)a->N;
    for (Py_ssize_t s = first; s < stop; s++) {
        size_t R = (size_t)(a->seg[s + 1] - a->seg[s]), ch = chars[s - first];
        int got = seg_begin(g, ro, ro_cap, R, ch, (size_t)K_MAX_ID / (N + 2), s, ks);
        if (got < 0) return got;
        if (scan_segment(a, q, s, 0, 0, &o->nl, g, *ro, hoff, &at) < 0) return -1;
        const int32_t V = g->miss + 1, *refs = g->ids + hoff[a->K];
        if (N && count_reserve(c, (size_t)V + (g->n + 1) * N + 1) < 0) return -1;
        if (want_lcs && rouge_room(o, bits, (size_t)V) < 0) return -1;
        for (Py_ssize_t k = 0; k < a->K; k++) {
            size_t H = hoff[k + 1] - hoff[k];
            const int32_t *h = g->ids + hoff[k];
            a->hyp_len[(size_t)(k * a->S + s)] = (int64_t)H;
            for (size_t j = 0; j < R; j++) {
                size_t pair = (size_t)k * (size_t)a->R + (size_t)a->seg[s] + j, L = (*ro)[j + 1] - (*ro)[j];
                const int32_t *r = refs + (*ro)[j];
                one[0] = 0;
                one[1] = L;
                if (N) {
                    int64_t rmatch[MAX_ORDER];
                    seg_counts(c, h, H, r, one, 1, V, N, o->hits + pair * N, rmatch);
                }
                if (want_lcs) {
                    int64_t got = L <= H ? lcs_local(r, L, h, H, o->pm, bits, ks) : lcs_local(h, H, r, L, o->pm, bits, ks);
                    if (got < 0) return ks->err == K_NOMEM ? -1 : -2;
                    o->lcs[pair] = got;
                }
            }
        }
        if (k_poll(ks, ch * (N + 1) * (R + 1) + 1) < 0) return -2;
    }
    return 0;
}

/* rouge(systems, refs, full_lower, max_order, want_lcs)
 *     -> (hyp_len int64[K*S], ref_len int64[R], seg int64[S + 1], hits int64[K*R*N], lcs int64[K*R], line_breaks)
 *   ROUGE's tokens (the rouge155 / rouge-score profiles without stemming or stop words: runs of [a-z0-9] after
 *   ASCII lower-casing; full_lower: str.lower() first for a non-ASCII text, as rouge-score) of every text, interned
 *   per segment as counts() does, and for every pair of system k's hypothesis of segment s and reference j of s
 *   (pair index k * R + j, j counted over the whole corpus): ROUGE-N's clipped hits of orders 1 .. max_order over
 *   the whole texts, and with want_lcs the LCS length of the two token sequences. line_breaks: whether a text
 *   held '\n' (ROUGE-L over sentences then needs ngrameval._rouge.lcs). */
static PyObject *rouge(PyObject *self, PyObject *args) {
    PyObject *systems_o, *refs_o;
    int full_lower, max_order, want_lcs;
    if (!PyArg_ParseTuple(args, "OOpip", &systems_o, &refs_o, &full_lower, &max_order, &want_lcs)) return NULL;
    if (max_order < 0 || max_order > MAX_ORDER) {
        PyErr_Format(PyExc_ValueError, "rouge: max_order must be 0..%d, got %d", MAX_ORDER, max_order);
        return NULL;
    }
    call_t a = {.N = max_order};
    sources_t q = {0};
    seg_t g = {0};
    count_t c = {0};
    rouge_t o = {0};
    bits_t bits = {0};
    size_t *ro = NULL, ro_cap = 0, *chars = NULL, *hoff = NULL;
    kstate_t ks = {0};
    PyObject *result = NULL, *systems = PySequence_Tuple(systems_o), *refs = PySequence_Fast(refs_o, "refs must be a sequence");
    a.refs = refs;
    if (!systems || !refs || parse(&a, systems, refs, 1) < 0) goto done;
    size_t KR = (size_t)(a.K * a.R);
    o.hits = (int64_t *)calloc(KR * (size_t)a.N + 1, sizeof(int64_t));
    o.lcs = (int64_t *)calloc(KR + 1, sizeof(int64_t));
    chars = (size_t *)malloc(((size_t)(a.S < CHUNK_TEXTS ? a.S : CHUNK_TEXTS) + 1) * sizeof(size_t));
    hoff = (size_t *)malloc(((size_t)a.K + 1) * sizeof(size_t));
    if (!o.hits || !o.lcs || !chars || !hoff) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t first = 0, stop; first < a.S; first = stop) {
        if (gather(&a, &q, first, &stop, chars, 0, full_lower, Py_None) < 0) goto done;
        k_release(&ks);
        int got = rouge_chunk(&a, &q, first, stop, chars, want_lcs, &g, &c, &o, &bits, &ro, &ro_cap, hoff, &ks);
        if (got == -1) k_nomem(&ks);
        if (k_finish(&ks) < 0) goto done;
        sources_clear(&q);
    }
    size_t KS = (size_t)(a.K * a.S);
    result = Py_BuildValue("(y#y#y#y#y#O)", (const char *)a.hyp_len, (Py_ssize_t)(KS * sizeof(int64_t)),
                           (const char *)a.ref_len, (Py_ssize_t)((size_t)a.R * sizeof(int64_t)), (const char *)a.seg,
                           (Py_ssize_t)(((size_t)a.S + 1) * sizeof(int64_t)), (const char *)o.hits,
                           (Py_ssize_t)(KR * (size_t)a.N * sizeof(int64_t)), (const char *)o.lcs,
                           (Py_ssize_t)(KR * sizeof(int64_t)), o.nl ? Py_True : Py_False);
done:
    sources_clear(&q);
    free(q.src); free(q.prepared);
    seg_free(&g);
    count_free(&c);
    bits.loc = NULL; /* o.loc's: freed below */
    bits_free(&bits);
    free(o.hits); free(o.lcs); free(o.pm); free(o.loc);
    free(ro); free(chars); free(hoff);
    call_free(&a);
    Py_XDECREF(systems);
    Py_XDECREF(refs);
    return result;
}

/* layout(seq): 0 every item an exact str, 1 every item a non-empty exact list of exact str, 2 anything else. */
static PyObject *layout(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "layout: a sequence");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), i = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    long kind = 0;
    while (i < n && PyUnicode_CheckExact(items[i])) i++;
    if (i < n) {
        kind = i ? 2 : 1;
        for (; kind == 1 && i < n; i++) {
            PyObject *item = items[i];
            if (!PyList_CheckExact(item) || !PyList_GET_SIZE(item)) {
                kind = 2;
                break;
            }
            for (Py_ssize_t j = 0; j < PyList_GET_SIZE(item); j++)
                if (!PyUnicode_CheckExact(PyList_GET_ITEM(item, j))) {
                    kind = 2;
                    break;
                }
        }
    }
    Py_DECREF(seq);
    return PyLong_FromLong(kind);
}

/* ascii(seq): whether every item of seq is a str of ASCII characters only (str.isascii: the flag every str keeps, no
   pass over the characters); False at the first item that is not, or not a str. */
static PyObject *ascii(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "ascii: a sequence");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), i = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (; i < n && PyUnicode_Check(items[i]); i++) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(items[i]) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
#endif
        if (!PyUnicode_IS_ASCII(items[i])) break;
    }
    Py_DECREF(seq);
    return PyBool_FromLong(i == n);
}

/* sizes(seq): the distinct len() of the items of seq, sorted (the reference counts of segment-major references: one
   C pass in the common case of one count). */
static PyObject *sizes(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "sizes: a sequence"), *out = NULL, *set = NULL;
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), first = -1, i = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (; i < n; i++) {
        PyObject *item = items[i];
        Py_ssize_t k = PyList_CheckExact(item)    ? PyList_GET_SIZE(item)
                       : PyTuple_CheckExact(item) ? PyTuple_GET_SIZE(item)
                                                  : PyObject_Length(item);
        if (k < 0) goto done;
        if (first < 0) first = k;
        if (k != first) break;
    }
    if (i == n) { /* one count (or none) */
        out = n ? Py_BuildValue("[n]", first) : PyList_New(0);
        goto done;
    }
    set = PySet_New(NULL);
    for (i = 0; set && i < n; i++) {
        Py_ssize_t k = PyObject_Length(items[i]);
        PyObject *v = k < 0 ? NULL : PyLong_FromSsize_t(k);
        if (!v || PySet_Add(set, v) < 0) {
            Py_XDECREF(v);
            goto done;
        }
        Py_DECREF(v);
    }
    if (set && (out = PySequence_List(set)) && PyList_Sort(out) < 0) Py_CLEAR(out);
done:
    Py_XDECREF(set);
    Py_DECREF(seq);
    return out;
}

#include "_lines.h" /* lines(), count_bytes(): counting straight from a file's UTF-8 bytes */

static PyMethodDef methods[] = {
    LINES_METHODS
    {"counts", counts, METH_VARARGS, "BLEU-family n-gram counts of every system straight from the lines."},
    {"rouge", rouge, METH_VARARGS, "ROUGE-N hits and LCS lengths of every (hypothesis, reference) pair."},
    {"layout", layout, METH_O, "0: all str, 1: all non-empty lists of str, 2: other."},
    {"ascii", ascii, METH_O, "Whether every item is a str of ASCII characters only."},
    {"sizes", sizes, METH_O, "The distinct len() of the items, sorted."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_direct", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__direct(void) {
    init_classes();
    for (int ch = 0; ch < 256; ch++) RMAP[ch] = rouge_char((Py_UCS4)ch) ? (uint8_t)rouge_char((Py_UCS4)ch) : ' ';
    return PyModule_Create(&module);
}
