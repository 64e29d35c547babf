#include "msgq.h"

#include <libwebsockets.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Smallest payload capacity we allocate: small messages never regrow. */
#define MSG_MIN_CAP 256
/*
 * Buffers larger than this are freed when their message has been sent, so a
 * few huge messages do not pin memory in every queue slot forever.
 */
#define MSG_KEEP_MAX (1u << 20)

unsigned char *msg_payload(struct msg *m)
{
	return m->buf + LWS_PRE;
}

int msg_reserve(struct msg *m, size_t need)
{
	size_t cap = m->cap ? m->cap : MSG_MIN_CAP;
	unsigned char *p;

	if (m->buf && need <= m->cap)
		return 0;
	while (cap < need) {
		if (cap > ((size_t)-1 - LWS_PRE) / 2)
			return -1;
		cap *= 2;
	}
	p = realloc(m->buf, LWS_PRE + cap);
	if (!p)
		return -1;
	m->buf = p;
	m->cap = cap;
	return 0;
}

int msg_append(struct msg *m, const void *data, size_t n)
{
	if (n > (size_t)-1 - m->len || msg_reserve(m, m->len + n))
		return -1;
	if (n)
		memcpy(msg_payload(m) + m->len, data, n);
	m->len += n;
	return 0;
}

void msg_free(struct msg *m)
{
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

size_t msg_frame_header(unsigned char *p, int binary, size_t len)
{
	int i;

	p[0] = 0x80 | (binary ? 0x2 : 0x1);
	if (len < 126) {
		p[1] = (unsigned char)len;
		return 2;
	}
	if (len <= 0xffff) {
		p[1] = 126;
		p[2] = (unsigned char)(len >> 8);
		p[3] = (unsigned char)len;
		return 4;
	}
	p[1] = 127;
	for (i = 0; i < 8; i++)
		p[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
	return 10;
}

struct msg *msgq_front(struct msgq *q)
{
	return q->count ? &q->slots[q->head] : NULL;
}

/* Double the ring, moving the queued messages to the front of the new one. */
static int msgq_grow(struct msgq *q)
{
	size_t n = q->nslots ? q->nslots * 2 : 64, i;
	struct msg *s = calloc(n, sizeof(*s));

	if (!s)
		return -1;
	for (i = 0; i < q->nslots; i++)
		s[i] = q->slots[(q->head + i) & (q->nslots - 1)];
	free(q->slots);
	q->slots = s;
	q->nslots = n;
	q->head = 0;
	return 0;
}

int msgq_push_swap(struct msgq *q, struct msg *m)
{
	struct msg *tail, spare;

	if (q->count == q->nslots && msgq_grow(q))
		return -1;
	tail = &q->slots[(q->head + q->count) & (q->nslots - 1)];
	spare = *tail;
	*tail = *m;
	*m = spare;
	m->len = 0;
	q->count++;
	q->bytes += tail->len;
	return 0;
}

void msgq_pop(struct msgq *q)
{
	struct msg *m = &q->slots[q->head];

	q->bytes -= m->len;
	m->len = 0;
	if (m->cap > MSG_KEEP_MAX)
		msg_free(m);
	q->head = (q->head + 1) & (q->nslots - 1);
	q->count--;
}

void msgq_free(struct msgq *q)
{
	size_t i;

	for (i = 0; i < q->nslots; i++)
		msg_free(&q->slots[i]);
	free(q->slots);
	memset(q, 0, sizeof(*q));
}
