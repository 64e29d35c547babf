/*
 * Our RFC 6455 client framing (frame.c), over any transport: the masked,
 * coalesced output queue and its flush, the read loop that hands received
 * bytes up to the parser, the list of connections to flush (and kill) at the
 * end of a service call.  fr_own is its struct framer.
 *
 * struct fr is a connection's framing part; it embeds the transport part
 * (tp.h) and is embedded by the state machine's (sm.h).
 */
#ifndef QJSWS_FRAME_H
#define QJSWS_FRAME_H

#include "deflate_core.h"
#include "opts.h"
#include "tp.h"

#pragma GCC visibility push(hidden)

struct upg;

/*
 * permessage-deflate (RFC 7692, deflate_core.h) on a connection that agreed to
 * it: allocated by the upgrade (upgrade.c) once the server's answer is checked,
 * freed with the connection (fr_release).  A connection without it holds a
 * NULL pointer and nothing else.  Our framing compresses every message it
 * sends (fr_own_send); the receive path (rx.c) inflates the messages whose
 * first frame had RSV1.
 */
struct pmd_owed {
    uint64_t end;              /* where a compressed frame ends in the connection's output */
    size_t extra;              /* what its message is longer than its compressed payload */
};

struct pmd_conn {
    struct pmd_stream tx, rx;  /* our compressor, our decompressor (made at first use) */
    uint8_t rx_msg;            /* the message being received is compressed ... */
    uint8_t rx_first;          /* ... and none of it was delivered yet */
    /* bufferedAmount counts a queued compressed frame as its header and the
     * message's uncompressed length: the difference (extra) of each such frame
     * is in tp.q.bytes until the frame is written out (frame.c, fr_flush) */
    struct pmd_owed *owed;     /* a FIFO: owed[owed_h .. owed_n) */
    size_t owed_h, owed_n, owed_cap;
    size_t extra;              /* their sum */
    uint64_t out;              /* output written while any was owed */
    char ext[];                /* the server's Sec-WebSocket-Extensions value (ws.extensions) */
};

struct fr {
    struct tp tp;        /* first */
    int own;             /* our framing carries both directions */
    int kill_pending;    /* drop the connection once the queue is written */
    int close_sent;      /* our close frame is queued */
    int tx_failed;       /* a socket write failed, the queue was dropped */
    int dirty;           /* on the flush list: flush (and maybe kill) after service */
    struct fr *dnext;
    int mapfd;           /* its entry in the fd map (fr_read_all), -1: none */
    struct upg *upg;     /* upgrade.c: the opening handshake while it runs */
    int linger;          /* a failure's close frame: 1 end our side once it is written,
                          * 2 ended: reading to the peer's end, 3 the end came */
    struct pmd_conn *pmd; /* permessage-deflate agreed (upgrade.c), else NULL */
    int peek;            /* the last read went into a message (fr_up.sink): a transport
                          * with TP_SMALL_READS reads the next frame's header alone */
};

static inline struct fr *fr_of(struct tp *t)
{
    return container_of(t, struct fr, tp);
}

/* The one upward interface of the framing layer (frame.c and upgrade.c): what
 * our framing and the upgrade report (set at init by service.c) */
struct fr_up {
    /* bytes read from the socket, and the frames that came with the 101: parse
     * and deliver (the binding's receive path) */
    void (*rx)(struct fr *f, const uint8_t *p, size_t n);
    /* where the next bytes read may go instead of the read buffer: the rest of
     * a large frame's payload, straight into its message (opt "rxdirect"):
     * the place and *n, how many bytes at most; or NULL, and *n what a large
     * frame in progress still owes (too little to read into: 0 when none).
     * What is read there goes to rx() as ever (which then copies nothing) */
    uint8_t *(*sink)(struct fr *f, size_t *n);
    /* the 101 is in: the connection is open (the state machine; upgrade.c) */
    void (*opened)(struct fr *f);
};

extern const struct framer fr_own;

void fr_init(const struct fr_up *up);
void fr_destroy(void);

/* n (<= 16) unpredictable bytes (mask keys, handshake nonces), from a
 * getrandom() refilled buffer */
void fr_random(uint8_t *out, size_t n);

/* our framing carries the connection from now on (both directions) */
void fr_start(struct fr *f);
/* the connection is detached: off every list, its queue freed */
void fr_release(struct fr *f);

/* append one complete masked frame to the output queue; -1 out of memory */
int fr_append(struct fr *f, int opcode, const uint8_t *p, size_t len);
/* write as much of the queue as the socket takes: 0 ok, -1 broken */
int fr_flush(struct fr *f);
/* output was queued or a kill asked for: flush at the end of the service
 * call (or now, outside one) */
void fr_kick(struct fr *f);
/* our close frame (once) */
void fr_send_close(struct fr *f, int code, const char *reason, size_t rlen);
/* a ping's pong, queued */
void fr_pong(struct fr *f, const uint8_t *p, size_t n);
/* the peer's close frame: echo its code, then drop the connection */
void fr_close_reply(struct fr *f, int code);

/* the socket is ready (after the upgrade): read, write */
void fr_io(struct fr *f, short revents);
/* the socket is readable: read and hand up everything there is (bounded) */
void fr_read(struct fr *f);
/* lws' timers are about to run lws' own poll(): read our sockets first */
void fr_read_all(void);
/* end of a service call: flush what was queued, kill what is finished */
void fr_post_service(void);
/* lws' writable callback on a connection we frame: 0, or -1 to close */
int fr_writable(struct tp *t);
/* lws hands a connection over */
void fr_take(struct tp *t);

/* the housekeeping tick: an idle interval trims the kept output blocks */
void fr_tick(void);

/* counters (pool_stats()) */
uint64_t fr_writes(void);
uint64_t fr_reads(void);
/* of them, reads straight into a message (fr_up.sink) */
uint64_t fr_sunk(void);
/* the output blocks kept for reuse: how many, their capacity in bytes */
void fr_spares(size_t *blocks, size_t *bytes);

#pragma GCC visibility pop

#endif
