#include "corpus.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* xorshift32 (Marsaglia 2003, shifts 13, 17, 5); payload.js computes the same on
 * 32-bit integers (`>>> 0` keeps its state unsigned) */
static inline uint32_t xorshift32(uint32_t x)
{
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* slot j's state: (j + 1) * 0x9e3779b9 mod 2^32, its first four outputs dropped */
static uint32_t corpus_seed(unsigned slot)
{
	uint32_t x = ((uint32_t)slot + 1u) * 0x9e3779b9u;
	int i;

	if (!x)
		x = 1;
	for (i = 0; i < 4; i++)
		x = xorshift32(x);
	return x;
}

static const char *const symbols[8] = {
	"BTC-USD", "ETH-USD", "SOL-USD", "XRP-USD", "ADA-USD", "DOGE-USD", "AVAX-USD", "LINK-USD",
};
static const uint32_t price_cents[8] = { 4123450, 221275, 6120, 62, 38, 9, 2245, 1432 };
static const uint32_t price_spread[8] = { 82469, 4425, 122, 2, 2, 1, 45, 29 };

/*
 * {"seq":48213977,"sym":"ETH-USD","px":2233.41,"qty":12.0532,"side":"buy","ts":1732812345678}
 * and a newline, record after record, cut at n bytes (payload.js jsonString: the same
 * draws in the same order)
 */
void corpus_json(unsigned slot, unsigned char *out, size_t n)
{
	uint32_t x = corpus_seed(slot), seq, sym, px, qty, side;
	uint64_t ts;
	size_t have = 0;
	char rec[160];
	int len;

	x = xorshift32(x);
	seq = 10000000u + x % 90000000u;
	x = xorshift32(x);
	ts = 1732752000000ull + x % 86400000u;
	while (have < n) {
		x = xorshift32(x);
		sym = x & 7;
		x = xorshift32(x);
		px = price_cents[sym] + x % price_spread[sym];
		x = xorshift32(x);
		qty = 1 + x % 5000000u;
		x = xorshift32(x);
		side = x & 1;
		ts += (x >> 1) % 250;
		len = snprintf(rec, sizeof(rec),
			       "{\"seq\":%" PRIu32 ",\"sym\":\"%s\",\"px\":%" PRIu32 ".%02" PRIu32
			       ",\"qty\":%" PRIu32 ".%04" PRIu32 ",\"side\":\"%s\",\"ts\":%" PRIu64 "}\n",
			       seq, symbols[sym], px / 100, px % 100, qty / 10000, qty % 10000,
			       side ? "sell" : "buy", ts);
		if ((size_t)len > n - have)
			len = (int)(n - have);
		memcpy(out + have, rec, (size_t)len);
		have += (size_t)len;
		seq++;
	}
}

void corpus_random(unsigned slot, unsigned char *out, size_t n)
{
	uint32_t x = corpus_seed(slot);
	size_t i, j;

	for (i = 0; i < n; i += 4) {
		x = xorshift32(x);
		for (j = 0; j < 4 && i + j < n; j++)
			out[i + j] = (unsigned char)(x >> (8 * j));
	}
}
