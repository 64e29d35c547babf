/*
 * UTF-8 validation and UTF-8 -> UTF-16 decoding with no JS, sockets or
 * libwebsockets (utf8_core.c): the module's receive path and its strings
 * (quickjs-websocket/src/utf8.c), the load generator's texts
 * (clients/loadgen/utf8.c, kind_observe.c).
 */
#ifndef WSPROTO_UTF8_CORE_H
#define WSPROTO_UTF8_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#pragma GCC visibility push(hidden)

/* UTF-16 of a long received text, reused by the next one (opt "strrecv") */
typedef struct text_scratch {
    uint8_t *buf;
    size_t cap;
    size_t done, units; /* text_stream(): bytes taken, UTF-16 units written */
    int wide;           /* text_stream(): a byte that is not ASCII was seen */
} text_scratch;

#define TEXT_HEAD_MAX 16   /* version, atom count, tag, LEB128 length */

/* strict RFC 3629 validation: 1 valid, 0 not */
int utf8_valid(const uint8_t *p, size_t len);
/* the same, one chunk at a time: *st is 0 at the start of a message and
 * must be 0 again at its end (no sequence left open); 1 valid so far, 0 not.
 * The verdict for everything fed so far, at any point: utf8_stream_complete(). */
int utf8_stream(uint32_t *st, const uint8_t *p, size_t len);
/* 1: what was fed is complete valid UTF-8 (given utf8_stream never said 0) */
static inline int utf8_stream_complete(uint32_t st)
{
    return st == 0;
}

/* UTF-16 of valid UTF-8 into out; returns the units written.  out needs room
 * for n units, one per byte, however few it keeps: it widens 16 at a time */
size_t decode_utf16(const uint8_t *p, size_t n, uint16_t *out);
/* how many UTF-16 code units valid UTF-8 makes (what decode_utf16 would write);
 * any split of a text adds up to its whole count */
size_t utf16_units(const uint8_t *p, size_t n);

/* Long texts in several chunks, validated and decoded together as they arrive:
 * p holds the message's n bytes so far, in a buffer of cap; 1 ok, 0 invalid
 * UTF-8 (final: the message ends at n), -1 out of memory.  The UTF-16 is at
 * t->buf + TEXT_HEAD_MAX (t->units units) once t->wide is set. */
void text_stream_start(text_scratch *t);
int text_stream(text_scratch *t, const uint8_t *p, size_t n, size_t cap, int final);

/* How many bytes from p on are ASCII, looking at no more than 16 of them (a
 * shorter answer means the byte there is not); on x86-64, one SSE2 compare. */
static inline size_t ascii_run16(const uint8_t *p)
{
#ifdef __SSE2__
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p));
    return m ? (size_t)__builtin_ctz(m) : 16;
#else
    uint64_t w[2];
    size_t k;
    memcpy(w, p, 16);
    if (!((w[0] | w[1]) & 0x8080808080808080ull))
        return 16;
    for (k = 0; !(p[k] & 0x80); k++)
        ;
    return k;
#endif
}

/* 16 bytes widened to 16 UTF-16 code units (only the ASCII ones are kept) */
static inline void widen16(const uint8_t *p, uint16_t *out)
{
#ifdef __SSE2__
    __m128i v = _mm_loadu_si128((const __m128i *)p), z = _mm_setzero_si128();
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi8(v, z));
    _mm_storeu_si128((__m128i *)(out + 8), _mm_unpackhi_epi8(v, z));
#else
    int k;
    for (k = 0; k < 16; k++)
        out[k] = p[k];
#endif
}

/* one valid multi-byte character at p (lead byte >= 0xC2) to UTF-16 at out;
 * returns the bytes it took, *units the code units it wrote */
static inline size_t decode_char(const uint8_t *p, uint16_t *out, size_t *units)
{
    uint8_t c = p[0];
    if (c < 0xe0) {
        out[0] = (uint16_t)((c & 0x1f) << 6 | (p[1] & 0x3f));
        *units = 1;
        return 2;
    }
    if (c < 0xf0) {
        out[0] = (uint16_t)((c & 0x0f) << 12 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f));
        *units = 1;
        return 3;
    }
    {
        uint32_t cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
                      (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
        cp -= 0x10000;
        out[0] = (uint16_t)(0xd800 | cp >> 10);
        out[1] = (uint16_t)(0xdc00 | (cp & 0x3ff));
        *units = 2;
        return 4;
    }
}

#pragma GCC visibility pop

#endif
