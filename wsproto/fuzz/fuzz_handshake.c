/*
 * libFuzzer target: the opening handshake (handshake_core.c): the request
 * and the 101 check both clients use (loadgen calls them with nothing
 * offered: docs/fuzzing.md says why they are one function each; the defect
 * model of a client that offers none is fuzz_upgrade.c).
 *
 * First input byte even: the rest is a response head as it came off the
 * wire.  Properties:
 *   - hs_head_len() finds exactly the first blank line;
 *   - what hs_check() accepts holds a 101 status line, Upgrade: websocket,
 *     Connection: upgrade and the accept value, and the subprotocol it
 *     reports is "" or one of those offered, named by the head;
 *   - with none offered (NULL, no room for the answer: loadgen's call), it
 *     accepts only what it accepts with an offer and the answer "", and, on
 *     heads that name no subprotocol, exactly that.
 * Odd: the rest chooses a request (nonce, path, offered subprotocols) and a
 * response to it (the chosen subprotocol, header order, name case, blanks
 * and tabs around values, at most one defect).  Properties:
 *   - the request is one GET line and the headers RFC 6455 4.1 asks for, its
 *     key is the base64 of the nonce, and the accept value hs_request()
 *     expects is the one computed here (SHA-1 through EVP, our own base64);
 *   - the response is taken exactly when it has no defect, with the chosen
 *     subprotocol reported.
 */
#include <ctype.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handshake_core.h"
#include "fuzz_common.h"

static const char ACCEPT[] = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
static const char OFFER[] = "chat, superchat";
static const char *const TOKENS[4] = { "chat", "superchat", "v2.json", "x_y" };

static void raw(const uint8_t *data, size_t size)
{
    char *h = malloc(size ? size : 1), proto[64];
    const char *e, *why;
    size_t hl;
    CHECK(h != NULL);
    if (size)
        memcpy(h, data, size);

    e = size >= 4 ? memmem(h, size, "\r\n\r\n", 4) : NULL;
    hl = hs_head_len(h, size);
    CHECK(hl == (e ? (size_t)(e - h) + 4 : 0));

    why = hs_check(h, size, ACCEPT, OFFER, proto, sizeof(proto), NULL, NULL);
    if (!why) {
        CHECK(size >= 12 && !memcmp(h, "HTTP/1.1 101", 12));
        CHECK(has_header(h, size, "upgrade", "websocket"));
        CHECK(has_header(h, size, "connection", "upgrade"));
        CHECK(has_header(h, size, "sec-websocket-accept", ACCEPT));
        CHECK(!proto[0] || !strcmp(proto, "chat") || !strcmp(proto, "superchat"));
        CHECK(!proto[0] || has_header(h, size, "sec-websocket-protocol", proto));
    }
    {
        int none = hs_check(h, size, ACCEPT, NULL, NULL, 0, NULL, NULL) == NULL;
        if (none)
            CHECK(!why && !proto[0]);
        if (!has_header(h, size, "sec-websocket-protocol", ""))
            CHECK(none == !why);
    }
    free(h);
}

/* base64 written here, not OpenSSL's */
static void b64(const uint8_t *in, size_t n, char *out)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    for (i = 0; i + 2 < n; i += 3, out += 4) {
        out[0] = A[in[i] >> 2];
        out[1] = A[(in[i] & 3) << 4 | in[i + 1] >> 4];
        out[2] = A[(in[i + 1] & 15) << 2 | in[i + 2] >> 6];
        out[3] = A[in[i + 2] & 63];
    }
    if (n - i == 1) {
        out[0] = A[in[i] >> 2];
        out[1] = A[(in[i] & 3) << 4];
        out[2] = out[3] = '=';
        out += 4;
    } else if (n - i == 2) {
        out[0] = A[in[i] >> 2];
        out[1] = A[(in[i] & 3) << 4 | in[i + 1] >> 4];
        out[2] = A[(in[i + 1] & 15) << 2];
        out[3] = '=';
        out += 4;
    }
    *out = 0;
}

/* the value of header `name` in the request (NUL-ended copy), or NULL */
static const char *req_header(const char *req, const char *name, char *val, size_t cap)
{
    size_t nl = strlen(name);
    const char *p = strstr(req, "\r\n");
    while (p && p[2] != '\r') {
        const char *line = p + 2, *eol = strstr(line, "\r\n");
        CHECK(eol != NULL);
        if (!strncmp(line, name, nl) && line[nl] == ':' && line[nl + 1] == ' ') {
            size_t vl = (size_t)(eol - line) - nl - 2;
            CHECK(vl < cap);
            memcpy(val, line + nl + 2, vl);
            val[vl] = 0;
            return val;
        }
        p = eol;
    }
    return NULL;
}

struct out {
    char b[2048];
    size_t n;
};

static void put(struct out *o, const char *s)
{
    size_t l = strlen(s);
    CHECK(o->n + l < sizeof(o->b));
    memcpy(o->b + o->n, s, l);
    o->n += l;
}

/* "Name:<blank>value<blank>\r\n", the name's case chosen by bits */
static void put_header(struct out *o, const char *name, const char *value, unsigned bits)
{
    static const char *const blanks[4] = { "", " ", "\t", " \t " };
    char tmp[64];
    size_t i;
    for (i = 0; name[i]; i++)
        tmp[i] = (bits >> (i % 5)) & 1 ? (char)toupper((unsigned char)name[i])
                                       : (char)tolower((unsigned char)name[i]);
    tmp[i] = 0;
    put(o, tmp);
    put(o, ":");
    put(o, blanks[(bits >> 5) & 3]);
    put(o, value);
    put(o, blanks[(bits >> 7) & 1]);
    put(o, "\r\n");
}

enum { D_NONE = 0, D_STATUS = 4, D_ACCEPT, D_UPGRADE, D_CONNECTION, D_EXT, D_UNOFFERED, D_TWO };

static void roundtrip(const uint8_t *d, size_t n)
{
#define B(i) ((size_t)(i) < n ? d[i] : 0)
    uint8_t nonce[16], digest[20];
    char req[4096], accept[HS_ACCEPT_LEN + 1], key[25], want[29], val[256], path[64];
    char protos[64] = "", proto[64], both[64];
    const char *chosen = NULL, *why;
    unsigned defect = B(16) % 11, order = B(17), offer = B(18), pick = B(19);
    unsigned int dl = 0;
    size_t len, i, np = 0;
    int idx[4] = { 0, 1, 2, 3 }, k, j;
    struct out o = { .n = 0 };

    for (i = 0; i < 16; i++)
        nonce[i] = (uint8_t)B(i);
    /* a path of printable characters from the input, after the choices */
    path[0] = '/';
    for (i = 20; i < n && i - 19 < sizeof(path) - 1; i++)
        path[i - 19] = (char)('!' + d[i] % 94);
    path[i > 20 ? i - 19 : 1] = 0;
    /* offered: a subset of TOKENS, in order */
    for (i = 0; i < 4; i++)
        if ((offer >> i) & 1) {
            if (np++)
                strcat(protos, ", ");
            strcat(protos, TOKENS[i]);
        }
    if (np && pick % (np + 1)) { /* the pick-th offered one (0: none) */
        unsigned want_i = pick % (np + 1), seen = 0;
        for (i = 0; i < 4; i++)
            if ((offer >> i) & 1 && ++seen == want_i)
                chosen = TOKENS[i];
    }

    len = hs_request(req, sizeof(req) - 1, path, "example.org:8080", protos, NULL, nonce, accept);
    CHECK(len > 0);
    req[len] = 0;
    CHECK(!strncmp(req, "GET ", 4) && !strncmp(req + 4, path, strlen(path)));
    CHECK(!strncmp(req + 4 + strlen(path), " HTTP/1.1\r\n", 11));
    CHECK(len >= 4 && !memcmp(req + len - 4, "\r\n\r\n", 4));
    CHECK(req_header(req, "Host", val, sizeof(val)) && !strcmp(val, "example.org:8080"));
    CHECK(req_header(req, "Upgrade", val, sizeof(val)) && !strcmp(val, "websocket"));
    CHECK(req_header(req, "Connection", val, sizeof(val)) && !strcmp(val, "Upgrade"));
    CHECK(req_header(req, "Sec-WebSocket-Version", val, sizeof(val)) && !strcmp(val, "13"));
    b64(nonce, 16, key);
    CHECK(req_header(req, "Sec-WebSocket-Key", val, sizeof(val)) && !strcmp(val, key));
    if (np)
        CHECK(req_header(req, "Sec-WebSocket-Protocol", val, sizeof(val)) && !strcmp(val, protos));
    else
        CHECK(!req_header(req, "Sec-WebSocket-Protocol", val, sizeof(val)));
    snprintf(both, sizeof(both), "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    CHECK(EVP_Digest(both, strlen(both), digest, &dl, EVP_sha1(), NULL) && dl == 20);
    b64(digest, 20, want);
    CHECK(!strcmp(accept, want));

    /* the response: status, then the headers in a chosen order */
    put(&o, defect == D_STATUS ? "HTTP/1.1 1010 Switching Protocols\r\n"
                               : "HTTP/1.1 101 Switching Protocols\r\n");
    for (k = 3; k > 0; k--) {
        int t;
        j = (int)(order % (unsigned)(k + 1));
        order /= (unsigned)(k + 1);
        t = idx[k];
        idx[k] = idx[j];
        idx[j] = t;
    }
    for (k = 0; k < 4; k++) {
        unsigned bits = B(20 + k) | (unsigned)B(24 + k) << 8;
        switch (idx[k]) {
        case 0:
            put_header(&o, "Upgrade", defect == D_UPGRADE ? "h2c" : (bits >> 8) & 1 ? "foo, WebSocket" : "websocket", bits);
            break;
        case 1:
            put_header(&o, "Connection", defect == D_CONNECTION ? "close" : (bits >> 8) & 1 ? "keep-alive,Upgrade" : "Upgrade", bits);
            break;
        case 2:
            if (defect == D_ACCEPT)
                want[bits % HS_ACCEPT_LEN] ^= 1;
            put_header(&o, "Sec-WebSocket-Accept", want, bits);
            break;
        case 3:
            if (defect == D_UNOFFERED)
                put_header(&o, "Sec-WebSocket-Protocol", "other", bits);
            else if (chosen)
                put_header(&o, "Sec-WebSocket-Protocol", chosen, bits);
            if (defect == D_TWO && chosen)
                put_header(&o, "Sec-WebSocket-Protocol", chosen, bits);
            if (defect == D_EXT)
                put_header(&o, "Sec-WebSocket-Extensions", "permessage-deflate", bits);
            break;
        }
    }
    put(&o, "\r\n");
    CHECK(hs_head_len(o.b, o.n) == o.n);
    why = hs_check(o.b, o.n, accept, protos, proto, sizeof(proto), NULL, NULL);
    if (defect == D_NONE || defect < D_STATUS || (defect == D_TWO && !chosen)) {
        if (why)
            fprintf(stderr, "rejected (%s):\n%.*s\n", why, (int)o.n, o.b);
        CHECK(why == NULL);
        CHECK(!strcmp(proto, chosen ? chosen : ""));
    } else {
        CHECK(why != NULL);
    }
#undef B
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        roundtrip(data + 1, size - 1);
    else
        raw(data + 1, size - 1);
    return 0;
}
