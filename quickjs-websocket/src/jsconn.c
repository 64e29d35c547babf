/*
 * The JS "conn" class: connect() picks the transport and the framer of a new
 * connection, and send()/close()/fail()/buffered()/watch() go to the state
 * machine and the framer.
 */
#include "jsconn.h"
#include "fr_lws.h"
#include "jsev.h"
#include "rx.h"
#include "tp_lws.h"
#include "loop.h"
#include "tp_tcp.h"
#include "tp_tls.h"
#include "upgrade.h"
#include "utf8.h"

#include <stdio.h>
#include <string.h>

JSClassID js_lws_conn_class_id;

int jsconn_n; /* live connections */

/* the connection is over: drop everything that ties the conn to its socket */
/* the connection of the WebSocket that sent last (js_ws_send), or NULL */
static conn *send_last;

static void conn_detach(conn *c)
{
    JSValue self, ws;
    if (send_last == c)
        send_last = NULL;
    sm_release(&c->sm);
    rx_free(c);
    ev_message_free(JS_GetRuntime(c->jsctx), c);
    jsconn_n--;
    /* no event follows: release the WebSocket (breaks the ws <-> conn cycle) */
    txq_unwatch(&conn_tp(c)->q);
    ws = c->ws;
    c->ws = JS_UNDEFINED;
    JS_FreeValue(c->jsctx, ws);
    self = c->self;
    c->self = JS_UNDEFINED;
    /* may finalize the conn: must be last */
    JS_FreeValue(c->jsctx, self);
}

void conn_detach_sm(struct sm *s)
{
    conn_detach(conn_of_sm(s));
}

static void conn_finalizer(JSRuntime *rt, JSValue val)
{
    conn *c = JS_GetOpaque(val, js_lws_conn_class_id);
    struct tp *t;
    if (!c)
        return;
    if (send_last == c)
        send_last = NULL;
    t = conn_tp(c);
    if (tp_live(t)) {
        /* only reachable at runtime teardown */
        t->ops->abandon(t);
        jsconn_n--;
    }
    if (!c->sm.detached) { /* else released at detach, and nothing since */
        sm_release(&c->sm);
        rx_free(c);
        txq_unwatch(&t->q);
    }
    ev_message_free(rt, c);
    JS_FreeValueRT(rt, c->ws);
    js_free_rt(rt, c);
}

static void conn_mark(JSRuntime *rt, JSValueConst val, JS_MarkFunc *mark_func)
{
    conn *c = JS_GetOpaque(val, js_lws_conn_class_id);
    if (!c)
        return;
    JS_MarkValue(rt, c->ws, mark_func);
    JS_MarkValue(rt, c->onmsg, mark_func);
    JS_MarkValue(rt, c->evmsg, mark_func);
}

JSClassDef conn_class = {
    "LwsConn",
    .finalizer = conn_finalizer,
    .gc_mark = conn_mark,
};

static conn *get_conn(JSContext *ctx, JSValueConst v)
{
    return JS_GetOpaque2(ctx, v, js_lws_conn_class_id);
}

/* own_path(secure) -> whether connect() sets such a connection up itself (our
 * socket, handshake and framing: permessage-deflate is possible) or lets
 * libwebsockets do it (built without extensions: no deflate) */
JSValue js_own_path(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    UNUSED(this_val);
    UNUSED(argc);
    return JS_NewBool(ctx, upg_wanted(JS_ToBool(ctx, argv[0])));
}

/* the permessage-deflate offer websocket.js passes: [server_no_context_takeover,
 * client_no_context_takeover, server_max_window_bits, client_max_window_bits]
 * (0/1, 0/1, 0 or 9..15, 0 or 1 (a name without a value) or 9..15), checked
 * there; 0, or -1 with an exception */
static int deflate_params(JSContext *ctx, JSValueConst v, struct pmd_params *p)
{
    int32_t x[4];
    uint32_t i;
    for (i = 0; i < 4; i++) {
        JSValue e = JS_GetPropertyUint32(ctx, v, i);
        int r = JS_ToInt32(ctx, &x[i], e);
        JS_FreeValue(ctx, e);
        if (r)
            return -1;
        if (x[i] < 0 || x[i] > 15) {
            JS_ThrowRangeError(ctx, "permessage-deflate parameter out of range");
            return -1;
        }
    }
    p->server_no_context_takeover = (uint8_t)!!x[0];
    p->client_no_context_takeover = (uint8_t)!!x[1];
    p->server_max_window_bits = (uint8_t)x[2];
    p->client_max_window_bits = (uint8_t)x[3];
    return 0;
}

/* connect(secure, host, port, path, protocols, ws[, deflate]) -> conn; events go to
 * WebSocket.prototype._event/_emitMessage with this = ws; deflate: the
 * permessage-deflate offer (deflate_params), null or absent: none */
JSValue js_connect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    const char *host = NULL, *path = NULL, *protos = NULL;
    char hosthdr[300];
    int secure, port, own, deflate = 0;
    struct pmd_params pmd;
    const struct tp_ops *tp;
    conn *c;
    JSValue obj;
    UNUSED(this_val);

    if (!loop_inited())
        return JS_ThrowInternalError(ctx, "quickjs-websocket: not initialised");
    secure = JS_ToBool(ctx, argv[0]);
    if (JS_ToInt32(ctx, &port, argv[2]))
        return JS_EXCEPTION;
    if (argc > 6 && !JS_IsUndefined(argv[6]) && !JS_IsNull(argv[6])) {
        if (deflate_params(ctx, argv[6], &pmd) < 0)
            return JS_EXCEPTION;
        if (!upg_wanted(secure))
            return JS_ThrowTypeError(ctx, "permessage-deflate needs the module's own connection "
                                          "setup (libwebsockets is built without extensions)");
        deflate = 1;
    }
    host = JS_ToCString(ctx, argv[1]);
    path = JS_ToCString(ctx, argv[3]);
    if (!JS_IsUndefined(argv[4]) && !JS_IsNull(argv[4]))
        protos = JS_ToCString(ctx, argv[4]);
    if (!host || !path) {
        obj = JS_EXCEPTION;
        goto done;
    }

    obj = jsb_new_object(ctx, js_lws_conn_class_id, sizeof(*c), (void **)&c);
    if (JS_IsException(obj))
        goto done;
    /* our socket, our handshake and our framing, or libwebsockets' */
    own = upg_wanted(secure);
    c->jsctx = ctx;
    c->ws = JS_DupValue(ctx, argv[5]);
    c->self = JS_DupValue(ctx, obj);
    tp = !own ? &tp_lws : secure ? &tp_tls : &tp_tcp;
    sm_start(&c->sm, tp, own ? &fr_own : &fr_lws);
    JS_SetOpaque(obj, c);
    jsconn_n++;

    if (strchr(host, ':'))
        snprintf(hosthdr, sizeof(hosthdr), "[%s]", host);
    else
        snprintf(hosthdr, sizeof(hosthdr), "%s", host);
    if (port != (secure ? 443 : 80)) {
        size_t l = strlen(hosthdr);
        snprintf(hosthdr + l, sizeof(hosthdr) - l, ":%d", port);
    }

    if (own) {
        const char *why = NULL;
        if (upg_start(&c->sm.fr, tp, host, port, path, hosthdr, protos, deflate ? &pmd : NULL,
                      &why) < 0) {
            /* raised inside connect(): websocket.js delivers them later */
            ev_error(c, why);
            sm_report_close(&c->sm, 1006, "", 0, 0);
            conn_detach(c);
        }
        goto done;
    }

    if (tp_lws_connect(conn_tp(c), secure, host, port, path, hosthdr, protos) < 0) {
        /* failed synchronously; lws may or may not have reported it */
        if (!c->sm.closed_dispatched) {
            ev_error(c, "connect failed");
            sm_report_close(&c->sm, 1006, "", 0, 0);
        }
        if (!c->sm.detached)
            conn_detach(c);
    }

done:
    JS_FreeCString(ctx, host);
    JS_FreeCString(ctx, path);
    JS_FreeCString(ctx, protos);
    return obj;
}

/* Queue or directly write one message (browsers silently discard it unless open). */
static int conn_send(JSContext *ctx, conn *c, const uint8_t *p, size_t len, int text)
{
    struct tp *t = conn_tp(c);
    if (!sm_sendable(&c->sm))
        return 0;
    if (t->fr->send(t, text, p, len) < 0) {
        JS_ThrowOutOfMemory(ctx);
        return -1;
    }
    return 0;
}

/* a string, as text (its USVString's UTF-8) */
static JSValue send_string(JSContext *ctx, conn *c, JSValueConst s)
{
    usv_str u;
    int r;
    if (usv_utf8(ctx, s, &u) < 0)
        return JS_EXCEPTION;
    r = conn_send(ctx, c, (const uint8_t *)u.p, u.len, 1);
    usv_free(ctx, &u);
    buf_publish_pending();
    return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
}

static JSValue send_bytes(JSContext *ctx, conn *c, const uint8_t *p, size_t len, int text)
{
    int r = conn_send(ctx, c, p, len, text);
    buf_publish_pending();
    return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
}

/* conn.send(data, isText): data is a string, ArrayBuffer or a view */
JSValue js_conn_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    size_t size;
    int64_t off = 0, blen = -1;
    uint8_t *p;
    if (!c)
        return JS_EXCEPTION;
    if (JS_IsString(argv[0]))
        return send_string(ctx, c, argv[0]);
    p = JS_GetArrayBuffer(ctx, &size, argv[0]);
    if (!p)
        return JS_EXCEPTION;
    if (argc > 3 && !JS_IsUndefined(argv[2])) {
        if (JS_ToInt64(ctx, &off, argv[2]) || JS_ToInt64(ctx, &blen, argv[3]))
            return JS_EXCEPTION;
        if (off < 0 || blen < 0 || (uint64_t)off + (uint64_t)blen > size)
            return JS_ThrowRangeError(ctx, "send: view out of range");
    } else {
        blen = (int64_t)size;
    }
    return send_bytes(ctx, c, p + off, (size_t)blen, JS_ToBool(ctx, argv[1]));
}

/* conn.close(code, reason) -- validated by the caller */
JSValue js_conn_close(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    int code = 1000;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    if (!JS_IsUndefined(argv[0]) && JS_ToInt32(ctx, &code, argv[0]))
        return JS_EXCEPTION;
    if (!sm_closable(&c->sm))
        return JS_UNDEFINED;
    if (JS_IsString(argv[1])) {
        usv_str u;
        if (usv_utf8(ctx, argv[1], &u) < 0)
            return JS_EXCEPTION;
        /* at most 123 bytes: checked in JS (SyntaxError) */
        sm_close(&c->sm, code, u.p, u.len > 123 ? 123 : u.len);
        usv_free(ctx, &u);
    } else {
        sm_close(&c->sm, code, NULL, 0);
    }
    buf_publish_pending(); /* own framing: the close frame counts until written */
    return JS_UNDEFINED;
}

/* conn.fail(code[, reason]): from JS (naive receive path) -- fail the
 * connection with this code */
JSValue js_conn_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    const char *r = NULL;
    int code;
    if (!c)
        return JS_EXCEPTION;
    if (JS_ToInt32(ctx, &code, argv[0]))
        return JS_EXCEPTION;
    if (argc > 1 && JS_IsString(argv[1])) {
        r = JS_ToCString(ctx, argv[1]);
        if (!r) /* out of memory: the default text */
            JS_FreeValue(ctx, JS_GetException(ctx));
    }
    sm_fail(&c->sm, code, r ? r : fail_text(code));
    JS_FreeCString(ctx, r);
    buf_publish_pending();
    return JS_UNDEFINED;
}

/* conn.buffered(): bytes queued in C and not yet handed to the socket */
JSValue js_conn_buffered(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    struct tp *t;
    UNUSED(argc);
    UNUSED(argv);
    if (!c)
        return JS_EXCEPTION;
    t = conn_tp(c);
    return JS_NewInt64(ctx, (int64_t)t->fr->buffered(t));
}

/* {version, cipher, group, library}, null where not known */
static JSValue secinfo_object(JSContext *ctx, const struct tp_secinfo *info)
{
    static const char *const keys[] = { "version", "cipher", "group", "library" };
    const char *const values[] = { info->version, info->cipher, info->group, info->library };
    JSValue obj = JS_NewObject(ctx);
    size_t i;
    if (JS_IsException(obj))
        return obj;
    for (i = 0; i < 4; i++) {
        JSValue v = values[i] ? JS_NewString(ctx, values[i]) : JS_NULL;
        if (JS_IsException(v) || JS_SetPropertyStr(ctx, obj, keys[i], v) < 0) {
            JS_FreeValue(ctx, obj);
            return JS_EXCEPTION;
        }
    }
    return obj;
}

/*
 * conn.tls(): over wss://, once the TLS handshake is done, what it negotiated:
 * {version, cipher, group, library} (null where the library cannot tell);
 * null over ws://, before it is done, and on a transport that cannot tell
 * (the binding's getter WebSocket.tlsInfo, websocket.js)
 */
JSValue js_conn_tls(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    struct tp_secinfo info = { NULL, NULL, NULL, NULL };
    struct tp *t = c ? conn_tp(c) : NULL;
    UNUSED(argc);
    UNUSED(argv);
    if (!c)
        return JS_EXCEPTION;
    if (!t->ops || !t->ops->secinfo || t->ops->secinfo(t, &info) < 0)
        return JS_NULL;
    return secinfo_object(ctx, &info);
}

/*
 * conn.watch(): the first read of bufferedAmount (opt "buffered"): give the
 * WebSocket its own bufferedAmount data property, kept current from C from
 * now on (see buf_publish, jsev.c); returns the value.  Called again only if
 * the property was deleted: it is redefined.
 */
JSValue js_conn_watch(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    size_t v;
    UNUSED(argc);
    UNUSED(argv);
    if (!c)
        return JS_EXCEPTION;
    v = conn_tp(c)->q.bytes;
    if (!sm_live(&c->sm) || c->sm.closed_dispatched || !JS_IsObject(c->ws))
        return JS_NewInt64(ctx, (int64_t)v); /* nothing will change any more */
    conn_tp(c)->q.watch = 1;
    buf_define(c, v);
    return JS_NewInt64(ctx, (int64_t)v);
}

/*
 * conn.onmessage(handler, listeners): opt "direct": the WebSocket's onmessage
 * (a function, or null) and how many "message" listeners it has, as
 * websocket.js changes them; C dispatches messages with them (ev_message).
 * Ignored once the connection is over (no message follows).
 */
JSValue js_conn_onmessage(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    JSValue old;
    int32_t n;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    if (JS_ToInt32(ctx, &n, argv[1]))
        return JS_EXCEPTION;
    if (c->sm.detached)
        return JS_UNDEFINED;
    old = c->onmsg;
    c->onmsg = JS_IsFunction(ctx, argv[0]) ? JS_DupValue(ctx, argv[0]) : JS_NULL;
    c->nlisten = n;
    JS_FreeValue(ctx, old);
    return JS_UNDEFINED;
}

/* ------------------------------------------------------------------ */
/* WebSocket.prototype.send, native (opt "direct")                       */

static JSClassID ab_class_id; /* ArrayBuffer's */

/*
 * The common case of websocket.js' send(data, options) without its JS frame:
 * the WebSocket OPEN (its _readyState), its _conn a conn, and data a string
 * (opt "strsend") or an ArrayBuffer whose prototype is ArrayBuffer.prototype
 * (what `data instanceof ArrayBuffer` finds first; opt "transfer") go straight
 * to the connection, as the JS send() would send them.  Everything else
 * (CONNECTING's InvalidStateError, CLOSING/CLOSED, views, other values, a
 * `this` that is no WebSocket) is the JS send(), data[0], called as it was.
 * data[1] is ArrayBuffer.prototype.
 */
static JSValue js_ws_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv,
                          int magic, JSValue *data)
{
    UNUSED(magic);
    if (JS_IsObject(this_val)) {
        JSValue st = JS_GetProperty(ctx, this_val, JSB.atom_state);
        if (JS_IsException(st))
            return st;
        if (JS_VALUE_GET_TAG(st) == JS_TAG_INT && JS_VALUE_GET_INT(st) == 1 /* OPEN */) {
            /* an OPEN WebSocket's _conn is the conn made for it (its c->ws), for
             * as long as that lives: the sender of the last call needs no lookup */
            JSValue cv = JS_UNDEFINED;
            conn *c = send_last;
            JSValue r = JS_UNINITIALIZED;
            if (!c || !JS_IsObject(c->ws) || JS_VALUE_GET_PTR(c->ws) != JS_VALUE_GET_PTR(this_val)) {
                cv = JS_GetProperty(ctx, this_val, JSB.atom_conn);
                c = JS_GetOpaque(cv, js_lws_conn_class_id);
                if (c && JS_IsObject(c->ws) && JS_VALUE_GET_PTR(c->ws) == JS_VALUE_GET_PTR(this_val))
                    send_last = c;
            }
            if (c && JS_IsString(argv[0])) {
                if (OPT(OPT_STRSEND))
                    r = send_string(ctx, c, argv[0]);
            } else if (c && OPT(OPT_TRANSFER) && JS_GetClassID(argv[0]) == ab_class_id) {
                JSValue proto = JS_GetPrototype(ctx, argv[0]);
                if (JS_VALUE_GET_PTR(proto) == JS_VALUE_GET_PTR(data[1])) {
                    size_t size;
                    uint8_t *p = JS_GetArrayBuffer(ctx, &size, argv[0]);
                    r = p ? send_bytes(ctx, c, p, size, 0) : JS_EXCEPTION;
                }
                JS_FreeValue(ctx, proto);
            }
            JS_FreeValue(ctx, cv);
            if (!JS_IsUninitialized(r))
                return r;
        }
        JS_FreeValue(ctx, st);
    }
    return JS_Call(ctx, data[0], this_val, argc, argv);
}

/* native_send(send, ArrayBuffer.prototype) -> the native send() over the JS one */
JSValue js_native_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue f, ab;
    UNUSED(this_val);
    UNUSED(argc);
    if (!JS_IsFunction(ctx, argv[0]) || !JS_IsObject(argv[1]))
        return JS_ThrowTypeError(ctx, "native_send(send, ArrayBuffer.prototype)");
    ab = JS_NewArrayBufferCopy(ctx, NULL, 0);
    if (JS_IsException(ab))
        return ab;
    ab_class_id = JS_GetClassID(ab);
    JS_FreeValue(ctx, ab);
    f = JS_NewCFunctionData(ctx, js_ws_send, 2, 0, 2, argv);
    if (JS_IsException(f))
        return f;
    /* named as the JS method was */
    if (JS_DefinePropertyValueStr(ctx, f, "name", JS_NewString(ctx, "send"), JS_PROP_CONFIGURABLE) < 0) {
        JS_FreeValue(ctx, f);
        return JS_EXCEPTION;
    }
    return f;
}
