/*
 * The line scanner shared by the tokenizer kernels (include after Python.h and _hash.h):
 *   - the key and hash of a token of bytes (key_u8): a token of at most 7 bytes is its own 64-bit key;
 *   - the mteval-v13a rules 2-4 (rule_pass) and the class of every byte under v13a and plain splitting;
 *   - scan_bytes, one pass over a 1-byte line that hands each token (and each v13a word that needs rules 2-4)
 *     to a sink: ngrameval._text interns them in a vocabulary, ngrameval._direct in one segment's table;
 *   - line_source, the string to scan for a line (the tokenizer's own preprocessing where the scanner alone
 *     would not be exact).
 */
#ifndef NGRAMEVAL_SCAN_H
#define NGRAMEVAL_SCAN_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The key of a token longer than 7 code points (or holding one above 255): compared by its characters. */
#define LONG_TOKEN UINT64_MAX

#define HASH_SEED 0x9e3779b97f4a7c15ULL

static inline uint64_t hash_step(uint64_t h, Py_UCS4 c) {
    h ^= c;
    h *= 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static inline uint64_t hash_end(uint64_t h, Py_ssize_t n) {
    h = hash_step(h, (Py_UCS4)n);
    return h ^ (h >> 32);
}

static inline uint64_t hash_tok_u8(const uint8_t *s, Py_ssize_t n) {
    uint64_t h = HASH_SEED;
    for (Py_ssize_t i = 0; i < n; i++) h = hash_step(h, s[i]);
    return hash_end(h, n);
}

/* The key (token_key) of the token of bytes s[0..n) (Latin-1 code points), n <= 7, and (key_u8) of any token with
   its hash (key_hash); `end` bounds what may be read past s + n. */
static inline uint64_t short_key(const uint8_t *s, size_t n, const uint8_t *end) {
    uint64_t w = 0;
#if defined(_WIN32) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    if (end - s >= 8) {
        static const uint64_t keep[8] = {0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFF, 0xFFFFFFFFFFFF,
                                         0xFFFFFFFFFFFFFF}; /* the low n bytes */
        memcpy(&w, s, 8); /* little-endian: byte i lands in bits 8i.. as token_key packs it */
        w &= keep[n & 7];
    } else
#endif
    {
        for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
    }
    return w | (uint64_t)n << 56;
}

static inline uint64_t key_u8(const uint8_t *s, size_t n, const uint8_t *end, uint64_t *h) {
    if (n > 7) {
        *h = hash_tok_u8(s, (Py_ssize_t)n);
        return LONG_TOKEN;
    }
    uint64_t key = short_key(s, n, end);
    *h = mix64(key);
    return key;
}

/* Growable scratch buffers. */
typedef struct {
    Py_UCS4 *p;
    size_t len, cap;
} ubuf_t;

static inline int ubuf_reserve(ubuf_t *b, size_t cap) {
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

static inline int bbuf_push(bbuf_t *b, const void *x, size_t size) {
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
static inline int rule_pass(int rule, const ubuf_t *in, ubuf_t *out) {
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
enum { MODE_PLAIN = 0, MODE_V13A = 1, MODE_ROUGE = 2 };

/* Texts whose scan runs in one stretch without the GIL: up to CHUNK_TEXTS texts or CHUNK_CHARS code points. */
#define CHUNK_TEXTS 4096
#define CHUNK_CHARS (1 << 20)

/* ---- Scanning a line: one pass over its characters (v13a or plain), no joined text ---------------------

   A line whose characters are all below 256 (a 1-byte str) is scanned once with a class per byte. Under
   v13a, rule 1 makes every padded symbol a token of its own, flanked by spaces, so no rule 2-4 pair contains
   one. The line thus falls into words -- runs of characters that are neither whitespace nor padded -- with
   whitespace between them, and every rule pair lies inside one word or pairs a word's first or last
   character with the whitespace next to it (rules only insert spaces, so this holds after every pass). A
   whitespace character takes part in a pair only as the non-digit of rule 2's first or rule 3's second
   character, and it never starts a rule 3 match; so each word is rewritten exactly as " " + word + " " would
   be on its own. A word without '.', ',' and '-' is left as it is (one token, interned straight from the
   line's bytes); any other word goes through rule_pass as `encode` runs it on the whole line. Lines of wider
   strings take `encode`'s path (rule 1 and rule_pass over the line). */

/* A byte's class, as bits: 1 it belongs to a word, 2 it is a padded symbol (a token of its own), 4 it is '.', ','
   or '-' (a word holding one may need rules 2-4). Whitespace is 0. */
enum { CL_SPACE = 0, CL_WORD = 1, CL_PAD = 2, CL_SPECIAL = 5 };
/* block_masks_nibbles: GCC or Clang on x86 (SSSE3 chosen at run time, the functions compiled for it alone) */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define NGRAMEVAL_NIBBLES 1
#include <tmmintrin.h>
#else
#define NGRAMEVAL_NIBBLES 0
#endif
static uint8_t CLASS_V13A[256], CLASS_PLAIN[256];
/* The same for a line in the UTF-8 form of utf8_line (any code point): every byte from 0x80 up is part of a word
   (utf8_line has made the whitespace above ASCII a space already). */
static uint8_t CLASS_V13A_U8[256], CLASS_PLAIN_U8[256];

/* The class tables as nibble tables, for block_masks_nibbles (SSSE3's byte shuffle looks up 16 bytes at once):
   byte x = 16 hi + lo is padded when lo_a[lo] & hi_a[hi] has a bit of pad_bits, special when one of special_bits,
   whitespace when lo_b[lo] & hi_b[hi] is not 0. Each distinct row (the set of lo of one hi) of a class gets a bit
   of its own, so the tables give the class of every byte exactly; ok is 0 when the bits would not fit (never
   for these four tables: the padded rows are 5 distinct ones, whitespace's at most 4). */
typedef struct {
    uint8_t lo_a[16], hi_a[16], lo_b[16], hi_b[16];
    uint8_t pad_bits, special_bits, ok;
} nibbles_t;
static nibbles_t NIBBLES_V13A, NIBBLES_PLAIN, NIBBLES_V13A_U8, NIBBLES_PLAIN_U8;
#if NGRAMEVAL_NIBBLES
static int USE_NIBBLES; /* the CPU has SSSE3 (checked once at import; NGRAMEVAL_NO_SSSE3 set: SSE2, for the tests) */
#endif

/* Adds the bytes of class `cl` of `cls` to the tables (lo, hi), a bit per distinct row from *next on. */
static inline void nibble_class(const uint8_t *cls, uint8_t cl, uint8_t *lo, uint8_t *hi, unsigned *next,
                                uint8_t *bits, uint8_t *ok) {
    uint16_t rows[16];
    uint8_t row_bit[16];
    unsigned n_rows = 0;
    for (unsigned h = 0; h < 16; h++) {
        uint16_t row = 0;
        for (unsigned l = 0; l < 16; l++) row |= (uint16_t)((cls[16 * h + l] == cl) << l);
        if (!row) continue;
        unsigned k = 0;
        while (k < n_rows && rows[k] != row) k++;
        if (k == n_rows) {
            if (*next >= 8) {
                *ok = 0;
                return;
            }
            rows[n_rows] = row;
            row_bit[n_rows++] = (uint8_t)(1u << (*next)++);
            for (unsigned l = 0; l < 16; l++)
                if (row >> l & 1) lo[l] |= row_bit[k];
        }
        hi[h] |= row_bit[k];
        *bits |= row_bit[k];
    }
}

static inline void nibbles_of(const uint8_t *cls, nibbles_t *t) {
    unsigned next_a = 0, next_b = 0;
    uint8_t space_bits = 0;
    memset(t, 0, sizeof *t);
    t->ok = 1;
    nibble_class(cls, CL_PAD, t->lo_a, t->hi_a, &next_a, &t->pad_bits, &t->ok);
    nibble_class(cls, CL_SPECIAL, t->lo_a, t->hi_a, &next_a, &t->special_bits, &t->ok);
    nibble_class(cls, CL_SPACE, t->lo_b, t->hi_b, &next_b, &space_bits, &t->ok);
}

static inline void init_classes(void) {
    for (int c = 0; c < 256; c++) {
        uint8_t k = Py_UNICODE_ISSPACE((Py_UCS4)c) ? CL_SPACE : CL_WORD;
        CLASS_PLAIN[c] = k;
        CLASS_PLAIN_U8[c] = c < 0x80 ? k : CL_WORD;
        if (k == CL_WORD && is_padded((Py_UCS4)c)) k = CL_PAD;
        if (c == '.' || c == ',' || c == '-') k = CL_SPECIAL;
        CLASS_V13A[c] = k;
        CLASS_V13A_U8[c] = c < 0x80 ? k : CL_WORD;
    }
    nibbles_of(CLASS_V13A, &NIBBLES_V13A);
    nibbles_of(CLASS_PLAIN, &NIBBLES_PLAIN);
    nibbles_of(CLASS_V13A_U8, &NIBBLES_V13A_U8);
    nibbles_of(CLASS_PLAIN_U8, &NIBBLES_PLAIN_U8);
#if NGRAMEVAL_NIBBLES
    __builtin_cpu_init();
    USE_NIBBLES = __builtin_cpu_supports("ssse3") && !getenv("NGRAMEVAL_NO_SSSE3");
#endif
}

/* One code point c >= 0x80 of utf8_line at o: a space for whitespace (the only ones above ASCII are U+0085, U+00A0,
   U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000: Python's str.isspace), else its UTF-8 bytes. */
static inline uint8_t *utf8_wide(uint8_t *o, Py_UCS4 c) {
    if (c == 0x85 || c == 0xA0 || (c >= 0x1680 && Py_UNICODE_ISSPACE(c))) {
        *o++ = ' ';
    } else if (c < 0x800) {
        *o++ = (uint8_t)(0xC0 | c >> 6);
        *o++ = (uint8_t)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (uint8_t)(0xE0 | c >> 12);
        *o++ = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        *o++ = (uint8_t)(0x80 | (c & 0x3F));
    } else {
        *o++ = (uint8_t)(0xF0 | c >> 18);
        *o++ = (uint8_t)(0x80 | (c >> 12 & 0x3F));
        *o++ = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        *o++ = (uint8_t)(0x80 | (c & 0x3F));
    }
    return o;
}

/* utf8_line's loop over the code units of one kind (T: uint8_t, uint16_t or Py_UCS4). */
#define UTF8_LOOP(T)                                                               \
    do {                                                                           \
        const T *u = (const T *)d;                                                 \
        for (size_t i = 0; i < n; i++) {                                           \
            Py_UCS4 c = u[i];                                                      \
            if (c < 0x80)                                                          \
                *o++ = (uint8_t)(lower && c >= 'A' && c <= 'Z' ? c + 32 : c);      \
            else                                                                   \
                o = utf8_wide(o, c);                                               \
        }                                                                          \
    } while (0)

/* Writes the line `s` (any kind) to `out` in the form the scanner reads with the _U8 class tables: ASCII as it is
   (A-Z lower-cased when `lower`), whitespace above ASCII as one space, any other code point as its UTF-8 bytes
   (a lone surrogate too: the form only has to be one-to-one). Under 13a and plain splitting every character
   above ASCII is a word character unless it is whitespace (sacreBLEU's rules name ASCII characters only, and
   str.split splits at Unicode whitespace), so the tokens are those of the line, each as its UTF-8 bytes.
   Needs no GIL (s is immutable and kept alive by the caller); -1 on OOM. */
static inline int utf8_line(bbuf_t *out, PyObject *s, int lower) {
    const size_t n = (size_t)PyUnicode_GET_LENGTH(s);
    const int kind = PyUnicode_KIND(s);
    const void *d = PyUnicode_DATA(s);
    out->len = 0;
    if (n > (SIZE_MAX - 8) / 4) return -1;
    if (out->cap < 4 * n + 8) {
        size_t c = out->cap ? out->cap : 65536;
        while (c < 4 * n + 8) c *= 2;
        char *p = (char *)realloc(out->p, c);
        if (!p) return -1;
        out->p = p;
        out->cap = c;
    }
    uint8_t *o = (uint8_t *)out->p;
    if (kind == PyUnicode_1BYTE_KIND)
        UTF8_LOOP(uint8_t);
    else if (kind == PyUnicode_2BYTE_KIND) {
        const uint16_t *u = (const uint16_t *)d;
        size_t i = 0;
#if defined(__SSE2__)
        /* runs of 8 ASCII code units (most of a news line around its curly quotes) as 8 bytes at once */
        const __m128i high = _mm_set1_epi16((short)0xFF80), zero = _mm_setzero_si128();
        const __m128i a1 = _mm_set1_epi8('A' - 1), z1 = _mm_set1_epi8('Z' + 1), case_bit = _mm_set1_epi8(32);
        while (i + 8 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(u + i));
            if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, high), zero)) != 0xFFFF) {
                for (size_t e = i + 8; i < e; i++) /* not all ASCII: these 8 one by one */
                    o = u[i] < 0x80 ? (*o = (uint8_t)(lower && u[i] >= 'A' && u[i] <= 'Z' ? u[i] + 32 : u[i]), o + 1)
                                    : utf8_wide(o, u[i]);
                continue;
            }
            __m128i b = _mm_packus_epi16(v, v); /* bytes below 0x80: signed compares are exact */
            if (lower)
                b = _mm_add_epi8(b, _mm_and_si128(_mm_and_si128(_mm_cmpgt_epi8(b, a1), _mm_cmplt_epi8(b, z1)), case_bit));
            _mm_storel_epi64((__m128i *)o, b);
            o += 8;
            i += 8;
        }
#endif
        for (; i < n; i++)
            o = u[i] < 0x80 ? (*o = (uint8_t)(lower && u[i] >= 'A' && u[i] <= 'Z' ? u[i] + 32 : u[i]), o + 1)
                            : utf8_wide(o, u[i]);
    } else
        UTF8_LOOP(Py_UCS4);
    out->len = (size_t)(o - (uint8_t *)out->p);
    return 0;
}
#undef UTF8_LOOP

/* The class bits of the (up to) 64 bytes s[0..min(len, 64)), one mask per bit: word, pad, special; bytes past
   len are whitespace. Branch-free, so the scan does not mispredict at every word's end. */
static inline void block_masks_table(const uint8_t *s, size_t len, const uint8_t *cls, uint64_t *W, uint64_t *P,
                                     uint64_t *S) {
    uint64_t w = 0, p = 0, sp = 0;
    unsigned m = len < 64 ? (unsigned)len : 64;
    for (unsigned j = 0; j < m; j++) {
        uint64_t c = cls[s[j]];
        w |= (c & 1) << j;
        p |= (c >> 1 & 1) << j;
        sp |= (c >> 2 & 1) << j;
    }
    *W = w;
    *P = p;
    *S = sp;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* Bytes of v (sign bit flipped: unsigned order as signed) in [lo, hi]. */
static inline __m128i in_range(__m128i v, uint8_t lo, uint8_t hi) {
    __m128i below = _mm_cmplt_epi8(v, _mm_set1_epi8((char)(lo ^ 0x80)));
    __m128i above = _mm_cmpgt_epi8(v, _mm_set1_epi8((char)(hi ^ 0x80)));
    return _mm_andnot_si128(_mm_or_si128(below, above), _mm_set1_epi8(-1));
}

/* block_masks_table for a whole block of 64 bytes, 16 at a time: the class tables as byte ranges (whitespace:
   Python's str.isspace below 256, below 128 for the _U8 tables; v13a's padded symbols: is_padded; special:
   ',' '-' '.'). */
static inline void block_masks_sse2(const uint8_t *s, int v13a, int u8, uint64_t *W, uint64_t *P, uint64_t *S) {
    uint64_t w = 0, p = 0, sp = 0;
    for (unsigned k = 0; k < 64; k += 16) {
        __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s + k)), _mm_set1_epi8((char)0x80));
        __m128i space = _mm_or_si128(in_range(v, 0x09, 0x0D), in_range(v, 0x1C, 0x20));
        if (!u8) space = _mm_or_si128(space, _mm_or_si128(in_range(v, 0x85, 0x85), in_range(v, 0xA0, 0xA0)));
        __m128i pad = _mm_setzero_si128(), special = _mm_setzero_si128();
        if (v13a) {
            pad = _mm_or_si128(_mm_or_si128(in_range(v, 0x21, 0x26), in_range(v, 0x28, 0x2B)),
                               _mm_or_si128(in_range(v, 0x2F, 0x2F), in_range(v, 0x3A, 0x40)));
            pad = _mm_or_si128(pad, _mm_or_si128(in_range(v, 0x5B, 0x60), in_range(v, 0x7B, 0x7E)));
            special = in_range(v, 0x2C, 0x2E);
        }
        uint64_t not_word = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(space, pad));
        w |= (~not_word & 0xFFFF) << k;
        p |= (uint64_t)(uint16_t)_mm_movemask_epi8(pad) << k;
        sp |= (uint64_t)(uint16_t)_mm_movemask_epi8(special) << k;
    }
    *W = w;
    *P = p;
    *S = sp;
}
#endif

#if NGRAMEVAL_NIBBLES
/* block_masks_table for a whole block of 64 bytes, 16 at a time, by the nibble tables `t` (SSSE3: two byte shuffles
   per table pair give the class bits of 16 bytes). A line's last block is read in place when its 64 bytes lie in
   one page (block_masks): the bytes past the line are read but their bits dropped, so AddressSanitizer is told
   not to check these loads (every load of a page that holds a readable byte is readable). */
#if defined(__clang__)
#define NO_ASAN __attribute__((no_sanitize("address")))
#else
#define NO_ASAN __attribute__((no_sanitize_address))
#endif
NO_ASAN __attribute__((target("ssse3"))) static void block_masks_nibbles(const uint8_t *s, const nibbles_t *t, uint64_t *W,
                                                                 uint64_t *P, uint64_t *S) {
    const __m128i lo_a = _mm_loadu_si128((const __m128i *)t->lo_a), hi_a = _mm_loadu_si128((const __m128i *)t->hi_a);
    const __m128i lo_b = _mm_loadu_si128((const __m128i *)t->lo_b), hi_b = _mm_loadu_si128((const __m128i *)t->hi_b);
    const __m128i nib = _mm_set1_epi8(0x0F), zero = _mm_setzero_si128();
    const __m128i pad = _mm_set1_epi8((char)t->pad_bits), special = _mm_set1_epi8((char)t->special_bits);
    uint64_t w = 0, p = 0, sp = 0;
    for (unsigned k = 0; k < 64; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + k));
        __m128i lo = _mm_and_si128(v, nib), hi = _mm_and_si128(_mm_srli_epi16(v, 4), nib);
        __m128i a = _mm_and_si128(_mm_shuffle_epi8(lo_a, lo), _mm_shuffle_epi8(hi_a, hi));
        __m128i b = _mm_and_si128(_mm_shuffle_epi8(lo_b, lo), _mm_shuffle_epi8(hi_b, hi));
        uint64_t not_pad = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(a, pad), zero));
        uint64_t not_special = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(a, special), zero));
        uint64_t not_space = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, zero));
        w |= (not_pad & not_space) << k;
        p |= (~not_pad & 0xFFFF) << k;
        sp |= (~not_special & 0xFFFF) << k;
    }
    *W = w;
    *P = p;
    *S = sp;
}
#endif

static inline void block_masks(const uint8_t *s, size_t len, const uint8_t *cls, uint64_t *W, uint64_t *P,
                               uint64_t *S) {
#if NGRAMEVAL_NIBBLES
    const nibbles_t *t = cls == CLASS_V13A      ? &NIBBLES_V13A
                         : cls == CLASS_PLAIN    ? &NIBBLES_PLAIN
                         : cls == CLASS_V13A_U8  ? &NIBBLES_V13A_U8
                         : cls == CLASS_PLAIN_U8 ? &NIBBLES_PLAIN_U8
                                                 : NULL;
    if (USE_NIBBLES && t && t->ok) {
        if (len >= 64) {
            block_masks_nibbles(s, t, W, P, S);
            return;
        }
        /* a line's last block: read in place when s .. s + 64 lies in one page (every bit from len up then dropped),
           else its bytes copied, then spaces (no class bit); no store-to-load stall in the common case */
        if (((uintptr_t)s & 4095) <= 4096 - 64) {
            block_masks_nibbles(s, t, W, P, S);
            const uint64_t keep = (UINT64_C(1) << len) - 1; /* len < 64 */
            *W &= keep;
            *P &= keep;
            *S &= keep;
            return;
        }
        uint8_t tail[64];
        memcpy(tail, s, len);
        memset(tail + len, ' ', 64 - len);
        block_masks_nibbles(tail, t, W, P, S);
        return;
    }
#endif
#if defined(__SSE2__)
    if (len >= 64 && (cls == CLASS_V13A || cls == CLASS_PLAIN || cls == CLASS_V13A_U8 || cls == CLASS_PLAIN_U8)) {
        block_masks_sse2(s, cls == CLASS_V13A || cls == CLASS_V13A_U8, cls == CLASS_V13A_U8 || cls == CLASS_PLAIN_U8,
                         W, P, S);
        return;
    }
#endif
    block_masks_table(s, len, cls, W, P, S);
}

#if defined(__GNUC__) || defined(__clang__)
#define CTZ64(x) ((unsigned)__builtin_ctzll(x))
#else
static inline unsigned CTZ64(uint64_t x) {
    unsigned k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
}
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* Whether rules 2-4 leave " " + w[0..n) + " " (a v13a word) as it is, so the word is one token: no '.' or ','
   beside a non-digit (rule 2 before it, rule 3 after it; the spaces around the word are non-digits), no '-' after
   a digit (rule 4). A rule pass changes a string exactly when one of its pairs occurs in it. */
static inline int rules_leave_word(const uint8_t *w, size_t n) {
    for (size_t j = 0; j < n; j++) {
        uint8_t c = w[j];
        if (c == '.' || c == ',') {
            if (!j || j + 1 == n || !is_digit(w[j - 1]) || !is_digit(w[j + 1])) return 0;
        } else if (c == '-' && j && is_digit(w[j - 1])) {
            return 0;
        }
    }
    return 1;
}

/* What scan_bytes hands its sink: a token of bytes s[0..n) (`end` bounds what may be read past it, for key_u8),
   or a v13a word w[0..n) holding '.', ',' or '-' that needs rules 2-4 (rules_on_word). 0, or < 0 to stop. */
typedef int (*token_sink_fn)(void *sink, const uint8_t *s, size_t n, const uint8_t *end);
typedef int (*word_sink_fn)(void *sink, const uint8_t *w, size_t n);

/* The tokens of a 1-byte line s[0..n) under a class table (CLASS_V13A or CLASS_PLAIN), in order, to `token` and
   `word` (see the note above CL_SPACE). The line is read 64 bytes at a time as class masks (block_masks); a
   token's start and end are the next set and clear bits. Always inlined, so each caller's sinks are direct
   calls. */
static ALWAYS_INLINE int scan_bytes(void *sink, token_sink_fn token, word_sink_fn word, const uint8_t *s, size_t n,
                                    const uint8_t *cls) {
    const uint8_t *end = s + n;
    uint64_t W, P, S, carry = 0; /* the masks of the block s[base .. base + 64) */
    int got;
    /* starts: the bytes of the block where a token starts (a padded symbol, or a word byte after a byte that is not
       a word's: `carry` is 1 when the block before ended inside a word) */
    for (size_t base = 0; base < n; base += 64) {
        block_masks(s + base, n - base, cls, &W, &P, &S);
        uint64_t starts = P | (W & ~(W << 1 | carry));
        carry = W >> 63;
        while (starts) {
            unsigned off = CTZ64(starts);
            starts &= starts - 1;
            size_t a = base + off, i;
            if (P >> off & 1) {
                if ((got = token(sink, s + a, 1, end)) < 0) return got;
                continue;
            }
            uint64_t e = ~W >> off;
            int special;
            uint64_t sp = 0; /* the word's special bytes, when it ends in this block */
            if (e) { /* the word ends in this block */
                unsigned len = CTZ64(e);
                i = a + len;
                sp = S >> off & ((UINT64_C(1) << len) - 1);
                special = sp != 0;
            } else { /* it runs on into the next blocks: scanning goes on from the block where it ends */
                special = (S >> off) != 0;
                starts = 0;
                for (;;) {
                    base += 64;
                    if (base >= n) {
                        i = n;
                        break;
                    }
                    block_masks(s + base, n - base, cls, &W, &P, &S);
                    if (~W) {
                        unsigned len = CTZ64(~W);
                        i = base + len;
                        special |= (S & ((UINT64_C(1) << len) - 1)) != 0;
                        starts = P | (W & ~(W << 1 | 1)); /* (bits below len: the word's own) */
                        carry = W >> 63;
                        break;
                    }
                    special |= S != 0;
                }
            }
            if (!special) {
                if ((got = token(sink, s + a, i - a, end)) < 0) return got;
                continue;
            }
            /* The commonest special words, without rule passes: one character ('.', ',' or '-') is itself; a word
               whose only special character is a final '.' or ',' loses it (rule 2 after a non-digit, rule 3 before
               the space after it otherwise): "word," -> "word" ",". */
            size_t m_len = i - a, j = 0;
            uint8_t last = s[i - 1];
            if (sp) /* (from the masks: only the last byte is special) */
                j = sp == UINT64_C(1) << (m_len - 1) && (last == '.' || last == ',') ? m_len - 1 : 0;
            else if (last == '.' || last == ',')
                while (j < m_len - 1 && cls[s[a + j]] != CL_SPECIAL) j++;
            if (m_len == 1 || j == m_len - 1) {
                if (m_len > 1 && (got = token(sink, s + a, m_len - 1, end)) < 0) return got;
                if ((got = token(sink, s + i - 1, 1, end)) < 0) return got;
                continue;
            }
            if (rules_leave_word(s + a, m_len)) { /* "well-known", "10,000", "7.5": one token as it is */
                if ((got = token(sink, s + a, m_len, end)) < 0) return got;
                continue;
            }
            if ((got = word(sink, s + a, m_len)) < 0) return got;
        }
    }
    return 0;
}

/* Rules 2-4 on " " + w[0..n) + " " (a v13a word), through scratch `a` into `b`, whose whitespace-separated
   pieces are the word's tokens; -1 on OOM. */
static inline int rules_on_word(const uint8_t *w, size_t n, ubuf_t *a, ubuf_t *b) {
    if (ubuf_reserve(a, n + 2) < 0) return -1;
    a->p[0] = ' ';
    for (size_t i = 0; i < n; i++) a->p[i + 1] = w[i];
    a->p[n + 1] = ' ';
    a->len = n + 2;
    return rule_pass(2, a, b) < 0 || rule_pass(3, b, a) < 0 || rule_pass(4, a, b) < 0 ? -1 : 0;
}

/* ASCII-case-insensitive: does s[0..n) start with the lower-case `word`? */
static inline int starts_with_ci(const uint8_t *s, size_t n, const char *word) {
    size_t m = strlen(word);
    if (n < m) return 0;
    for (size_t i = 0; i < m; i++) {
        uint8_t c = s[i];
        if (c >= 'A' && c <= 'Z') c += 32;
        if (c != (uint8_t)word[i]) return 0;
    }
    return 1;
}

/* Whether a 1-byte v13a line needs the tokenizer's own preprocessing first: a line break, "<skipped>" or one
   of the four entities (in any ASCII case: lower-casing comes first). */
static inline int needs_prep_u8(const uint8_t *s, size_t n) {
#if defined(__SSE2__)
    if (n >= 16) { /* one pass for the three bytes, 16 at a time (the last 16 overlapping): most lines have none */
        const __m128i nl = _mm_set1_epi8('\n'), amp = _mm_set1_epi8('&'), lt = _mm_set1_epi8('<');
        __m128i any = _mm_setzero_si128();
        for (size_t i = 0;; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + (i + 16 <= n ? i : n - 16)));
            any = _mm_or_si128(any, _mm_or_si128(_mm_cmpeq_epi8(v, nl),
                                                 _mm_or_si128(_mm_cmpeq_epi8(v, amp), _mm_cmpeq_epi8(v, lt))));
            if (i + 16 >= n) break;
        }
        if (!_mm_movemask_epi8(any)) return 0;
    }
#endif
    if (memchr(s, '\n', n)) return 1;
    static const char *const entities[] = {"quot;", "amp;", "lt;", "gt;"};
    for (const uint8_t *p = s; (p = (const uint8_t *)memchr(p, '&', (size_t)(s + n - p))) != NULL; p++)
        for (int e = 0; e < 4; e++)
            if (starts_with_ci(p + 1, (size_t)(s + n - p - 1), entities[e])) return 1;
    for (const uint8_t *p = s; (p = (const uint8_t *)memchr(p, '<', (size_t)(s + n - p))) != NULL; p++)
        if (starts_with_ci(p + 1, (size_t)(s + n - p - 1), "skipped>")) return 1;
    return 0;
}

/* Whether a 2-byte line u[0..n) holds '\n', '&' or '<' (a wider v13a line then takes the tokenizer's preprocessing):
   one pass, 8 code units a step with SSE2, in place of a search for each. */
static inline int has_markup_u16(const uint16_t *u, size_t n) {
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi16('\n'), amp = _mm_set1_epi16('&'), lt = _mm_set1_epi16('<');
    __m128i any = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(u + i));
        any = _mm_or_si128(any, _mm_or_si128(_mm_cmpeq_epi16(v, nl), _mm_or_si128(_mm_cmpeq_epi16(v, amp),
                                                                                 _mm_cmpeq_epi16(v, lt))));
    }
    if (_mm_movemask_epi8(any)) return 1;
#endif
    for (; i < n; i++)
        if (u[i] == '\n' || u[i] == '&' || u[i] == '<') return 1;
    return 0;
}

/* The string to scan for line t: the line itself, or what `prep` (the tokenizer's exact Python preprocessing of
   one line) makes of it where the scanner alone would not be exact: under v13a a line break, "<skipped>" or
   an entity; with `lowercase` any non-ASCII line; a wider line under v13a holding '\n', '&' or '<'. New
   reference, *prepared set when prep ran; NULL with an exception. */
static inline PyObject *line_source(PyObject *s, Py_ssize_t t, int v13a, int lowercase, PyObject *prep, int *prepared) {
    *prepared = 0;
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "line %zd is %.100s, not str", t + 1, Py_TYPE(s)->tp_name);
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) return NULL;
#endif
    int need = lowercase && !PyUnicode_IS_ASCII(s);
    if (!need && v13a) {
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        if (PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND) {
            need = needs_prep_u8((const uint8_t *)PyUnicode_DATA(s), (size_t)len);
        } else if (PyUnicode_KIND(s) == PyUnicode_2BYTE_KIND) {
            need = has_markup_u16((const uint16_t *)PyUnicode_DATA(s), (size_t)len);
        } else {
            for (const char *c = "\n&<"; *c && !need; c++) {
                Py_ssize_t at = PyUnicode_FindChar(s, (Py_UCS4)*c, 0, len, 1);
                if (at == -2) return NULL;
                need = at >= 0;
            }
        }
    }
    if (!need) {
        Py_INCREF(s);
        return s;
    }
    PyObject *out = PyObject_CallFunctionObjArgs(prep, s, NULL);
    if (out && !PyUnicode_CheckExact(out)) {
        PyErr_Format(PyExc_TypeError, "line %zd: the tokenizer's preprocessing gave %.100s, not str", t + 1,
                     Py_TYPE(out)->tp_name);
        Py_CLEAR(out);
    }
#if PY_VERSION_HEX < 0x030C0000
    if (out && PyUnicode_READY(out) < 0) Py_CLEAR(out);
#endif
    *prepared = 1;
    return out;
}

/* ROUGE's characters: ASCII A-Z lower-cased, a-z and 0-9 kept, '\n' ends a sentence, all else separates. */
static inline Py_UCS4 rouge_char(Py_UCS4 c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : 0;
}

/* The string to scan for texts[t]: the text itself, or with full_lower and a non-ASCII text str.lower() of an
   exact-str copy (so neither a subclass's lower() nor its result type is trusted). New reference; NULL with
   an exception. */
static inline PyObject *rouge_source(PyObject *s, Py_ssize_t t, int full_lower) {
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "text %zd is %.100s, not str", t + 1, Py_TYPE(s)->tp_name);
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) return NULL;
#endif
    if (!full_lower || PyUnicode_IS_ASCII(s)) {
        Py_INCREF(s);
        return s;
    }
    PyObject *exact = PyUnicode_FromObject(s);
    if (!exact) return NULL;
    PyObject *low = PyObject_CallMethod(exact, "lower", NULL);
    Py_DECREF(exact);
    if (low && !PyUnicode_CheckExact(low)) {
        PyErr_Format(PyExc_TypeError, "text %zd: str.lower() gave %.100s", t + 1, Py_TYPE(low)->tp_name);
        Py_CLEAR(low);
    }
    return low;
}

#endif
