#include "conn.h"
#include "tls.h"
#include "util.h"
/* the wire protocol's room (wsproto/): the 101 check, the close codes */
#include "handshake_core.h"
#include "wsclose.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#define RBUF_SIZE (256 * 1024)
#define READS_PER_EVENT 4
#define IOV_BATCH 1024
#define HEAD_MAX 8192
#define MAX_EVENTS 256

static int epfd = -1, tfd = -1;
static unsigned char *rbuf;
static uint64_t deadline, timeout_ms;
static char phase[256] = "connect";
static struct conn *dirty_list;
static uint64_t armed_at;

/*
 * permessage-deflate (conn_use_deflate): what every connection offers, the first
 * agreeing answer (the result line's "extensions"), the largest message inflated, and
 * one scratch buffer for the whole process (pmd_inflate's output, handed to the same
 * path as an uncompressed chunk's bytes).
 */
#define Z_SCRATCH (64 * 1024)
static struct pmd_params z_offer;
static char z_offer_str[160];
static int z_on;
static char z_answer[256];
static uint64_t z_max_message = (uint64_t)256 << 20;
static unsigned char *z_scratch;

/*
 * wss:// (conn_use_tls): every connection's bytes go through tls.c. Writes take
 * the same path as ws:// (write_queue), with tls_write_gathered for writev; events of a TLS
 * connection come tagged (the low bit of its pointer in the epoll data) to
 * tls_on_event.
 */
static int io_tls;

/* epoll data: a connection, tagged if TLS; the timer is the tag alone */
#define TIMER_TAG ((void *)1)
_Static_assert(_Alignof(struct conn) >= 2, "the tag needs the low bit of a connection's address");

static void *conn_tag(struct conn *c)
{
	return (void *)((uintptr_t)c | (uintptr_t)io_tls);
}

void conn_use_tls(void)
{
	io_tls = 1;
}

void evloop_init(uint64_t timeout)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = TIMER_TAG };

	timeout_ms = timeout;
	deadline = now_ns() + timeout * 1000000u;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (epfd < 0 || tfd < 0)
		fail("epoll/timerfd: %s", strerror(errno));
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev))
		fail("epoll_ctl: %s", strerror(errno));
	rbuf = xmalloc(RBUF_SIZE);
}

void conn_use_deflate(const struct pmd_params *offer)
{
	z_offer = *offer;
	if (!pmd_offer(z_offer_str, sizeof(z_offer_str), &z_offer))
		fail("permessage-deflate: the offer cannot be written");
	z_on = 1;
	if (!z_scratch)
		z_scratch = xmalloc(Z_SCRATCH);
}

const char *conn_extensions(void)
{
	return z_answer[0] ? z_answer : NULL;
}

void conn_set_max_message(uint64_t max)
{
	z_max_message = max;
}

static void z_free(struct conn *c)
{
	if (!c->z)
		return;
	pmd_stream_free(&c->z->tx);
	pmd_stream_free(&c->z->rx);
	free(c->z->out.p);
	free(c->z);
	c->z = NULL;
}

void evloop_set_deadline(uint64_t timeout)
{
	timeout_ms = timeout;
	deadline = now_ns() + timeout * 1000000u;
}

void evloop_end_barrier(void)
{
	hold_if_requested();
	evloop_set_deadline(timeout_ms);
}

void evloop_free(void)
{
	close(tfd);
	close(epfd);
	free(rbuf);
	rbuf = NULL;
	free(z_scratch);
	z_scratch = NULL;
}

void evloop_phase(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(phase, sizeof(phase), fmt, ap);
	va_end(ap);
}

void evloop_wake_at(uint64_t t)
{
	struct itimerspec its;

	if (t == armed_at)
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(t / 1000000000u);
	its.it_value.tv_nsec = (long)(t % 1000000000u);
	if (t && !its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
	armed_at = t;
}

static void epoll_mod(struct conn *c, int want_out)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (want_out ? EPOLLOUT : 0),
		.data.ptr = conn_tag(c),
	};

	if (c->paused)	/* applied when it resumes */
		return;
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev))
		fail("epoll_ctl: %s", strerror(errno));
}

/* Inlined: it runs after every flush, and mostly finds nothing to change. */
static void set_events(struct conn *c, int want_out)
{
	if (c->want_out == want_out)
		return;
	c->want_out = want_out;
	epoll_mod(c, want_out);
}

static void want_flush(struct conn *c)
{
	if (c->dirty)
		return;
	c->dirty = 1;
	c->next_dirty = dirty_list;
	dirty_list = c;
}

static int rcvbuf_next;

void conn_set_rcvbuf(int bytes)
{
	rcvbuf_next = bytes;
}

void conn_pause_reading(struct conn *c, int pause)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0),
		.data.ptr = conn_tag(c),
	};

	if (c->fd < 0 || !pause == !c->paused)
		return;
	c->paused = pause;
	if (epoll_ctl(epfd, pause ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, c->fd, &ev))
		fail("epoll_ctl: %s", strerror(errno));
}

static void queue_push(struct conn *c, const unsigned char *p, size_t len,
		       unsigned char *owned)
{
	struct outq_item *it;

	if (c->qcount == c->qcap) {
		size_t ncap = c->qcap ? c->qcap * 2 : 16, i;
		struct outq_item *nq = xmalloc(ncap * sizeof(*nq));

		for (i = 0; i < c->qcount; i++)
			nq[i] = c->q[(c->qhead + i) & (c->qcap - 1)];
		free(c->q);
		c->q = nq;
		c->qcap = ncap;
		c->qhead = 0;
	}
	it = &c->q[(c->qhead + c->qcount) & (c->qcap - 1)];
	it->p = p;
	it->len = len;
	it->owned = owned;
	c->qcount++;
	want_flush(c);
}

void conn_send_ref(struct conn *c, const unsigned char *p, size_t len)
{
	queue_push(c, p, len, NULL);
}

static void send_copy(struct conn *c, int opcode, const void *payload, size_t len)
{
	unsigned char *f = xmalloc(FRAME_HEADER_MAX + len);

	queue_push(c, f, frame_build(f, opcode, payload, len), f);
}

void conn_send_deflated(struct conn *c, int opcode, const void *payload, size_t len)
{
	struct pmd_buf *out = &c->z->out;
	unsigned char *f;

	out->len = 0;
	if (pmd_deflate(&c->z->tx, payload, len, 1, out) != PMD_OK)
		fail("permessage-deflate: out of memory compressing a message of %zu bytes", len);
	f = xmalloc(FRAME_HEADER_MAX + out->len);
	queue_push(c, f, frame_build_rsv1(f, opcode, out->p, out->len), f);
}

void conn_send_frame(struct conn *c, int opcode, const void *payload,
		     size_t len)
{
	if (c->z)
		conn_send_deflated(c, opcode, payload, len);
	else
		send_copy(c, opcode, payload, len);
}

void conn_send_control(struct conn *c, int opcode, const void *payload,
		       size_t len)
{
	send_copy(c, opcode, payload, len);
}

void conn_close(struct conn *c, int code)
{
	unsigned char b[2] = { (unsigned char)(code >> 8), (unsigned char)code };

	if (c->close_sent || c->state == C_DONE || c->state < C_OPEN)
		return;
	c->close_sent = 1;
	c->state = C_CLOSING;
	conn_send_control(c, OP_CLOSE, b, 2);
}

static void queue_clear(struct conn *c)
{
	while (c->qcount) {
		free(c->q[c->qhead].owned);
		c->qhead = (c->qhead + 1) & (c->qcap - 1);
		c->qcount--;
	}
	free(c->q);
	c->q = NULL;
	c->qcap = c->qhead = c->off = 0;
}

static void close_socket(struct conn *c)
{
	if (c->fd >= 0) {
		if (!c->paused)
			epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		if (io_tls)
			tls_detach(c->fd);
		close(c->fd);
		c->fd = -1;
	}
}

/* The socket is gone: tell the workload. */
static void finish(struct conn *c)
{
	if (c->state == C_DONE)
		return;
	close_socket(c);
	z_free(c);
	c->state = C_DONE;
	if (!c->close_code)
		c->close_code = 1006;
	if (c->ops->on_closed)
		c->ops->on_closed(c);
}

void conn_fail(struct conn *c, int code, const char *why)
{
	if (!c->ops->on_error)
		fail("protocol error from server: %s", why);
	if (c->failed || c->state == C_DONE)
		return;
	c->failed = code;
	c->ops->on_error(c, why);
	if (c->state < C_OPEN) {
		finish(c);
		return;
	}
	conn_close(c, code);
}

/* The server ended the connection (TCP FIN, or TLS close_notify) without a close frame:
 * for a kind that reports events, error and then close 1006 (not clean), as a browser's
 * WebSocket does; after our close frame, or for the other kinds, just the end. */
static void server_ended(struct conn *c, const char *how)
{
	char why[160];

	if (c->state != C_OPEN || !c->ops->on_error) {
		finish(c);
		return;
	}
	snprintf(why, sizeof(why), "the server ended the connection without a close frame (%s)", how);
	c->ops->on_error(c, why);
	finish(c);
}

/* The socket (or its TLS) failed under us: fail the run, or report it and finish. */
static void lost(struct conn *c, const char *what, int err)
{
	const char *tls_failure = io_tls ? tls_why(c->fd) : NULL;
	char why[320];

	if (!c->ops->on_error)
		fail("%s: %s (phase %s)", what, tls_failure ? tls_failure : strerror(err), phase);
	snprintf(why, sizeof(why), "%s: %s", what, tls_failure ? tls_failure : strerror(err));
	c->ops->on_error(c, why);
	finish(c);
}

void conn_free(struct conn *c)
{
	close_socket(c);
	queue_clear(c);
	free(c->head);
	c->head = NULL;
	z_free(c);
	c->state = C_DONE;
}

static void conn_init(struct conn *c, const struct conn_ops *ops, void *user)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->user = user;
	c->want_data = 1;
}

/* The socket is connecting: watch it, and queue the upgrade request. */
static int conn_register(struct conn *c, const struct url *u)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = conn_tag(c) };
	char *req;
	size_t n;

	c->want_out = 1;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev))
		return -1;
	if (io_tls)
		tls_attach(c->fd);
	c->state = C_CONNECTING;
	req = xmalloc(4096 + sizeof(u->target));
	n = http_request(u, z_on ? z_offer_str : NULL, req, 4096 + sizeof(u->target), c->accept);
	/* stays queued (flush_dirty skips C_CONNECTING) until connected */
	queue_push(c, (unsigned char *)req, n, (unsigned char *)req);
	c->head = xmalloc(HEAD_MAX);
	return 0;
}

void conn_start(struct conn *c, const struct url *u,
		const struct conn_ops *ops, void *user)
{
	int one = 1;

	conn_init(c, ops, user);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		fail("socket: %s", strerror(errno));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)&u->addr, sizeof(u->addr)) &&
	    errno != EINPROGRESS && !ops->on_error)
		fail("connect: %s", strerror(errno));
	/* a failed connect() with on_error set is reported once the loop runs */
	if (conn_register(c, u))
		fail("epoll_ctl: %s", strerror(errno));
}

int conn_open(struct conn *c, const struct url *u, const struct sockaddr_in *src,
	      const struct conn_ops *ops, void *user, const char **what)
{
	int one = 1, err;

	conn_init(c, ops, user);
	c->state = C_DONE;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		*what = "socket()";
		return -1;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (rcvbuf_next)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_next, sizeof(rcvbuf_next));
	if (src) {
		setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(c->fd, (const struct sockaddr *)src, sizeof(*src))) {
			*what = "bind()";
			goto failed;
		}
	}
	if (connect(c->fd, (const struct sockaddr *)&u->addr, sizeof(u->addr)) &&
	    errno != EINPROGRESS) {
		*what = "connect()";
		goto failed;
	}
	if (conn_register(c, u)) {
		*what = "epoll_ctl()";
		goto failed;
	}
	return 0;
failed:
	err = errno;
	close(c->fd);
	c->fd = -1;
	c->state = C_DONE;
	errno = err;
	return -1;
}

/* wss://: wait for what TLS needs (tls_wants_out): readability always, writability maybe. */
static void tls_events(struct conn *c)
{
	set_events(c, tls_wants_out(c->fd, c->state >= C_UPGRADING && c->qcount > 0));
}

/* Write as much of the queue as the socket takes. */
static void write_queue(struct conn *c)
{
	struct iovec iov[IOV_BATCH];

	while (c->qcount && c->fd >= 0) {
		size_t i, n = c->qcount < IOV_BATCH ? c->qcount : IOV_BATCH;
		ssize_t w;

		for (i = 0; i < n; i++) {
			struct outq_item *it = &c->q[(c->qhead + i) & (c->qcap - 1)];

			iov[i].iov_base = (void *)(it->p + (i ? 0 : c->off));
			iov[i].iov_len = it->len - (i ? 0 : c->off);
		}
		w = io_tls ? tls_write_gathered(c->fd, iov, (int)n) : writev(c->fd, iov, (int)n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && io_tls) {	/* for the socket, maybe to read */
				tls_events(c);
				return;
			}
			if (errno == EAGAIN)
				break;
			if (c->state == C_CLOSING) {	/* peer already gone */
				finish(c);
				return;
			}
			lost(c, "send", errno);
			return;
		}
		while (w > 0) {
			struct outq_item *it = &c->q[c->qhead];
			size_t rest = it->len - c->off;

			if ((size_t)w < rest) {
				c->off += (size_t)w;
				break;
			}
			w -= (ssize_t)rest;
			free(it->owned);
			c->off = 0;
			c->qhead = (c->qhead + 1) & (c->qcap - 1);
			c->qcount--;
		}
	}
	if (c->fd >= 0)
		set_events(c, c->qcount > 0);
}

/* A frame's header passed every check: a text or binary one begins a message. */
static int on_parsed_frame(void *ctx, int opcode, int fin, uint64_t len)
{
	struct conn *c = ctx;

	(void)fin;
	(void)len;
	if (opcode == OP_TEXT || opcode == OP_BINARY) {
		c->msg_opcode = opcode;
		c->msg_len = 0;
	}
	return 0;
}

/* A message's bytes (as sent, or as inflated): kept, counted and handed to the workload.
 * Always inlined, like message_end: the uncompressed path runs what it ran before they
 * were shared with the inflated one. */
static inline __attribute__((always_inline)) int take_bytes(struct conn *c, const unsigned char *p, size_t n)
{
	if (c->msg_len < sizeof(c->msg_head)) {
		size_t h = sizeof(c->msg_head) - (size_t)c->msg_len;

		if (h == sizeof(c->msg_head) && n >= h)
			memcpy(c->msg_head, p, sizeof(c->msg_head));
		else
			for (h = 0; h < n && c->msg_len + h < sizeof(c->msg_head); h++)
				c->msg_head[c->msg_len + h] = p[h];
	}
	c->msg_len += n;
	if (c->want_data && c->ops->on_data && c->state == C_OPEN)
		c->ops->on_data(c, p, n);
	return c->failed;	/* stop parsing once failed */
}

/* The message is complete. */
static inline __attribute__((always_inline)) int message_end(struct conn *c)
{
	int opcode = c->msg_opcode;

	c->msg_opcode = 0;
	if (c->ops->on_message && c->state == C_OPEN)
		c->ops->on_message(c, opcode, c->msg_len);
	return c->state == C_DONE || c->failed;
}

/* pmd_inflate's sink: the inflated bytes take the uncompressed path */
static int inflated(void *ctx, const uint8_t *p, size_t n)
{
	return take_bytes(ctx, p, n);
}

/*
 * A chunk of a compressed message (RSV1 on its first frame: the parser set
 * msg_rsv1, cleared here at the message's end): inflated through the process's
 * scratch buffer, never past the largest message (close 1009 before it is produced);
 * data that is not DEFLATE is close 1007.
 */
static __attribute__((noinline)) int on_deflated_data(struct conn *c, const unsigned char *p,
						      size_t n, int final)
{
	char why[128];
	int r;

	if (final)
		c->parser.msg_rsv1 = 0;
	r = pmd_inflate(&c->z->rx, p, n, final, z_max_message, z_scratch, Z_SCRATCH, inflated, c);
	if (r == PMD_TOO_BIG) {
		snprintf(why, sizeof(why), "compressed message inflates past %llu bytes",
			 (unsigned long long)z_max_message);
		conn_fail(c, 1009, why);
		return 1009;
	}
	if (r == PMD_BAD_DATA) {
		conn_fail(c, 1007, "invalid compressed data (permessage-deflate)");
		return 1007;
	}
	if (r == PMD_NOMEM) {
		conn_fail(c, 1011, "permessage-deflate: out of memory inflating a message");
		return 1011;
	}
	if (r)
		return r;
	return final ? message_end(c) : 0;
}

/* A chunk of a data message (empty only for an empty frame); at its end, the message. */
static int on_parsed_data(void *ctx, const unsigned char *p, size_t n, int first,
			  int final, int binary, size_t remain)
{
	struct conn *c = ctx;
	int r;

	(void)first;
	(void)binary;
	(void)remain;
	if (__builtin_expect(c->parser.msg_rsv1, 0))
		return on_deflated_data(c, p, n, final);
	if (n && (r = take_bytes(c, p, n)))
		return r;
	if (!final)
		return 0;
	return message_end(c);
}

static int on_parsed_control(void *ctx, int opcode, const unsigned char *p,
			     size_t n)
{
	struct conn *c = ctx;
	const char *why;
	int code;

	if (opcode == OP_PING) {
		if (!c->close_sent)
			conn_send_control(c, OP_PONG, p, n);
		return 0;
	}
	if (opcode == OP_PONG) {
		if (c->ops->on_pong && c->state == C_OPEN)
			c->ops->on_pong(c);
		return 0;
	}
	/* close: a 1-byte body, a code no one may send, a reason not UTF-8 (the
	 * room's check, in our words) */
	code = wsc_body_problem(p, n, &why);
	if (code) {
		conn_fail(c, code, n == 1 ? "close frame with a 1-byte payload" :
			  code == 1002 ? "close frame with an invalid code" :
			  "close reason is not UTF-8");
		return 1;
	}
	code = n >= 2 ? (p[0] << 8 | p[1]) : 1005;
	c->close_code = code;
	if (!c->close_sent) {
		unsigned char b[2] = { p[0], p[1] };

		c->close_sent = 1;
		conn_send_control(c, OP_CLOSE, b, n >= 2 ? 2 : 0);
	}
	c->state = C_CLOSING;
	if (c->ops->on_close_frame)
		c->ops->on_close_frame(c, code);
	return 0;
}

static void on_parse_error(void *ctx, int code, const char *why)
{
	conn_fail(ctx, code, why);
}

/* our words for a frame header's protocol violations, and the order we check them in */
static const char *const parse_why[WSP_VIOLATIONS] = {
	[WSP_MASKED] = "masked frame from server",
	[WSP_LENGTH] = "frame length has the top bit set",
	[WSP_RESERVED_BITS] = "reserved bits set (no extension negotiated)",
	[WSP_CONTROL_OPCODE] = "reserved opcode",
	[WSP_CONTROL_FRAGMENTED] = "fragmented control frame",
	[WSP_CONTROL_LONG] = "control frame longer than 125 bytes",
	[WSP_CONTINUATION] = "continuation frame without a message",
	[WSP_NOT_CONTINUATION] = "new message inside a fragmented one",
	[WSP_OPCODE] = "reserved opcode",
};

static const struct wsp_cb parser_cb = {
	.frame = on_parsed_frame,
	.data = on_parsed_data,
	.control = on_parsed_control,
	.error = on_parse_error,
	.why = parse_why,
	.order = WSP_ORDER_RESERVED_FIRST,
};

static void feed_frames(struct conn *c, const unsigned char *p, size_t n)
{
	if (c->failed)	/* after a failure nothing the server sends counts */
		return;
	wsp_feed(&c->parser, p, n, &parser_cb, c);
}

/* A refused extension answer, in words: the room's reason and the answer itself. */
static const char *z_refused(const char *why, const char *ext, size_t extlen)
{
	static char msg[320];

	snprintf(msg, sizeof(msg), "permessage-deflate refused: %s (Sec-WebSocket-Extensions: %.*s)",
		 why, extlen > 120 ? 120 : (int)extlen, ext);
	return msg;
}

/* Collect the response head; once complete, check it and go on to frames. */
static void feed_head(struct conn *c, const unsigned char *p, size_t n)
{
	size_t take = n < HEAD_MAX - c->head_len ? n : HEAD_MAX - c->head_len;
	size_t from = c->head_len > 3 ? c->head_len - 3 : 0, hlen, took = take;
	const char *end, *why, *ext = NULL;
	size_t extlen = 0;
	struct pmd_agreed agreed;

	memcpy(c->head + c->head_len, p, take);
	c->head_len += take;
	end = memmem(c->head + from, c->head_len - from, "\r\n\r\n", 4);
	if (!end) {
		if (c->head_len == HEAD_MAX)
			fail("upgrade response head too long");
		return;
	}
	hlen = (size_t)(end + 4 - c->head);
	why = hs_check(c->head, hlen, c->accept, NULL, NULL, 0, z_on ? &ext : NULL,
		       z_on ? &extlen : NULL);
	if (!why && ext && (why = pmd_agree(ext, extlen, &z_offer, &agreed)))
		why = z_refused(why, ext, extlen);
	if (why) {
		char msg[400];

		if (!c->ops->on_error)
			fail("upgrade failed: %s", why);
		snprintf(msg, sizeof(msg), "upgrade failed: %s", why);
		conn_fail(c, 0, msg);
		return;
	}
	if (ext) {
		c->z = xcalloc(1, sizeof(*c->z));
		pmd_stream_setup(&c->z->tx, &c->z->rx, &agreed);
		c->parser.rsv_ok = 0x40;
		if (!z_answer[0])
			snprintf(z_answer, sizeof(z_answer), "%.*s", (int)extlen, ext);
	}
	/* bytes after the head are the first frames */
	take = c->head_len - hlen;
	memmove(c->head, c->head + hlen, take);
	c->state = C_OPEN;
	if (c->ops->on_open)
		c->ops->on_open(c);
	if (take && c->state != C_DONE)
		feed_frames(c, (unsigned char *)c->head, take);
	free(c->head);
	c->head = NULL;
	/* and the rest of this read, past what the head buffer took (the stream
	 * property test found these bytes dropped: a long first read lost frames) */
	if (took < n && c->state != C_DONE)
		feed_frames(c, p + took, n - took);
}

/* What arrived goes to the head's parser or to the frames'. */
static void feed(struct conn *c, const unsigned char *p, size_t n)
{
	if (c->state == C_UPGRADING)
		feed_head(c, p, n);
	else if (c->state == C_OPEN || c->state == C_CLOSING)
		feed_frames(c, p, n);
}

static void on_readable(struct conn *c)
{
	int i;

	for (i = 0; i < READS_PER_EVENT && c->fd >= 0; i++) {
		ssize_t r = read(c->fd, rbuf, RBUF_SIZE);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			if (c->state == C_CLOSING) {
				finish(c);
				return;
			}
			lost(c, "recv", errno);
			return;
		}
		if (r == 0) {
			server_ended(c, "TCP FIN");
			return;
		}
		feed(c, rbuf, (size_t)r);
		if ((size_t)r < RBUF_SIZE)
			return;
	}
}

/* wss://: a step of the TLS handshake; once done, the upgrade request goes out. */
static void tls_handshake_step(struct conn *c)
{
	int r = tls_handshake(c->fd);

	if (r < 0) {
		lost(c, "connect", EPROTO);
		return;
	}
	if (r == 0) {
		tls_events(c);
		return;
	}
	c->state = C_UPGRADING;
	want_flush(c);
}

/* Before the upgrade: the TCP connect, then (wss://) the TLS handshake. */
static void on_connecting(struct conn *c, uint32_t events)
{
	if (c->state == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			lost(c, "connect", err ? err : errno);
			return;
		}
		if (!(events & EPOLLOUT))
			return;
		if (!io_tls) {
			c->state = C_UPGRADING;
			want_flush(c);
			return;
		}
		c->state = C_TLS;
	}
	tls_handshake_step(c);
}

static void on_event(struct conn *c, uint32_t events)
{
	if (c->state < C_UPGRADING) {
		on_connecting(c, events);
		return;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		on_readable(c);
	if (c->fd >= 0 && (events & EPOLLOUT))
		want_flush(c);
}

/*
 * wss://: read and decrypt until TLS would wait. Nothing decrypted stays
 * inside OpenSSL between calls (tls_read_records), so the socket's readiness is the
 * whole truth; bytes that came with the end of the session are parsed first.
 */
static void tls_on_readable(struct conn *c)
{
	int i;

	for (i = 0; i < READS_PER_EVENT && c->fd >= 0; i++) {
		size_t n;
		enum tls_status st = tls_read_records(c->fd, rbuf, RBUF_SIZE, &n);

		if (n)
			feed(c, rbuf, n);
		if (c->fd < 0)
			return;
		if (st == TLS_MORE)
			continue;
		if (st == TLS_BLOCKED && c->qcount)
			/* output queued (an echo's reply): the flush below sets writability
			 * from what it could write (write_queue); set here too, it was set
			 * and cleared again on every echo, two epoll_ctl per round trip */
			set_events(c, tls_wants_out(c->fd, 0));
		else if (st == TLS_BLOCKED)
			tls_events(c);
		else if (c->state == C_CLOSING)
			finish(c);
		else if (st == TLS_CLOSED)
			server_ended(c, "TLS close_notify");
		else
			lost(c, "recv", EPROTO);
		break;
	}
	/* a write that waited for the server's bytes may go on now */
	if (c->fd >= 0 && c->qcount)
		want_flush(c);
}

static void tls_on_event(struct conn *c, uint32_t events)
{
	if (c->state < C_UPGRADING) {
		on_connecting(c, events);
		return;
	}
	if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ||
	    ((events & EPOLLOUT) && tls_wants_out(c->fd, 0)))
		tls_on_readable(c);
	if (c->fd >= 0 && (events & EPOLLOUT) && c->qcount)
		want_flush(c);
}

static void flush_dirty(void)
{
	while (dirty_list) {
		struct conn *c = dirty_list;

		dirty_list = c->next_dirty;
		c->dirty = 0;
		if (c->state >= C_UPGRADING && c->fd >= 0)
			write_queue(c);
	}
}

void evloop_run(int (*done)(void *ctx), void (*tick)(void *ctx), void *ctx)
{
	struct epoll_event ev[MAX_EVENTS];

	for (;;) {
		int n, i, wait_ms;
		uint64_t now;

		if (tick)
			tick(ctx);
		flush_dirty();
		if (done(ctx))
			return;
		now = now_ns();
		if (now >= deadline)
			fail("timeout after %llu ms (phase %s)",
			     (unsigned long long)timeout_ms, phase);
		wait_ms = (int)((deadline - now) / 1000000u) + 1;
		n = epoll_wait(epfd, ev, MAX_EVENTS, wait_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("epoll_wait: %s", strerror(errno));
		}
		for (i = 0; i < n; i++) {
			if ((uintptr_t)ev[i].data.ptr & 1) {
				uint64_t x;

				if (ev[i].data.ptr != TIMER_TAG) {
					tls_on_event((struct conn *)((uintptr_t)ev[i].data.ptr - 1),
						     ev[i].events);
					continue;
				}
				if (read(tfd, &x, sizeof(x)) < 0 && errno != EAGAIN)
					fail("timerfd: %s", strerror(errno));
				armed_at = 0;
				continue;
			}
			on_event(ev[i].data.ptr, ev[i].events);
		}
	}
}
