/*
 * The echo protocol: reassemble each incoming message, queue it, and send it
 * back (optionally split into N frames) from the WRITEABLE callback. On
 * /broadcast the reassembled message goes to every subscriber instead
 * (broadcast.c).
 */
#include "broadcast.h"
#include "echo.h"
#include "msgq.h"
#include "pmd.h"
#include "prepared.h"
#include "reqopts.h"
#include "strict.h"
#include "tls.h"

#include <libwebsockets.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/*
 * Largest message we accept (contract: at least 64 MiB). lws-echo-deflate
 * holds to the contract's 64 MiB itself: what lws inflates has no bound of
 * its own (README.md, "lws-echo-deflate").
 */
#ifdef WSBENCH_PMD
#define MAX_MESSAGE ((size_t)64 << 20)
#else
#define MAX_MESSAGE ((size_t)256 << 20)
#endif

/*
 * Receive flow control: stop reading from a client whose echoes pile up, and
 * resume once the queue has drained well below that point. The byte limit
 * still lets one maximum-size message through.
 */
#define PAUSE_MSGS 4096
#define PAUSE_BYTES ((size_t)64 << 20)
#define RESUME_MSGS 1024
#define RESUME_BYTES ((size_t)16 << 20)

/*
 * Coalescing: when several small messages are queued (and no ?fragments),
 * one WRITEABLE callback sends them all in a single lws_write() of
 * pre-framed bytes, instead of one send() + one poll() per message.
 */
#define COALESCE_MSG_MAX (16 * 1024)	/* only messages up to this size */
#define COALESCE_BYTES (64 * 1024)	/* payload+headers per batch */

int echo_coalesce = 1;

struct conn {
	struct msg rx;		/* message being reassembled */
	struct msgq txq;	/* complete messages waiting to be echoed */
	unsigned frags;		/* frames per echo, 1..MAX_FRAGMENTS */
	unsigned next_frag;	/* next frame of the queue head to send */
	int rx_paused;		/* we switched rx flow control off */
	int stalled;		/* ?stall=: reading nothing until the timer */
	struct msg batch;	/* reused buffer for coalesced frames */
	struct prepared *serve;	/* ?serve=: reply with this, not an echo */
	size_t serve_pending;	/* prepared replies still to send */
	int bcast;		/* a /broadcast connection: */
	struct bcast_sub sub;	/* its place among the subscribers */
	struct strict strict;	/* the checks lws leaves to us (strict.c) */
#ifdef WSBENCH_PMD
	struct pmd_conn pmd;	/* what lws answered to the offer */
	int sent_front;		/* the queue head is sent: pop it when lws is done */
#endif
};

/*
 * The request-path options (reqopts.c): the query's arguments as lws split
 * and decoded them, then ?serve='s prepared message; -1 to reject.
 */
static int on_established(struct lws *wsi, struct conn *c)
{
	char frag[REQOPTS_MAX_ARGS + 1][256];
	const char *args[REQOPTS_MAX_ARGS + 1], *why;
	struct reqopts o;
	int n = 0;

	memset(c, 0, sizeof(*c));
	if (bcast_is_path(wsi)) {	/* the query, if any, is not ours */
		c->bcast = 1;
		bcast_join(&c->sub, wsi);
		return 0;
	}
	while (n <= REQOPTS_MAX_ARGS &&
	       lws_hdr_copy_fragment(wsi, frag[n], sizeof(frag[n]),
				     WSI_TOKEN_HTTP_URI_ARGS, n) >= 0) {
		args[n] = frag[n];
		n++;
	}
	why = reqopts_parse(args, n, PREPARED_MAX, &o);
	if (why) {
		fprintf(stderr, "lws-echo: rejecting connection: %s\n", why);
		return -1;
	}
	c->frags = o.frags;
	if (o.stall_ms) {	/* ?stall=MS: read nothing until LWS_CALLBACK_TIMER */
		c->stalled = 1;
		lws_rx_flow_control(wsi, 0);
		lws_set_timer_usecs(wsi, (lws_usec_t)o.stall_ms * LWS_US_PER_MS);
		fprintf(stderr, "lws-echo: stalling: reading nothing for %u ms\n", o.stall_ms);
	}
	if (o.serve) {
		c->serve = prepared_get(o.serve_name, o.serve_bytes);
		if (!c->serve) {
			fprintf(stderr, "lws-echo: rejecting connection: bad serve=/bytes=\n");
			return -1;
		}
	}
	return 0;
}

/* ?serve=: every complete incoming message asks for one prepared reply. */
static int on_receive_serve(struct lws *wsi, struct conn *c, int final)
{
	if (!final)
		return 0;
	if (!c->serve_pending++)
		lws_callback_on_writable(wsi);
	return 0;
}

/*
 * One prepared reply per WRITEABLE callback; lws keeps whatever the kernel
 * did not take and flushes it before calling us again.
 */
static int on_writeable_serve(struct lws *wsi, struct conn *c)
{
	size_t len = prepared_len(c->serve);

	if (!c->serve_pending)
		return 0;
	if (lws_write(wsi, prepared_payload(c->serve), len, LWS_WRITE_TEXT) <
	    (int)len)
		return -1;
	if (--c->serve_pending)
		lws_callback_on_writable(wsi);
	return 0;
}

/* Pause rx when the queue is too long; resume once it has drained. */
static void update_rx_flow(struct lws *wsi, struct conn *c)
{
	if (!c->rx_paused &&
	    (c->txq.count >= PAUSE_MSGS || c->txq.bytes >= PAUSE_BYTES)) {
		c->rx_paused = 1;
		lws_rx_flow_control(wsi, 0);
	} else if (c->rx_paused &&
		   c->txq.count <= RESUME_MSGS && c->txq.bytes <= RESUME_BYTES) {
		c->rx_paused = 0;
		if (!c->stalled)
			lws_rx_flow_control(wsi, 1);
	}
}

/* ?stall=: the stall is over; read again unless the queue holds us back */
static int on_stall_over(struct lws *wsi, struct conn *c)
{
	if (!c->stalled)
		return 0;
	c->stalled = 0;
	if (!c->rx_paused)
		lws_rx_flow_control(wsi, 1);
	return 0;
}

/*
 * lws hands us a message in pieces: one call per frame, or per rx-buffer-full
 * chunk of a frame. lws_is_first_fragment() marks the start of a message (the
 * opcode frame, not a continuation) and lws_is_final_fragment() is true only
 * for the last chunk of the FIN frame, i.e. the end of the message. 0-byte
 * frames are delivered too, with len == 0. Every chunk is checked first
 * (strict.h: reserved bits, UTF-8 of text), on every path.
 */
static int on_receive(struct lws *wsi, struct conn *c, const void *in,
		      size_t len)
{
	int first = lws_is_first_fragment(wsi);
	int final = lws_is_final_fragment(wsi);
	size_t whole_frame;

	if (first)
		c->rx.binary = lws_frame_is_binary(wsi);
	if (strict_data(wsi, &c->strict, !c->rx.binary, first, final, in, len))
		return -1;
	if (c->serve)
		return on_receive_serve(wsi, c, final);
	if (first)
		c->rx.len = 0;
	/* what we hold once the rest of the current frame has arrived */
	whole_frame = c->rx.len + len + lws_remaining_packet_payload(wsi);
#ifdef WSBENCH_PMD
	/* inflated: what is left of the frame tells nothing of its size */
	if (strict_compressed(&c->strict))
		whole_frame = c->rx.len + len;
	if (whole_frame > MAX_MESSAGE)
		return pmd_too_big(wsi);
#else
	if (whole_frame > MAX_MESSAGE) {
		lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, NULL, 0);
		return -1;
	}
#endif
	/* size for the whole frame up front so big frames grow only once */
	if (msg_reserve(&c->rx, whole_frame))
		return -1;
	if (msg_append(&c->rx, in, len))
		return -1;
	if (!final)
		return 0;
	if (c->bcast) {
		if (bcast_publish(&c->sub, &c->rx))
			return -1;
		if (c->rx.cap > ((size_t)1 << 20))	/* keep no huge buffer */
			msg_free(&c->rx);
		return 0;
	}

	if (msgq_push_swap(&c->txq, &c->rx))
		return -1;
	/*
	 * Invariant: while the queue is non-empty a WRITEABLE callback is
	 * pending. So we only need to ask when the queue was empty.
	 */
	if (c->txq.count == 1)
		lws_callback_on_writable(wsi);
	update_rx_flow(wsi, c);
	return 0;
}

/* Byte range of frame `i` of `n` when `len` bytes are split evenly. */
static void frame_span(size_t len, unsigned n, unsigned i, size_t *off,
		       size_t *size)
{
	size_t base = len / n, extra = len % n;

	*off = i * base + (i < extra ? i : extra);
	*size = base + (i < extra ? 1 : 0);
}

static int batch_fits(const struct msg *batch, const struct msg *m)
{
	return m->len <= COALESCE_MSG_MAX &&
	       batch->len + WS_HEADER_MAX + m->len <= COALESCE_BYTES;
}

/*
 * Frame as many small queued messages as fit into one buffer and send it
 * with a single LWS_WRITE_RAW lws_write() (raw bytes, no framing by lws).
 * Only whole, unfragmented messages go in, so control frames lws sends
 * between our writes (pong, close) stay legal.
 */
static int send_batch(struct lws *wsi, struct conn *c)
{
	struct msg *b = &c->batch, *m;

	if (msg_reserve(b, COALESCE_BYTES))
		return -1;
	b->len = 0;
	while ((m = msgq_front(&c->txq)) && batch_fits(b, m)) {
		b->len += msg_frame_header(msg_payload(b) + b->len, m->binary,
					   m->len);
		memcpy(msg_payload(b) + b->len, msg_payload(m), m->len);
		b->len += m->len;
		msgq_pop(&c->txq);
	}
	if (lws_write(wsi, msg_payload(b), b->len, LWS_WRITE_RAW) < (int)b->len)
		return -1;
	return 0;
}

/*
 * Send the next frame of the oldest queued message. lws allows one lws_write()
 * per WRITEABLE callback: if the kernel takes only part of it, lws keeps the
 * rest and flushes it before our next WRITEABLE callback.
 */
static int send_frame(struct lws *wsi, struct conn *c)
{
	struct msg *m = msgq_front(&c->txq);
	size_t off, size;
	int first, last, flags;

	frame_span(m->len, c->frags, c->next_frag, &off, &size);
	first = c->next_frag == 0;
	last = c->next_frag + 1 == c->frags;
	flags = lws_write_ws_flags(m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT,
				   first, last);
	/*
	 * lws puts the frame header in the LWS_PRE bytes before the pointer.
	 * For frames after the first those bytes are payload we already handed
	 * to lws_write() (which copies anything the kernel did not take), so
	 * overwriting them is fine.
	 */
	if (lws_write(wsi, msg_payload(m) + off, size, (enum lws_write_protocol)flags) <
	    (int)size)
		return -1;

	if (last) {
		c->next_frag = 0;
#ifdef WSBENCH_PMD
		/*
		 * lws' permessage-deflate may take the message in several
		 * goes (a frame of its 1 KiB output per POLLOUT, zlib still
		 * reading our buffer) before it calls us again: the buffer is
		 * kept until then (on_writeable).
		 */
		c->sent_front = 1;
#else
		msgq_pop(&c->txq);
#endif
	} else {
		c->next_frag++;
	}
	return 0;
}

#ifdef WSBENCH_PMD
/*
 * An empty message, framed by us and sent uncompressed (RSV1 clear, which RFC
 * 7692 allows for any message). lws 4.3.5 would compress it to an empty
 * payload once its compressor has flushed a message before (zlib makes no
 * second empty block in a row; RFC 7692 7.2.3.6 wants the one byte 0x00), and
 * a client that inflates with context takeover is then out of step for every
 * message after it (README.md, "lws-echo-deflate"). All of its frames go in
 * one write, as the coalesced echoes do.
 */
static int send_empty(struct lws *wsi, struct conn *c, const struct msg *m)
{
	unsigned char buf[LWS_PRE + 2 * MAX_FRAGMENTS], *p = buf + LWS_PRE;
	unsigned i;

	for (i = 0; i < c->frags; i++) {
		p[2 * i] = (unsigned char)((i + 1 == c->frags ? 0x80 : 0) |
					   (i ? 0x0 : m->binary ? 0x2 : 0x1));
		p[2 * i + 1] = 0;
	}
	if (lws_write(wsi, p, 2 * c->frags, LWS_WRITE_RAW) < (int)(2 * c->frags))
		return -1;
	msgq_pop(&c->txq);
	return 0;
}
#endif

static int should_coalesce(struct conn *c)
{
	struct msg *m = msgq_front(&c->txq);

	return echo_coalesce && c->frags == 1 && c->txq.count > 1 &&
	       m->len <= COALESCE_MSG_MAX;
}

static int on_writeable(struct lws *wsi, struct conn *c)
{
	int ret;

	/*
	 * A close of ours is set (lws_close_reason(): a check of ours or of
	 * lws failed): sent or about to be. lws still calls us while it waits
	 * for the client's answer, but no data may follow our close (RFC 6455
	 * 5.5.1), so what is queued is never sent.
	 */
	if (lws_get_close_length(wsi))
		return 0;
	if (c->serve)
		return on_writeable_serve(wsi, c);
	if (c->bcast)
		return bcast_writeable(&c->sub);
#ifdef WSBENCH_PMD
	/* lws calls us again only once its extension has sent all of it */
	if (c->sent_front) {
		c->sent_front = 0;
		msgq_pop(&c->txq);
		update_rx_flow(wsi, c);
	}
#endif
	if (!c->txq.count)	/* lws may call us unasked, e.g. after a flush */
		return 0;
#ifdef WSBENCH_PMD
	if (!msgq_front(&c->txq)->len && !c->next_frag)
		ret = send_empty(wsi, c, msgq_front(&c->txq));
	else
#endif
	ret = should_coalesce(c) ? send_batch(wsi, c) : send_frame(wsi, c);
	if (ret)
		return ret;
	update_rx_flow(wsi, c);
	if (c->txq.count)
		lws_callback_on_writable(wsi);
	return 0;
}

static void on_closed(struct conn *c)
{
	if (c->bcast)
		bcast_leave(&c->sub);
	msg_free(&c->rx);
	msgq_free(&c->txq);
	msg_free(&c->batch);
	prepared_put(c->serve);
	c->serve = NULL;
}

/*
 * At the descriptor limit: a connection whose descriptor is among the last
 * FD_RESERVE the process may have is closed at once (the client sees its
 * handshake end), so that accept() itself never fails with EMFILE (lws would
 * retry it in a busy loop) and lws keeps the descriptors it needs.
 */
#define FD_RESERVE 16

static int over_fd_limit(intptr_t fd)
{
	static int told;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    (rlim_t)fd + FD_RESERVE < rl.rlim_cur) {
		told = 0;
		return 0;
	}
	if (!told++)
		fprintf(stderr, "lws-echo: closing new connections: descriptor %ld is within %d "
			"of RLIMIT_NOFILE %llu\n", (long)fd, FD_RESERVE,
			(unsigned long long)rl.rlim_cur);
	return 1;
}

static int echo_callback(struct lws *wsi, enum lws_callback_reasons reason,
			 void *user, void *in, size_t len)
{
	struct conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
		return over_fd_limit((intptr_t)in);
	case LWS_CALLBACK_ESTABLISHED:
		tls_report(wsi);
#ifdef WSBENCH_PMD
		pmd_report(wsi, &c->pmd);
#endif
		return on_established(wsi, c);
	case LWS_CALLBACK_RECEIVE:
		return on_receive(wsi, c, in, len);
	case LWS_CALLBACK_RECEIVE_PONG:
		return strict_pong(wsi);
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return on_writeable(wsi, c);
	case LWS_CALLBACK_CLOSED:
		on_closed(c);
		return 0;
	default:
		/*
		 * The client's close (strict.c); plain HTTP requests and other
		 * housekeeping. Tested here, not as a case of its own: a case
		 * so far beyond the others makes the switch dearer for every
		 * call, several per echoed message.
		 */
		if (reason == LWS_CALLBACK_WS_PEER_INITIATED_CLOSE)
			return strict_close(wsi, in, len);
		if (reason == LWS_CALLBACK_TIMER)	/* ?stall= (73: far out too) */
			return on_stall_over(wsi, c);
#ifdef WSBENCH_PMD
		if (reason == LWS_CALLBACK_ADD_HEADERS && pmd_on && c) {
			pmd_read_answer(&c->pmd, in);
			return 0;
		}
#endif
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/*
 * The first protocol is also the default one: clients that name no
 * subprotocol get it. rx_buffer_size caps how much lws reads from the socket
 * per poll, so it is large to absorb bursts of small messages in few reads.
 */
const struct lws_protocols echo_protocols[] = {
	{
		.name = "wsbench-echo",
		.callback = echo_callback,
		.per_session_data_size = sizeof(struct conn),
		.rx_buffer_size = ECHO_RX_BUFFER,
	},
	LWS_PROTOCOL_LIST_TERM
};
