#include "frame.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define RING_MAX 64
#define RING_BYTES ((size_t)64 << 20)

static void mask_bytes(unsigned char *p, size_t n, const unsigned char key[4])
{
	uint64_t k8;
	size_t i = 0;

	memcpy(&k8, key, 4);
	memcpy((unsigned char *)&k8 + 4, key, 4);
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		w ^= k8;
		memcpy(p + i, &w, 8);
	}
	for (; i < n; i++)
		p[i] ^= key[i & 3];
}

size_t frame_build(unsigned char *out, int opcode, const void *payload,
		   size_t len)
{
	size_t h = 2;
	int i;

	out[0] = (unsigned char)(0x80 | opcode);
	if (len < 126) {
		out[1] = (unsigned char)(0x80 | len);
	} else if (len <= 0xffff) {
		out[1] = 0x80 | 126;
		out[2] = (unsigned char)(len >> 8);
		out[3] = (unsigned char)len;
		h = 4;
	} else {
		out[1] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			out[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
		h = 10;
	}
	rand_bytes(out + h, 4);
	if (len)
		memcpy(out + h + 4, payload, len);
	mask_bytes(out + h + 4, len, out + h);
	return h + 4 + len;
}

void frameset_init(struct frameset *fs, int opcode, const void *payload,
		   size_t len)
{
	unsigned i, n = RING_MAX;

	if ((len + FRAME_HEADER_MAX) * n > RING_BYTES)
		n = (unsigned)(RING_BYTES / (len + FRAME_HEADER_MAX));
	if (n < 1)
		n = 1;
	fs->frames = xcalloc(n, sizeof(*fs->frames));
	fs->n = n;
	fs->next = 0;
	for (i = 0; i < n; i++) {
		fs->frames[i] = xmalloc(FRAME_HEADER_MAX + len);
		fs->frame_len = frame_build(fs->frames[i], opcode, payload, len);
	}
}

const unsigned char *frameset_next(struct frameset *fs)
{
	const unsigned char *f = fs->frames[fs->next];

	if (++fs->next == fs->n)
		fs->next = 0;
	return f;
}

void frameset_free(struct frameset *fs)
{
	unsigned i;

	for (i = 0; i < fs->n; i++)
		free(fs->frames[i]);
	free(fs->frames);
	memset(fs, 0, sizeof(*fs));
}

/* Header complete: decode and validate it. */
static int start_frame(struct wsparser *ps)
{
	unsigned char b0 = ps->hdr[0], b1 = ps->hdr[1];
	uint64_t len = b1 & 0x7f;
	int i;

	if (b0 & 0x70)
		return ps->error = "reserved bits set (no extension negotiated)", -1;
	if (b1 & 0x80)
		return ps->error = "masked frame from server", -1;
	ps->opcode = b0 & 0x0f;
	ps->fin = !!(b0 & 0x80);
	if (len == 126) {
		len = (uint64_t)ps->hdr[2] << 8 | ps->hdr[3];
	} else if (len == 127) {
		len = 0;
		for (i = 0; i < 8; i++)
			len = len << 8 | ps->hdr[2 + i];
		if (len >> 63)
			return ps->error = "frame length has the top bit set", -1;
	}
	switch (ps->opcode) {
	case OP_CONT:
		if (!ps->msg_opcode)
			return ps->error = "continuation frame without a message", -1;
		break;
	case OP_TEXT:
	case OP_BINARY:
		if (ps->msg_opcode)
			return ps->error = "new message inside a fragmented one", -1;
		ps->msg_opcode = ps->opcode;
		ps->msg_len = 0;
		break;
	case OP_CLOSE:
	case OP_PING:
	case OP_PONG:
		if (!ps->fin)
			return ps->error = "fragmented control frame", -1;
		if (len > 125)
			return ps->error = "control frame longer than 125 bytes", -1;
		ps->ctrl_len = 0;
		break;
	default:
		return ps->error = "reserved opcode", -1;
	}
	ps->left = len;
	ps->in_payload = 1;
	ps->have = 0;
	return 0;
}

static int end_frame(struct wsparser *ps, const struct wsparser_cb *cb,
		     void *ctx)
{
	int op;

	ps->in_payload = 0;
	if (ps->opcode >= OP_CLOSE)
		return cb->control(ctx, ps->opcode, ps->ctrl, ps->ctrl_len);
	if (!ps->fin)
		return 0;
	op = ps->msg_opcode;
	ps->msg_opcode = 0;
	return cb->message(ctx, op, ps->msg_len);
}

int wsparser_feed(struct wsparser *ps, const unsigned char *p, size_t n,
		  const struct wsparser_cb *cb, void *ctx)
{
	int r;

	while (n || (ps->in_payload && !ps->left)) {
		if (!ps->in_payload) {
			if (ps->have < 2) {
				ps->hdr[ps->have++] = *p++;
				n--;
				if (ps->have == 2) {
					unsigned l7 = ps->hdr[1] & 0x7f;

					ps->need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0);
				}
			} else {
				size_t take = ps->need - ps->have;

				if (take > n)
					take = n;
				memcpy(ps->hdr + ps->have, p, take);
				ps->have += (unsigned)take;
				p += take;
				n -= take;
			}
			if (ps->have >= 2 && ps->have == ps->need &&
			    start_frame(ps))
				return -1;
			continue;
		}
		if (ps->left) {
			size_t take = ps->left < n ? (size_t)ps->left : n;

			if (ps->opcode >= OP_CLOSE) {
				memcpy(ps->ctrl + ps->ctrl_len, p, take);
				ps->ctrl_len += (unsigned)take;
			} else {
				if (ps->msg_len < sizeof(ps->head)) {
					size_t h = sizeof(ps->head) - (size_t)ps->msg_len;

					if (h == sizeof(ps->head) && take >= h)
						memcpy(ps->head, p, sizeof(ps->head));
					else
						for (h = 0; h < take && ps->msg_len + h < sizeof(ps->head); h++)
							ps->head[ps->msg_len + h] = p[h];
				}
				ps->msg_len += take;
				if ((r = cb->data(ctx, p, take)))
					return r;
			}
			p += take;
			n -= take;
			ps->left -= take;
		}
		if (!ps->left && (r = end_frame(ps, cb, ctx)))
			return r;
	}
	return 0;
}
