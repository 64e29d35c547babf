/* Send queues (see txq.h). */
#include "txq.h"

struct txq *txq_changed;

void txq_clear(struct txq *q)
{
    struct txq_blk *b = q->head, *n;
    while (b) {
        n = b->next;
        q->free_blk(b);
        b = n;
    }
    q->head = q->tail = NULL;
    q->bytes = 0;
    txq_touch(q);
}

void txq_unwatch(struct txq *q)
{
    if (q->changed) {
        struct txq **pp;
        for (pp = &txq_changed; *pp; pp = &(*pp)->cnext) {
            if (*pp == q) {
                *pp = q->cnext;
                break;
            }
        }
        q->changed = 0;
        q->cnext = NULL;
    }
    q->watch = 0;
}
