/*
 * Send buffers of libwebsockets' send path (pool.c, opt "pool"): a struct
 * sbuf header followed by LWS_PRE bytes of headroom and the payload.  The
 * capacity of a pool class counts payload bytes only, so a class of 65536
 * really holds a 64 KiB message (the headroom is extra).
 */
#ifndef QJSWS_POOL_H
#define QJSWS_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "txq.h"

#pragma GCC visibility push(hidden)

typedef struct sbuf {
    struct txq_blk link; /* first: queued on a struct txq */
    size_t len;          /* payload length */
    int8_t cls;          /* pool class, -1 for a plain malloc */
    uint8_t text;
    uint8_t data[];      /* LWS_PRE headroom + payload */
} sbuf;

/* messages up to this size are sent from a stack buffer (opt "pool") */
#define STACK_SEND_MAX 4096

void pool_init(void);
void pool_destroy(void);
sbuf *sbuf_alloc(size_t len);
void sbuf_free(sbuf *b);
/* sbuf_free for a queue's free_blk */
void sbuf_free_blk(struct txq_blk *b);

struct pool_stats {
    int blocks, free;
    uint64_t hits, misses;
};
void pool_stats_get(struct pool_stats *st);

#pragma GCC visibility pop

#endif
