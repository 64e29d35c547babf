/*
 * The JS "handle" (init()) and the service entry points (service.c):
 * service(), service_fd(), tick(), active(), pool_stats().  The one place
 * that knows every layer: it fills each layer's callback table at load.
 */
#ifndef QJSWS_SERVICE_H
#define QJSWS_SERVICE_H

#include <quickjs.h>

#pragma GCC visibility push(hidden)

extern JSClassID js_lws_handle_class_id;
extern JSClassDef handle_class;

/* init(pollfn, evfn, msgfn) -> handle */
JSValue js_init(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
/* at module load: the callback tables of the layers below */
void service_init(void);

/* the service entry points (websocket.js, from the qjs loop), active() */
JSValue js_service(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_service_fd(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_tick(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_active(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
/* pool_stats() -> {blocks, free, hits, misses, services, ...} */
JSValue js_pool_stats(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
