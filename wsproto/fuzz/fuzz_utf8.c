/*
 * libFuzzer target: the room's UTF-8 validators and decoder (utf8_core.c),
 * which both clients use, against a reference decoder written from RFC
 * 3629's Table 3-7 (here, table-driven).
 *
 * Input: the split points (fuzz_common.h), then the text.  Properties:
 *   - utf8_valid(text) is the reference's verdict;
 *   - utf8_stream() fed the pieces fails in exactly the piece holding the
 *     first byte after which no continuation can make the text valid, and
 *     ends open (state != 0) exactly when the text ends inside a character;
 *   - text_stream() (validate + decode as it arrives) gives the same verdicts
 *     at the same points, and, for valid text, the reference's UTF-16;
 *   - decode_utf16() of valid text is the reference's UTF-16;
 *   - utf16_units() of valid text, summed over the pieces, is the
 *     reference's count of UTF-16 units.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "utf8_core.h"

/* RFC 3629, Table 3-7: well-formed byte sequences, one row per range */
static const struct {
    uint8_t lo[4], hi[4];
    int len;
} TABLE[] = {
    { { 0x00 }, { 0x7f }, 1 },
    { { 0xc2, 0x80 }, { 0xdf, 0xbf }, 2 },
    { { 0xe0, 0xa0, 0x80 }, { 0xe0, 0xbf, 0xbf }, 3 },
    { { 0xe1, 0x80, 0x80 }, { 0xec, 0xbf, 0xbf }, 3 },
    { { 0xed, 0x80, 0x80 }, { 0xed, 0x9f, 0xbf }, 3 },
    { { 0xee, 0x80, 0x80 }, { 0xef, 0xbf, 0xbf }, 3 },
    { { 0xf0, 0x90, 0x80, 0x80 }, { 0xf0, 0xbf, 0xbf, 0xbf }, 4 },
    { { 0xf1, 0x80, 0x80, 0x80 }, { 0xf3, 0xbf, 0xbf, 0xbf }, 4 },
    { { 0xf4, 0x80, 0x80, 0x80 }, { 0xf4, 0x8f, 0xbf, 0xbf }, 4 },
};

struct ref {
    size_t bad_at;  /* first byte that no continuation can make valid; n if none */
    int open;       /* (bad_at == n) the text ends inside a character */
    uint16_t *u16;  /* UTF-16 of the valid part */
    size_t units;
};

static void ref_decode(const uint8_t *p, size_t n, struct ref *r)
{
    size_t i = 0;
    r->u16 = malloc(2 * n + 2);
    CHECK(r->u16 != NULL);
    r->units = 0;
    r->open = 0;
    while (i < n) {
        size_t row, best = 0, k;
        int matched = -1;
        /* the row whose first byte range holds p[i] (one at most) */
        for (row = 0; row < sizeof(TABLE) / sizeof(TABLE[0]); row++)
            if (p[i] >= TABLE[row].lo[0] && p[i] <= TABLE[row].hi[0])
                break;
        if (row == sizeof(TABLE) / sizeof(TABLE[0])) {
            r->bad_at = i;
            return;
        }
        for (k = 1; k < (size_t)TABLE[row].len; k++) {
            if (i + k >= n) {
                /* the text ends inside this character: a valid prefix */
                r->bad_at = n;
                r->open = 1;
                return;
            }
            if (p[i + k] < TABLE[row].lo[k] || p[i + k] > TABLE[row].hi[k]) {
                r->bad_at = i + k;
                return;
            }
        }
        matched = (int)row;
        best = (size_t)TABLE[matched].len;
        {
            uint32_t cp;
            if (best == 1)
                cp = p[i];
            else if (best == 2)
                cp = (uint32_t)(p[i] & 0x1f) << 6 | (p[i + 1] & 0x3f);
            else if (best == 3)
                cp = (uint32_t)(p[i] & 0x0f) << 12 | (uint32_t)(p[i + 1] & 0x3f) << 6 |
                     (p[i + 2] & 0x3f);
            else
                cp = (uint32_t)(p[i] & 0x07) << 18 | (uint32_t)(p[i + 1] & 0x3f) << 12 |
                     (uint32_t)(p[i + 2] & 0x3f) << 6 | (p[i + 3] & 0x3f);
            if (cp >= 0x10000) {
                r->u16[r->units++] = (uint16_t)(0xd800 + ((cp - 0x10000) >> 10));
                r->u16[r->units++] = (uint16_t)(0xdc00 + ((cp - 0x10000) & 0x3ff));
            } else {
                r->u16[r->units++] = (uint16_t)cp;
            }
        }
        i += best;
    }
    r->bad_at = n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cuts[17], n, at;
    int k, i, valid;
    struct ref ref;
    uint32_t st = 0;
    int stream_failed_in = -1, text_failed_in = -1;
    text_scratch t;
    size_t units;
    uint8_t *copy;

    k = take_cuts(&data, &size, cuts);
    n = size;
    cuts[k] = n; /* the last piece ends at the end */
    ref_decode(data, n, &ref);
    valid = ref.bad_at == n && !ref.open;

    /* copies of exactly the size: ASan sees any read past the end */
    copy = malloc(n ? n : 1);
    CHECK(copy != NULL);
    if (n)
        memcpy(copy, data, n);

    CHECK(utf8_valid(copy, n) == valid);

    /* utf8_stream: piece i is [cuts[i-1], cuts[i]) */
    for (i = 0, at = 0; i <= k; i++) {
        if (!utf8_stream(&st, copy + at, cuts[i] - at)) {
            stream_failed_in = i;
            break;
        }
        at = cuts[i];
    }
    if (ref.bad_at < n) {
        /* fails in the piece holding bad_at (the first piece that ends past it) */
        int want = 0;
        while (cuts[want] <= ref.bad_at)
            want++;
        CHECK(stream_failed_in == want);
    } else {
        CHECK(stream_failed_in == -1);
        CHECK((st != 0) == ref.open);
        CHECK(utf8_stream_complete(st) == valid);
    }

    /* text_stream: the message so far in one buffer of the final size */
    memset(&t, 0, sizeof(t));
    text_stream_start(&t);
    for (i = 0; i <= k; i++) {
        int r = text_stream(&t, copy, cuts[i], n, i == k);
        CHECK(r >= 0);
        if (!r) {
            text_failed_in = i;
            break;
        }
    }
    if (ref.bad_at < n) {
        int want = 0;
        while (cuts[want] <= ref.bad_at)
            want++;
        CHECK(text_failed_in == want);
    } else if (ref.open) {
        /* only the final call can know: the text ends inside a character */
        CHECK(text_failed_in == k);
    } else {
        CHECK(text_failed_in == -1);
        if (t.wide) {
            CHECK(t.units == ref.units);
            CHECK(!ref.units || !memcmp(t.buf + TEXT_HEAD_MAX, ref.u16, 2 * ref.units));
        } else {
            size_t j;
            CHECK(ref.units == n);
            for (j = 0; j < n; j++)
                CHECK(copy[j] < 0x80);
        }
    }
    free(t.buf);

    if (valid) {
        uint16_t *out = malloc(2 * n + 2);
        CHECK(out != NULL);
        CHECK(decode_utf16(copy, n, out) == ref.units);
        CHECK(!ref.units || !memcmp(out, ref.u16, 2 * ref.units));
        free(out);
    }

    /* the UTF-16 length, counted piece by piece */
    if (valid) {
        for (i = 0, at = 0, units = 0; i <= k; i++) {
            units += utf16_units(copy + at, cuts[i] - at);
            at = cuts[i];
        }
        CHECK(units == ref.units);
    }

    free(copy);
    free(ref.u16);
    return 0;
}
