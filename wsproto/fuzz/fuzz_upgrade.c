/*
 * libFuzzer target: the opening handshake (handshake_core.c) as a client that
 * offers no subprotocol runs it (the load generator): hs_check() with nothing
 * offered, and hs_request() with none, against a defect model and a
 * reference request written apart (snprintf and a one-shot SHA1()).
 *
 * First input byte even: the rest is a response head as it came off the
 * wire (exactly that many bytes, no NUL: ASan sees any over-read); if it
 * is accepted, it must really hold a 101 status line and the three headers,
 * and name no subprotocol.
 * Odd: the rest chooses a response built from a valid one (header order,
 * name case, blanks around values, token lists, extra headers) and at most
 * one defect; it must be accepted exactly when it has no defect, and the
 * reason must name the defect.  It also chooses a path and a key: the
 * reference's request for them must be, byte for byte, hs_request()'s, and
 * both must expect the same Sec-WebSocket-Accept.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "fuzz_common.h"
#include "handshake_core.h"

static const char ACCEPT[] = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/* loadgen's call: no subprotocol offered, none wanted back */
static const char *check(const char *h, size_t n)
{
    return hs_check(h, n, ACCEPT, NULL, NULL, 0, NULL, NULL);
}

static void raw(const uint8_t *data, size_t size)
{
    char *h = malloc(size ? size : 1);
    const char *why;
    size_t hl;
    CHECK(h != NULL);
    memcpy(h, data, size);
    why = check(h, size);
    hl = hs_head_len(h, size);
    if (!why) {
        CHECK(size >= 12 && !memcmp(h, "HTTP/1.1 101", 12));
        CHECK(has_header(h, size, "upgrade", "websocket"));
        CHECK(has_header(h, size, "connection", "upgrade"));
        CHECK(has_header(h, size, "sec-websocket-accept", ACCEPT));
        /* nothing was offered: a head that names a subprotocol is refused */
        CHECK(!hl || !has_header(h, hl, "sec-websocket-protocol", ""));
    }
    free(h);
}

/* the reference request for <path> on 127.0.0.1:8080 and the key of `nonce`
 * (written as the load generator wrote its own before it used hs_request) */
static size_t ref_request(const char *target, const char *host, const unsigned char nonce[16],
                          char *out, size_t cap, char accept[29])
{
    static const char GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char digest[SHA_DIGEST_LENGTH];
    char key[25], both[64];
    int n;

    EVP_EncodeBlock((unsigned char *)key, nonce, 16);
    snprintf(both, sizeof(both), "%s%s", key, GUID);
    SHA1((const unsigned char *)both, strlen(both), digest);
    EVP_EncodeBlock((unsigned char *)accept, digest, sizeof(digest));
    n = snprintf(out, cap,
                 "GET %s HTTP/1.1\r\n"
                 "Host: %s\r\n"
                 "Upgrade: websocket\r\n"
                 "Connection: Upgrade\r\n"
                 "Sec-WebSocket-Key: %s\r\n"
                 "Sec-WebSocket-Version: 13\r\n"
                 "\r\n",
                 target, host, key);
    CHECK(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

/* a path (its first bytes choose the key) and its request, both ways */
static void request(const uint8_t *d, size_t n)
{
    char path[64] = "/", out[4096], ours[4096], accept[29], accept2[29];
    unsigned char nonce[16] = { 0 };
    size_t i, len, len2, at = 1;
    for (i = 0; i < n && i < sizeof(nonce); i++)
        nonce[i] = d[i];
    for (i = 0; i < n && at < sizeof(path) - 1; i++) /* printable, no blank, no '#' */
        if (d[i] > ' ' && d[i] < 0x7f && d[i] != '#')
            path[at++] = (char)d[i];
    path[at] = 0;
    len = ref_request(path, "127.0.0.1:8080", nonce, out, sizeof(out), accept);
    len2 = hs_request(ours, sizeof(ours), path, "127.0.0.1:8080", NULL, NULL, nonce, accept2);
    CHECK(len2 == len && !memcmp(ours, out, len));
    CHECK(!strcmp(accept, accept2));
}

struct out {
    char b[4096];
    size_t n;
};

static void put(struct out *o, const char *s)
{
    size_t l = strlen(s);
    if (o->n + l < sizeof(o->b)) {
        memcpy(o->b + o->n, s, l);
        o->n += l;
    }
}

/* the name with its case chosen by bits */
static void put_name(struct out *o, const char *name, unsigned bits)
{
    char tmp[64];
    size_t i;
    for (i = 0; name[i] && i < sizeof(tmp) - 1; i++)
        tmp[i] = (bits >> (i % 8)) & 1 ? (char)toupper((unsigned char)name[i])
                                        : (char)tolower((unsigned char)name[i]);
    tmp[i] = 0;
    put(o, tmp);
}

static void built(const uint8_t *d, size_t n)
{
    /* choices, each from one byte (0 when the input is short) */
#define B(i) ((size_t)(i) < n ? d[i] : 0)
    static const char *const blanks[4] = { "", " ", "\t", "  \t" };
    static const char *const extras[4] = { "Server: x", "X-A: websocket", "Date: today",
                                           "Sec-WebSocket-Version: 13" };
    unsigned defect = B(0) % 9; /* 0..2: none */
    unsigned order = B(1);
    struct out o = { .n = 0 };
    const char *why;
    int i, idx[4] = { 0, 1, 2, 3 };
    char *h;

    put(&o, defect == 3 ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 101 Switching Protocols\r\n");
    /* a permutation of the three required headers and one extra */
    for (i = 3; i > 0; i--) {
        int j = (int)(order % (unsigned)(i + 1)), t = idx[i];
        order /= (unsigned)(i + 1);
        idx[i] = idx[j];
        idx[j] = t;
    }
    for (i = 0; i < 4; i++) {
        unsigned c = B(2 + i), bl = B(6 + i);
        switch (idx[i]) {
        case 0:
            if (defect == 4)
                break;
            put_name(&o, "Upgrade", c);
            put(&o, ":");
            put(&o, blanks[bl & 3]);
            put(&o, (bl >> 2) & 1 ? "foo, WebSocket" : "websocket");
            put(&o, blanks[(bl >> 4) & 3]);
            put(&o, "\r\n");
            break;
        case 1:
            if (defect == 5)
                break;
            put_name(&o, "Connection", c);
            put(&o, ":");
            put(&o, blanks[bl & 3]);
            put(&o, (bl >> 2) & 1 ? "keep-alive,  Upgrade" : "Upgrade");
            put(&o, blanks[(bl >> 4) & 3]);
            put(&o, "\r\n");
            break;
        case 2:
            put_name(&o, "Sec-WebSocket-Accept", c);
            put(&o, ":");
            put(&o, blanks[bl & 3]);
            put(&o, defect == 6 ? "s3pPLMBiTxaQ9kYGzzhZRbK+xOo!" : ACCEPT);
            put(&o, blanks[(bl >> 4) & 3]);
            put(&o, "\r\n");
            break;
        case 3:
            put(&o, extras[c & 3]);
            put(&o, "\r\n");
            if (defect == 7) {
                put_name(&o, "Sec-WebSocket-Extensions", c);
                put(&o, ": permessage-deflate\r\n");
            }
            if (defect == 8) { /* loadgen offers none */
                put_name(&o, "Sec-WebSocket-Protocol", c);
                put(&o, ": chat\r\n");
            }
            break;
        }
    }
    put(&o, "\r\n");
    h = malloc(o.n);
    CHECK(h != NULL);
    memcpy(h, o.b, o.n);
    why = check(h, o.n);
    free(h);
    switch (defect) {
    case 3: CHECK(why && strstr(why, "101")); break;
    case 4: CHECK(why && strstr(why, "Upgrade")); break;
    case 5: CHECK(why && strstr(why, "Connection")); break;
    case 6: CHECK(why && strstr(why, "Accept")); break;
    case 7: CHECK(why && strstr(why, "extension")); break;
    case 8: CHECK(why && strstr(why, "subprotocol")); break;
    default:
        if (why)
            fprintf(stderr, "rejected (%s):\n%.*s\n", why, (int)o.n, o.b);
        CHECK(why == NULL);
    }
    request(d + 10, n > 10 ? n - 10 : 0);
#undef B
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        built(data + 1, size - 1);
    else
        raw(data + 1, size - 1);
    return 0;
}
