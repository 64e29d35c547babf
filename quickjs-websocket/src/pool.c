/* send buffer pool (opt "pool") and the pool_stats() counters */
#include "qjsws.h"
#include "pool.h"

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
            b->next = g_pool.free_list[c];
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
                g_pool.free_list[c] = b->next;
                g_pool.nfree[c]--;
                g_pool.hits++;
                b->next = NULL;
                b->len = len;
                return b;
            }
        }
        g_pool.misses++;
    }
    b = malloc(sizeof(sbuf) + LWS_PRE + len + 1);
    if (!b)
        return NULL;
    b->next = NULL;
    b->len = len;
    b->cls = -1;
    return b;
}

void sbuf_free(sbuf *b)
{
    if (!b)
        return;
    if (b->cls >= 0) {
        b->next = g_pool.free_list[b->cls];
        g_pool.free_list[b->cls] = b;
        g_pool.nfree[b->cls]++;
    } else {
        free(b);
    }
}

/* pool_stats() -> {blocks, free, hits, misses} */
JSValue js_pool_stats(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue o = JS_NewObject(ctx);
    int c, nfree = 0;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    for (c = 0; c < POOL_CLASSES; c++)
        nfree += g_pool.nfree[c];
    JS_SetPropertyStr(ctx, o, "blocks", JS_NewInt32(ctx, g_pool.total));
    JS_SetPropertyStr(ctx, o, "free", JS_NewInt32(ctx, nfree));
    JS_SetPropertyStr(ctx, o, "hits", JS_NewInt64(ctx, (int64_t)g_pool.hits));
    JS_SetPropertyStr(ctx, o, "misses", JS_NewInt64(ctx, (int64_t)g_pool.misses));
    JS_SetPropertyStr(ctx, o, "services", JS_NewInt64(ctx, (int64_t)G.services));
    JS_SetPropertyStr(ctx, o, "service_fds", JS_NewInt64(ctx, (int64_t)G.service_fds));
    JS_SetPropertyStr(ctx, o, "ticks", JS_NewInt64(ctx, (int64_t)G.ticks));
    JS_SetPropertyStr(ctx, o, "own_writes", JS_NewInt64(ctx, (int64_t)G.own_writes));
    JS_SetPropertyStr(ctx, o, "own_reads", JS_NewInt64(ctx, (int64_t)G.own_reads));
    JS_SetPropertyStr(ctx, o, "connections", JS_NewInt32(ctx, G.nconns));
    return o;
}
