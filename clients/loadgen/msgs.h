/*
 * The numbered messages of the echo kinds and the checks of their echoes
 * (clients/README.md, "Verification"): message k of a connection carries its
 * sequence number in its first bytes, every echo's type, length and number
 * are checked, and the warm-up echoes, every K-th measured one and the last
 * of every round are compared byte for byte.
 *
 * Frames of up to RING_FRAME_MAX bytes come from a ring of R frames built,
 * stamped (frame j carries j) and masked before the run, R a power of two
 * (16 to 4096, about 2 MiB in all): sending costs what an unnumbered message
 * costs, and the number is k mod R. Bigger frames share one masked body; each
 * message gets its own small head (frame header + the masked number k mod
 * 2^32) written at send time.
 *
 * The corpus (--text json, --bytes random, corpus.c): every ring slot j has a
 * body of its own from seed j, in a ring of as many slots as the JavaScript
 * workload's (2 MiB / size, 16 to 4096, whatever the frame size: no head mode),
 * so both send the same bytes as message k; the checks compare an echo against
 * its slot's payload.
 */
#ifndef LG_MSGS_H
#define LG_MSGS_H

#include "conn.h"
#include "frame.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct msgs {
	int opcode;
	size_t size;
	int verify;		/* 0: --verify off (one message, nothing checked) */
	unsigned field_len;	/* bytes of the sequence field */
	uint64_t field_mask;	/* those bytes of a little-endian 64-bit load */
	unsigned char *plain;	/* the payload as sent, sequence field of message 0 */
	unsigned char *bodies;	/* the corpus: slot j's payload at j * size, numbered (else NULL) */
	uint64_t sample_every;	/* K */
	/* ring of numbered frames (or, unverified, of identical ones) */
	struct frameset fs;
	uint64_t ring_mask;	/* R - 1; 0 in head mode */
	uint64_t *fields;	/* the plain sequence field of each ring slot, as loaded */
	/* head mode: one masked body; heads are header + field */
	int head_mode;
	size_t hdr_len;		/* frame header incl. masking key */
};

/* A connection's send and receive state. */
struct msgs_conn {
	struct conn *c;		/* its payload chunks are wanted only for echoes compared whole */
	uint64_t ks;		/* number of the next message to send */
	uint64_t kr;		/* number the next echo must carry */
	uint64_t next_whole;	/* the next sampled echo (compared byte for byte) */
	uint64_t every;		/* 1 during warm-up, K after */
	uint64_t round_end;	/* kr once the current round's echoes are in */
	uint64_t next_slow;	/* the next echo for msgs_echo_slow(): sampled or a round's last */
	int measuring;
	uint64_t compared;	/* measured echoes compared byte for byte */
	/* head mode: one head per message in flight */
	unsigned char *heads;
	uint64_t nheads;
	/* the echo arriving (its sequence field is in c->msg_head) */
	uint64_t off;		/* its bytes so far, when compared whole */
	int whole;		/* compare it */
	int64_t diff;		/* first differing byte, -1 */
	unsigned char got;	/* the byte received there */
};

/* corpus: --text json (text) or --bytes random (binary); it needs verify */
void msgs_init(struct msgs *m, int binary, int mixed, size_t size, int verify, int corpus);
/* Ring slot j of --text json of `size` bytes, numbered j, as msgs_init builds it, into
 * `out` (size bytes): one corpus message alone (the idle kind's --warm message). */
void msgs_json_payload(uint64_t j, size_t size, unsigned char *out);
/* Write every ring slot's payload as sent (unmasked, numbered), slot after slot
 * (--dump-messages, for clients/tests/test_corpus.py). */
void msgs_dump(const struct msgs *m, FILE *out);
void msgs_free(struct msgs *m);
/* Messages go over `c`; at most `inflight` of them are ever outstanding. */
void msgs_conn_init(const struct msgs *m, struct msgs_conn *mc, struct conn *c, uint64_t inflight);
void msgs_conn_free(struct msgs_conn *mc);

/* Queue message mc->ks and count it sent. */
void msgs_send(const struct msgs *m, struct msgs_conn *mc);

/* From now on: warm-up (every echo compared) or measured (every K-th). */
void msgs_phase(const struct msgs *m, struct msgs_conn *mc, int measuring);

/* The next n echoes are a round (its last one is compared byte for byte). */
void msgs_round(const struct msgs *m, struct msgs_conn *mc, uint64_t n);

/* A payload chunk of an echo to compare whole (conn_ops.on_data). */
void msgs_on_data(const struct msgs *m, struct msgs_conn *mc,
		  const unsigned char *p, size_t n);

/* msgs_on_message() for every echo but the plain, correct, unsampled ones. */
void msgs_echo_slow(const struct msgs *m, struct msgs_conn *mc, int conn, int opcode, uint64_t len);

/*
 * The echo is complete (conn_ops.on_message); `conn` numbers the connection
 * for messages (-1: there is one). Fails the run naming the message and the
 * first differing byte if it is wrong; otherwise counts it received. Inline:
 * for most echoes this is a load, a table read, a compare and an increment.
 */
static inline void msgs_on_message(const struct msgs *m, struct msgs_conn *mc, int conn,
				   int opcode, uint64_t len)
{
	uint64_t got;

	if (!m->verify) {
		mc->kr++;
		return;
	}
	memcpy(&got, mc->c->msg_head, sizeof(got));
	if (__builtin_expect(m->head_mode || mc->whole ||
			     (((unsigned)opcode ^ (unsigned)m->opcode) | (len ^ m->size) |
			      ((got & m->field_mask) ^ m->fields[mc->kr & m->ring_mask])), 0)) {
		msgs_echo_slow(m, mc, conn, opcode, len);
		return;
	}
	if (__builtin_expect(++mc->kr == mc->next_slow, 0)) {
		mc->whole = 1;	/* the next echo is compared whole: its bytes are wanted */
		mc->c->want_data = 1;
	}
}

#endif
