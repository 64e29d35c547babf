/*
 * permessage-deflate (RFC 7692) for a client, with no sockets, JS or event
 * loop (deflate_core.c): the offer a client sends, the check of the server's
 * answer and what it agrees to, a message's compression and its bounded
 * decompression.  Both native clients use it (the QuickJS module's own
 * framing and the load generator); the fuzz target wsproto_deflate calls it
 * directly.  zlib is the reference implementation of DEFLATE: both clients
 * link it (-lz).
 *
 * The parser (wsproto.h) lets RSV1 through on the first frame of a data
 * message once a connection has agreed to compress (struct wsp's rsv_ok);
 * the client reads the message's flag (struct wsp's msg_rsv1) and inflates
 * that message's payload here.
 */
#ifndef WSPROTO_DEFLATE_CORE_H
#define WSPROTO_DEFLATE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#pragma GCC visibility push(hidden)

/* What a client offers, or what a connection agreed to (pmd_agree).
 * Window bits: 0 not named; in an offer's client_max_window_bits, PMD_BITS_ANY
 * names the parameter without a value ("I can take any value you choose"). */
struct pmd_params {
    uint8_t server_no_context_takeover;
    uint8_t client_no_context_takeover;
    uint8_t server_max_window_bits; /* 0, or 9..15 */
    uint8_t client_max_window_bits; /* 0, PMD_BITS_ANY, or 9..15 */
};
#define PMD_BITS_ANY 1

/* The default offer: "permessage-deflate; client_max_window_bits", as the ws
 * library, undici, Bun and browsers send it. */
#define PMD_PARAMS_DEFAULT {0, 0, 0, PMD_BITS_ANY}

/* The value of the Sec-WebSocket-Extensions header that offers `p`, into out
 * (cap bytes, NUL-ended); its length, or 0 if it does not fit or a window-bits
 * value is out of 9..15 (PMD_BITS_ANY aside). */
size_t pmd_offer(char *out, size_t cap, const struct pmd_params *p);

/* What both sides do, once the server's answer is checked. */
struct pmd_agreed {
    uint8_t rx_bits;     /* the server's window (8..15): our inflater's */
    uint8_t tx_bits;     /* our compressor's window (9..15) */
    uint8_t rx_takeover; /* the server keeps its context across messages */
    uint8_t tx_takeover; /* we keep ours */
};

/*
 * Check the server's Sec-WebSocket-Extensions value (v, n bytes: hs_check lets
 * one such header through, and only when asked) against what was offered, RFC 7692 sections
 * 5 and 7.1: exactly one extension, permessage-deflate, each parameter at most
 * once and known, server_max_window_bits with a value of 8..15 and no greater
 * than one offered, client_max_window_bits only if offered and no greater than
 * its offered value, server_no_context_takeover present if offered, flags
 * without values, values of digits (or a quoted string of them).  NULL and
 * *out filled in, or why the answer is refused (the connection then fails).
 * A client_max_window_bits of 8 is refused too: zlib's raw deflate has no
 * 256-byte window.
 */
const char *pmd_agree(const char *v, size_t n, const struct pmd_params *offered,
                      struct pmd_agreed *out);

/* One direction's zlib stream, created at its first message (a connection
 * that never sends, or never receives, a compressed message allocates none). */
struct pmd_stream {
    z_stream z;
    uint8_t ready;    /* z is initialised: 1 a compressor, 2 a decompressor */
    uint8_t bits;     /* its window */
    uint8_t takeover; /* keep the context across messages (else reset after each) */
    uint8_t in_msg;   /* inside a message (pmd_inflate: its data came; pmd_deflate:
                       * a part of it was compressed) */
    uint8_t msg_in;   /* pmd_inflate: compressed bytes of this message came */
    uint8_t ended;    /* pmd_inflate: the peer's stream ended (BFINAL), nothing after */
    uint64_t msg_out; /* pmd_inflate: decompressed bytes of the message so far */
};

/* the two streams of a connection, from what it agreed */
void pmd_stream_setup(struct pmd_stream *tx, struct pmd_stream *rx, const struct pmd_agreed *a);
/* free a stream's zlib state (safe on one never used) */
void pmd_stream_free(struct pmd_stream *s);

/* A growable output buffer of the compressor; its owner frees p (free()),
 * and may keep it for the next message. */
struct pmd_buf {
    uint8_t *p;
    size_t len, cap;
};

/* results of pmd_deflate and pmd_inflate (a sink's own nonzero value passes
 * through unchanged: keep it positive) */
enum {
    PMD_OK = 0,
    PMD_NOMEM = -1,    /* zlib or the buffer could not allocate (close 1011) */
    PMD_TOO_BIG = -2,  /* inflating passed the caller's limit (close 1009) */
    PMD_BAD_DATA = -3, /* not DEFLATE data, or data after the message's end (close 1007) */
};

/*
 * Compress n bytes of a message (`last`: they end it) and append the output to
 * out.  A message may come in several parts (a fragmented send): each part's
 * output ends on a byte boundary (Z_SYNC_FLUSH), so it can be sent as a frame
 * of its own; with `last`, the 4 bytes 00 00 ff ff that end every flush are
 * dropped (RFC 7692 7.2.1) and, without context takeover, the stream is reset.
 * An empty message compresses to the one byte 00.  Returns PMD_OK or
 * PMD_NOMEM.
 */
int pmd_deflate(struct pmd_stream *s, const uint8_t *p, size_t n, int last, struct pmd_buf *out);

/* where pmd_inflate hands the decompressed bytes, a piece at a time */
typedef int (*pmd_sink)(void *ctx, const uint8_t *p, size_t n);

/*
 * Decompress a chunk of a compressed message's payload (`last`: the message's
 * final chunk; the 00 00 ff ff the sender dropped is added).  Every piece
 * goes to sink(ctx, ...) through the caller's scratch buffer (scratch_len
 * bytes, at least 1,024).  No more than `limit` decompressed bytes are ever
 * produced for the message (counted across its chunks): one byte more, and it
 * returns PMD_TOO_BIG before the sink sees it -- a decompression bomb costs no
 * more memory than the limit.  A BFINAL block in the peer's data ends its
 * stream; with context takeover, the next stream starts from the same window.
 * Returns PMD_OK, PMD_TOO_BIG, PMD_BAD_DATA, PMD_NOMEM or the sink's nonzero.
 */
int pmd_inflate(struct pmd_stream *s, const uint8_t *p, size_t n, int last, uint64_t limit,
                uint8_t *scratch, size_t scratch_len, pmd_sink sink, void *ctx);

/* decompressed bytes of the message in progress so far (pmd_inflate) */
uint64_t pmd_inflated(const struct pmd_stream *s);

#pragma GCC visibility pop

#endif
