/* send buffer pool (pool.c) */
#ifndef QJSWS_POOL_H
#define QJSWS_POOL_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

/* messages up to this size are sent from a stack buffer (opt "pool") */
#define STACK_SEND_MAX 4096

void pool_init(void);
void pool_destroy(void);
sbuf *sbuf_alloc(size_t len);
void sbuf_free(sbuf *b);

/* pool_stats() -> {blocks, free, hits, misses, services, ...} */
JSValue js_pool_stats(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
