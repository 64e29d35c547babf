/*
 * The optimization switches (QJSWS_DISABLE), the message size limit
 * (QJSWS_MAX_MESSAGE, max_message()) and the CA file of wss:// (QJSWS_CA_FILE,
 * ca_file()): process-wide, set at module load (module.c) and read
 * everywhere.  No JS, sockets or libwebsockets.
 */
#ifndef QJSWS_OPTS_H
#define QJSWS_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define countof(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED(x) (void)(x)
/* the struct of type `type` whose member `member` is at p */
#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

#pragma GCC visibility push(hidden)

/* bit i is opt_names[i] */
enum {
    OPT_JOIN = 1 << 0, OPT_BUFFERED = 1 << 1, OPT_POOL = 1 << 2, OPT_SCHEDULER = 1 << 3,
    OPT_TRANSFER = 1 << 4, OPT_FRAGBUF = 1 << 5, OPT_STRSEND = 1 << 6, OPT_BATCH = 1 << 7,
    OPT_EVENTPOOL = 1 << 8, OPT_URLPARSE = 1 << 9, OPT_FRAMING = 1 << 10, OPT_STRRECV = 1 << 11,
    OPT_CONNECT = 1 << 12, OPT_DIRECT = 1 << 13, OPT_TLS = 1 << 14,
    /* not an optimization: permessage-deflate offered when asked for (off: never) */
    OPT_DEFLATE = 1 << 15,
    /* wss:// on our TLS transport (tp_tls.c, tls_bio.c) */
    OPT_TLSGATHER = 1 << 16, OPT_RXDIRECT = 1 << 17, OPT_CIPHER = 1 << 18,
    OPT_ALL = (1 << 19) - 1,
};
#define OPT_COUNT 19

extern unsigned g_opts; /* set once, at module load */
#define OPT(x) (g_opts & (x))

/* the switches' short names, bit i = opt_names[i] */
extern const char *const opt_names[OPT_COUNT];

/* "join, pool" -> the switches with those turned off ("all": every one); an
 * unknown name is reported on stderr and ignored */
unsigned opts_parse_disable(const char *s);

/* the largest message accepted (bytes); QJSWS_MAX_MESSAGE or max_message() */
#define MAX_MESSAGE_DEFAULT ((size_t)256 << 20)
#define MAX_MESSAGE_LIMIT ((size_t)INT32_MAX) /* QuickJS' largest ArrayBuffer */
extern size_t g_max_message;

/* "<n>[k|m|g]" (binary multiples) -> bytes, or -1 */
int64_t opts_parse_size(const char *s);

/* wss://: the PEM file of the CA certificates to trust instead of the system's
 * store (QJSWS_CA_FILE, ca_file()); NULL: the system's.  Process-wide; a
 * change counts for the connections made after it (g_ca_gen tells them). */
extern const char *g_ca_file;
extern unsigned g_ca_gen;
/* set it (a copy; NULL or "": the system's store): 0, or -1 out of memory */
int opts_set_ca_file(const char *path);

/* wss:// on our TLS transport: 1 a new connection resumes the last TLS session
 * of its host and port (QJSWS_TLS_RESUME=1 at load, tls_resume()); 0 (the
 * default) a full handshake every time.  Process-wide. */
extern int g_tls_resume;

#pragma GCC visibility pop

#endif
