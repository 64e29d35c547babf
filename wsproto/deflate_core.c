/* permessage-deflate for a client, without sockets (see deflate_core.h). */
#include "deflate_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* the four bytes every Z_SYNC_FLUSH ends with: dropped by the sender, added by
 * the receiver (RFC 7692 7.2.1, 7.2.2) */
static const uint8_t TAIL[4] = {0x00, 0x00, 0xff, 0xff};

/* zlib's defaults, as the ws library and Node's zlib use them */
#define PMD_LEVEL Z_DEFAULT_COMPRESSION
#define PMD_MEMLEVEL 8

/* ------------------------------------------------------------------ */
/* the offer and the answer                                             */

size_t pmd_offer(char *out, size_t cap, const struct pmd_params *p)
{
    char buf[160];
    int n = snprintf(buf, sizeof(buf), "permessage-deflate");
    if (p->server_max_window_bits && (p->server_max_window_bits < 9 || p->server_max_window_bits > 15))
        return 0;
    if (p->client_max_window_bits > PMD_BITS_ANY &&
        (p->client_max_window_bits < 9 || p->client_max_window_bits > 15))
        return 0;
    if (p->server_no_context_takeover)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "; server_no_context_takeover");
    if (p->client_no_context_takeover)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "; client_no_context_takeover");
    if (p->server_max_window_bits)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "; server_max_window_bits=%d",
                      p->server_max_window_bits);
    if (p->client_max_window_bits == PMD_BITS_ANY)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "; client_max_window_bits");
    else if (p->client_max_window_bits)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "; client_max_window_bits=%d",
                      p->client_max_window_bits);
    if ((size_t)n >= cap)
        return 0;
    memcpy(out, buf, (size_t)n + 1);
    return (size_t)n;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

static int is_tchar(unsigned char ch)
{
    /* RFC 7230 tchar */
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* a cursor over the header value */
struct cur {
    const char *p, *end;
};

static void skip_ws(struct cur *c)
{
    while (c->p < c->end && is_space(*c->p))
        c->p++;
}

/* a token at the cursor: its start and length (0: none) */
static size_t token(struct cur *c, const char **s)
{
    *s = c->p;
    while (c->p < c->end && is_tchar((unsigned char)*c->p))
        c->p++;
    return (size_t)(c->p - *s);
}

/* a parameter's value: a token or a quoted string (RFC 7692 7.1: its unescaped
 * form must be a token too); copied unquoted into v (cap bytes); -1 if malformed */
static int value(struct cur *c, char *v, size_t cap)
{
    size_t n = 0;
    if (c->p < c->end && *c->p == '"') {
        c->p++;
        while (c->p < c->end && *c->p != '"') {
            if (*c->p == '\\') {
                if (++c->p == c->end)
                    return -1;
            }
            if (!is_tchar((unsigned char)*c->p) || n + 1 >= cap)
                return -1;
            v[n++] = *c->p++;
        }
        if (c->p == c->end)
            return -1;
        c->p++;
    } else {
        const char *s;
        size_t l = token(c, &s);
        if (!l || l >= cap)
            return -1;
        memcpy(v, s, l);
        n = l;
    }
    v[n] = 0;
    return n ? 0 : -1;
}

/* window bits: 1*DIGIT without a leading zero, 8..15; else 0 */
static int bits_of(const char *v)
{
    if (!strcmp(v, "8") || !strcmp(v, "9"))
        return v[0] - '0';
    if (v[0] == '1' && v[1] >= '0' && v[1] <= '5' && !v[2])
        return 10 + v[1] - '0';
    return 0;
}

enum { P_SNCT, P_CNCT, P_SMWB, P_CMWB, P_COUNT };
static const char *const PARAM_NAMES[P_COUNT] = {
    "server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits",
    "client_max_window_bits",
};

const char *pmd_agree(const char *v, size_t n, const struct pmd_params *offered,
                      struct pmd_agreed *out)
{
    struct cur c = {v, v + n};
    const char *name;
    size_t nl;
    int seen[P_COUNT] = {0}, bits[P_COUNT] = {0};

    skip_ws(&c);
    nl = token(&c, &name);
    if (!nl)
        return "malformed Sec-WebSocket-Extensions in the 101 response";
    if (nl != 18 || strncasecmp(name, "permessage-deflate", 18))
        return "server negotiated an extension we did not offer";
    for (;;) {
        char val[16];
        int i, has_value = 0;
        skip_ws(&c);
        if (c.p == c.end)
            break;
        if (*c.p == ',')
            return "server negotiated more than one extension";
        if (*c.p != ';')
            return "malformed Sec-WebSocket-Extensions in the 101 response";
        c.p++;
        skip_ws(&c);
        nl = token(&c, &name);
        if (!nl)
            return "malformed Sec-WebSocket-Extensions in the 101 response";
        skip_ws(&c);
        if (c.p < c.end && *c.p == '=') {
            c.p++;
            skip_ws(&c);
            if (value(&c, val, sizeof(val)))
                return "malformed permessage-deflate parameter value in the 101 response";
            has_value = 1;
        }
        for (i = 0; i < P_COUNT; i++)
            if (strlen(PARAM_NAMES[i]) == nl && !strncasecmp(name, PARAM_NAMES[i], nl))
                break;
        if (i == P_COUNT)
            return "unknown permessage-deflate parameter in the 101 response";
        if (seen[i])
            return "repeated permessage-deflate parameter in the 101 response";
        seen[i] = 1;
        if (i == P_SNCT || i == P_CNCT) {
            if (has_value)
                return "permessage-deflate context-takeover parameter with a value";
        } else {
            if (!has_value || !(bits[i] = bits_of(val)))
                return "permessage-deflate window bits not a value of 8 to 15";
        }
    }
    if (offered->server_no_context_takeover && !seen[P_SNCT])
        return "server did not agree to server_no_context_takeover";
    if (offered->server_max_window_bits &&
        (!seen[P_SMWB] || bits[P_SMWB] > offered->server_max_window_bits))
        return "server did not agree to the offered server_max_window_bits";
    if (seen[P_CMWB]) {
        if (!offered->client_max_window_bits)
            return "server named client_max_window_bits, which we did not offer";
        if (offered->client_max_window_bits > PMD_BITS_ANY &&
            bits[P_CMWB] > offered->client_max_window_bits)
            return "server's client_max_window_bits is over the offered value";
        if (bits[P_CMWB] == 8)
            return "client_max_window_bits=8 cannot be honoured (zlib has no 256-byte window)";
    }
    out->rx_bits = (uint8_t)(seen[P_SMWB] ? bits[P_SMWB] : 15);
    out->rx_takeover = !seen[P_SNCT];
    out->tx_bits = (uint8_t)(seen[P_CMWB] ? bits[P_CMWB]
                             : offered->client_max_window_bits > PMD_BITS_ANY
                                 ? offered->client_max_window_bits
                                 : 15);
    out->tx_takeover = !seen[P_CNCT] && !offered->client_no_context_takeover;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* the streams                                                          */

void pmd_stream_setup(struct pmd_stream *tx, struct pmd_stream *rx, const struct pmd_agreed *a)
{
    memset(tx, 0, sizeof(*tx));
    memset(rx, 0, sizeof(*rx));
    tx->bits = a->tx_bits;
    tx->takeover = a->tx_takeover;
    rx->bits = a->rx_bits;
    rx->takeover = a->rx_takeover;
}

/* which of the two a stream is is known to its callers only: both end alike */
void pmd_stream_free(struct pmd_stream *s)
{
    if (s->ready == 1)
        deflateEnd(&s->z);
    else if (s->ready == 2)
        inflateEnd(&s->z);
    s->ready = 0;
}

static int grow(struct pmd_buf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 256;
    uint8_t *np;
    while (cap - b->len < need) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    if (cap == b->cap)
        return 0;
    if (!(np = realloc(b->p, cap)))
        return -1;
    b->p = np;
    b->cap = cap;
    return 0;
}

int pmd_deflate(struct pmd_stream *s, const uint8_t *p, size_t n, int last, struct pmd_buf *out)
{
    z_stream *z = &s->z;
    size_t start = out->len;
    if (!s->ready) {
        memset(z, 0, sizeof(*z));
        if (deflateInit2(z, PMD_LEVEL, Z_DEFLATED, -(int)s->bits, PMD_MEMLEVEL, Z_DEFAULT_STRATEGY) !=
            Z_OK)
            return PMD_NOMEM;
        s->ready = 1;
    }
    z->next_in = (Bytef *)(uintptr_t)p;
    z->avail_in = 0;
    /* avail_in is a uInt: a message over 4 GiB goes in parts */
    for (;;) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        int r;
        z->avail_in = (uInt)chunk;
        n -= chunk;
        do {
            /* room for what this part can grow to, and the flush's few bytes */
            if (grow(out, deflateBound(z, z->avail_in) + 16))
                return PMD_NOMEM;
            z->next_out = out->p + out->len;
            z->avail_out = (uInt)(out->cap - out->len > UINT32_MAX ? UINT32_MAX : out->cap - out->len);
            r = deflate(z, n ? Z_NO_FLUSH : Z_SYNC_FLUSH);
            out->len = (size_t)(z->next_out - out->p);
            if (r != Z_OK && r != Z_BUF_ERROR)
                return PMD_NOMEM;
        } while (z->avail_in || z->avail_out == 0);
        if (!n)
            break;
    }
    s->in_msg = 1;
    if (last) {
        /* a sync flush always ends with 00 00 ff ff; a message must not */
        if (out->len - start >= 4 && !memcmp(out->p + out->len - 4, TAIL, 4))
            out->len -= 4;
        /* zlib flushes nothing for an empty part after a flush: a message is at
         * least the empty stored block's first byte (RFC 7692 7.2.3.6) */
        if (out->len == start) {
            if (grow(out, 1))
                return PMD_NOMEM;
            out->p[out->len++] = 0x00;
        }
        s->in_msg = 0;
        if (!s->takeover && deflateReset(z) != Z_OK)
            return PMD_NOMEM;
    }
    return PMD_OK;
}

/* ------------------------------------------------------------------ */
/* decompression, bounded                                               */

static int inflate_init(struct pmd_stream *s)
{
    z_stream *z = &s->z;
    memset(z, 0, sizeof(*z));
    if (inflateInit2(z, -(int)s->bits) != Z_OK)
        return PMD_NOMEM;
    s->ready = 2;
    return PMD_OK;
}

/* the peer ended a DEFLATE stream (BFINAL) inside a message: the next one starts
 * from the same window where context is kept */
static int restart(struct pmd_stream *s)
{
    z_stream *z = &s->z;
    s->ended = 1;
    if (s->takeover) {
        uint8_t dict[32768];
        uInt dl = sizeof(dict);
        if (inflateGetDictionary(z, dict, &dl) != Z_OK || inflateReset(z) != Z_OK)
            return PMD_NOMEM;
        if (dl && inflateSetDictionary(z, dict, dl) != Z_OK)
            return PMD_NOMEM;
        return PMD_OK;
    }
    return inflateReset(z) == Z_OK ? PMD_OK : PMD_NOMEM;
}

/* inflate what is at z's input into scratch, piece by piece, to the sink; `tail`:
 * the input is the 00 00 ff ff that ends the message, inflated block by block
 * (Z_BLOCK) so that *boundary tells whether the message ended where a block does */
static int drain(struct pmd_stream *s, uint64_t limit, uint8_t *scratch, size_t scratch_len,
                 pmd_sink sink, void *ctx, int tail, int *boundary)
{
    z_stream *z = &s->z;
    for (;;) {
        uint64_t room = limit > s->msg_out ? limit - s->msg_out : 0;
        /* at most one byte past the limit: enough to know it was passed */
        size_t cap = room + 1 < scratch_len ? (size_t)room + 1 : scratch_len;
        size_t got;
        int r;
        z->next_out = scratch;
        z->avail_out = (uInt)cap;
        r = inflate(z, tail ? Z_BLOCK : Z_SYNC_FLUSH);
        got = cap - z->avail_out;
        if (got > room)
            return PMD_TOO_BIG;
        s->msg_out += got;
        if (got) {
            int rs;
            s->ended = 0;
            if ((rs = sink(ctx, scratch, got)))
                return rs;
        }
        if (r == Z_STREAM_END) {
            int rr = restart(s);
            if (rr)
                return rr;
            if (tail) {
                /* what follows a final block is not DEFLATE data: the tail is done */
                *boundary = 1;
                return PMD_OK;
            }
            if (!z->avail_in)
                return PMD_OK;
            continue;
        }
        if (r == Z_DATA_ERROR || r == Z_NEED_DICT)
            return PMD_BAD_DATA;
        if (r == Z_MEM_ERROR)
            return PMD_NOMEM;
        if (z->avail_in)
            s->ended = 0;
        /* Z_OK or Z_BUF_ERROR: done once the input is taken and the output not full */
        if (!z->avail_in && z->avail_out) {
            if (tail)
                *boundary = (z->data_type & 128) != 0;
            return PMD_OK;
        }
    }
}

int pmd_inflate(struct pmd_stream *s, const uint8_t *p, size_t n, int last, uint64_t limit,
                uint8_t *scratch, size_t scratch_len, pmd_sink sink, void *ctx)
{
    z_stream *z = &s->z;
    int r, boundary = 0;
    if (!s->ready && (r = inflate_init(s)))
        return r;
    if (!s->in_msg) {
        s->msg_out = 0;
        s->msg_in = 0;
        s->in_msg = 1;
    }
    while (n) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : n;
        z->next_in = (Bytef *)(uintptr_t)p;
        z->avail_in = (uInt)chunk;
        s->ended = 0;
        s->msg_in = 1;
        if ((r = drain(s, limit, scratch, scratch_len, sink, ctx, 0, &boundary)))
            return r;
        p += chunk;
        n -= chunk;
    }
    if (!last)
        return PMD_OK;
    s->in_msg = 0;
    /* an empty compressed payload is an empty message, as ws, undici and Bun take it:
     * the stream is left as it was.  A stream that ended on a final block needs no
     * tail; any other must end where a block does once the tail is added. */
    if (s->msg_in && !s->ended) {
        z->next_in = (Bytef *)(uintptr_t)TAIL;
        z->avail_in = sizeof(TAIL);
        if ((r = drain(s, limit, scratch, scratch_len, sink, ctx, 1, &boundary)))
            return r;
        if (!boundary)
            return PMD_BAD_DATA;
    }
    if (!s->takeover && inflateReset(z) != Z_OK)
        return PMD_NOMEM;
    return PMD_OK;
}

uint64_t pmd_inflated(const struct pmd_stream *s)
{
    return s->msg_out;
}
