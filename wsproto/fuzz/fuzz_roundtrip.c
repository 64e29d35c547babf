/*
 * libFuzzer target: encode a fuzzer-chosen list of messages with the room's
 * encoder (wsproto.h), parse the bytes back, get exactly that list.
 *
 * Input: a list of items, each a kind byte (bits 0-1: text, binary, ping,
 * pong; bits 2-4: fragments - 1), three length bytes (data: up to 70,000
 * bytes, spanning every length class; control: up to 125), a fill byte and
 * one split byte per fragment.  The payload is a pattern from the fill byte
 * (so the input stays small while the messages are large).
 *   - the encoder (wsp_header, unmasked as a server sends; and masked as
 *     the clients send, checked by unmasking) writes, for a one-frame
 *     message with the same key, exactly the frame of an independent writer
 *     (ref_frames.h: the header built apart, masked in place);
 *   - the parser and the reference's, fed the stream (whole and in two
 *     pieces), deliver exactly the list: every message, its type and bytes,
 *     every control frame, in order, and nothing else.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ref_frames.h"
#include "wsproto.h"

/* no header here violates anything: the words are never read */
static const char *const WHY[WSP_VIOLATIONS] = { 0 };

#define MAX_ITEMS 16
#define MAX_TOTAL (1u << 20)

struct item {
    int kind; /* 1 text, 2 binary, 9 ping, 10 pong */
    size_t len, nfrag, cut[8];
    uint8_t fill;
};

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* events as the parsers see them, in one log format */
struct sink {
    struct evlog log;
    struct evlog cur; /* the message being received */
};

static void put_msg(struct evlog *l, int op, const uint8_t *p, size_t n)
{
    ev_tag(l, 'M', (uint64_t)op);
    ev_u64(l, n);
    ev_put(l, p, n);
}

static int s_frame(void *ctx, int op, int fin, uint64_t len)
{
    (void)ctx, (void)op, (void)fin, (void)len;
    return 0;
}

static int s_data(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary,
                  size_t remain)
{
    struct sink *s = ctx;
    (void)first, (void)remain;
    ev_put(&s->cur, p, n);
    if (final) {
        put_msg(&s->log, binary ? 2 : 1, s->cur.b, s->cur.n);
        s->cur.n = 0;
    }
    return 0;
}

static int s_control(void *ctx, int op, const uint8_t *p, size_t n)
{
    struct sink *s = ctx;
    put_msg(&s->log, op, p, n);
    return 0;
}

static void s_error(void *ctx, int code, const char *why)
{
    (void)ctx, (void)code, (void)why;
    CHECK(!"no protocol error in our own encoding");
}

static const struct wsp_cb s_cb = { s_frame, s_data, s_control, s_error, WHY,
                                    WSP_ORDER_MASK_FIRST };

static int l_data(void *ctx, const unsigned char *p, size_t n)
{
    struct sink *s = ctx;
    ev_put(&s->cur, p, n);
    return 0;
}

static int l_message(void *ctx, int opcode, uint64_t len)
{
    struct sink *s = ctx;
    CHECK(len == s->cur.n);
    put_msg(&s->log, opcode, s->cur.b, s->cur.n);
    s->cur.n = 0;
    return 0;
}

static int l_control(void *ctx, int opcode, const unsigned char *p, size_t n)
{
    struct sink *s = ctx;
    put_msg(&s->log, opcode, p, n);
    return 0;
}

static const struct ref_cb l_cb = { l_data, l_message, l_control };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct item items[MAX_ITEMS];
    int nitems = 0, i;
    size_t total = 0, f;
    struct evlog stream = { 0 }, want = { 0 };
    uint8_t *payload = NULL;

    /* the list */
    while (size >= 5 && nitems < MAX_ITEMS) {
        struct item *it = &items[nitems];
        uint32_t v = (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
        static const int kinds[4] = { 1, 2, 9, 10 };
        it->kind = kinds[data[0] & 3];
        it->nfrag = it->kind < 8 ? 1 + ((data[0] >> 2) & 7) : 1;
        it->len = it->kind < 8 ? v % 70001 : v % 126;
        it->fill = data[4];
        data += 5;
        size -= 5;
        if (total + it->len > MAX_TOTAL)
            break;
        total += it->len;
        /* fragment boundaries: sorted cuts in 0..len */
        for (f = 0; f + 1 < it->nfrag; f++) {
            size_t c = size ? (size_t)data[0] * it->len / 255 : it->len;
            if (size) {
                data++;
                size--;
            }
            it->cut[f] = c;
        }
        for (f = 1; f + 1 < it->nfrag; f++) {
            size_t j;
            for (j = f; j > 0 && it->cut[j - 1] > it->cut[j]; j--) {
                size_t t = it->cut[j];
                it->cut[j] = it->cut[j - 1];
                it->cut[j - 1] = t;
            }
        }
        it->cut[it->nfrag - 1] = it->len;
        nitems++;
    }

    payload = malloc(70001);
    CHECK(payload != NULL);
    for (i = 0; i < nitems; i++) {
        struct item *it = &items[i];
        size_t at = 0;
        fill(payload, it->len, it->fill);
        put_msg(&want, it->kind, payload, it->len);
        for (f = 0; f < it->nfrag; f++) {
            uint8_t h[14], hm[14], key[4] = { (uint8_t)(i * 13 + 1), it->fill, 0x5a, (uint8_t)f };
            size_t n = it->cut[f] - at;
            int op = f == 0 ? it->kind : 0, fin = f + 1 == it->nfrag;
            size_t hl = wsp_header(h, op, fin, n, NULL);
            size_t hml = wsp_header(hm, op, fin, n, key);
            /* the masked frame: the same header with the mask bit and key */
            CHECK(hml == hl + 4 && hm[0] == h[0] && hm[1] == (h[1] | 0x80));
            CHECK(!memcmp(hm + 2, h + 2, hl - 2) && !memcmp(hm + hl, key, 4));
            {
                uint8_t *m = malloc(n ? n : 1), *back = malloc(n ? n : 1);
                CHECK(m && back);
                wsp_mask_copy(m, payload + at, n, key);
                wsp_mask_copy(back, m, n, key);
                CHECK(!n || !memcmp(back, payload + at, n));
                free(m);
                free(back);
            }
            /* the reference writes the same masked frame for a one-frame message */
            if (it->nfrag == 1) {
                uint8_t *lf = malloc(14 + n), *mf = malloc(14 + n);
                size_t ll, ml;
                CHECK(lf != NULL && mf != NULL);
                ll = ref_frame_build(lf, op, payload + at, n, key);
                ml = wsp_header(mf, op, 1, n, key);
                wsp_mask_copy(mf + ml, payload + at, n, key);
                CHECK(ll == hml + n && ml == hml && !memcmp(lf, mf, ll));
                CHECK((lf[1] & 0x80) != 0);
                wsp_mask_copy(lf + hl + 4, lf + hl + 4, n, lf + hl);
                CHECK(!n || !memcmp(lf + hl + 4, payload + at, n));
                free(lf);
                free(mf);
            }
            ev_put(&stream, h, hl);
            ev_put(&stream, payload + at, n);
            at = it->cut[f];
        }
    }
    free(payload);

    /* parse back: whole, and in two pieces at a point the data chooses */
    if (stream.n) {
        size_t cut = size ? (size_t)data[0] * stream.n / 255 : stream.n / 2;
        int pass;
        for (pass = 0; pass < 2; pass++) {
            struct sink s = { { 0 }, { 0 } };
            struct wsp w;
            memset(&w, 0, sizeof(w));
            if (pass == 0) {
                CHECK(wsp_feed(&w, stream.b, stream.n, &s_cb, &s) == 0);
            } else {
                CHECK(wsp_feed(&w, stream.b, cut, &s_cb, &s) == 0);
                CHECK(wsp_feed(&w, stream.b + cut, stream.n - cut, &s_cb, &s) == 0);
            }
            CHECK(ev_same(&s.log, &want));
            CHECK(w.hdrneed == 0 && !w.in_payload && !w.msg_op);
            ev_free(&s.log);
            ev_free(&s.cur);
        }
        {
            struct sink s = { { 0 }, { 0 } };
            struct ref_parser ps;
            memset(&ps, 0, sizeof(ps));
            CHECK(ref_feed(&ps, stream.b, stream.n, &l_cb, &s) == 0);
            CHECK(ev_same(&s.log, &want));
            ev_free(&s.log);
            ev_free(&s.cur);
        }
    }
    ev_free(&stream);
    ev_free(&want);
    return 0;
}
