/*
 * Prepared messages (servers/README.md, item 9): text messages of N bytes,
 * built once per (name, N) and shared by every connection that serves them.
 */
#ifndef WSBENCH_PREPARED_H
#define WSBENCH_PREPARED_H

#include <stddef.h>

/* Largest prepared message (contract: 1 <= N <= 64 MiB). */
#define PREPARED_MAX ((size_t)64 << 20)

struct prepared;

/*
 * A reference to the message `name` ("utf8" or "badutf8") of `n` bytes,
 * built on first use. NULL if the name or size is invalid, memory runs out,
 * or every cache slot is held by other (name, n) pairs still in use.
 */
struct prepared *prepared_get(const char *name, size_t n);

/* Drop a reference taken with prepared_get(); the entry stays cached. */
void prepared_put(struct prepared *p);

/* Payload (with LWS_PRE writable headroom in front of it) and its length. */
unsigned char *prepared_payload(struct prepared *p);
size_t prepared_len(const struct prepared *p);

/* Free every cached message (at exit). */
void prepared_free_all(void);

#endif
