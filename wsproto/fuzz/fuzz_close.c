/*
 * libFuzzer target: close frames (wsclose.c): wsc_code_ok(), the one
 * close-code check of the module's two receive paths and of the load
 * generator, and wsc_body_problem(), their check of a received close frame's
 * body.
 *
 * The input is a close frame's body.  Properties:
 *   - wsc_code_ok() equals a reference written here from RFC 6455 7.4.1 and
 *     7.4.2 (and the IANA registry it sets up) for the code the body starts
 *     with, for the int its first four bytes make (negative and huge ones
 *     too), and, once per process, for every code from -1 to 65,536;
 *   - wsc_body_problem() equals a reference written from RFC 6455 5.5.1 (a
 *     body is empty, or a 2-byte code and a UTF-8 reason; 1002 for a 1-byte
 *     body or a code that may not be sent, 1007 for a reason that is not
 *     UTF-8), with its own UTF-8 decoder written from RFC 3629 section 4.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wsclose.h"
#include "fuzz_common.h"

/* RFC 6455 7.4.1 (defined codes), 7.4.2 (ranges), and the IANA "WebSocket
 * Close Code Number Registry" it creates: may an endpoint put this code in a
 * close frame? */
static const struct {
    int lo, hi, may_send;
} CODES[] = {
    { 0, 999, 0 },       /* 7.4.2: not used */
    { 1000, 1000, 1 },   /* normal closure */
    { 1001, 1001, 1 },   /* going away */
    { 1002, 1002, 1 },   /* protocol error */
    { 1003, 1003, 1 },   /* cannot accept this type of data */
    { 1004, 1004, 0 },   /* reserved, meaning may be defined later */
    { 1005, 1005, 0 },   /* MUST NOT be set: no status code was present */
    { 1006, 1006, 0 },   /* MUST NOT be set: closed abnormally */
    { 1007, 1007, 1 },   /* data not consistent with its type */
    { 1008, 1008, 1 },   /* policy violation */
    { 1009, 1009, 1 },   /* message too big */
    { 1010, 1010, 1 },   /* an extension the client expected */
    { 1011, 1011, 1 },   /* unexpected condition (IANA: internal error) */
    { 1012, 1012, 1 },   /* IANA: service restart */
    { 1013, 1013, 1 },   /* IANA: try again later */
    { 1014, 1014, 1 },   /* IANA: bad gateway */
    { 1015, 1015, 0 },   /* MUST NOT be set: TLS handshake failure */
    { 1016, 2999, 0 },   /* reserved for this protocol, its revisions and extensions */
    { 3000, 3999, 1 },   /* registered with IANA: libraries, frameworks, applications */
    { 4000, 4999, 1 },   /* private use */
};

static int ref_code_ok(long code)
{
    size_t i;
    for (i = 0; i < sizeof(CODES) / sizeof(CODES[0]); i++)
        if (code >= CODES[i].lo && code <= CODES[i].hi)
            return CODES[i].may_send;
    return 0; /* below 0, 5000 and up: in no range */
}

/* RFC 3629 section 4: UTF8-1 / UTF8-2 / UTF8-3 / UTF8-4, as written there */
static int tail(const uint8_t *p, size_t n, size_t i)
{
    return i < n && p[i] >= 0x80 && p[i] <= 0xbf;
}

static int in(const uint8_t *p, size_t n, size_t i, uint8_t lo, uint8_t hi)
{
    return i < n && p[i] >= lo && p[i] <= hi;
}

static int ref_utf8(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c <= 0x7f) {
            i += 1;
        } else if (c >= 0xc2 && c <= 0xdf && tail(p, n, i + 1)) {
            i += 2;
        } else if (c == 0xe0 && in(p, n, i + 1, 0xa0, 0xbf) && tail(p, n, i + 2)) {
            i += 3;
        } else if (((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) && tail(p, n, i + 1) &&
                   tail(p, n, i + 2)) {
            i += 3;
        } else if (c == 0xed && in(p, n, i + 1, 0x80, 0x9f) && tail(p, n, i + 2)) {
            i += 3;
        } else if (c == 0xf0 && in(p, n, i + 1, 0x90, 0xbf) && tail(p, n, i + 2) &&
                   tail(p, n, i + 3)) {
            i += 4;
        } else if (c >= 0xf1 && c <= 0xf3 && tail(p, n, i + 1) && tail(p, n, i + 2) &&
                   tail(p, n, i + 3)) {
            i += 4;
        } else if (c == 0xf4 && in(p, n, i + 1, 0x80, 0x8f) && tail(p, n, i + 2) &&
                   tail(p, n, i + 3)) {
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* RFC 6455 5.5.1: "If there is a body, the first two bytes of the body MUST
 * be a 2-byte unsigned integer (in network byte order) representing a status
 * code ... Following the 2-byte integer, the body MAY contain UTF-8-encoded
 * data"; a code that may not be sent is a protocol error, a reason that is
 * not UTF-8 invalid data (7.1.6, 8.1) */
static int ref_body(const uint8_t *p, size_t n, const char **why)
{
    if (n == 0)
        return 0;
    if (n < 2) {
        *why = "bad close frame";
        return 1002;
    }
    if (!ref_code_ok(p[0] * 256L + p[1])) {
        *why = "bad close code";
        return 1002;
    }
    if (!ref_utf8(p + 2, n - 2)) {
        *why = "invalid UTF-8 in close reason";
        return 1007;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int every;
    const char *why = NULL, *rwhy = NULL;
    uint8_t *body;
    int got, want;

    if (!every) {
        long c;
        for (c = -1; c <= 65536; c++)
            CHECK(wsc_code_ok((int)c) == ref_code_ok(c));
        CHECK(!wsc_code_ok(INT32_MIN) && !wsc_code_ok(INT32_MAX));
        every = 1;
    }
    if (size >= 2)
        CHECK(wsc_code_ok(data[0] << 8 | data[1]) == ref_code_ok(data[0] * 256L + data[1]));
    if (size >= 4) {
        int32_t v;
        memcpy(&v, data, 4);
        CHECK(wsc_code_ok(v) == ref_code_ok(v));
    }

    /* exactly size bytes, so ASan sees any over-read */
    body = malloc(size ? size : 1);
    CHECK(body != NULL);
    if (size)
        memcpy(body, data, size);
    got = wsc_body_problem(body, size, &why);
    want = ref_body(body, size, &rwhy);
    CHECK(got == want);
    CHECK(!got || (why && rwhy && !strcmp(why, rwhy)));
    free(body);
    return 0;
}
