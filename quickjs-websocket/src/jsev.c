/*
 * Events to JS: dispatch with the microtask checkpoint, the state machine's
 * events, and bufferedAmount as a data property (opt "buffered").
 */
#include "jsev.h"
#include "loop.h"

#include <quickjs-libc.h>

struct jsb JSB; /* evfn, msgfn...: 0 (an int) until init() */

void jsb_init(JSContext *ctx, JSValueConst evfn, JSValueConst msgfn, JSValueConst dispfn,
              JSValueConst errfn)
{
    JSB.evfn = JS_DupValue(ctx, evfn);
    JSB.msgfn = JS_DupValue(ctx, msgfn);
    JSB.dispfn = JS_DupValue(ctx, dispfn);
    JSB.errfn = JS_DupValue(ctx, errfn);
    JSB.str_message = JS_NewString(ctx, "message");
    JSB.ctx = ctx;
    JSB.rt = JS_GetRuntime(ctx);
    JSB.destroying = 0;
}

void jsb_load(JSContext *ctx)
{
    JSB.atom_buffered = JS_NewAtom(ctx, "bufferedAmount");
    JSB.atom_type = JS_NewAtom(ctx, "type");
    JSB.atom_target = JS_NewAtom(ctx, "target");
    JSB.atom_current = JS_NewAtom(ctx, "currentTarget");
    JSB.atom_data = JS_NewAtom(ctx, "data");
    JSB.atom_origin = JS_NewAtom(ctx, "origin");
    JSB.atom_state = JS_NewAtom(ctx, "_readyState");
    JSB.atom_conn = JS_NewAtom(ctx, "_conn");
}

void jsb_mark(JSRuntime *rt, JS_MarkFunc *mark_func)
{
    JS_MarkValue(rt, JSB.evfn, mark_func);
    JS_MarkValue(rt, JSB.msgfn, mark_func);
    JS_MarkValue(rt, JSB.dispfn, mark_func);
    JS_MarkValue(rt, JSB.errfn, mark_func);
}

static void free_atom(JSRuntime *rt, JSAtom *a)
{
    if (*a != JS_ATOM_NULL) {
        JS_FreeAtomRT(rt, *a);
        *a = JS_ATOM_NULL;
    }
}

void jsb_destroy(JSRuntime *rt)
{
    free_atom(rt, &JSB.atom_buffered);
    free_atom(rt, &JSB.atom_type);
    free_atom(rt, &JSB.atom_target);
    free_atom(rt, &JSB.atom_current);
    free_atom(rt, &JSB.atom_data);
    free_atom(rt, &JSB.atom_origin);
    free_atom(rt, &JSB.atom_state);
    free_atom(rt, &JSB.atom_conn);
    JS_FreeValueRT(rt, JSB.evfn);
    JS_FreeValueRT(rt, JSB.msgfn);
    JS_FreeValueRT(rt, JSB.dispfn);
    JS_FreeValueRT(rt, JSB.errfn);
    JS_FreeValueRT(rt, JSB.str_message);
    JSB.evfn = JSB.msgfn = JSB.dispfn = JSB.errfn = JSB.str_message = JS_UNDEFINED;
    JSB.ctx = NULL;
}

JSValue jsb_new_object(JSContext *ctx, JSClassID cls, size_t size, void **opaque)
{
    JSValue obj = JS_NewObjectClass(ctx, (int)cls);
    if (JS_IsException(obj))
        return obj;
    *opaque = js_mallocz(ctx, size);
    if (!*opaque) {
        JS_FreeValue(ctx, obj);
        return JS_EXCEPTION;
    }
    return obj;
}

void call_js(JSContext *ctx, JSValueConst fn, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue r = JS_Call(ctx, fn, this_val, argc, argv);
    if (JS_IsException(r))
        js_std_dump_error(ctx);
    JS_FreeValue(ctx, r);
}

/* ------------------------------------------------------------------ */
/* bufferedAmount as a data property (opt "buffered")                    */

/*
 * The first read of ws.bufferedAmount goes through the accessor on
 * WebSocket.prototype, which calls conn.watch(ws): from then on the
 * WebSocket has an own data property bufferedAmount (non-writable,
 * non-enumerable, configurable so that C can redefine it) that shadows
 * the accessor, and C keeps it equal to the queued bytes.  A read is then
 * a plain property lookup, no call.  The value is republished only where
 * it changed (the queue's owner puts it on txq_changed, txq.h) and only at
 * the points where JS can look: before every event dispatched to JS, at the
 * return of send()/close()/fail(), and at the end of service()/service_fd()/
 * tick().  Connections that never read it pay one flag test per queue change.
 * Close (the close event) publishes 0 and ends the watch, as the accessor
 * answers 0 once the connection is gone.
 */

void buf_define(conn *c, size_t v)
{
    c->pub = v;
    /* no JS_PROP_THROW: a frozen WebSocket simply keeps its last value */
    JS_DefinePropertyValue(c->jsctx, c->ws, JSB.atom_buffered, JS_NewInt64(c->jsctx, (int64_t)v),
                           JS_PROP_CONFIGURABLE);
}

void buf_publish(void)
{
    struct txq *q;
    while ((q = txq_changed_pop()) != NULL) {
        conn *c = conn_of_tp(container_of(q, struct tp, q));
        if (q->watch && q->bytes != c->pub)
            buf_define(c, q->bytes);
    }
}

/* ------------------------------------------------------------------ */
/* dispatch                                                              */

/* HTML's "perform a microtask checkpoint": run promise jobs until none is left */
static void run_microtasks(void)
{
    JSContext *jctx;
    JSB.dispatch_depth++; /* an event raised from a job gets no checkpoint of its own */
    while (JS_IsJobPending(JSB.rt)) {
        if (JS_ExecutePendingJob(JSB.rt, &jctx) < 0)
            js_std_dump_error(jctx);
    }
    JSB.dispatch_depth--;
}

/*
 * Dispatch one event (open, message, naive chunk, error, close) to the JS
 * side.  After each outermost dispatch from the event loop, the promise
 * jobs it queued run before anything else, as browsers and Node do after
 * every event: one service call can dispatch thousands of messages, and an
 * `await` or `.then` in onmessage must see each message's continuation
 * before the next message.  Nested dispatches (an event raised while JS is
 * on the stack, e.g. error from conn.fail()) and calls outside service
 * (qjs runs the jobs itself after every handler) are left alone.  With no
 * job pending the cost is one JS_IsJobPending() call.
 */
static inline void dispatch_begin(void)
{
    buf_publish_pending(); /* every bufferedAmount is current when JS runs */
    JSB.dispatch_depth++;
}

static inline void dispatch_end(void)
{
    if (--JSB.dispatch_depth == 0 && loop_in_service() && JS_IsJobPending(JSB.rt))
        run_microtasks();
}

void dispatch_js(conn *c, JSValueConst fn, int argc, JSValueConst *argv)
{
    dispatch_begin();
    call_js(c->jsctx, fn, c->ws, argc, argv);
    dispatch_end();
}

/* ------------------------------------------------------------------ */
/* a message, dispatched from C (opt "direct")                           */

/*
 * What WebSocket.prototype._emitMessage(data) does, without its JS frame and
 * the `handler.call()` inside it: the same event object (a plain object
 * {type: 'message', target, currentTarget, data, origin: ''}, made the same
 * way, its properties in that order; with eventpool one per connection,
 * made at its first message, its data reset to null after the handlers),
 * onmessage called with this = the WebSocket, an exception it throws reported
 * by the same reportError(), then the "message" listeners through the same
 * _dispatch() (only when there are any, as _emitMessage checks after
 * onmessage returned), then the microtask checkpoint.  websocket.js keeps
 * c->onmsg and c->nlisten current (conn.onmessage(), from the onmessage
 * setter and add/removeEventListener), so nothing is looked up per message.
 */
static JSValue message_event(conn *c, JSValueConst data)
{
    JSContext *ctx = c->jsctx;
    JSValue ev = JS_NewObject(ctx);
    if (JS_IsException(ev))
        return ev;
    if (JS_DefinePropertyValue(ctx, ev, JSB.atom_type, JS_DupValue(ctx, JSB.str_message),
                               JS_PROP_C_W_E) < 0 ||
        JS_DefinePropertyValue(ctx, ev, JSB.atom_target, JS_DupValue(ctx, c->ws),
                               JS_PROP_C_W_E) < 0 ||
        JS_DefinePropertyValue(ctx, ev, JSB.atom_current, JS_DupValue(ctx, c->ws),
                               JS_PROP_C_W_E) < 0 ||
        JS_DefinePropertyValue(ctx, ev, JSB.atom_data, JS_DupValue(ctx, data),
                               JS_PROP_C_W_E) < 0 ||
        JS_DefinePropertyValue(ctx, ev, JSB.atom_origin, JS_NewString(ctx, ""),
                               JS_PROP_C_W_E) < 0) {
        JS_FreeValue(ctx, ev);
        return JS_EXCEPTION;
    }
    return ev;
}

static void message_handlers(conn *c, JSValueConst ev)
{
    JSContext *ctx = c->jsctx;
    if (JS_IsObject(c->onmsg)) {
        JSValue h = JS_DupValue(ctx, c->onmsg); /* the handler may replace itself */
        JSValue r = JS_Call(ctx, h, c->ws, 1, &ev);
        JS_FreeValue(ctx, h);
        if (JS_IsException(r)) {
            JSValue e = JS_GetException(ctx);
            call_js(ctx, JSB.errfn, JS_UNDEFINED, 1, (JSValueConst *)&e);
            JS_FreeValue(ctx, e);
        }
        JS_FreeValue(ctx, r);
    }
    if (c->nlisten) {
        JSValueConst argv[3] = { JSB.str_message, JS_NULL, ev };
        call_js(ctx, JSB.dispfn, c->ws, 3, argv);
    }
}

void ev_message(conn *c, JSValueConst data)
{
    JSContext *ctx = c->jsctx;
    JSValue ev;
    dispatch_begin();
    if (!OPT(OPT_EVENTPOOL)) {
        ev = message_event(c, data);
    } else if (JS_IsObject(c->evmsg)) {
        ev = JS_DupValue(ctx, c->evmsg);
        if (JS_SetProperty(ctx, ev, JSB.atom_data, JS_DupValue(ctx, data)) < 0) {
            JS_FreeValue(ctx, ev);
            ev = JS_EXCEPTION;
        }
    } else {
        ev = message_event(c, data);
        if (!JS_IsException(ev))
            c->evmsg = JS_DupValue(ctx, ev);
    }
    if (JS_IsException(ev)) {
        js_std_dump_error(ctx); /* as an exception in _emitMessage would be */
    } else {
        message_handlers(c, ev);
        if (OPT(OPT_EVENTPOOL) && JS_SetProperty(ctx, ev, JSB.atom_data, JS_NULL) < 0)
            js_std_dump_error(ctx);
        JS_FreeValue(ctx, ev);
    }
    dispatch_end();
}

void ev_message_free(JSRuntime *rt, conn *c)
{
    JSValue h = c->onmsg, ev = c->evmsg;
    c->onmsg = c->evmsg = JS_UNDEFINED;
    c->nlisten = 0;
    JS_FreeValueRT(rt, h);
    JS_FreeValueRT(rt, ev);
}

/* ------------------------------------------------------------------ */
/* the state machine's events                                            */

void ev_error(conn *c, const char *msg)
{
    JSContext *ctx = c->jsctx;
    JSValue argv[2];
    argv[0] = JS_NewInt32(ctx, EV_ERROR);
    argv[1] = JS_NewString(ctx, msg ? msg : "");
    dispatch_js(c, JSB.evfn, 2, (JSValueConst *)argv);
    JS_FreeValue(ctx, argv[1]);
}

void ev_sm_error(struct sm *s, const char *msg)
{
    ev_error(conn_of_sm(s), msg);
}

/* open (with the chosen subprotocol) */
void ev_sm_open(struct sm *s)
{
    conn *c = conn_of_sm(s);
    JSValue argv[3];
    int argc = 2;
    argv[0] = JS_NewInt32(c->jsctx, EV_OPEN);
    argv[1] = JS_NewString(c->jsctx, s->fr.tp.protocol);
    if (s->fr.pmd) {
        /* permessage-deflate agreed (upgrade.c): our parser lets RSV1 through on
         * a data message's first frame; JS gets the server's answer (extensions) */
        c->rxp.rsv_ok = 0x40;
        argv[argc++] = JS_NewString(c->jsctx, s->fr.pmd->ext);
    }
    dispatch_js(c, JSB.evfn, argc, (JSValueConst *)argv);
    JS_FreeValue(c->jsctx, argv[1]);
    if (argc > 2)
        JS_FreeValue(c->jsctx, argv[2]);
}

void ev_sm_close(struct sm *s, int code, const char *reason, size_t rlen, int clean)
{
    conn *c = conn_of_sm(s);
    struct txq *q = &s->fr.tp.q;
    JSContext *ctx = c->jsctx;
    JSValue argv[4];
    if (q->watch) {
        /* gone: 0 from the close event on (the accessor's answer too) */
        if (c->pub != 0)
            buf_define(c, 0);
        txq_unwatch(q);
    }
    argv[0] = JS_NewInt32(ctx, EV_CLOSE);
    argv[1] = JS_NewInt32(ctx, code);
    argv[2] = JS_NewStringLen(ctx, reason ? reason : "", reason ? rlen : 0);
    argv[3] = JS_NewBool(ctx, clean);
    dispatch_js(c, JSB.evfn, 4, (JSValueConst *)argv);
    JS_FreeValue(ctx, argv[2]);
}
