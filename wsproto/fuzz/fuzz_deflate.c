/*
 * libFuzzer target: permessage-deflate (deflate_core.c) and the parser's
 * reserved bits once it is agreed (wsproto.h).  The first input byte picks a
 * mode, the second the settings; the rest is the mode's data.
 *
 * Properties:
 *   0 the answer: pmd_agree() on the data as a Sec-WebSocket-Extensions value
 *     never accepts what the offer rules out (RFC 7692 7.1): the agreed server
 *     window is at most an offered server_max_window_bits, server context is
 *     not kept where server_no_context_takeover was asked, our window is 9..15
 *     and at most an offered client_max_window_bits value; the answer starts
 *     with "permessage-deflate" (any case) whenever it is accepted.
 *   1 inflating hostile bytes: pmd_inflate() over the data, in chunks the data
 *     chooses, never hands the sink more than the limit (PMD_TOO_BIG first),
 *     and never crashes, leaks or reads out of bounds, whatever it returns.
 *   2 round trip: the data, cut into messages and parts, compressed by
 *     pmd_deflate() and inflated by pmd_inflate() (any window, with and
 *     without context takeover, any split of the compressed bytes) is the
 *     data again; and zlib's own raw inflate of each message with the
 *     00 00 ff ff tail added (the reference) gives the same bytes.
 *   3 the parser: with rsv_ok 0x40 or 0, a frame whose header has reserved
 *     bits other than RSV1, or RSV1 where none is agreed, or RSV1 on a
 *     continuation or control frame, is refused (1002); a data frame that
 *     passes with RSV1 marks its message (msg_rsv1).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deflate_core.h"
#include "wsproto.h"
#include "fuzz_common.h"

/* ---- mode 0: the answer ---- */

static void answer(const uint8_t *d, size_t n, uint8_t s)
{
    struct pmd_params off = {s & 1, (s >> 1) & 1, 0, 0};
    struct pmd_agreed a;
    static const uint8_t SB[4] = {0, 9, 12, 15};
    static const uint8_t CB[4] = {0, PMD_BITS_ANY, 10, 15};
    off.server_max_window_bits = SB[(s >> 2) & 3];
    off.client_max_window_bits = CB[(s >> 4) & 3];
    memset(&a, 0xee, sizeof(a));
    if (pmd_agree((const char *)d, n, &off, &a))
        return;
    CHECK(n >= 18);
    CHECK(a.rx_bits >= 8 && a.rx_bits <= 15);
    CHECK(a.tx_bits >= 9 && a.tx_bits <= 15);
    CHECK(a.rx_takeover <= 1 && a.tx_takeover <= 1);
    if (off.server_max_window_bits)
        CHECK(a.rx_bits <= off.server_max_window_bits);
    if (off.server_no_context_takeover)
        CHECK(!a.rx_takeover);
    if (off.client_no_context_takeover)
        CHECK(!a.tx_takeover);
    if (off.client_max_window_bits > PMD_BITS_ANY)
        CHECK(a.tx_bits <= off.client_max_window_bits);
}

/* ---- mode 1: hostile bytes ---- */

struct count {
    uint64_t got;
    struct evlog out;
    int keep;
};

static int count_sink(void *ctx, const uint8_t *p, size_t n)
{
    struct count *c = ctx;
    CHECK(n > 0);
    c->got += n;
    if (c->keep)
        ev_put(&c->out, p, n);
    return 0;
}

static void hostile(const uint8_t *d, size_t n, uint8_t s)
{
    struct pmd_agreed a = {(uint8_t)(8 + (s & 7)), 15, (s >> 3) & 1, 1};
    struct pmd_stream tx, rx;
    struct count c = {0};
    uint8_t scratch[1024 + 37];
    uint64_t limit = (s & 0x10) ? 100 : (s & 0x20) ? 70000 : 1u << 20;
    size_t at = 0;
    pmd_stream_setup(&tx, &rx, &a);
    /* messages of the data, split at 0xff 0xfe; each in chunks of up to 61 bytes */
    while (at <= n) {
        const uint8_t *e = memmem(d + at, n - at, "\xff\xfe", 2);
        size_t end = e ? (size_t)(e - d) : n, i = at;
        int r = PMD_OK;
        c.got = 0;
        do {
            size_t k = end - i < 61 ? end - i : 61;
            r = pmd_inflate(&rx, d + i, k, i + k == end, limit, scratch, sizeof(scratch), count_sink, &c);
            CHECK(c.got <= limit);
            CHECK(pmd_inflated(&rx) == c.got);
            i += k;
        } while (!r && i < end);
        CHECK(r == PMD_OK || r == PMD_TOO_BIG || r == PMD_BAD_DATA);
        if (r != PMD_OK)
            break; /* the connection fails */
        at = end + 2;
    }
    pmd_stream_free(&rx);
    pmd_stream_free(&tx);
}

/* ---- mode 2: round trip against zlib's own inflate ---- */

static void reference(const uint8_t *c, size_t n, int bits, z_stream *z, int *ready, int takeover,
                      struct evlog *out)
{
    uint8_t buf[4096];
    static const uint8_t tail[4] = {0, 0, 0xff, 0xff};
    int pass;
    if (!*ready) {
        memset(z, 0, sizeof(*z));
        CHECK(inflateInit2(z, -bits) == Z_OK);
        *ready = 1;
    }
    for (pass = 0; pass < 2; pass++) {
        z->next_in = (Bytef *)(uintptr_t)(pass ? tail : c);
        z->avail_in = (uInt)(pass ? 4 : n);
        do {
            int r;
            z->next_out = buf;
            z->avail_out = sizeof(buf);
            r = inflate(z, Z_SYNC_FLUSH);
            CHECK(r == Z_OK || r == Z_BUF_ERROR);
            ev_put(out, buf, sizeof(buf) - z->avail_out);
        } while (z->avail_in || !z->avail_out);
    }
    if (!takeover)
        CHECK(inflateReset(z) == Z_OK);
}

static void roundtrip(const uint8_t *d, size_t n, uint8_t s)
{
    struct pmd_agreed a;
    struct pmd_stream tx, rx, unused_tx, unused_rx;
    struct pmd_buf buf = {0};
    struct count c = {0};
    uint8_t scratch[1024];
    z_stream ref;
    int ref_ready = 0;
    size_t at = 0;
    a.tx_bits = (uint8_t)(9 + (s % 7));
    a.rx_bits = a.tx_bits;
    a.tx_takeover = a.rx_takeover = (s >> 3) & 1;
    pmd_stream_setup(&tx, &unused_rx, &a);
    pmd_stream_setup(&unused_tx, &rx, &a);
    c.keep = 1;
    while (at <= n) {
        const uint8_t *e = memmem(d + at, n - at, "\xff\xfe", 2);
        size_t end = e ? (size_t)(e - d) : n, half = at + (end - at) / 3, i;
        struct evlog want = {0};
        buf.len = 0;
        /* a message in two parts when the settings say so (a fragmented send) */
        if (s & 0x10) {
            CHECK(pmd_deflate(&tx, d + at, half - at, 0, &buf) == PMD_OK);
            CHECK(pmd_deflate(&tx, d + half, end - half, 1, &buf) == PMD_OK);
        } else {
            CHECK(pmd_deflate(&tx, d + at, end - at, 1, &buf) == PMD_OK);
        }
        CHECK(buf.len > 0);
        CHECK(buf.len < 4 || memcmp(buf.p + buf.len - 4, "\x00\x00\xff\xff", 4));
        reference(buf.p, buf.len, a.tx_bits, &ref, &ref_ready, a.tx_takeover, &want);
        CHECK(want.n == end - at && (!want.n || !memcmp(want.b, d + at, want.n)));
        ev_free(&want);
        /* inflated in pieces the settings choose */
        c.out.n = 0;
        for (i = 0; i < buf.len;) {
            size_t k = buf.len - i < (size_t)(1 + (s >> 5) * 7) ? buf.len - i : (size_t)(1 + (s >> 5) * 7);
            CHECK(pmd_inflate(&rx, buf.p + i, k, i + k == buf.len, 1u << 24, scratch, sizeof(scratch),
                              count_sink, &c) == PMD_OK);
            i += k;
        }
        CHECK(c.out.n == end - at && (!c.out.n || !memcmp(c.out.b, d + at, c.out.n)));
        at = end + 2;
    }
    if (ref_ready)
        inflateEnd(&ref);
    ev_free(&c.out);
    free(buf.p);
    pmd_stream_free(&tx);
    pmd_stream_free(&rx);
}

/* ---- mode 3: the parser's reserved bits ---- */

static int p_frame(void *ctx, int op, int fin, uint64_t len)
{
    (void)ctx, (void)op, (void)fin, (void)len;
    return 0;
}
static int p_data(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary, size_t remain)
{
    (void)ctx, (void)p, (void)n, (void)first, (void)final, (void)binary, (void)remain;
    return 0;
}
static int p_control(void *ctx, int op, const uint8_t *p, size_t n)
{
    (void)ctx, (void)op, (void)p, (void)n;
    return 0;
}
static void p_error(void *ctx, int code, const char *why)
{
    *(int *)ctx = code;
    (void)why;
}
static const char *const WHY[WSP_VIOLATIONS] = {"m", "l", "r", "c", "f", "L", "C", "N", "o"};

static void parser(const uint8_t *d, size_t n, uint8_t s)
{
    const struct wsp_cb cb = {p_frame, p_data, p_control, p_error, WHY,
                              (s & 1) ? WSP_ORDER_RESERVED_FIRST : WSP_ORDER_MASK_FIRST};
    struct wsp w;
    int err = 0, r;
    uint8_t h[2];
    if (n < 1)
        return;
    memset(&w, 0, sizeof(w));
    w.rsv_ok = (s & 2) ? 0x40 : 0;
    /* one header of two bytes, unmasked, with a short payload (none follows) */
    h[0] = d[0];
    h[1] = (uint8_t)(n > 1 ? d[1] & 0x7f : 0);
    if (h[1] > 125)
        h[1] = 0;
    r = wsp_feed(&w, h, 2, &cb, &err);
    {
        int op = h[0] & 0x0f, rsv = h[0] & 0x70;
        int bad_rsv = (rsv & ~w.rsv_ok) || (rsv && op != 1 && op != 2);
        if (bad_rsv)
            CHECK(r == WSP_STOP_ERROR && err == 1002);
        if (r == 0 && rsv)
            CHECK(w.msg_rsv1 == 1);
        if (!rsv)
            CHECK(w.msg_rsv1 == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    switch (data[0] & 3) {
    case 0:
        answer(data + 2, size - 2, data[1]);
        break;
    case 1:
        hostile(data + 2, size - 2, data[1]);
        break;
    case 2:
        if (size <= 70000)
            roundtrip(data + 2, size - 2, data[1]);
        break;
    default:
        parser(data + 2, size - 2, data[1]);
        break;
    }
    return 0;
}
