/* Sizing models. See docs/design.md for the derivation. */
#include "config.h"

#include "bloom/sizing.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/* Rate of a blocked filter whose blocks hold Poisson(lambda) items each, with k
 * probes drawn independently (with replacement) from the block's W = 512 bits.
 *
 * Two effects the classic formula misses, both of which push the real rate up:
 * 1. uneven load: the number of items per block is Poisson, and the rate of a
 *    block grows steeply with its load (about 2x at 1e-4);
 * 2. uneven fill: given L items, the number X of bits set in the block varies,
 *    and P(FP | L) = E[(X/W)^k] > (E[X]/W)^k by Jensen (about 4% at 1e-4).
 * So for each load L we take the exact occupancy distribution of kL throws into
 * W bins (a dynamic programme over throws), and weight P(FP | L) by Poisson.
 *
 * g[L] = P(FP | L) for L = 0..lmax; the DP costs k*lmax*W steps, a few ms. */
static double *block_fp_table(unsigned k, unsigned lmax, unsigned W)
{
    double *g = malloc(sizeof(double) * (lmax + 1));
    double *occ = calloc(W + 1, sizeof(double)); /* P(X = x) after t throws */
    double *powk = malloc(sizeof(double) * (W + 1));
    if (!g || !occ || !powk) {
        free(g);
        free(occ);
        free(powk);
        return NULL;
    }
    for (unsigned x = 0; x <= W; x++)
        powk[x] = pow((double)x / W, (double)k);
    occ[0] = 1.0;
    unsigned top = 0; /* highest x with non-zero probability */
    g[0] = 0.0;
    for (unsigned L = 1; L <= lmax; L++) {
        for (unsigned t = 0; t < k; t++) {
            /* One more throw: stays at x with prob x/W, moves to x+1 otherwise. */
            if (top < W)
                top++;
            for (unsigned x = top; x > 0; x--)
                occ[x] = occ[x] * ((double)x / W) + occ[x - 1] * ((double)(W - x + 1) / W);
            occ[0] = 0.0;
        }
        double sum = 0.0;
        for (unsigned x = 0; x <= top; x++)
            sum += occ[x] * powk[x];
        g[L] = sum;
    }
    free(occ);
    free(powk);
    return g;
}

static unsigned lmax_for(double lambda) { return (unsigned)(lambda + 14.0 * sqrt(lambda) + 40.0); }

/* Poisson(lambda)-weighted mean of g[0..lmax], the weights built in log space
 * from L = 0 so a large lambda neither underflows exp(-lambda) nor needs lgamma
 * (not thread-safe). Loads past lmax weigh under 1e-40 in all and are left
 * out; counting "1 - the summed weights" as hits instead would only add
 * rounding noise (2^-53) and make tiny rates non-monotone. */
static double poisson_mix(const double *g, unsigned lmax, double lambda)
{
    double logp = -lambda, sum = 0.0;
    for (unsigned L = 0; L <= lmax; L++) {
        if (L > 0)
            logp += log(lambda / L);
        if (logp > -700.0)
            sum += exp(logp) * g[L];
    }
    return sum;
}

static double blocked_fpr_lambda_w(double lambda, unsigned k, unsigned W)
{
    unsigned lmax = lmax_for(lambda);
    double *g = block_fp_table(k, lmax, W);
    if (!g)
        return 1.0;
    double r = poisson_mix(g, lmax, lambda);
    free(g);
    return r;
}

/* The DP tables of one sizing, by k: g[0..lmax] depends on k and W only, so
 * the table made for the largest load asked answers every smaller one (its
 * prefix is the same numbers, computed by the same steps). A sizing asks the
 * model at a hundred or so sizes near one k; without this cache each ask
 * redid the DP, and a create with a new rate spent a tenth of a second here. */
struct gcache {
    unsigned lmax[SIZING_MAX_K + 1];
    double *g[SIZING_MAX_K + 1];
};

static void gcache_free(struct gcache *c)
{
    for (unsigned k = 0; k <= SIZING_MAX_K; k++)
        free(c->g[k]);
}

/* The model for blocks of W positions (512 bits; 128 counters); c, when not
 * NULL, keeps the DP tables between calls (same answers, bit for bit). */
static double fpr_w(double per_item, unsigned k, unsigned W, struct gcache *c)
{
    if (per_item <= 0 || k == 0)
        return 1.0;
    double lambda = W / per_item;
    if (!c || k > SIZING_MAX_K)
        return blocked_fpr_lambda_w(lambda, k, W);
    unsigned lmax = lmax_for(lambda);
    if (!c->g[k] || c->lmax[k] < lmax) {
        free(c->g[k]);
        c->g[k] = block_fp_table(k, lmax, W);
        c->lmax[k] = lmax;
        if (!c->g[k])
            return 1.0;
    }
    return poisson_mix(c->g[k], lmax, lambda);
}

double sizing_blocked_fpr(double bits_per_item, unsigned k)
{
    return fpr_w(bits_per_item, k, SIZING_BLOCK_BITS, NULL);
}

/* The cheap (Jensen) model, (1 - q^(kL))^k per block, only to find where to
 * start: it is a lower bound on the exact rate. */
static double approx_fpr(double bits_per_item, unsigned k, unsigned W)
{
    const double lnq = log1p(-1.0 / W);
    double lambda = W / bits_per_item;
    unsigned lmax = lmax_for(lambda);
    double logp = -lambda, sum = 0.0;
    for (unsigned L = 0; L <= lmax; L++) {
        if (L > 0)
            logp += log(lambda / L);
        if (logp > -700.0)
            sum += exp(logp + (double)k * log(fmax(-expm1((double)k * L * lnq), 1e-300)));
    }
    return sum;
}

static double approx_best(double bits_per_item, unsigned *best_k, unsigned W)
{
    double best = 2.0;
    unsigned bk = 1;
    for (unsigned k = 1; k <= SIZING_MAX_K; k++) {
        double r = approx_fpr(bits_per_item, k, W);
        if (r < best) {
            best = r;
            bk = k;
        }
    }
    *best_k = bk;
    return best;
}

/* Exact best k near the approximate one (the exact optimum is within a couple
 * of probes of it; a window keeps the DP count small). */
static double exact_best(double bits_per_item, unsigned k_hint, unsigned *best_k, unsigned W,
                         struct gcache *c)
{
    unsigned lo = k_hint > 3 ? k_hint - 3 : 1;
    unsigned hi = k_hint + 3 < SIZING_MAX_K ? k_hint + 3 : SIZING_MAX_K;
    double best = 2.0;
    unsigned bk = k_hint;
    for (unsigned k = lo; k <= hi; k++) {
        double r = fpr_w(bits_per_item, k, W, c);
        if (r < best) {
            best = r;
            bk = k;
        }
    }
    *best_k = bk;
    return best;
}

static unsigned best_k_w(double per_item, unsigned W)
{
    unsigned k0, k;
    approx_best(per_item, &k0, W);
    exact_best(per_item, k0, &k, W, NULL);
    return k;
}

unsigned sizing_blocked_best_k(double bits_per_item)
{
    return best_k_w(bits_per_item, SIZING_BLOCK_BITS);
}

/* Smallest bits per item meeting p: binary search on the cheap model (min over
 * k falls as bits per item grow), then walk up in 0.25% steps under the exact
 * model, which is never below the cheap one. The search stops at 256 bits per
 * item (1e-12, the smallest rate a plan may ask for, takes ~159); a rate out of
 * reach there is refused. */
static int sizing_w(double p, double *bits_per_item, unsigned *k, unsigned W)
{
    double lo = 0.25, hi = 256.0;
    unsigned k0;
    if (!(p > 0.0 && p < 1.0))
        return -1;
    if (approx_best(hi, &k0, W) > p)
        return -1;
    for (int i = 0; i < 60 && hi - lo > 1e-4; i++) {
        double mid = (lo + hi) / 2;
        if (approx_best(mid, &k0, W) <= p)
            hi = mid;
        else
            lo = mid;
    }
    approx_best(hi, &k0, W);
    struct gcache gc = {0};
    int rc = -1;
    double c = hi;
    for (int i = 0; i < 400; i++, c *= 1.0025) {
        if (exact_best(c, k0, k, W, &gc) <= p) {
            /* Bisect the last step so the size is within 0.01% of the least. */
            double fail = c / 1.0025, pass = c;
            unsigned kk;
            for (int j = 0; i > 0 && j < 5; j++) {
                double mid = (fail + pass) / 2;
                if (exact_best(mid, k0, &kk, W, &gc) <= p)
                    pass = mid;
                else
                    fail = mid;
            }
            *bits_per_item = pass;
            exact_best(pass, k0, k, W, &gc);
            rc = 0;
            break;
        }
    }
    gcache_free(&gc);
    return rc;
}

int sizing_blocked(double p, double *bits_per_item, unsigned *k)
{
    return sizing_w(p, bits_per_item, k, SIZING_BLOCK_BITS);
}

double sizing_classic_fpr(double m, double n, unsigned k)
{
    if (m <= 0)
        return 1.0;
    return pow(-expm1(-(double)k * n / m), (double)k);
}

/* k comes from the textbook optimum, k = round(m/n ln 2) with m = -n ln p /
 * (ln 2)^2; m is then the least that meets p for that whole k, solving
 * (1 - e^(-kn/m))^k = p. Rounding k alone pushes the rate over p (1.0013e-4 for
 * 1e-4); this costs 0.015% more bits at 1e-4. */
void sizing_classic(uint64_t n, double p, uint64_t *bits, unsigned *k)
{
    const double ln2 = log(2.0);
    double m0 = -(double)n * log(p) / (ln2 * ln2);
    double kk = round(m0 / (double)n * ln2);
    if (kk < 1)
        kk = 1;
    if (kk > SIZING_MAX_K)
        kk = SIZING_MAX_K;
    double m = ceil(-kk * (double)n / log1p(-pow(p, 1.0 / kk)));
    if (m < 1)
        m = 1;
    *bits = (uint64_t)m;
    *k = (unsigned)kk;
}

static double estimate_w(uint64_t total_bits, uint64_t bits_set, unsigned k, unsigned W)
{
    if (total_bits == 0 || bits_set >= total_bits)
        return 1.0;
    if (bits_set == 0)
        return 0.0;
    double fill = (double)bits_set / (double)total_bits;
    /* Mean block fill is 1 - exp(-lambda (1 - q^k)); invert it for lambda. */
    double per_item = -expm1((double)k * log1p(-1.0 / W));
    double lambda = -log1p(-fill) / per_item;
    return blocked_fpr_lambda_w(lambda, k, W);
}

double sizing_estimate_fpr_blocked(uint64_t total_bits, uint64_t bits_set, unsigned k)
{
    return estimate_w(total_bits, bits_set, k, SIZING_BLOCK_BITS);
}

/* The counting layout: the blocked model over blocks of 128 counters (a
 * cache line of 4-bit counters), a counter standing where a bit stood. */
int sizing_counting(double p, double *counters_per_item, unsigned *k)
{
    return sizing_w(p, counters_per_item, k, SIZING_COUNTING_BLOCK);
}

double sizing_counting_fpr(double counters_per_item, unsigned k)
{
    return fpr_w(counters_per_item, k, SIZING_COUNTING_BLOCK, NULL);
}

unsigned sizing_counting_best_k(double counters_per_item)
{
    return best_k_w(counters_per_item, SIZING_COUNTING_BLOCK);
}

double sizing_estimate_fpr_counting(uint64_t counters, uint64_t nonzero, unsigned k)
{
    return estimate_w(counters, nonzero, k, SIZING_COUNTING_BLOCK);
}

double sizing_estimate_fpr_classic(uint64_t total_bits, uint64_t bits_set, unsigned k)
{
    if (total_bits == 0)
        return 1.0;
    return pow((double)bits_set / (double)total_bits, (double)k);
}
