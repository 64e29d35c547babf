/*
 * libFuzzer target: lws-echo's request-path options (reqopts.c) against a
 * reference written here from the README's rules: ?fragments=N (1..64),
 * ?stall=MS (1..60000) and ?serve=NAME&bytes=N (both or neither, nothing else
 * in the query, NAME shorter than 16 bytes, N in 1..max).
 *
 * Input: the query's arguments separated by '&' (as lws splits them; each
 * at most 255 bytes, as lws copies them), then, after a NUL, nothing.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../reqopts.h"
#include "fuzz_common.h"

#define MAXB ((size_t)64 << 20)

/* a decimal number as strtoll reads one, whole: optional blanks, a sign,
 * digits, nothing after; -1 if not one or not in lo..hi */
static long long ref_number(const char *s, long long lo, long long hi)
{
    int neg = 0, digits = 0;
    unsigned long long v = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        v = v * 10 + (unsigned)(*s - '0');
        if (v > (1ull << 40))
            return -1; /* far out of any range here */
    }
    if (!digits || *s)
        return -1;
    if (neg)
        return v == 0 && lo <= 0 ? 0 : -1;
    return (long long)v >= lo && (long long)v <= hi ? (long long)v : -1;
}

static const char *find(char **args, int n, const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strncmp(args[i], name, strlen(name)))
            return args[i] + strlen(name);
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf, *args[REQOPTS_MAX_ARGS + 8];
    int n = 0, want_ok = 1;
    struct reqopts o;
    const char *why, *fr, *st, *name, *bytes;
    unsigned want_frags = 1, want_stall = 0;
    long long want_bytes = 0;
    size_t i, start = 0;

    if (size > 8192 || memchr(data, 0, size))
        return 0;
    buf = malloc(size + 1);
    CHECK(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = 0;
    for (i = 0; i <= size && n < REQOPTS_MAX_ARGS + 8; i++) {
        if (i == size || buf[i] == '&') {
            buf[i] = 0;
            if (i - start > 255)
                goto out; /* lws would not hand it over */
            args[n++] = buf + start;
            start = i + 1;
        }
    }
    why = reqopts_parse((const char *const *)args, n, MAXB, &o);

    /* the reference */
    if (n > REQOPTS_MAX_ARGS)
        want_ok = 0;
    fr = find(args, n, "fragments=");
    if (fr) {
        long long v = ref_number(fr, 1, MAX_FRAGMENTS);
        if (v < 0)
            want_ok = 0;
        else
            want_frags = (unsigned)v;
    }
    st = find(args, n, "stall=");
    if (st) {
        long long v = ref_number(st, 1, 60000);
        if (v < 0)
            want_ok = 0;
        else
            want_stall = (unsigned)v;
    }
    name = find(args, n, "serve=");
    bytes = find(args, n, "bytes=");
    if (name || bytes) {
        if (!name || !bytes || n != 2 || strlen(name) >= 16)
            want_ok = 0;
        else if ((want_bytes = ref_number(bytes, 1, (long long)MAXB)) < 0)
            want_ok = 0;
    }

    CHECK((why == NULL) == want_ok);
    if (want_ok) {
        CHECK(o.frags == want_frags);
        CHECK(o.stall_ms == want_stall);
        CHECK(o.serve == (name != NULL));
        if (name) {
            CHECK(!strcmp(o.serve_name, name));
            CHECK(o.serve_bytes == (size_t)want_bytes);
        }
    }
out:
    free(buf);
    return 0;
}
