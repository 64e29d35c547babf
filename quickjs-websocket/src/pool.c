/* send buffer pool (opt "pool") */
#include "pool.h"
#include "opts.h"

#include <stdlib.h>

#include <libwebsockets.h> /* LWS_PRE */

#define POOL_CLASSES 4
static const size_t pool_cap[POOL_CLASSES] = { 256, 2048, 16384, 65536 };
static const int pool_count[POOL_CLASSES] = { 32, 16, 4, 2 };

static struct {
    void *slab[POOL_CLASSES];
    sbuf *free_list[POOL_CLASSES];
    int nfree[POOL_CLASSES];
    int total;
    uint64_t hits, misses;
    int inited;
} g_pool;

void pool_init(void)
{
    int c, i;
    if (g_pool.inited)
        return;
    for (c = 0; c < POOL_CLASSES; c++) {
        size_t bsz = sizeof(sbuf) + LWS_PRE + pool_cap[c];
        bsz = (bsz + 15) & ~(size_t)15;
        g_pool.slab[c] = malloc(bsz * (size_t)pool_count[c]);
        if (!g_pool.slab[c])
            continue;
        for (i = 0; i < pool_count[c]; i++) {
            sbuf *b = (sbuf *)((uint8_t *)g_pool.slab[c] + bsz * (size_t)i);
            b->cls = (int8_t)c;
            b->link.next = (struct txq_blk *)(void *)g_pool.free_list[c];
            g_pool.free_list[c] = b;
            g_pool.nfree[c]++;
            g_pool.total++;
        }
    }
    g_pool.inited = 1;
}

void pool_destroy(void)
{
    int c;
    for (c = 0; c < POOL_CLASSES; c++) {
        free(g_pool.slab[c]);
        g_pool.slab[c] = NULL;
        g_pool.free_list[c] = NULL;
        g_pool.nfree[c] = 0;
    }
    g_pool.total = 0;
    g_pool.inited = 0;
}

sbuf *sbuf_alloc(size_t len)
{
    sbuf *b;
    if (OPT(OPT_POOL) && g_pool.inited) {
        int c;
        for (c = 0; c < POOL_CLASSES; c++) {
            if (len <= pool_cap[c] && g_pool.free_list[c]) {
                b = g_pool.free_list[c];
                g_pool.free_list[c] = (sbuf *)(void *)b->link.next;
                g_pool.nfree[c]--;
                g_pool.hits++;
                b->link.next = NULL;
                b->len = len;
                return b;
            }
        }
        g_pool.misses++;
    }
    b = malloc(sizeof(sbuf) + LWS_PRE + len + 1);
    if (!b)
        return NULL;
    b->link.next = NULL;
    b->len = len;
    b->cls = -1;
    return b;
}

void sbuf_free(sbuf *b)
{
    if (!b)
        return;
    if (b->cls >= 0) {
        b->link.next = (struct txq_blk *)(void *)g_pool.free_list[b->cls];
        g_pool.free_list[b->cls] = b;
        g_pool.nfree[b->cls]++;
    } else {
        free(b);
    }
}

void sbuf_free_blk(struct txq_blk *b)
{
    sbuf_free((sbuf *)(void *)b);
}

void pool_stats_get(struct pool_stats *st)
{
    int c;
    st->free = 0;
    for (c = 0; c < POOL_CLASSES; c++)
        st->free += g_pool.nfree[c];
    st->blocks = g_pool.total;
    st->hits = g_pool.hits;
    st->misses = g_pool.misses;
}
