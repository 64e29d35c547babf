/*
 * A connection's send queue (txq.c): blocks queued for the socket, counted in
 * bytes, and the list of queues whose count changed since the JS binding last
 * published it as bufferedAmount.  Our framing (frame.c) queues framed blocks,
 * libwebsockets' path (tp_lws.c) whole messages; a connection uses one or the
 * other, never both at once (the hand-over from lws needs an empty queue).
 * No JS, sockets or libwebsockets.
 */
#ifndef QJSWS_TXQ_H
#define QJSWS_TXQ_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* the first member of every queued block */
struct txq_blk {
    struct txq_blk *next;
};

struct txq {
    struct txq_blk *head, *tail;
    size_t bytes;                        /* what bufferedAmount reports */
    void (*free_blk)(struct txq_blk *b); /* set by whoever queues */
    /* opt "buffered": the binding mirrors `bytes` into a JS property */
    int watch;                           /* mirrored */
    int changed;                         /* on txq_changed */
    struct txq *cnext;
};

/* watched queues whose bytes changed since the binding looked (jsev.c) */
extern struct txq *txq_changed;

/* the bytes of q changed: tell the binding at the next point JS can look */
static inline void txq_touch(struct txq *q)
{
    if (q->watch && !q->changed) {
        q->changed = 1;
        q->cnext = txq_changed;
        txq_changed = q;
    }
}

/* take one queue off txq_changed (NULL: none left) */
static inline struct txq *txq_changed_pop(void)
{
    struct txq *q = txq_changed;
    if (q) {
        txq_changed = q->cnext;
        q->changed = 0;
        q->cnext = NULL;
    }
    return q;
}

static inline void txq_push(struct txq *q, struct txq_blk *b)
{
    b->next = NULL;
    if (q->tail)
        q->tail->next = b;
    else
        q->head = b;
    q->tail = b;
}

/* the first block off the queue (the caller has checked there is one) */
static inline struct txq_blk *txq_shift(struct txq *q)
{
    struct txq_blk *b = q->head;
    q->head = b->next;
    if (!q->head)
        q->tail = NULL;
    return b;
}

/* free every block, bytes 0 (touched) */
void txq_clear(struct txq *q);

/* stop mirroring: off txq_changed */
void txq_unwatch(struct txq *q);

#pragma GCC visibility pop

#endif
