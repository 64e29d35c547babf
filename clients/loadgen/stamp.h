/*
 * The stamp at the head of a published message (the fanout and slow kinds): its
 * number (bytes 0-7) and its due time (bytes 8-15, CLOCK_MONOTONIC ns), both
 * little-endian; the rest of the message is filler.
 */
#ifndef LG_STAMP_H
#define LG_STAMP_H

#include <stdint.h>

#define STAMP_BYTES 16

static inline uint64_t stamp_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void stamp_put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Stamp message `seq`, due at `due_ns`, into p[0..15]. */
static inline void stamp_put(unsigned char *p, uint64_t seq, uint64_t due_ns)
{
	stamp_put_le64(p, seq);
	stamp_put_le64(p + 8, due_ns);
}

#endif
