/*
 * The /broadcast path (servers/README.md): every data message received on a
 * /broadcast connection goes to every open /broadcast connection, the sender
 * included, unchanged and in the order received.
 *
 * The messages are framed once, on arrival, into a chain of shared blocks
 * (32 KiB, or one message if it is bigger); every subscriber has its own
 * position in the chain and, in its WRITEABLE callback, sends the whole frames
 * from there with one lws_write() straight from the block (up to 64 KiB, or
 * one bigger frame): no copy per subscriber, and a subscriber that is behind
 * catches up a block at a time, not a message at a time. A block is freed when
 * no subscriber is left in it. A slow subscriber holds the chain back; once it
 * holds 4,096 messages or 64 MiB the reads of whoever publishes are paused
 * (rx flow control) until it is down to 1,024 messages and 16 MiB: publishers
 * wait, nothing is dropped.
 *
 * With a limit (bcast_limit, --broadcast-limit BYTES; servers/README.md item 16) a
 * subscriber whose unsent backlog (the chain's bytes past its position) passes it
 * is closed instead, with 1008: its close reason is set, it leaves the chain at
 * once (its blocks can go) and lws closes it (LWS_TO_KILL_ASYNC: a subscriber
 * that reads nothing never becomes writeable).
 */
#ifndef WSBENCH_BROADCAST_H
#define WSBENCH_BROADCAST_H

#include "msgq.h"

#include <libwebsockets.h>
#include <stddef.h>

struct bcast_block;

struct bcast_sub {
	struct lws *wsi;
	struct bcast_block *blk;	/* where it is in the chain */
	size_t off;			/* bytes of blk's frames it has sent */
	struct bcast_sub *prev, *next;	/* in the idle or the busy list */
	int busy;		/* something to send: a WRITEABLE callback is pending */
	int paused;		/* its reads are paused: the chain was full */
	size_t pos;		/* the chain's bytes up to where it is (B.total's scale) */
};

/* Close a subscriber whose backlog passes this many bytes (0: never; the default). */
extern size_t bcast_limit;

/* The connection's request path is /broadcast (any query). */
int bcast_is_path(struct lws *wsi);

/* Subscribe: it gets every message published from now on. */
void bcast_join(struct bcast_sub *s, struct lws *wsi);

/* Publish the message in *m (framed into the chain: *m is left as it was). */
int bcast_publish(struct bcast_sub *from, const struct msg *m);

/* WRITEABLE: send the subscriber's next frames, if any; -1 to close. */
int bcast_writeable(struct bcast_sub *s);

/* Unsubscribe (the connection closed). */
void bcast_leave(struct bcast_sub *s);

/* Free the chain (at exit). */
void bcast_free_all(void);

#endif
