/*
 * Events to JS (jsev.c): dispatch with the microtask checkpoint, the events
 * of the state machine (open, error, close), and bufferedAmount published as
 * a data property.  The binding's process-wide state lives here.
 */
#ifndef QJSWS_JSEV_H
#define QJSWS_JSEV_H

#include <quickjs.h>

#include "conn.h"
#include "txq.h"

#pragma GCC visibility push(hidden)

struct jsb {
    JSContext *ctx;
    JSRuntime *rt;
    JSValue evfn;        /* WebSocket.prototype._event(kind, a, b, c, d), this = the WebSocket */
    JSValue msgfn;       /* WebSocket.prototype._emitMessage(data), this = the WebSocket */
    JSValue dispfn;      /* WebSocket.prototype._dispatch(type, handler, ev): the listeners */
    JSValue errfn;       /* reportError(e): an exception a handler threw */
    JSValue str_message; /* "message" */
    JSAtom atom_buffered; /* "bufferedAmount" */
    /* the message event's properties (opt "direct") */
    JSAtom atom_type, atom_target, atom_current, atom_data, atom_origin;
    /* the WebSocket's fields the native send() reads (opt "direct") */
    JSAtom atom_state, atom_conn;
    int dispatch_depth;  /* depth: inside an event dispatch or microtask checkpoint */
    int destroying;      /* the handle is being finalized: no more JS */
};
extern struct jsb JSB;

void jsb_init(JSContext *ctx, JSValueConst evfn, JSValueConst msgfn, JSValueConst dispfn,
              JSValueConst errfn);
/* at module load: the atoms (freed by jsb_destroy, or with the runtime) */
void jsb_load(JSContext *ctx);
void jsb_mark(JSRuntime *rt, JS_MarkFunc *mark_func);
void jsb_destroy(JSRuntime *rt);

/* a new object of class cls and a zeroed block of size bytes for its opaque
 * (*opaque; the caller sets it); JS_EXCEPTION if either cannot be made */
JSValue jsb_new_object(JSContext *ctx, JSClassID cls, size_t size, void **opaque);

void call_js(JSContext *ctx, JSValueConst fn, JSValueConst this_val, int argc, JSValueConst *argv);
/* one event to JS (this = the connection's WebSocket), then, outermost, the
 * microtask checkpoint */
void dispatch_js(conn *c, JSValueConst fn, int argc, JSValueConst *argv);

void ev_error(conn *c, const char *msg);
/* a message (opt "direct"): its event to onmessage and the listeners, from C */
void ev_message(conn *c, JSValueConst data);
/* the conn's message handlers and pooled event, let go */
void ev_message_free(JSRuntime *rt, conn *c);
/* the state machine's events (sm_up) */
void ev_sm_open(struct sm *s);
void ev_sm_error(struct sm *s, const char *msg);
void ev_sm_close(struct sm *s, int code, const char *reason, size_t rlen, int clean);

/* opt "buffered": the property's value v (defining it) */
void buf_define(conn *c, size_t v);
/* republish what changed (txq_changed) */
void buf_publish(void);
static inline void buf_publish_pending(void)
{
    if (txq_changed)
        buf_publish();
}

#pragma GCC visibility pop

#endif
