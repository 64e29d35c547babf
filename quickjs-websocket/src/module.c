/*
 * quickjs-websocket: native half of a browser-style WebSocket client for the
 * stock QuickJS `qjs` interpreter, built on libwebsockets (external poll).
 *
 * One process-wide libwebsockets context is owned by a JS "handle" object
 * (created by init()).  Each connection is a JS "conn" object wrapping a
 * struct conn.  websocket.js provides the browser API on top of this.
 *
 * The eighteen optimizations (and permessage-deflate, switch "deflate") can be switched off at run time with the environment
 * variable QJSWS_DISABLE (comma separated short names, or "all"); see
 * README.md.  The switch state is read once, at module load.
 */
#include "jsconn.h"
#include "jsev.h"
#include "opts.h"
#include "service.h"
#include "url.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* the maximum message size (QJSWS_MAX_MESSAGE, max_message())          */

/* max_message([bytes]) -> the limit in force before the call */
static JSValue js_max_message(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t old = g_max_message;
    int64_t v;
    UNUSED(this_val);
    if (argc > 0 && !JS_IsUndefined(argv[0])) {
        if (JS_ToInt64(ctx, &v, argv[0]))
            return JS_EXCEPTION;
        if (v < 0 || (uint64_t)v > MAX_MESSAGE_LIMIT)
            return JS_ThrowRangeError(ctx, "max message size must be 0..%zu bytes", MAX_MESSAGE_LIMIT);
        g_max_message = (size_t)v;
    }
    return JS_NewInt64(ctx, (int64_t)old);
}

/* ca_file([path]) -> the CA file in force before the call (null: the system's
 * store); path: a string (a PEM file, for the wss:// connections made from now
 * on), or null/'' for the system's store */
static JSValue js_ca_file(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue old = g_ca_file ? JS_NewString(ctx, g_ca_file) : JS_NULL;
    const char *path = NULL;
    UNUSED(this_val);
    if (argc == 0 || JS_IsUndefined(argv[0]))
        return old;
    if (!JS_IsNull(argv[0])) {
        if (!JS_IsString(argv[0])) {
            JS_FreeValue(ctx, old);
            return JS_ThrowTypeError(ctx, "the CA file must be a path (a string), or null");
        }
        path = JS_ToCString(ctx, argv[0]);
        if (!path) {
            JS_FreeValue(ctx, old);
            return JS_EXCEPTION;
        }
    }
    if (opts_set_ca_file(path) < 0) {
        JS_FreeCString(ctx, path);
        JS_FreeValue(ctx, old);
        return JS_ThrowOutOfMemory(ctx);
    }
    JS_FreeCString(ctx, path);
    return old;
}

/* tls_resume([on]) -> whether new wss:// connections resume TLS sessions (before
 * the call); with a boolean, sets it */
static JSValue js_tls_resume(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int old = g_tls_resume;
    UNUSED(this_val);
    if (argc > 0 && !JS_IsUndefined(argv[0])) {
        if (!JS_IsBool(argv[0]))
            return JS_ThrowTypeError(ctx, "tls_resume: true or false");
        g_tls_resume = JS_ToBool(ctx, argv[0]);
    }
    return JS_NewBool(ctx, old);
}

/* options() -> {join: true, ...} (true = optimization enabled) */
static JSValue js_options(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue o = JS_NewObject(ctx);
    size_t i;
    UNUSED(this_val);
    UNUSED(argc);
    UNUSED(argv);
    for (i = 0; i < countof(opt_names); i++)
        JS_SetPropertyStr(ctx, o, opt_names[i], JS_NewBool(ctx, (g_opts >> i) & 1));
    return o;
}

static const JSCFunctionListEntry js_conn_proto_funcs[] = {
    JS_CFUNC_DEF("send", 4, js_conn_send),
    JS_CFUNC_DEF("close", 2, js_conn_close),
    JS_CFUNC_DEF("fail", 1, js_conn_fail),
    JS_CFUNC_DEF("buffered", 0, js_conn_buffered),
    JS_CFUNC_DEF("tls", 0, js_conn_tls),
    JS_CFUNC_DEF("watch", 0, js_conn_watch),
    JS_CFUNC_DEF("onmessage", 2, js_conn_onmessage),
};

static const JSCFunctionListEntry js_lws_funcs[] = {
    JS_CFUNC_DEF("init", 5, js_init),
    JS_CFUNC_DEF("service", 0, js_service),
    JS_CFUNC_DEF("service_fd", 2, js_service_fd),
    JS_CFUNC_DEF("tick", 0, js_tick),
    JS_CFUNC_DEF("active", 0, js_active),
    JS_CFUNC_DEF("connect", 7, js_connect),
    JS_CFUNC_DEF("own_path", 1, js_own_path),
    JS_CFUNC_DEF("parse_url", 1, js_parse_url),
    JS_CFUNC_DEF("encode_utf8", 1, js_encode_utf8),
    JS_CFUNC_DEF("decode_utf8", 1, js_decode_utf8),
    JS_CFUNC_DEF("pool_stats", 0, js_pool_stats),
    JS_CFUNC_DEF("options", 0, js_options),
    JS_CFUNC_DEF("max_message", 1, js_max_message),
    JS_CFUNC_DEF("ca_file", 1, js_ca_file),
    JS_CFUNC_DEF("tls_resume", 1, js_tls_resume),
    JS_CFUNC_DEF("native_send", 2, js_native_send),
};

static int js_lws_module_init(JSContext *ctx, JSModuleDef *m)
{
    JSRuntime *rt = JS_GetRuntime(ctx);
    JSValue proto;

    g_opts = opts_parse_disable(getenv("QJSWS_DISABLE"));
    text_string_init(ctx);
    jsb_load(ctx);
    service_init();
    if (getenv("QJSWS_MAX_MESSAGE")) {
        int64_t v = opts_parse_size(getenv("QJSWS_MAX_MESSAGE"));
        if (v < 0)
            fprintf(stderr, "quickjs-websocket: QJSWS_MAX_MESSAGE: not a size of 0..%zu bytes "
                            "(e.g. 1048576, 64k, 16m, 1g); keeping %zu\n",
                    MAX_MESSAGE_LIMIT, g_max_message);
        else
            g_max_message = (size_t)v;
    }

    if (getenv("QJSWS_CA_FILE") && opts_set_ca_file(getenv("QJSWS_CA_FILE")) < 0)
        return -1;
    g_tls_resume = getenv("QJSWS_TLS_RESUME") && !strcmp(getenv("QJSWS_TLS_RESUME"), "1");

    JS_NewClassID(&js_lws_handle_class_id);
    JS_NewClass(rt, js_lws_handle_class_id, &handle_class);
    JS_NewClassID(&js_lws_conn_class_id);
    JS_NewClass(rt, js_lws_conn_class_id, &conn_class);
    proto = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, proto, js_conn_proto_funcs, countof(js_conn_proto_funcs));
    JS_SetClassProto(ctx, js_lws_conn_class_id, proto);

    return JS_SetModuleExportList(ctx, m, js_lws_funcs, countof(js_lws_funcs));
}

JSModuleDef *js_init_module(JSContext *ctx, const char *module_name);

JSModuleDef *js_init_module(JSContext *ctx, const char *module_name)
{
    JSModuleDef *m = JS_NewCModule(ctx, module_name, js_lws_module_init);
    if (!m)
        return NULL;
    JS_AddModuleExportList(ctx, m, js_lws_funcs, countof(js_lws_funcs));
    return m;
}
