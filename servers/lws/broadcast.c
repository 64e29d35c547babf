#include "broadcast.h"

#include <string.h>

#define PAUSE_MSGS 4096
#define PAUSE_BYTES ((size_t)64 << 20)
#define RESUME_MSGS 1024
#define RESUME_BYTES ((size_t)16 << 20)

static struct {
	struct msgq ring;	/* slot refs: subscribers that have still to send it */
	uint64_t base;		/* number of the oldest message in the ring */
	struct bcast_sub *subs;
	size_t nsubs, npaused;
} B;

int bcast_is_path(struct lws *wsi)
{
	char path[64];
	int n = lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI);

	return n > 0 && !strcmp(path, "/broadcast");
}

void bcast_join(struct bcast_sub *s, struct lws *wsi)
{
	memset(s, 0, sizeof(*s));
	s->wsi = wsi;
	s->pos = B.base + B.ring.count;
	s->next = B.subs;
	if (B.subs)
		B.subs->prev = s;
	B.subs = s;
	B.nsubs++;
}

static void resume_all(void)
{
	struct bcast_sub *s;

	for (s = B.subs; s && B.npaused; s = s->next)
		if (s->paused) {
			s->paused = 0;
			B.npaused--;
			lws_rx_flow_control(s->wsi, 1);
		}
}

/* Message `n` has been sent by one more subscriber (or will never be). */
static void release(uint64_t n)
{
	msgq_at(&B.ring, (size_t)(n - B.base))->refs--;
	while (B.ring.count && !msgq_front(&B.ring)->refs) {
		msgq_pop(&B.ring);
		B.base++;
	}
	if (B.npaused && B.ring.count <= RESUME_MSGS && B.ring.bytes <= RESUME_BYTES)
		resume_all();
}

int bcast_publish(struct bcast_sub *from, struct msg *m)
{
	uint64_t n = B.base + B.ring.count;	/* its number */
	struct bcast_sub *s;

	if (msgq_push_swap(&B.ring, m))
		return -1;
	msgq_at(&B.ring, B.ring.count - 1)->refs = B.nsubs;
	/* Invariant: a subscriber behind the ring's head has a WRITEABLE callback
	 * pending; only those that had sent everything need one now. */
	for (s = B.subs; s; s = s->next)
		if (s->pos == n)
			lws_callback_on_writable(s->wsi);
	if (!from->paused && (B.ring.count >= PAUSE_MSGS || B.ring.bytes >= PAUSE_BYTES)) {
		from->paused = 1;
		B.npaused++;
		lws_rx_flow_control(from->wsi, 0);
	}
	return 0;
}

int bcast_writeable(struct bcast_sub *s)
{
	struct msg *m;
	enum lws_write_protocol type;

	if (s->pos == B.base + B.ring.count)	/* lws may call us unasked */
		return 0;
	m = msgq_at(&B.ring, (size_t)(s->pos - B.base));
	type = m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT;
	/*
	 * Sent in place from the ring: lws writes the frame header into the
	 * LWS_PRE bytes before the payload, the same bytes for every subscriber,
	 * and copies whatever the kernel did not take.
	 */
	if (lws_write(s->wsi, msg_payload(m), m->len, type) < (int)m->len)
		return -1;
	release(s->pos++);
	if (s->pos < B.base + B.ring.count)
		lws_callback_on_writable(s->wsi);
	return 0;
}

void bcast_leave(struct bcast_sub *s)
{
	uint64_t head = B.base + B.ring.count;

	if (!s->wsi)
		return;
	if (s->prev)
		s->prev->next = s->next;
	else
		B.subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	B.nsubs--;
	if (s->paused)
		B.npaused--;
	s->paused = 0;
	s->wsi = NULL;
	while (s->pos < head)
		release(s->pos++);
}

void bcast_free_all(void)
{
	msgq_free(&B.ring);
	memset(&B, 0, sizeof(B));
}
