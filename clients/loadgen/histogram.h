/*
 * Log-linear (HDR-style) histogram of nanosecond values: 128 linear
 * sub-buckets per power of two, so a bucket's midpoint is within 0.4 % of
 * any value in it. min, max and mean are exact.
 */
#ifndef LG_HISTOGRAM_H
#define LG_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct histogram {
	uint64_t *counts;
	size_t nbuckets;
	uint64_t count, min, max;
	long double sum;
};

void hist_init(struct histogram *h);
void hist_record(struct histogram *h, uint64_t ns);
/* Value (ns) at quantile q in [0, 1]; 0 when empty. */
double hist_quantile(const struct histogram *h, double q);
/* `, "latency_us": {...}` for the result line (with `p95` when asked; every figure
 * null for an empty histogram). */
void hist_format_us(const struct histogram *h, bool p95, char *out, size_t cap);
/*
 * A new string (free it): `extra`, then `, "latency_hist": {...}`: the
 * histogram itself, sparse, so that histograms of several load generators can
 * be added bucket by bucket and their percentiles taken from the sum
 * (docs/scaling.md). "buckets" lists [index, count] of every non-empty bucket;
 * "unit_ns", "sub_bits" and "integer_values" say how an index maps to values
 * (clients/README.md, "Latency histograms"); "min", "max" and "sum" are exact,
 * in units.
 */
char *hist_append_buckets(const struct histogram *h, const char *extra);
void hist_free(struct histogram *h);

#endif
