/*
 * echo (C connections, burst/window/pingpong) and latency (one connection,
 * one message in flight, every round trip into the histogram).
 *
 * echo's measured phase runs rounds of --count messages (split over the
 * connections) until it has lasted --min-ms; latency's is one round of
 * --count. Every echo is checked (msgs.c).
 */
#include "conn.h"
#include "histogram.h"
#include "kinds.h"
#include "msgs.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct echo_conn {
	struct conn c;
	int index;
	struct msgs_conn mc;
	uint64_t target, sent, recv;	/* of the current round */
	uint64_t t_sent;	/* latency: when the message in flight was queued */
};

static struct {
	struct echo_conn *ec;
	unsigned n, opened, done, closed;
	struct msgs msgs;
	uint64_t window;	/* 0 = burst (whole round at once) */
	int measuring, closing;
	struct histogram *hist;
	const char *phase;
	uint64_t t_last;
} R;

static void pump(struct echo_conn *e)
{
	uint64_t w = R.window ? R.window : e->target;

	while (e->sent < e->target && e->sent - e->recv < w) {
		msgs_send(&R.msgs, &e->mc);
		e->sent++;
	}
	if (R.hist)
		e->t_sent = now_ns();
}

static void start_round(struct echo_conn *e, uint64_t n)
{
	e->target = n;
	e->sent = e->recv = 0;
	msgs_round(&R.msgs, &e->mc, n);
	if (!n)
		R.done++;
	else
		pump(e);
}

static void on_open(struct conn *c)
{
	(void)c;
	R.opened++;
}

static void on_data(struct conn *c, const unsigned char *p, size_t n)
{
	struct echo_conn *e = c->user;

	msgs_on_data(&R.msgs, &e->mc, p, n);
}

static void on_message(struct conn *c, int opcode, uint64_t len)
{
	struct echo_conn *e = c->user;

	if (e->recv >= e->target)
		fail("unexpected message in phase %s", R.phase);
	msgs_on_message(&R.msgs, &e->mc, R.n > 1 ? e->index : -1, opcode, len);
	e->recv++;
	if (R.hist && R.measuring)
		hist_record(R.hist, now_ns() - e->t_sent);
	if (e->recv == e->target) {
		R.done++;
		R.t_last = now_ns();
	} else {
		pump(e);
	}
}

static void on_closed(struct conn *c)
{
	if (!R.closing)
		fail("connection closed in phase %s (code %d)", R.phase,
		     c->close_code);
	R.closed++;
}

static const struct conn_ops ops = {
	.on_open = on_open,
	.on_data = on_data,
	.on_message = on_message,
	.on_closed = on_closed,
};

static int all_open(void *x)
{
	(void)x;
	return R.opened == R.n;
}

static int all_done(void *x)
{
	(void)x;
	return R.done == R.n;
}

static uint64_t close_deadline;

static int all_closed(void *x)
{
	(void)x;
	return R.closed == R.n || now_ns() >= close_deadline;
}

/* Share `total` evenly: connection i's part. */
static uint64_t part(uint64_t total, unsigned n, unsigned i)
{
	return total / n + (i < total % n ? 1 : 0);
}

/* One round on every connection: `total` messages split between them. */
static void round_all(uint64_t total)
{
	unsigned i;

	R.done = 0;
	for (i = 0; i < R.n; i++)
		start_round(&R.ec[i], part(total, R.n, i));
	evloop_run(all_done, NULL, NULL);
}

void run_echo(const struct opts *o, int latency)
{
	struct histogram hist;
	char extra[768] = "", *full;
	uint64_t t0, rounds = 0, inflight, compared = 0, msgs;
	unsigned i;
	size_t len;

	R.n = latency ? 1 : o->connections;
	R.window = latency || o->mode == MODE_PINGPONG ? 1 :
		   o->mode == MODE_WINDOW ? o->window : 0;
	msgs_init(&R.msgs, o->binary, o->mixed, o->size, o->verify, o->corpus);
	if (latency) {
		hist_init(&hist);
		R.hist = &hist;
	}
	R.ec = xcalloc(R.n, sizeof(*R.ec));
	for (i = 0; i < R.n; i++) {
		inflight = part(o->count > o->warmup ? o->count : o->warmup, R.n, i);
		if (R.window && R.window < inflight)
			inflight = R.window;
		R.ec[i].index = (int)i;
		msgs_conn_init(&R.msgs, &R.ec[i].mc, &R.ec[i].c, inflight);
	}

	R.phase = "connect";
	evloop_phase("connect");
	for (i = 0; i < R.n; i++)
		conn_start(&R.ec[i].c, &o->url, &ops, &R.ec[i]);
	evloop_run(all_open, NULL, NULL);

	R.phase = "warmup";
	evloop_phase("warmup");
	round_all(o->warmup);

	start_barrier();
	R.phase = "measured";
	R.measuring = 1;
	for (i = 0; i < R.n; i++)
		msgs_phase(&R.msgs, &R.ec[i].mc, 1);
	t0 = now_ns();
	R.t_last = t0;
	do {
		evloop_phase("measured, round %" PRIu64, rounds + 1);
		round_all(o->count);
		rounds++;
	} while (!latency && R.t_last - t0 < o->min_ms * 1000000u);
	R.measuring = 0;

	msgs = rounds * o->count;
	for (i = 0; i < R.n; i++)
		compared += R.ec[i].mc.compared;
	if (latency)
		hist_format_us(&hist, false, extra, sizeof(extra));
	len = strlen(extra);
	snprintf(extra + len, sizeof(extra) - len,
		 ", \"rounds\": %" PRIu64 ", \"checked\": %" PRIu64 ", \"compared\": %" PRIu64,
		 rounds, o->verify ? msgs : 0, compared);
	full = latency ? hist_append_buckets(&hist, extra) : NULL;
	print_result(msgs, msgs * o->size, (double)(R.t_last - t0) / 1e9, 0, full ? full : extra);
	free(full);

	evloop_end_barrier();	/* connections open until the harness's end readings */
	/* clean close, bounded, outside the measurement */
	R.closing = 1;
	R.phase = "close";
	for (i = 0; i < R.n; i++)
		conn_close(&R.ec[i].c, 1000);
	close_deadline = now_ns() + 500000000u;
	evloop_wake_at(close_deadline);
	evloop_run(all_closed, NULL, NULL);
	for (i = 0; i < R.n; i++) {
		conn_free(&R.ec[i].c);
		msgs_conn_free(&R.ec[i].mc);
	}
	free(R.ec);
	msgs_free(&R.msgs);
	if (latency)
		hist_free(&hist);
}
