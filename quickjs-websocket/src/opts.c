/* The optimization switches, the message size limit and the CA file (see opts.h). */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const opt_names[OPT_COUNT] = {
    "join", "buffered", "pool", "scheduler", "transfer",
    "fragbuf", "strsend", "batch", "eventpool", "urlparse", "framing", "strrecv", "connect",
    "direct", "tls", "deflate", "tlsgather", "rxdirect", "cipher",
};

unsigned g_opts = OPT_ALL;
size_t g_max_message = MAX_MESSAGE_DEFAULT;
const char *g_ca_file;
unsigned g_ca_gen;
int g_tls_resume;

int opts_set_ca_file(const char *path)
{
    char *copy = NULL;
    if (path && *path && !(copy = strdup(path)))
        return -1;
    free((char *)(uintptr_t)g_ca_file);
    g_ca_file = copy;
    g_ca_gen++;
    return 0;
}

unsigned opts_parse_disable(const char *s)
{
    unsigned opts = OPT_ALL;
    while (s && *s) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        while (n && (*s == ' ' || *s == '\t')) {
            s++;
            n--;
        }
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        if (n == 3 && !strncasecmp(s, "all", 3)) {
            opts = 0;
        } else if (n) {
            size_t i;
            int found = 0;
            for (i = 0; i < countof(opt_names); i++) {
                if (strlen(opt_names[i]) == n && !strncasecmp(s, opt_names[i], n)) {
                    opts &= ~(1u << i);
                    found = 1;
                }
            }
            if (!found)
                fprintf(stderr, "quickjs-websocket: QJSWS_DISABLE: unknown name '%.*s'\n",
                        (int)n, s);
        }
        s = e ? e + 1 : NULL;
    }
    return opts;
}

int64_t opts_parse_size(const char *s)
{
    char *end;
    unsigned long long v;
    int shift = 0;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > (unsigned long long)MAX_MESSAGE_LIMIT >> shift)
        return -1;
    return (int64_t)(v << shift);
}
