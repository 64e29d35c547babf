#include "frame.h"
#include "util.h"
#include "wsproto.h"

#include <stdlib.h>
#include <string.h>

#define RING_MAX 64
#define RING_BYTES ((size_t)64 << 20)

size_t frame_build(unsigned char *out, int opcode, const void *payload,
		   size_t len)
{
	unsigned char key[4];
	size_t h;

	rand_bytes(key, sizeof(key));
	h = wsp_header(out, opcode, 1, len, key);
	wsp_mask_copy(out + h, payload, len, key);
	return h + len;
}

size_t frame_build_rsv1(unsigned char *out, int opcode, const void *payload, size_t len)
{
	size_t n = frame_build(out, opcode, payload, len);

	out[0] |= 0x40;
	return n;
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
