/*
 * openloop: message i is due at t0 + i/R and is sent when due (all overdue
 * ones at once if we fell behind); each round trip is timed from its due
 * time, so stalls are not hidden (no coordinated omission). Echoes arrive in
 * order, so echo k answers message k; every echo is checked (msgs.c).
 */
#include "conn.h"
#include "histogram.h"
#include "kinds.h"
#include "msgs.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	struct conn c;
	struct msgs msgs;
	struct msgs_conn mc;
	int open, closing, closed, measuring;
	double interval_ns;
	uint64_t t0, total, sent, recv, t_last;
	uint64_t warm_target, warm_sent, warm_recv;
	struct histogram hist;
} L;

static uint64_t due(uint64_t i)
{
	return L.t0 + (uint64_t)llround((double)i * L.interval_ns);
}

static void on_open(struct conn *c)
{
	(void)c;
	L.open = 1;
}

static void on_data(struct conn *c, const unsigned char *p, size_t n)
{
	(void)c;
	msgs_on_data(&L.msgs, &L.mc, p, n);
}

static void on_message(struct conn *c, int opcode, uint64_t len)
{
	uint64_t now = now_ns();

	(void)c;
	if (L.measuring && L.recv >= L.sent)
		fail("unexpected message in phase measured");
	msgs_on_message(&L.msgs, &L.mc, -1, opcode, len);
	if (!L.measuring) {	/* warm-up: ping-pong */
		if (++L.warm_recv < L.warm_target) {
			msgs_send(&L.msgs, &L.mc);
			L.warm_sent++;
		}
		return;
	}
	hist_record(&L.hist, now - due(L.recv));
	L.recv++;
	L.t_last = now;
}

static void on_closed(struct conn *c)
{
	if (!L.closing)
		fail("connection closed (code %d)", c->close_code);
	L.closed = 1;
}

static const struct conn_ops ops = {
	.on_open = on_open,
	.on_data = on_data,
	.on_message = on_message,
	.on_closed = on_closed,
};

/* Send everything that is due, then sleep until the next due time. */
static void tick(void *x)
{
	uint64_t now = now_ns();

	(void)x;
	while (L.sent < L.total && due(L.sent) <= now) {
		msgs_send(&L.msgs, &L.mc);
		L.sent++;
	}
	evloop_wake_at(L.sent < L.total ? due(L.sent) : 0);
}

static int is_open(void *x)
{
	(void)x;
	return L.open;
}

static int warm_done(void *x)
{
	(void)x;
	return L.warm_recv >= L.warm_target;
}

static int all_back(void *x)
{
	(void)x;
	return L.sent == L.total && L.recv == L.total;
}

static uint64_t close_deadline;

static int closed(void *x)
{
	(void)x;
	return L.closed || now_ns() >= close_deadline;
}

void run_openloop(const struct opts *o)
{
	char extra[1024];
	size_t n;

	L.interval_ns = 1e9 / o->rate;
	L.total = (uint64_t)ceil((double)o->duration_ms * o->rate / 1000.0 - 1e-9);
	msgs_init(&L.msgs, o->binary, o->mixed, o->size, o->verify, o->corpus);
	/* open loop: anything may be in flight */
	msgs_conn_init(&L.msgs, &L.mc, &L.c, L.total > o->warmup ? L.total : o->warmup);
	hist_init(&L.hist);

	evloop_phase("connect");
	conn_start(&L.c, &o->url, &ops, NULL);
	evloop_run(is_open, NULL, NULL);

	evloop_phase("warmup");
	L.warm_target = o->warmup;
	msgs_round(&L.msgs, &L.mc, o->warmup);
	if (L.warm_target) {
		msgs_send(&L.msgs, &L.mc);
		L.warm_sent = 1;
		evloop_run(warm_done, NULL, NULL);
	}

	start_barrier();
	evloop_phase("measured");
	L.measuring = 1;
	msgs_phase(&L.msgs, &L.mc, 1);
	msgs_round(&L.msgs, &L.mc, L.total);
	L.t0 = L.t_last = now_ns();
	evloop_run(all_back, tick, NULL);
	evloop_wake_at(0);

	{
		double seconds = (double)(L.t_last - L.t0) / 1e9;

		hist_format_us(&L.hist, false, extra, sizeof(extra));
		n = strlen(extra);
		snprintf(extra + n, sizeof(extra) - n,
			 ", \"rate\": %.3f, \"sent\": %llu, \"achieved_rate\": %.3f"
			 ", \"checked\": %" PRIu64 ", \"compared\": %" PRIu64,
			 o->rate, (unsigned long long)L.sent,
			 seconds > 0 ? (double)L.recv / seconds : 0.0,
			 o->verify ? L.recv : 0, L.mc.compared);
		char *full = hist_append_buckets(&L.hist, extra);

		print_result(L.recv, L.recv * o->size, seconds, 0, full);
		free(full);
	}

	evloop_end_barrier();	/* connections open until the harness's end readings */
	L.closing = 1;
	conn_close(&L.c, 1000);
	close_deadline = now_ns() + 500000000u;
	evloop_wake_at(close_deadline);
	evloop_run(closed, NULL, NULL);
	conn_free(&L.c);
	msgs_conn_free(&L.mc);
	msgs_free(&L.msgs);
	hist_free(&L.hist);
}
