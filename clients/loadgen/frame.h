/*
 * WebSocket frames to send (RFC 6455): masked client frames, built once and
 * reused.  The encoding is the wire protocol room's (wsproto.h), and so is the
 * parser of the server's frames (conn.c calls it).
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

/* The same with RSV1 set (a permessage-deflate message's compressed payload). */
size_t frame_build_rsv1(unsigned char *out, int opcode, const void *payload, size_t len);

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

#endif
