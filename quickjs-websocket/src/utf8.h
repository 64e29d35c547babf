/* UTF-8 (utf8.c) */
#ifndef QJSWS_UTF8_H
#define QJSWS_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include <quickjs.h>

#include "opts.h"
#include "utf8_core.h"

#pragma GCC visibility push(hidden)

/* utf8_valid(), utf8_stream(), text_stream(): utf8_core.h (no JS) */

/* a JS string as UTF-8, lone surrogates as U+FFFD (USVString) */
typedef struct {
    const char *p;
    size_t len;
    uint8_t *copy; /* set when surrogates were replaced (then p == copy) */
} usv_str;
int usv_utf8(JSContext *ctx, JSValueConst v, usv_str *u); /* -1: exception */
void usv_free(JSContext *ctx, usv_str *u);

/* A JS string from text that is valid UTF-8 (checked by the caller); see utf8.c.
 * text_string_init() learns, once per process, how to hand a UTF-16 buffer over. */
void text_string_init(JSContext *ctx);
JSValue text_string(JSContext *ctx, text_scratch *t, const uint8_t *p, size_t len);

/* Long texts in several chunks: validated and decoded together as they arrive
 * (text_stream(), utf8_core.h), where text_stream_on() */
#define TEXT_FAST_MIN 1024 /* bytes; below this the per-character path is cheap */
int text_stream_on(void);
JSValue text_stream_string(JSContext *ctx, text_scratch *t, const uint8_t *p, size_t n);

JSValue js_encode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_decode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
