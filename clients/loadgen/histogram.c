#include "histogram.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 7
#define SUB (1u << SUB_BITS)
/* values up to 2^63: shifts 0..56 above the linear range */
#define NBUCKETS ((size_t)SUB + (size_t)(64 - SUB_BITS) * SUB)

static size_t bucket_of(uint64_t v)
{
	unsigned msb, shift;

	if (v < SUB)
		return (size_t)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - SUB_BITS;
	return SUB + (size_t)shift * SUB + (size_t)((v >> shift) - SUB);
}

/* Midpoint of a bucket's value range. */
static double bucket_mid(size_t i)
{
	unsigned shift;
	uint64_t sub, lo;

	if (i < SUB)
		return (double)i;
	shift = (unsigned)((i - SUB) / SUB);
	sub = SUB + (i - SUB) % SUB;
	lo = sub << shift;
	return (double)lo + ((double)((uint64_t)1 << shift) - 1) / 2;
}

void hist_init(struct histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->nbuckets = NBUCKETS;
	h->counts = xcalloc(NBUCKETS, sizeof(*h->counts));
}

void hist_record(struct histogram *h, uint64_t ns)
{
	h->counts[bucket_of(ns)]++;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
}

double hist_quantile(const struct histogram *h, double q)
{
	uint64_t rank, seen = 0;
	double v;
	size_t i;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)h->count + 0.999999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (i = 0; i < h->nbuckets; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			break;
	}
	v = bucket_mid(i);
	/* never report outside the exact extremes */
	if (v < (double)h->min)
		v = (double)h->min;
	if (v > (double)h->max)
		v = (double)h->max;
	return v;
}

void hist_format_us(const struct histogram *h, bool p95, char *out, size_t cap)
{
	static const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
	static const char *const names[] = {"p50", "p90", "p95", "p99", "p999"};
	size_t i, used;

	/* an empty histogram has no percentiles: null, never a measured 0 */
	if (!h->count) {
		snprintf(out, cap, ", \"latency_us\": {\"count\": 0, \"min\": null, \"mean\": null, "
			 "\"p50\": null, \"p90\": null,%s \"p99\": null, \"p999\": null, \"max\": null}",
			 p95 ? " \"p95\": null," : "");
		return;
	}
	used = (size_t)snprintf(out, cap, ", \"latency_us\": {\"count\": %llu, \"min\": %.3f, \"mean\": %.3f",
				(unsigned long long)h->count, (double)h->min / 1e3,
				(double)(h->sum / h->count) / 1e3);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]) && used < cap; i++)
		if (p95 || qs[i] != 0.95)
			used += (size_t)snprintf(out + used, cap - used, ", \"%s\": %.3f", names[i],
						 hist_quantile(h, qs[i]) / 1e3);
	if (used < cap)
		snprintf(out + used, cap - used, ", \"max\": %.3f}", (double)h->max / 1e3);
}

char *hist_append_buckets(const struct histogram *h, const char *extra)
{
	size_t i, used = 0, nonzero = 0, cap;
	char *out;

	for (i = 0; i < h->nbuckets; i++)
		nonzero += h->counts[i] != 0;
	/* "[index, count], " is at most 2 + 20 + 2 + 20 + 3 characters */
	cap = strlen(extra) + 256 + nonzero * 48;
	out = xmalloc(cap);
	used = (size_t)snprintf(out, cap,
		"%s, \"latency_hist\": {\"unit_ns\": 1, \"sub_bits\": %u, "
		"\"integer_values\": true, \"count\": %llu, \"min\": %llu, "
		"\"max\": %llu, \"sum\": %.0Lf, \"buckets\": [",
		extra, SUB_BITS, (unsigned long long)h->count,
		(unsigned long long)(h->count ? h->min : 0),
		(unsigned long long)h->max, h->sum);
	for (i = 0; i < h->nbuckets; i++) {
		if (!h->counts[i])
			continue;
		used += (size_t)snprintf(out + used, cap - used, "%s[%zu, %llu]",
					 out[used - 1] == '[' ? "" : ", ", i,
					 (unsigned long long)h->counts[i]);
	}
	snprintf(out + used, cap - used, "]}");
	return out;
}

void hist_free(struct histogram *h)
{
	free(h->counts);
	h->counts = NULL;
}
