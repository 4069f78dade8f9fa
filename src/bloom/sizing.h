/* sizing: how many bits and probes a filter needs for a capacity and a target
 * false-positive rate, and what rate a filter has given how full it is.
 * Pure math; any thread. */
#ifndef BLOOMGATE_SIZING_H
#define BLOOMGATE_SIZING_H

#include <stdint.h>

#define SIZING_BLOCK_BITS 512u /* one 64-byte cache line */
#define SIZING_MAX_K 32u

/* Expected false-positive rate of a blocked filter with `bits_per_item` bits per
 * item and k probes, when blocks receive a Poisson-distributed number of items. */
double sizing_blocked_fpr(double bits_per_item, unsigned k);

/* Expected rate of a classic filter of m bits holding n items with k probes. */
double sizing_classic_fpr(double m, double n, unsigned k);

/* Smallest bits-per-item for a blocked filter that meets p, with the k that
 * reaches it. Returns 0, or -1 if p is out of the blocked layout's reach. */
int sizing_blocked(double p, double *bits_per_item, unsigned *k);

/* For a blocked filter with a known number of blocks and capacity, the k that
 * minimises the model's rate. */
unsigned sizing_blocked_best_k(double bits_per_item);

/* Classic sizing: m = -n ln p / (ln 2)^2 bits, k = round(m/n ln 2). */
void sizing_classic(uint64_t n, double p, uint64_t *bits, unsigned *k);

/* The false-positive rate implied by how many bits are set: for classic it is
 * fill^k; for blocked the fill is turned back into a mean block load and fed
 * through the Poisson model. */
double sizing_estimate_fpr_blocked(uint64_t total_bits, uint64_t bits_set, unsigned k);
double sizing_estimate_fpr_classic(uint64_t total_bits, uint64_t bits_set, unsigned k);

/* The counting layout (bloom/counting.h): the same model over blocks of
 * SIZING_COUNTING_BLOCK 4-bit counters (one cache line), per counter. */
#define SIZING_COUNTING_BLOCK 128u
int sizing_counting(double p, double *counters_per_item, unsigned *k);
double sizing_counting_fpr(double counters_per_item, unsigned k);
unsigned sizing_counting_best_k(double counters_per_item);
double sizing_estimate_fpr_counting(uint64_t counters, uint64_t nonzero, unsigned k);

#endif
