/* WebSocket URL parsing (opt "urlparse": the native parse_url()) */
#include "url.h"
#include "opts.h"
#include "url_core.h"

/* parse_url(url) -> [secure, host, port, path, url as serialized]; throws SyntaxError */
JSValue js_parse_url(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, argv[0]);
    struct ws_url u;
    JSValue obj;
    enum ws_url_error r;
    UNUSED(this_val);
    UNUSED(argc);
    if (!s)
        return JS_EXCEPTION;
    r = ws_url_parse(s, len, &u);
    JS_FreeCString(ctx, s);
    if (r != WS_URL_OK) /* a SyntaxError whatever the reason (README.md, "Errors follow browsers") */
        return JS_ThrowSyntaxError(ctx, "Invalid WebSocket URL");
    /* an array: cheaper to make than an object with four named properties */
    obj = JS_NewArray(ctx);
    if (JS_IsException(obj))
        return obj;
    JS_SetPropertyUint32(ctx, obj, 0, JS_NewBool(ctx, u.secure));
    JS_SetPropertyUint32(ctx, obj, 1, JS_NewString(ctx, u.host));
    JS_SetPropertyUint32(ctx, obj, 2, JS_NewInt32(ctx, u.port));
    JS_SetPropertyUint32(ctx, obj, 3, JS_NewString(ctx, u.path));
    JS_SetPropertyUint32(ctx, obj, 4, JS_NewString(ctx, u.url));
    return obj;
}
