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
/* received bytes of an own-framing connection: parse, deliver, answer (own_init) */
void conn_rx(conn *c, const uint8_t *p, size_t n);
/* a close frame's body that must fail the connection (RFC 6455 5.5.1, 7.4, 8.1):
 * 0, or the code to fail with (1002, 1007) and why; both receive paths use it */
int close_body_problem(const uint8_t *p, size_t len, const char **why);
const char *fail_text(int code);
void conn_fail(conn *c, int code, const char *reason);
void conn_opened(conn *c);
void conn_gone(conn *c, const char *why);

JSValue js_connect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_close(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
void buf_publish(void);
JSValue js_conn_watch(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_conn_buffered(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
