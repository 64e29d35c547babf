/* per-connection state, lws callback, JS conn class (conn.c) */
#ifndef QJSWS_CONN_H
#define QJSWS_CONN_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

extern const struct lws_protocols qjsws_protocols[];
extern JSClassDef conn_class;

void call_js(JSContext *ctx, JSValueConst fn, JSValueConst this_val, int argc, JSValueConst *argv);
void conn_dispatch_close(conn *c, int code, const char *reason, size_t rlen, int clean);
void conn_dispatch_error(conn *c, const char *msg);
void conn_free_queue(conn *c);
void conn_detach(conn *c);
int conn_deliver(conn *c, const uint8_t *in, size_t len, int first, int final,
                 int binary, size_t remain);
const char *fail_text(int code);
void conn_fail(conn *c, int code, const char *reason);

JSValue js_connect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_close(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
void buf_publish(void);
JSValue js_conn_watch(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_buffered(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
