/* URL parsing (url.c) */
#ifndef QJSWS_URL_H
#define QJSWS_URL_H

#include <quickjs.h>

#pragma GCC visibility push(hidden)

/* parse_url(url) -> {secure, host, port, path}; throws SyntaxError */
JSValue js_parse_url(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
