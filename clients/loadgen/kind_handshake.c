/*
 * handshake: N times in sequence: connect, upgrade (random key, accept
 * checked), close handshake (our close 1000, the server's close, then the
 * server closes the TCP connection).
 */
#include "conn.h"
#include "kinds.h"
#include "util.h"

#include <stdio.h>

static struct conn C;
static int closing;

static void on_closed(struct conn *c)
{
	if (!closing)
		fail("connection closed before the close handshake (code %d)",
		     c->close_code);
}

static const struct conn_ops ops = { .on_closed = on_closed };

static int is_open(void *x)
{
	(void)x;
	return C.state >= C_OPEN;
}

static int is_done(void *x)
{
	(void)x;
	return C.state == C_DONE;
}

void run_handshake(const struct opts *o)
{
	uint64_t i, t0, t1, errors = 0;
	char extra[128];
	double s;

	start_barrier();
	t0 = t1 = now_ns();
	/* --count handshakes, and more until --min-ms has passed */
	for (i = 0; i < o->count || t1 - t0 < o->min_ms * 1000000u; i++) {
		evloop_phase("handshake %llu", (unsigned long long)i);
		closing = 0;
		conn_start(&C, &o->url, &ops, NULL);
		evloop_run(is_open, NULL, NULL);
		closing = 1;
		conn_close(&C, 1000);
		evloop_run(is_done, NULL, NULL);
		if (C.close_code != 1000)
			errors++;
		conn_free(&C);
		t1 = now_ns();
	}
	s = (double)(t1 - t0) / 1e9;
	snprintf(extra, sizeof(extra), ", \"handshakes_per_s\": %.3f",
		 s > 0 ? (double)i / s : 0.0);
	print_result(i, 0, s, errors, extra);
}
