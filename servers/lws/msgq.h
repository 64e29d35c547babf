/*
 * Message buffers and a per-connection FIFO of messages waiting to be echoed.
 *
 * Every buffer keeps LWS_PRE bytes of headroom in front of the payload, so a
 * payload can be handed to lws_write() in place (lws writes the frame header
 * into that headroom). Buffers are recycled between the receive side and the
 * queue slots, so steady-state echoing does not allocate per message.
 */
#ifndef WSBENCH_MSGQ_H
#define WSBENCH_MSGQ_H

#include <stddef.h>

struct msg {
	unsigned char *buf;	/* allocation; payload starts at buf + LWS_PRE */
	size_t cap;		/* payload capacity, excluding the headroom */
	size_t len;		/* payload bytes in use */
	int binary;		/* 1 = binary message, 0 = text */
};

/* Payload pointer of a message (valid once msg_reserve() succeeded). */
unsigned char *msg_payload(struct msg *m);

/* Make room for at least `need` payload bytes, keeping the current payload. */
int msg_reserve(struct msg *m, size_t need);

/* Append `n` bytes to the payload. */
int msg_append(struct msg *m, const void *data, size_t n);

void msg_free(struct msg *m);

/* Largest header of an unmasked (server) frame. */
#define WS_HEADER_MAX 10

/* Write an unmasked, FIN-set frame header for `len` payload bytes; returns its length. */
size_t msg_frame_header(unsigned char *p, int binary, size_t len);

/* Ring buffer of messages; slots keep their buffers when popped. */
struct msgq {
	struct msg *slots;
	size_t nslots;		/* 0 or a power of two */
	size_t head;		/* index of the oldest message */
	size_t count;		/* messages queued */
	size_t bytes;		/* payload bytes queued */
};

/* Oldest queued message, or NULL if the queue is empty. */
struct msg *msgq_front(struct msgq *q);

/*
 * Queue the message held in *m without copying it: *m's buffer moves into the
 * tail slot and *m receives that slot's previous (recycled) buffer, emptied.
 */
int msgq_push_swap(struct msgq *q, struct msg *m);

/* Drop the oldest message (its buffer stays with the slot for reuse). */
void msgq_pop(struct msgq *q);

void msgq_free(struct msgq *q);

#endif
