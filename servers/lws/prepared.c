/*
 * Prepared text messages: deterministic content, cached in a few slots.
 *
 * utf8:    mostly ASCII, with a 2-, 3- or 4-byte character after every run
 *          of ASCII; never splits a character; padded with ASCII to exactly
 *          N bytes.
 * badutf8: the same with the byte at N-1024 (N/2 when N < 2048) set to 0xFF.
 *
 * lws_write() puts the frame header into the LWS_PRE bytes in front of the
 * payload. Every connection writes the same header there (text, FIN, same
 * length) and the server is single-threaded, so sharing one buffer is safe.
 */
#include "prepared.h"

#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4

struct prepared {
	int bad;		/* 1 = badutf8 */
	size_t len;		/* payload bytes; 0 = free slot */
	unsigned refs;		/* connections using it */
	unsigned char *buf;	/* LWS_PRE headroom + payload */
};

static struct prepared slots[SLOTS];

/* Characters inserted between ASCII runs, in turn: é, €, 😀, ß, 中, 🎉. */
static const char *const multibyte[] = {
	"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
	"\xc3\x9f", "\xe4\xb8\xad", "\xf0\x9f\x8e\x89",
};
#define NMULTI (sizeof(multibyte) / sizeof(multibyte[0]))

static const char ascii[] =
	"The quick brown fox jumps over the lazy dog; 0123456789. ";

static void fill_utf8(unsigned char *p, size_t n)
{
	size_t pos = 0, k = 0, run;

	while (pos < n) {
		/* an ASCII run of 23..61 bytes, varying with k */
		run = 23 + (k * 7) % 39;
		for (; run && pos < n; run--, pos++)
			p[pos] = (unsigned char)ascii[pos % (sizeof(ascii) - 1)];
		if (pos < n) {
			const char *c = multibyte[k % NMULTI];
			size_t clen = strlen(c);

			if (pos + clen <= n) {
				memcpy(p + pos, c, clen);
				pos += clen;
			}
		}
		k++;
	}
}

static int build(struct prepared *s, int bad, size_t n)
{
	unsigned char *buf = malloc(LWS_PRE + n);

	if (!buf)
		return -1;
	fill_utf8(buf + LWS_PRE, n);
	if (bad)
		buf[LWS_PRE + (n >= 2048 ? n - 1024 : n / 2)] = 0xff;
	s->bad = bad;
	s->len = n;
	s->refs = 0;
	s->buf = buf;
	return 0;
}

struct prepared *prepared_get(const char *name, size_t n)
{
	struct prepared *free_slot = NULL;
	int bad, i;

	if (!strcmp(name, "utf8"))
		bad = 0;
	else if (!strcmp(name, "badutf8"))
		bad = 1;
	else
		return NULL;
	if (n < 1 || n > PREPARED_MAX)
		return NULL;

	for (i = 0; i < SLOTS; i++) {
		if (slots[i].len == n && slots[i].bad == bad) {
			slots[i].refs++;
			return &slots[i];
		}
		if (!slots[i].refs && (!free_slot || !slots[i].len))
			free_slot = &slots[i];
	}
	if (!free_slot)
		return NULL;
	/* evict an unused entry (or take an empty slot) */
	free(free_slot->buf);
	memset(free_slot, 0, sizeof(*free_slot));
	if (build(free_slot, bad, n))
		return NULL;
	free_slot->refs = 1;
	return free_slot;
}

void prepared_put(struct prepared *p)
{
	if (p && p->refs)
		p->refs--;
}

unsigned char *prepared_payload(struct prepared *p)
{
	return p->buf + LWS_PRE;
}

size_t prepared_len(const struct prepared *p)
{
	return p->len;
}

void prepared_free_all(void)
{
	int i;

	for (i = 0; i < SLOTS; i++) {
		free(slots[i].buf);
		memset(&slots[i], 0, sizeof(slots[i]));
	}
}
