#include "broadcast.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_BYTES (32 * 1024)		/* frames per block, unless one is bigger */
#define WRITE_MAX (64 * 1024)		/* bytes per lws_write, unless one frame is bigger */
#define PAUSE_MSGS 4096
#define PAUSE_BYTES ((size_t)64 << 20)
#define RESUME_MSGS 1024
#define RESUME_BYTES ((size_t)16 << 20)

struct bcast_block {
	struct bcast_block *next;
	unsigned char *buf;	/* LWS_PRE bytes, then the frames */
	size_t cap, used;	/* room for frames, frames' bytes */
	size_t msgs;		/* messages in it */
	size_t refs;		/* subscribers positioned in it */
};

static struct {
	struct bcast_block *head, *tail;	/* oldest, newest (appended to) */
	size_t msgs, bytes;	/* in the blocks kept */
	size_t total;		/* bytes ever appended (a subscriber's backlog: total - pos) */
	struct bcast_sub *idle, *busy;	/* caught up; with something to send */
	size_t nsubs, npaused;
} B;

size_t bcast_limit;

int bcast_is_path(struct lws *wsi)
{
	char path[64];
	int n = lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI);

	return n > 0 && !strcmp(path, "/broadcast");
}

static unsigned char *frames(struct bcast_block *b)
{
	return b->buf + LWS_PRE;
}

static struct bcast_block *block_new(size_t cap)
{
	struct bcast_block *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->buf = malloc(LWS_PRE + cap);
	if (!b->buf) {
		free(b);
		return NULL;
	}
	b->cap = cap;
	if (B.tail)
		B.tail->next = b;
	else
		B.head = b;
	B.tail = b;
	return b;
}

static void unlink_sub(struct bcast_sub *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else if (s->busy)
		B.busy = s->next;
	else
		B.idle = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void link_sub(struct bcast_sub *s, int busy)
{
	struct bcast_sub **list = busy ? &B.busy : &B.idle;

	s->busy = busy;
	s->prev = NULL;
	s->next = *list;
	if (*list)
		(*list)->prev = s;
	*list = s;
}

static void resume_all(void)
{
	struct bcast_sub *lists[2] = { B.idle, B.busy }, *s;
	int i;

	for (i = 0; i < 2; i++)
		for (s = lists[i]; s && B.npaused; s = s->next)
			if (s->paused) {
				s->paused = 0;
				B.npaused--;
				lws_rx_flow_control(s->wsi, 1);
			}
}

/* Free the oldest blocks no subscriber is in (all of them when none is left). */
static void trim(void)
{
	while (B.head && !B.head->refs && (B.head != B.tail || !B.nsubs)) {
		struct bcast_block *b = B.head;

		B.head = b->next;
		if (!B.head)
			B.tail = NULL;
		B.msgs -= b->msgs;
		B.bytes -= b->used;
		free(b->buf);
		free(b);
	}
	if (B.npaused && B.msgs <= RESUME_MSGS && B.bytes <= RESUME_BYTES)
		resume_all();
}

void bcast_join(struct bcast_sub *s, struct lws *wsi)
{
	memset(s, 0, sizeof(*s));
	s->wsi = wsi;
	if (!B.tail && !block_new(BLOCK_BYTES)) {
		s->wsi = NULL;	/* no memory: it stays out (and gets nothing) */
		return;
	}
	s->blk = B.tail;
	s->off = B.tail->used;
	s->pos = B.total;
	B.tail->refs++;
	link_sub(s, 0);
	B.nsubs++;
}

/* Room for `need` more bytes at the end of the chain. */
static struct bcast_block *room(size_t need)
{
	struct bcast_block *t = B.tail;
	unsigned char *p;

	if (t && t->used + need <= t->cap)
		return t;
	if (t && !t->used) {	/* empty: grow it (positions at 0 stay right) */
		p = realloc(t->buf, LWS_PRE + need);
		if (!p)
			return NULL;
		t->buf = p;
		t->cap = need;
		return t;
	}
	return block_new(need > BLOCK_BYTES ? need : BLOCK_BYTES);
}

/* --broadcast-limit: every subscriber whose backlog passed it is closed with 1008. */
static void close_over_limit(void)
{
	struct bcast_sub *s = B.busy, *next;
	static const char why[] = "broadcast backlog over the limit";

	for (; s; s = next) {
		next = s->next;
		if (B.total - s->pos <= bcast_limit)
			continue;
		lws_close_reason(s->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
				 (unsigned char *)why, sizeof(why) - 1);
		lws_set_timeout(s->wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
		bcast_leave(s);
	}
}

int bcast_publish(struct bcast_sub *from, const struct msg *m)
{
	size_t need = WS_HEADER_MAX + m->len, h;
	struct bcast_block *b;
	struct bcast_sub *s;

	if (!from->wsi || !(b = room(need)))
		return -1;
	h = msg_frame_header(frames(b) + b->used, m->binary, m->len);
	if (m->len)
		memcpy(frames(b) + b->used + h, m->buf + LWS_PRE, m->len);
	b->used += h + m->len;
	b->msgs++;
	B.msgs++;
	B.bytes += h + m->len;
	B.total += h + m->len;
	if (bcast_limit) {
		close_over_limit();
		if (!from->wsi)	/* the publisher itself was over it */
			return 0;
	}
	/* Invariant: a busy subscriber has a WRITEABLE callback pending; the idle
	 * ones (they had sent everything) get one now. */
	while ((s = B.idle)) {
		unlink_sub(s);
		link_sub(s, 1);
		lws_callback_on_writable(s->wsi);
	}
	if (!from->paused && (B.msgs >= PAUSE_MSGS || B.bytes >= PAUSE_BYTES)) {
		from->paused = 1;
		B.npaused++;
		lws_rx_flow_control(from->wsi, 0);
	}
	return 0;
}

/* Past the end of its block and there is a next one: move there. */
static void advance(struct bcast_sub *s)
{
	while (s->off == s->blk->used && s->blk->next) {
		s->blk->refs--;
		s->blk = s->blk->next;
		s->blk->refs++;
		s->off = 0;
	}
}

/* Bytes of the whole frames from `off` that make one write (at least one frame). */
static size_t span(const struct bcast_block *b, size_t off)
{
	const unsigned char *p = b->buf + LWS_PRE;
	size_t total = 0;

	while (off + total < b->used) {
		const unsigned char *f = p + off + total;
		size_t len = f[1] & 0x7f, hl = 2, i;

		if (len == 126) {
			len = (size_t)f[2] << 8 | f[3];
			hl = 4;
		} else if (len == 127) {
			for (len = 0, i = 0; i < 8; i++)
				len = len << 8 | f[2 + i];
			hl = 10;
		}
		if (total && total + hl + len > WRITE_MAX)
			break;
		total += hl + len;
	}
	return total;
}

int bcast_writeable(struct bcast_sub *s)
{
	size_t n;

	if (!s->wsi)
		return 0;
	advance(s);
	if (s->off < s->blk->used) {
		n = span(s->blk, s->off);
		/*
		 * Whole frames, raw, from the shared block: LWS_WRITE_RAW writes
		 * nothing in front of the pointer, and lws keeps (copies) what
		 * the kernel did not take and flushes it before anything else.
		 */
		if (lws_write(s->wsi, frames(s->blk) + s->off, n, LWS_WRITE_RAW) < (int)n)
			return -1;
		s->off += n;
		s->pos += n;
		advance(s);
		trim();
	}
	unlink_sub(s);
	if (s->off < s->blk->used) {
		link_sub(s, 1);
		lws_callback_on_writable(s->wsi);
	} else {
		link_sub(s, 0);
	}
	return 0;
}

void bcast_leave(struct bcast_sub *s)
{
	if (!s->wsi)
		return;
	unlink_sub(s);
	s->blk->refs--;
	B.nsubs--;
	if (s->paused)
		B.npaused--;
	s->paused = 0;
	s->wsi = NULL;
	trim();
}

void bcast_free_all(void)
{
	while (B.head) {
		struct bcast_block *b = B.head;

		B.head = b->next;
		free(b->buf);
		free(b);
	}
	memset(&B, 0, sizeof(B));
}
