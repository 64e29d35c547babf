/* UTF-8 (utf8.c) */
#ifndef QJSWS_UTF8_H
#define QJSWS_UTF8_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

/* strict RFC 3629 validation: 1 valid, 0 not */
int utf8_valid(const uint8_t *p, size_t len);
/* the same, one chunk at a time: *st is 0 at the start of a message and
 * must be 0 again at its end (no sequence left open); 1 valid so far, 0 not */
int utf8_stream(uint32_t *st, const uint8_t *p, size_t len);

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

/* Long texts in several chunks: validated and decoded together as they arrive.
 * text_stream(): p holds the message's n bytes so far, in a buffer of cap;
 * 1 ok, 0 invalid UTF-8 (final: the message ends at n), -1 out of memory. */
#define TEXT_FAST_MIN 1024 /* bytes; below this the per-character path is cheap */
int text_stream_on(void);
void text_stream_start(text_scratch *t);
int text_stream(text_scratch *t, const uint8_t *p, size_t n, size_t cap, int final);
JSValue text_stream_string(JSContext *ctx, text_scratch *t, const uint8_t *p, size_t n);

JSValue js_encode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);
JSValue js_decode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv);

#pragma GCC visibility pop

#endif
