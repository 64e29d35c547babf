/*
 * echo (C connections, burst/window/pingpong) and latency (one connection,
 * one message in flight, every round trip into the histogram).
 */
#include "conn.h"
#include "histogram.h"
#include "kinds.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

struct echo_conn {
	struct conn c;
	uint64_t target, sent, recv;
	uint64_t t_sent;	/* latency: when the message in flight was queued */
};

static struct {
	struct echo_conn *ec;
	unsigned n, opened, done, closed;
	struct frameset fs;
	int opcode;
	size_t size;
	uint64_t window;	/* 0 = burst (whole phase at once) */
	int measuring, closing;
	uint64_t msgs, bytes, errors, t_last;
	struct histogram *hist;
	const char *phase;
} R;

static void pump(struct echo_conn *e)
{
	uint64_t w = R.window ? R.window : e->target;

	while (e->sent < e->target && e->sent - e->recv < w) {
		conn_send_ref(&e->c, frameset_next(&R.fs), R.fs.frame_len);
		e->sent++;
	}
	if (R.hist)
		e->t_sent = now_ns();
}

static void start_phase(struct echo_conn *e, uint64_t n)
{
	e->target = n;
	e->sent = e->recv = 0;
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

static void on_message(struct conn *c, int opcode, uint64_t len)
{
	struct echo_conn *e = c->user;
	uint64_t now;

	if (opcode != R.opcode || len != R.size)
		R.errors++;
	if (e->recv >= e->target)
		fail("unexpected message in phase %s", R.phase);
	e->recv++;
	if (R.measuring) {
		R.msgs++;
		R.bytes += len;
	}
	if (R.hist && R.measuring) {
		now = now_ns();
		hist_record(R.hist, now - e->t_sent);
	}
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

void run_echo(const struct opts *o, int latency)
{
	unsigned char *payload = make_payload(o);
	struct histogram hist;
	char extra[512] = "";
	uint64_t t0;
	unsigned i;

	R.n = latency ? 1 : o->connections;
	R.opcode = o->binary ? OP_BINARY : OP_TEXT;
	R.size = o->size;
	R.window = latency || o->mode == MODE_PINGPONG ? 1 :
		   o->mode == MODE_WINDOW ? o->window : 0;
	frameset_init(&R.fs, R.opcode, payload, o->size);
	free(payload);
	if (latency) {
		hist_init(&hist);
		R.hist = &hist;
	}
	R.ec = xcalloc(R.n, sizeof(*R.ec));

	R.phase = "connect";
	loop_phase("connect");
	for (i = 0; i < R.n; i++)
		conn_start(&R.ec[i].c, &o->url, &ops, &R.ec[i]);
	loop_run(all_open, NULL, NULL);

	R.phase = "warmup";
	loop_phase("warmup");
	R.done = 0;
	for (i = 0; i < R.n; i++)
		start_phase(&R.ec[i], part(o->warmup, R.n, i));
	loop_run(all_done, NULL, NULL);

	print_start();
	R.phase = "measured";
	loop_phase("measured");
	R.done = 0;
	R.measuring = 1;
	t0 = now_ns();
	R.t_last = t0;
	for (i = 0; i < R.n; i++)
		start_phase(&R.ec[i], part(o->count, R.n, i));
	loop_run(all_done, NULL, NULL);
	R.measuring = 0;

	if (latency)
		hist_format_us(&hist, extra, sizeof(extra));
	print_result(R.msgs, R.bytes, (double)(R.t_last - t0) / 1e9, R.errors,
		     extra);

	/* clean close, bounded, outside the measurement */
	R.closing = 1;
	R.phase = "close";
	for (i = 0; i < R.n; i++)
		conn_close(&R.ec[i].c, 1000);
	close_deadline = now_ns() + 500000000u;
	loop_wake_at(close_deadline);
	loop_run(all_closed, NULL, NULL);
	for (i = 0; i < R.n; i++)
		conn_free(&R.ec[i].c);
	free(R.ec);
	frameset_free(&R.fs);
	if (latency)
		hist_free(&hist);
}
