/* Small helpers shared by the fuzz targets: an append-only event log and
 * the split points a fuzz input chooses. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* a violated property: say which, then abort (libFuzzer keeps the input) */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "property violated: %s (%s:%d)\n", #cond, __FILE__, __LINE__);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct evlog {
    uint8_t *b;
    size_t n, cap;
};

static inline void ev_put(struct evlog *l, const void *p, size_t n)
{
    if (l->n + n > l->cap) {
        size_t c = l->cap ? l->cap : 256;
        while (c < l->n + n)
            c *= 2;
        l->b = realloc(l->b, c);
        CHECK(l->b != NULL);
        l->cap = c;
    }
    if (n)
        memcpy(l->b + l->n, p, n);
    l->n += n;
}

static inline void ev_u64(struct evlog *l, uint64_t v)
{
    ev_put(l, &v, sizeof(v));
}

static inline void ev_tag(struct evlog *l, char tag, uint64_t v)
{
    ev_put(l, &tag, 1);
    ev_u64(l, v);
}

static inline int ev_same(const struct evlog *a, const struct evlog *b)
{
    return a->n == b->n && (!a->n || !memcmp(a->b, b->b, a->n));
}

static inline void ev_free(struct evlog *l)
{
    free(l->b);
    l->b = NULL;
    l->n = l->cap = 0;
}

/*
 * Split points: the input starts with a count byte k (0..15 used) and k
 * 16-bit offsets; they cut the rest of the input (the stream), sorted.
 * Returns the number of cuts written to cuts[] (at most 16), and moves
 * *data / *size past the prefix.
 */
static inline int take_cuts(const uint8_t **data, size_t *size, size_t cuts[16])
{
    int k, i, j;
    size_t len;
    if (*size < 1)
        return 0;
    k = (*data)[0] & 15;
    if (*size < 1 + 2 * (size_t)k)
        k = (int)((*size - 1) / 2);
    len = *size - 1 - 2 * (size_t)k;
    for (i = 0; i < k; i++) {
        size_t v = (size_t)(*data)[1 + 2 * i] << 8 | (*data)[2 + 2 * i];
        cuts[i] = len ? v % (len + 1) : 0;
    }
    for (i = 1; i < k; i++) /* insertion sort */
        for (j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            size_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    *data += 1 + 2 * (size_t)k;
    *size = len;
    return k;
}

/* HTTP heads (the handshake targets): is there a line (after the first)
 * "name:" whose value holds `needle` (any case)?  Lines end at CRLF, as HTTP
 * frames them (a bare LF is inside a line). */
static inline int has_header(const char *h, size_t n, const char *name, const char *needle)
{
    size_t nl = strlen(name), i = 0;
    while (i < n) {
        const char *eol = memmem(h + i, n - i, "\r\n", 2);
        size_t e = eol ? (size_t)(eol - h) : n;
        if (i && e - i > nl && !strncasecmp(h + i, name, nl) && h[i + nl] == ':') {
            size_t j;
            for (j = i + nl + 1; j + strlen(needle) <= e; j++)
                if (!strncasecmp(h + j, needle, strlen(needle)))
                    return 1;
        }
        i = e + 2;
    }
    return 0;
}

#endif
