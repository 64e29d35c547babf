/* The client's opening handshake, without sockets (see handshake_core.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "handshake_core.h"

/* SHA1_Init/Update/Final: OpenSSL 3 deprecates them in favour of EVP, whose one-shot
 * SHA1() fetches the algorithm from its provider on every call (about 5,400
 * instructions and a few locks per handshake); these run the same compression code
 * directly (about 1,000) */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <string.h>
#include <strings.h>

static const char GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/* append s (n bytes) at *at if it fits below end */
static int put(char **at, const char *end, const char *s, size_t n)
{
    if ((size_t)(end - *at) < n)
        return -1;
    memcpy(*at, s, n);
    *at += n;
    return 0;
}

#define PUTS(s) put(&at, end, (s), strlen(s))
#define PUTL(lit) put(&at, end, (lit), sizeof(lit) - 1)

size_t hs_request(char *out, size_t cap, const char *path, const char *host,
                  const char *protos, const char *exts, const uint8_t nonce[16],
                  char accept[HS_ACCEPT_LEN + 1])
{
    char key[25], both[24 + sizeof(GUID)];
    unsigned char digest[SHA_DIGEST_LENGTH];
    char *at = out;
    const char *end = out + cap;
    int bad = 0;

    EVP_EncodeBlock((unsigned char *)key, nonce, 16);
    memcpy(both, key, 24);
    memcpy(both + 24, GUID, sizeof(GUID) - 1);
    {
        SHA_CTX sha;
        SHA1_Init(&sha);
        SHA1_Update(&sha, both, 24 + sizeof(GUID) - 1);
        SHA1_Final(digest, &sha);
    }
    EVP_EncodeBlock((unsigned char *)accept, digest, sizeof(digest));

    bad |= PUTL("GET ");
    bad |= PUTS(path);
    bad |= PUTL(" HTTP/1.1\r\nHost: ");
    bad |= PUTS(host);
    bad |= PUTL("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ");
    bad |= put(&at, end, key, 24);
    bad |= PUTL("\r\nSec-WebSocket-Version: 13\r\n");
    if (protos && *protos) {
        bad |= PUTL("Sec-WebSocket-Protocol: ");
        bad |= PUTS(protos);
        bad |= PUTL("\r\n");
    }
    if (exts && *exts) {
        bad |= PUTL("Sec-WebSocket-Extensions: ");
        bad |= PUTS(exts);
        bad |= PUTL("\r\n");
    }
    bad |= PUTL("\r\n");
    return bad ? 0 : (size_t)(at - out);
}

size_t hs_head_len(const char *p, size_t n)
{
    const char *e = memmem(p, n, "\r\n\r\n", 4);
    return e ? (size_t)(e - p) + 4 : 0;
}

/* is `token` (tl bytes) one of the comma-separated items of v (any case)? */
static int has_item(const char *v, size_t len, const char *token, size_t tl)
{
    size_t i = 0;
    while (i < len) {
        size_t s, e;
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        s = i;
        while (i < len && v[i] != ',')
            i++;
        e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e > s && e - s == tl && !strncasecmp(v + s, token, tl))
            return 1;
    }
    return 0;
}

static int is_token_char(unsigned char ch)
{
    /* RFC 7230 tchar */
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* is v (vl bytes) exactly one of the offered subprotocols (case-sensitive,
 * RFC 6455 4.1 and the WHATWG fetch of a WebSocket)? */
static int offered(const char *protos, const char *v, size_t vl)
{
    const char *p = protos;
    size_t i;
    if (!vl)
        return 0;
    for (i = 0; i < vl; i++)
        if (!is_token_char((unsigned char)v[i]))
            return 0;
    while (p && *p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        while (l && *p == ' ') {
            p++;
            l--;
        }
        while (l && p[l - 1] == ' ')
            l--;
        if (l == vl && !memcmp(p, v, vl))
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

const char *hs_check(const char *head, size_t len, const char *accept, const char *protos,
                     char *proto, size_t cap, const char **ext, size_t *extlen)
{
    const char *p = head, *end = head + len, *eol;
    int upgrade = 0, connection = 0, accepted = 0, nproto = 0;
    const char *pv = NULL;
    size_t pvl = 0;

    if (cap)
        proto[0] = 0;
    if (ext) {
        *ext = NULL;
        *extlen = 0;
    }
    eol = memmem(p, len, "\r\n", 2);
    /* "HTTP/1.1 101" and then a blank or the end of the line */
    if (!eol || eol - p < 12 || memcmp(p, "HTTP/1.1 101", 12) ||
        (eol - p > 12 && p[12] != ' '))
        return "server did not answer 101 Switching Protocols";
    for (p = eol + 2; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p;
         p = eol + 2) {
        const char *colon = memchr(p, ':', (size_t)(eol - p)), *v;
        size_t nlen, vlen;
        if (!colon || colon == p)
            return "malformed header line in the 101 response";
        nlen = (size_t)(colon - p);
        for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
            ;
        vlen = (size_t)(eol - v);
        while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            vlen--;
        if (nlen == 7 && !strncasecmp(p, "Upgrade", 7))
            upgrade |= has_item(v, vlen, "websocket", 9);
        else if (nlen == 10 && !strncasecmp(p, "Connection", 10))
            connection |= has_item(v, vlen, "upgrade", 7);
        else if (nlen == 20 && !strncasecmp(p, "Sec-WebSocket-Accept", 20))
            accepted = vlen == HS_ACCEPT_LEN && !memcmp(v, accept, HS_ACCEPT_LEN);
        else if (nlen == 24 && !strncasecmp(p, "Sec-WebSocket-Extensions", 24)) {
            if (!ext)
                return "server negotiated an extension we did not offer";
            if (*ext)
                return "more than one Sec-WebSocket-Extensions header in the 101 response";
            *ext = v;
            *extlen = vlen;
        }
        else if (nlen == 22 && !strncasecmp(p, "Sec-WebSocket-Protocol", 22)) {
            nproto++;
            pv = v;
            pvl = vlen;
        }
    }
    if (!upgrade)
        return "101 response without Upgrade: websocket";
    if (!connection)
        return "101 response without Connection: Upgrade";
    if (!accepted)
        return "wrong or missing Sec-WebSocket-Accept";
    if (nproto > 1 || (nproto && !offered(protos, pv, pvl)))
        return "server chose a subprotocol we did not offer";
    if (nproto) {
        if (pvl >= cap)
            return "server chose a subprotocol we did not offer";
        memcpy(proto, pv, pvl);
        proto[pvl] = 0;
    }
    return NULL;
}
