/* lws context, event-loop glue, JS handle class (loop.c) */
#ifndef QJSWS_LOOP_H
#define QJSWS_LOOP_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

extern JSClassDef handle_class;

void poll_add(struct lws_pollargs *pa);
void poll_del(struct lws_pollargs *pa);
void poll_change(struct lws_pollargs *pa);
void loop_fd_add(int fd, int events);
void loop_fd_mod(int fd, int events);
void loop_fd_del(int fd);

JSValue js_init(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_service(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_service_fd(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_tick(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_active(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
