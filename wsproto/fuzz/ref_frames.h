/*
 * An independent reference for the fuzz targets: a frame parser and a frame
 * writer written apart from wsproto.h (they were the load generator's own
 * until both clients moved onto the room's): the header read a byte at a
 * time, checked in a switch, with the load generator's order and words for a
 * violation; the writer builds a masked FIN frame in one buffer and masks it
 * in place.  Test code only: no program links it.
 */
#ifndef WSPROTO_FUZZ_REF_FRAMES_H
#define WSPROTO_FUZZ_REF_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define REF_OP_CONT 0x0
#define REF_OP_TEXT 0x1
#define REF_OP_BINARY 0x2
#define REF_OP_CLOSE 0x8
#define REF_OP_PING 0x9
#define REF_OP_PONG 0xa

/* What the parser reports; a nonzero return stops parsing and is returned. */
struct ref_cb {
    /* a chunk of a data message's payload (every frame, in order) */
    int (*data)(void *ctx, const unsigned char *p, size_t n);
    /* a whole data message has arrived: its first frame's opcode, length */
    int (*message)(void *ctx, int opcode, uint64_t len);
    /* a whole control frame (close, ping, pong) */
    int (*control)(void *ctx, int opcode, const unsigned char *p, size_t n);
};

struct ref_parser {
    unsigned char hdr[10]; /* header bytes of the frame being read */
    unsigned have, need;
    int in_payload;        /* header done, reading payload */
    int opcode, fin;
    uint64_t left;         /* payload bytes of this frame still to come */
    int msg_opcode;        /* opcode of the message in progress, or 0 */
    uint64_t msg_len;
    unsigned char ctrl[125];
    unsigned ctrl_len;
    const char *error;     /* set when ref_feed() returns -1 */
};

/* the masked FIN frame of `payload` with `key`, into out (room for 14 + len) */
static inline size_t ref_frame_build(unsigned char *out, int opcode, const void *payload, size_t len,
                                     const unsigned char key[4])
{
    size_t h = 2, i;
    out[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        out[1] = (unsigned char)(0x80 | len);
    } else if (len <= 0xffff) {
        out[1] = 0x80 | 126;
        out[2] = (unsigned char)(len >> 8);
        out[3] = (unsigned char)len;
        h = 4;
    } else {
        out[1] = 0x80 | 127;
        for (i = 0; i < 8; i++)
            out[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        h = 10;
    }
    memcpy(out + h, key, 4);
    if (len)
        memcpy(out + h + 4, payload, len);
    for (i = 0; i < len; i++)
        out[h + 4 + i] ^= key[i & 3];
    return h + 4 + len;
}

/* Header complete: decode and validate it. */
static inline int ref_start_frame(struct ref_parser *ps)
{
    unsigned char b0 = ps->hdr[0], b1 = ps->hdr[1];
    uint64_t len = b1 & 0x7f;
    int i;

    if (b0 & 0x70)
        return ps->error = "reserved bits set (no extension negotiated)", -1;
    if (b1 & 0x80)
        return ps->error = "masked frame from server", -1;
    ps->opcode = b0 & 0x0f;
    ps->fin = !!(b0 & 0x80);
    if (len == 126) {
        len = (uint64_t)ps->hdr[2] << 8 | ps->hdr[3];
    } else if (len == 127) {
        len = 0;
        for (i = 0; i < 8; i++)
            len = len << 8 | ps->hdr[2 + i];
        if (len >> 63)
            return ps->error = "frame length has the top bit set", -1;
    }
    switch (ps->opcode) {
    case REF_OP_CONT:
        if (!ps->msg_opcode)
            return ps->error = "continuation frame without a message", -1;
        break;
    case REF_OP_TEXT:
    case REF_OP_BINARY:
        if (ps->msg_opcode)
            return ps->error = "new message inside a fragmented one", -1;
        ps->msg_opcode = ps->opcode;
        ps->msg_len = 0;
        break;
    case REF_OP_CLOSE:
    case REF_OP_PING:
    case REF_OP_PONG:
        if (!ps->fin)
            return ps->error = "fragmented control frame", -1;
        if (len > 125)
            return ps->error = "control frame longer than 125 bytes", -1;
        ps->ctrl_len = 0;
        break;
    default:
        return ps->error = "reserved opcode", -1;
    }
    ps->left = len;
    ps->in_payload = 1;
    ps->have = 0;
    return 0;
}

static inline int ref_end_frame(struct ref_parser *ps, const struct ref_cb *cb, void *ctx)
{
    int op;

    ps->in_payload = 0;
    if (ps->opcode >= REF_OP_CLOSE)
        return cb->control(ctx, ps->opcode, ps->ctrl, ps->ctrl_len);
    if (!ps->fin)
        return 0;
    op = ps->msg_opcode;
    ps->msg_opcode = 0;
    return cb->message(ctx, op, ps->msg_len);
}

/* Feed received bytes (any split). Returns 0, -1 on a protocol violation
 * (ps->error says which), or the first nonzero callback return value. */
static inline int ref_feed(struct ref_parser *ps, const unsigned char *p, size_t n,
                           const struct ref_cb *cb, void *ctx)
{
    int r;

    while (n || (ps->in_payload && !ps->left)) {
        if (!ps->in_payload) {
            if (ps->have < 2) {
                ps->hdr[ps->have++] = *p++;
                n--;
                if (ps->have == 2) {
                    unsigned l7 = ps->hdr[1] & 0x7f;

                    ps->need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0);
                }
            } else {
                size_t take = ps->need - ps->have;

                if (take > n)
                    take = n;
                memcpy(ps->hdr + ps->have, p, take);
                ps->have += (unsigned)take;
                p += take;
                n -= take;
            }
            if (ps->have >= 2 && ps->have == ps->need && ref_start_frame(ps))
                return -1;
            continue;
        }
        if (ps->left) {
            size_t take = ps->left < n ? (size_t)ps->left : n;

            if (ps->opcode >= REF_OP_CLOSE) {
                memcpy(ps->ctrl + ps->ctrl_len, p, take);
                ps->ctrl_len += (unsigned)take;
            } else {
                ps->msg_len += take;
                if ((r = cb->data(ctx, p, take)))
                    return r;
            }
            p += take;
            n -= take;
            ps->left -= take;
        }
        if (!ps->left && (r = ref_end_frame(ps, cb, ctx)))
            return r;
    }
    return 0;
}

#endif
