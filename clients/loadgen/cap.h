/*
 * The connections of the capacity kinds (idle, fanout): opened with at most
 * --concurrency handshakes in flight, from --sources loopback source addresses
 * in turn, until --connections are open ("max": until a limit). A limit stops
 * the opening and becomes one line (cap_open's `limit`): the descriptors of
 * this process, the ephemeral ports of an address pair, a server that closes
 * or stops answering handshakes. It does not fail the run.
 */
#ifndef LG_CAP_H
#define LG_CAP_H

#include "conn.h"
#include "kinds.h"

#include <stddef.h>
#include <stdint.h>

#define CAP_LIMIT_MAX 384

struct cap_conn {
	struct conn c;
	unsigned number;	/* 1-based, in the order the connections were started */
	int opened;		/* the upgrade completed */
	int failed;		/* failed or closed before it opened */
	int gone;		/* closed or failed after it opened */
	uint64_t pongs;
	/* for the kinds */
	int alive;
	int warm;		/* idle --warm: 1 while its echo is due, 2 once it came back */
	uint64_t next;		/* fanout: the next message number due */
	unsigned char first[16];	/* fanout: the first bytes of the message arriving */
	unsigned nfirst;
};

/* What a kind hears of its open connections; any hook may be NULL. */
struct cap_hooks {
	void (*on_data)(struct cap_conn *cc, const unsigned char *p, size_t n);
	void (*on_message)(struct cap_conn *cc, int opcode, uint64_t len);
	/* closed by the server or failed after it opened (why: one line) */
	void (*on_gone)(struct cap_conn *cc, const char *why);
	/* connection `number` (from 1) is about to be started (socket options: conn_set_rcvbuf) */
	void (*before_start)(unsigned number);
};

struct cap_result {
	unsigned opened;
	double seconds;		/* first connect() to the last completed upgrade */
	char limit[CAP_LIMIT_MAX];	/* why the opening stopped short, or "" */
};

/*
 * Open `want` connections (0: as many as the limits allow). Returns the open
 * ones, in the order they were started (*n of them); they stay valid until
 * cap_close_all().
 */
struct cap_conn **cap_open(const struct opts *o, unsigned want, const struct cap_hooks *h,
			   struct cap_result *res, unsigned *n);

/* The source address connection `number` (1-based) was opened from, NULL for the
 * kernel's choice (--sources 1); valid until cap_close_all(). */
const struct sockaddr_in *cap_source(unsigned number);

/* Pongs received on every connection so far. */
uint64_t cap_pongs(void);

/* Close every connection (bounded wait for the close handshakes) and free them. */
void cap_close_all(void);

#endif
