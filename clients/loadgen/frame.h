/*
 * WebSocket framing (RFC 6455): masked client frames, built once and reused,
 * and an incremental parser for the server's (unmasked) frames.
 */
#ifndef LG_FRAME_H
#define LG_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define OP_CONT 0x0
#define OP_TEXT 0x1
#define OP_BINARY 0x2
#define OP_CLOSE 0x8
#define OP_PING 0x9
#define OP_PONG 0xa

/* Largest client frame header: 2 + 8 (length) + 4 (mask key). */
#define FRAME_HEADER_MAX 14

/*
 * Write one FIN frame with a fresh random masking key into `out` (room for
 * FRAME_HEADER_MAX + len bytes); returns the frame's length.
 */
size_t frame_build(unsigned char *out, int opcode, const void *payload,
		   size_t len);

/*
 * The same message as a ring of pre-masked frames, each with its own random
 * key: sending cycles through them, so no frame is masked at send time and
 * consecutive frames do not share a key.
 */
struct frameset {
	unsigned char **frames;
	size_t frame_len;	/* every copy has the same length */
	unsigned n, next;
};

/* Up to 64 copies, fewer for big messages (about 64 MiB in all). */
void frameset_init(struct frameset *fs, int opcode, const void *payload,
		   size_t len);
const unsigned char *frameset_next(struct frameset *fs);
void frameset_free(struct frameset *fs);

/* What the parser reports; a nonzero return stops parsing and is returned. */
struct wsparser_cb {
	/* a chunk of a data message's payload (every frame, in order) */
	int (*data)(void *ctx, const unsigned char *p, size_t n);
	/* a whole data message has arrived: its first frame's opcode, length */
	int (*message)(void *ctx, int opcode, uint64_t len);
	/* a whole control frame (close, ping, pong) */
	int (*control)(void *ctx, int opcode, const unsigned char *p, size_t n);
};

struct wsparser {
	unsigned char hdr[10];	/* header bytes of the frame being read */
	unsigned have, need;
	int in_payload;		/* header done, reading payload */
	int opcode, fin;
	uint64_t left;		/* payload bytes of this frame still to come */
	int msg_opcode;		/* opcode of the message in progress, or 0 */
	uint64_t msg_len;
	unsigned char head[8];	/* its first (up to 8) payload bytes, kept after it ends */
	unsigned char ctrl[125];
	unsigned ctrl_len;
	const char *error;	/* set when wsparser_feed() returns -1 */
};

/*
 * Feed received bytes (any split). Returns 0, -1 on a protocol violation
 * (ps->error says which), or the first nonzero callback return value.
 */
int wsparser_feed(struct wsparser *ps, const unsigned char *p, size_t n,
		  const struct wsparser_cb *cb, void *ctx);

#endif
