/* The JS "conn" class (jsconn.c): connect() and the methods websocket.js calls. */
#ifndef QJSWS_JSCONN_H
#define QJSWS_JSCONN_H

#include <quickjs.h>

#include "conn.h"

#pragma GCC visibility push(hidden)

extern JSClassID js_lws_conn_class_id;
extern JSClassDef conn_class;

/* live connections (active()) */
extern int jsconn_n;
static inline int jsconn_count(void)
{
    return jsconn_n;
}

/* own_path(secure): connect() would set it up itself (permessage-deflate possible) */
JSValue js_own_path(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
/* connect(secure, host, port, path, protocols, ws[, deflate]) -> conn, and the conn
 * object's methods */
JSValue js_connect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_close(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_buffered(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_tls(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_watch(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_onmessage(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
/* native_send(send, ArrayBuffer.prototype): WebSocket.prototype.send in C (opt "direct") */
JSValue js_native_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

/* the connection is over: let go of the WebSocket and of the conn object
 * (sm_up.detach; may free s) */
void conn_detach_sm(struct sm *s);

#pragma GCC visibility pop

#endif
