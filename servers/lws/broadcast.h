/*
 * The /broadcast path (servers/README.md): every data message received on a
 * /broadcast connection goes to every open /broadcast connection, the sender
 * included, unchanged and in the order received.
 *
 * One ring of messages is shared by all subscribers, each with its own
 * position in it: a message is stored once (no copy per subscriber), every
 * subscriber sends it from the ring in its own WRITEABLE callback, and the
 * ring drops a message when the last subscriber has sent it. A slow
 * subscriber holds the ring's tail back; once the ring is full (4,096
 * messages or 64 MiB), the reads of whoever publishes are paused (rx flow
 * control) until it has drained to 1,024 messages and 16 MiB: publishers
 * wait, nothing is dropped.
 */
#ifndef WSBENCH_BROADCAST_H
#define WSBENCH_BROADCAST_H

#include "msgq.h"

#include <libwebsockets.h>
#include <stdint.h>

struct bcast_sub {
	struct lws *wsi;
	uint64_t pos;		/* number of the next message to send it */
	struct bcast_sub *prev, *next;
	int paused;		/* its reads are paused: the ring was full */
};

/* The connection's request path is /broadcast (any query). */
int bcast_is_path(struct lws *wsi);

/* Subscribe: it gets every message published from now on. */
void bcast_join(struct bcast_sub *s, struct lws *wsi);

/* Publish the message in *m (moved into the ring; *m gets a recycled buffer). */
int bcast_publish(struct bcast_sub *from, struct msg *m);

/* WRITEABLE: send the subscriber's next message, if any; -1 to close. */
int bcast_writeable(struct bcast_sub *s);

/* Unsubscribe (the connection closed). */
void bcast_leave(struct bcast_sub *s);

/* Free the ring (at exit). */
void bcast_free_all(void);

#endif
