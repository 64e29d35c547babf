/*
 * RFC 6455 framing for a client, with no JS, sockets or libwebsockets: the
 * receive parser (it reports through a table of callbacks), the frame
 * encoder, and the size-limit arithmetic of the receive path.  Used by both
 * native clients (the QuickJS module's framing and receive path, the load
 * generator's connections) and by the fuzz targets (wsproto/fuzz/).
 *
 * Header-only on purpose: each client calls wsp_feed() with a constant
 * callback table, so the compiler inlines the parser and turns every
 * callback into a direct call -- the receive path costs what it cost when
 * the parser lived inside the connection code (wsproto/README.md).
 */
#ifndef WSPROTO_WSPROTO_H
#define WSPROTO_WSPROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* receive parser state; all zero at the start of a connection */
struct wsp {
    int msg_op;          /* data message in progress: 0 none, 1 text, 2 binary */
    int msg_first;       /* next data chunk is the first of its message */
    uint8_t hdr[14];
    int hdrlen, hdrneed; /* hdrneed 0: between frames */
    int in_payload;
    int f_fin, f_op;
    uint64_t f_left;     /* payload bytes of the current frame still to come */
    uint8_t ctl[128];
    size_t ctllen;
    /* permessage-deflate (deflate_core.h): the reserved bits a frame may carry once an
     * extension is agreed (0x40: RSV1, on a data message's first frame only), and the
     * current message's RSV1, set by the parser and taken (cleared) by the client */
    uint8_t rsv_ok;
    uint8_t msg_rsv1;
};

/* The protocol violations a frame header can have (each one fails the
 * connection with 1002); a client names them in its own words (wsp_cb.why). */
enum wsp_violation {
    WSP_MASKED,          /* the mask bit: a server must not mask */
    WSP_LENGTH,          /* a 64-bit length with its top bit set */
    WSP_RESERVED_BITS,   /* RSV1-3: no extension is negotiated */
    WSP_CONTROL_OPCODE,  /* opcode 11-15 (reserved control frames) */
    WSP_CONTROL_FRAGMENTED, /* a control frame without FIN */
    WSP_CONTROL_LONG,    /* a control frame over 125 bytes */
    WSP_CONTINUATION,    /* a continuation frame with no message begun */
    WSP_NOT_CONTINUATION, /* a text or binary frame inside a fragmented message */
    WSP_OPCODE,          /* opcode 3-7 (reserved data frames) */
    WSP_VIOLATIONS
};

/* A header with several violations is reported as the first one its client
 * checks: the module sees the mask bit as soon as the second byte is in, and
 * the reserved bits after the length (WSP_ORDER_MASK_FIRST); the load
 * generator checks the whole header, the reserved bits first, then the mask
 * and the length (WSP_ORDER_RESERVED_FIRST).  Then, for both: the opcode
 * (11-15, FIN, the length of a control frame; the continuation rules; 3-7). */
enum wsp_order { WSP_ORDER_MASK_FIRST, WSP_ORDER_RESERVED_FIRST };

/* What the parser found.  A nonzero return stops parsing (wsp_feed returns it).
 * A client passes one constant table, so that wsp_feed() is inlined with it:
 * its callbacks become direct calls and `why` and `order` constants. */
struct wsp_cb {
    /* a frame header passed every protocol check: opcode, FIN, payload length */
    int (*frame)(void *ctx, int op, int fin, uint64_t len);
    /* a chunk of a data message (possibly empty); first/final: the message's
     * first/last chunk; remain: what the current frame still owes after it */
    int (*data)(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary,
                size_t remain);
    /* a whole control frame (8 close, 9 ping, 10 pong) and its body */
    int (*control)(void *ctx, int op, const uint8_t *p, size_t n);
    /* a protocol violation (code 1002): parsing stops for good; why is the
     * client's text for it (below) */
    void (*error)(void *ctx, int code, const char *why);
    /* the client's words for each violation, [enum wsp_violation] */
    const char *const *why;
    enum wsp_order order;
};

#define WSP_STOP_ERROR (-1)

/* A header with reserved bits set (b0: its first byte): are they allowed?  Only RSV1,
 * only once permessage-deflate is agreed, only on a data message's first frame
 * (RFC 7692 6); then the message is marked (msg_rsv1) and 0 returned.  Out of line and
 * cold: a frame without reserved bits runs no instruction of it. */
static __attribute__((cold, noinline, unused)) int wsp_reserved(struct wsp *w, uint8_t b0)
{
    int op = b0 & 0x0f;
    if ((b0 & 0x70) & ~w->rsv_ok || (op != 1 && op != 2))
        return 1;
    w->msg_rsv1 = 1;
    return 0;
}

/* a server frame's header length (no mask key) from its second byte */
static inline size_t wsp_header_len(uint8_t b1)
{
    uint8_t l7 = b1 & 0x7f;
    return l7 < 126 ? 2 : l7 == 126 ? 4 : 10;
}

/*
 * Parse n bytes from the server (any split).  Returns 0 once they are all
 * taken, WSP_STOP_ERROR after a protocol error (cb->error was called), or
 * the nonzero value a callback returned.
 */
static inline int wsp_feed(struct wsp *w, const uint8_t *p, size_t n, const struct wsp_cb *cb,
                           void *ctx)
{
    int r;
#define WSP_FAIL(violation)                                                                        \
    do {                                                                                           \
        cb->error(ctx, 1002, cb->why[violation]);                                                  \
        return WSP_STOP_ERROR;                                                                     \
    } while (0)
    while (n) {
        if (!w->in_payload) {
            const uint8_t *h; /* the complete header */
            if (!w->hdrneed && n >= 2 && n >= wsp_header_len(p[1])) {
                /* the usual case: the whole header is in this chunk, read where it is */
                h = p;
                p += wsp_header_len(h[1]);
                n -= wsp_header_len(h[1]);
                if (cb->order == WSP_ORDER_MASK_FIRST && (h[1] & 0x80))
                    WSP_FAIL(WSP_MASKED);
            } else {
                /* a header split across chunks: gathered in w->hdr */
                size_t take;
                if (!w->hdrneed) {
                    w->hdrneed = 2;
                    w->hdrlen = 0;
                }
                take = (size_t)(w->hdrneed - w->hdrlen);
                if (take > n)
                    take = n;
                memcpy(w->hdr + w->hdrlen, p, take);
                w->hdrlen += (int)take;
                p += take;
                n -= take;
                if (w->hdrlen < w->hdrneed)
                    break;
                if (w->hdrneed == 2) {
                    uint8_t l7 = w->hdr[1] & 0x7f;
                    if (cb->order == WSP_ORDER_MASK_FIRST && (w->hdr[1] & 0x80))
                        WSP_FAIL(WSP_MASKED);
                    if (l7 == 126 || l7 == 127) {
                        w->hdrneed = l7 == 126 ? 4 : 10;
                        continue;
                    }
                }
                h = w->hdr;
            }
            /* header complete */
            {
                uint8_t b0 = h[0], l7 = h[1] & 0x7f;
                uint64_t len = l7;
                int op = b0 & 0x0f, i;
                if (cb->order == WSP_ORDER_RESERVED_FIRST) {
                    if ((b0 & 0x70) && wsp_reserved(w, b0))
                        WSP_FAIL(WSP_RESERVED_BITS);
                    if (h[1] & 0x80)
                        WSP_FAIL(WSP_MASKED);
                }
                if (l7 == 126) {
                    len = ((uint64_t)h[2] << 8) | h[3];
                } else if (l7 == 127) {
                    len = 0;
                    for (i = 0; i < 8; i++)
                        len = (len << 8) | h[2 + i];
                    if (len >> 63)
                        WSP_FAIL(WSP_LENGTH);
                }
                w->f_fin = !!(b0 & 0x80);
                w->f_op = op;
                w->f_left = len;
                w->hdrneed = 0;
                if (cb->order == WSP_ORDER_MASK_FIRST && (b0 & 0x70) && wsp_reserved(w, b0))
                    WSP_FAIL(WSP_RESERVED_BITS);
                if (op >= 8) {
                    if (op > 10)
                        WSP_FAIL(WSP_CONTROL_OPCODE);
                    if (!w->f_fin)
                        WSP_FAIL(WSP_CONTROL_FRAGMENTED);
                    if (len > 125)
                        WSP_FAIL(WSP_CONTROL_LONG);
                    w->ctllen = 0;
                } else if (op == 0) {
                    if (!w->msg_op)
                        WSP_FAIL(WSP_CONTINUATION);
                } else if (op == 1 || op == 2) {
                    if (w->msg_op)
                        WSP_FAIL(WSP_NOT_CONTINUATION);
                    w->msg_op = op;
                    w->msg_first = 1;
                } else {
                    WSP_FAIL(WSP_OPCODE);
                }
                if ((r = cb->frame(ctx, op, w->f_fin, len)))
                    return r;
                w->in_payload = 1;
                if (len)
                    continue;
            }
        }
        /* payload (possibly empty) */
        {
            size_t take = w->f_left < n ? (size_t)w->f_left : n;
            if (w->f_op >= 8) {
                memcpy(w->ctl + w->ctllen, p, take);
                w->ctllen += take;
            } else {
                int first = w->msg_first;
                int final = w->f_fin && take == w->f_left;
                int binary = w->msg_op == 2;
                if (final)
                    w->msg_op = 0;
                w->msg_first = 0;
                if ((r = cb->data(ctx, p, take, first, final, binary, (size_t)(w->f_left - take))))
                    return r;
            }
            p += take;
            n -= take;
            w->f_left -= take;
            if (!w->f_left) {
                w->in_payload = 0;
                if (w->f_op >= 8 && (r = cb->control(ctx, w->f_op, w->ctl, w->ctllen)))
                    return r;
            }
        }
    }
    return 0;
#undef WSP_FAIL
}

/* ------------------------------------------------------------------ */
/* encoder                                                              */

/* A frame header into h (room for 14): opcode, FIN, payload length, and the
 * masking key if key is not NULL (a client's frame); returns its length. */
static inline size_t wsp_header(uint8_t h[14], int opcode, int fin, uint64_t len,
                                const uint8_t *key)
{
    size_t hl = 2;
    uint8_t m = key ? 0x80 : 0;
    h[0] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    if (len < 126) {
        h[1] = (uint8_t)(m | len);
    } else if (len <= 0xffff) {
        h[1] = m | 126;
        h[2] = (uint8_t)(len >> 8);
        h[3] = (uint8_t)len;
        hl = 4;
    } else {
        int i;
        h[1] = m | 127;
        for (i = 0; i < 8; i++)
            h[2 + i] = (uint8_t)(len >> (56 - 8 * i));
        hl = 10;
    }
    if (key) {
        memcpy(h + hl, key, 4);
        hl += 4;
    }
    return hl;
}

/* dst = src ^ key (repeating), 8 bytes at a time */
static inline void wsp_mask_copy(uint8_t *dst, const uint8_t *src, size_t len, const uint8_t key[4])
{
    uint64_t k8;
    uint32_t k4;
    size_t i = 0;
    memcpy(&k4, key, 4);
    k8 = ((uint64_t)k4 << 32) | k4;
    for (; i + 32 <= len; i += 32) {
        uint64_t a, b, cc, d;
        memcpy(&a, src + i, 8);
        memcpy(&b, src + i + 8, 8);
        memcpy(&cc, src + i + 16, 8);
        memcpy(&d, src + i + 24, 8);
        a ^= k8;
        b ^= k8;
        cc ^= k8;
        d ^= k8;
        memcpy(dst + i, &a, 8);
        memcpy(dst + i + 8, &b, 8);
        memcpy(dst + i + 16, &cc, 8);
        memcpy(dst + i + 24, &d, 8);
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t a;
        memcpy(&a, src + i, 8);
        a ^= k8;
        memcpy(dst + i, &a, 8);
    }
    for (; i < len; i++)
        dst[i] = src[i] ^ key[i & 3];
}

/* ------------------------------------------------------------------ */
/* the size limit of the receive path (issue 9, item 5)                  */

/* a data frame's announced length, with what its message already holds,
 * is over the limit: fail before any of its payload arrives or is allocated */
static inline int wsp_frame_over(int op, uint64_t len, size_t msg_len, size_t max)
{
    return op < 8 && len + (op == 0 ? msg_len : 0) > max;
}

/* a chunk: what came so far, this chunk and what the frame still owes */
static inline int wsp_chunk_over(size_t msg_len, size_t len, size_t remain, size_t max)
{
    size_t room = max > msg_len ? max - msg_len : 0;
    return len > room || remain > room - len;
}

/* the receive accumulator's new capacity (opt "fragbuf"): what we have plus
 * what this frame still owes; doubling for later frames, never past the limit */
static inline size_t wsp_rx_cap(size_t need, size_t remain, int first, size_t cap, size_t max)
{
    size_t ncap = need + remain;
    if (!first && ncap < cap * 2)
        ncap = cap * 2;
    if (ncap > max)
        ncap = max > need ? max : need;
    return ncap;
}

#endif
