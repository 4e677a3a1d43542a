/* The 64-bit finaliser of MurmurHash3 (fmix64): spreads n-gram and skip-bigram keys over open-addressing tables. */
#ifndef NGRAMEVAL_HASH_H
#define NGRAMEVAL_HASH_H
#include <stdint.h>

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#endif
