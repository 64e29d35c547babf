/*
 * request: send a 1-byte text request and time until the whole reply has
 * arrived (validated as UTF-8, its length counted in UTF-16 code units as
 * JavaScript would) or the connection is closed. A text reply that is not
 * valid UTF-8 is treated like a validating client does: we close with 1007
 * and report close_code 1007.
 */
#include "conn.h"
#include "kinds.h"
#include "utf8.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	struct conn c;
	int open, got, closed_tcp;
	struct utf8v v;
	int close_code;		/* server's close, or 1007 from us */
	uint64_t t_end, msgs, bytes, errors;
	int expect_close, has_len;
	uint64_t expect_len;
} Q;

static void on_open(struct conn *c)
{
	(void)c;
	Q.open = 1;
}

static void fail_utf8(struct conn *c)
{
	Q.t_end = now_ns();
	Q.close_code = 1007;
	Q.got = 1;
	conn_close(c, 1007);
}

static void on_data(struct conn *c, const unsigned char *p, size_t n)
{
	if (c->msg_opcode != OP_TEXT)
		return;
	utf8v_feed(&Q.v, p, n);
	if (Q.v.bad)
		fail_utf8(c);
}

static void on_message(struct conn *c, int opcode, uint64_t len)
{
	if (opcode == OP_TEXT && !utf8v_ok(&Q.v)) {
		fail_utf8(c);
		return;
	}
	Q.t_end = now_ns();
	Q.got = 1;
	if (Q.expect_close)
		fail("accepted invalid UTF-8: a %llu-byte %s message was delivered",
		     (unsigned long long)len, opcode == OP_TEXT ? "text" : "binary");
	Q.msgs++;
	Q.bytes += len;
	if (opcode != OP_TEXT || (Q.has_len && Q.v.units != Q.expect_len))
		Q.errors++;
}

static void on_close_frame(struct conn *c, int code)
{
	(void)c;
	if (Q.got)
		return;
	Q.t_end = now_ns();
	Q.close_code = code;
	Q.got = 1;
}

static void on_closed(struct conn *c)
{
	if (!Q.got) {
		Q.t_end = now_ns();
		Q.close_code = c->close_code;
		Q.got = 1;
	}
	Q.closed_tcp = 1;
}

static const struct conn_ops ops = {
	.on_open = on_open,
	.on_data = on_data,
	.on_message = on_message,
	.on_close_frame = on_close_frame,
	.on_closed = on_closed,
};

static int is_open(void *x)
{
	(void)x;
	return Q.open || Q.closed_tcp;
}

static int got_reply(void *x)
{
	(void)x;
	return Q.got;
}

static uint64_t close_deadline;

static int closed(void *x)
{
	(void)x;
	return Q.closed_tcp || now_ns() >= close_deadline;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void run_request(const struct opts *o)
{
	uint64_t n = o->expect_close ? 1 : o->count, i, t0, t_start;
	uint64_t min_ns = o->expect_close ? 0 : o->min_ms * 1000000u, cap = n;
	unsigned char req[FRAME_HEADER_MAX + 1];
	double *ms = xcalloc(cap, sizeof(double)), median;
	size_t req_len;
	char extra[160];

	Q.expect_close = o->expect_close;
	Q.has_len = o->has_expect_length;
	Q.expect_len = o->expect_length;
	req_len = frame_build(req, OP_TEXT, "x", 1);

	evloop_phase("connect");
	conn_start(&Q.c, &o->url, &ops, NULL);
	evloop_run(is_open, NULL, NULL);
	if (!Q.open)
		fail("connection closed during the upgrade");

	start_barrier();
	t_start = now_ns();
	/* --count requests, and more until --min-ms has passed */
	for (i = 0; i < n || (Q.t_end - t_start < min_ns && Q.c.state == C_OPEN); i++) {
		if (i == cap) {
			cap *= 2;
			ms = xrealloc(ms, cap * sizeof(double));
		}
		if (Q.c.state != C_OPEN)
			fail("connection closed after %llu of %llu replies (code %d)",
			     (unsigned long long)i, (unsigned long long)n,
			     Q.close_code);
		evloop_phase("request %llu", (unsigned long long)i);
		memset(&Q.v, 0, sizeof(Q.v));
		Q.got = 0;
		/* a fresh mask for every request */
		req_len = frame_build(req, OP_TEXT, "x", 1);
		if (Q.c.z)	/* permessage-deflate */
			conn_send_deflated(&Q.c, OP_TEXT, "x", 1);
		else
			conn_send_ref(&Q.c, req, req_len);
		t0 = now_ns();
		evloop_run(got_reply, NULL, NULL);
		ms[i] = (double)(Q.t_end - t0) / 1e6;
	}
	if (!o->expect_close && Q.close_code)
		fail("connection closed instead of a reply (code %d)", Q.close_code);
	if (o->expect_close && !Q.close_code)
		fail("no close");
	n = i;
	{
		double s = (double)(Q.t_end - t_start) / 1e9;

		qsort(ms, n, sizeof(double), cmp_double);
		median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
		if (o->expect_close)
			snprintf(extra, sizeof(extra),
				 ", \"delivery_ms\": %.3f, \"close_code\": %d",
				 median, Q.close_code);
		else
			snprintf(extra, sizeof(extra), ", \"delivery_ms\": %.3f",
				 median);
		print_result(Q.msgs, Q.bytes, s, Q.errors, extra);
	}

	evloop_end_barrier();	/* connections open until the harness's end readings */
	conn_close(&Q.c, 1000);
	close_deadline = now_ns() + 500000000u;
	evloop_wake_at(close_deadline);
	evloop_run(closed, NULL, NULL);
	conn_free(&Q.c);
	free(ms);
}
