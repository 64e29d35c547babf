/*
 * idle: open --connections (or "max": until a limit) with at most
 * --concurrency handshakes in flight, timed; then, after the start barrier,
 * hold them --hold-ms with a ping on every connection every --ping-ms (spread
 * evenly over the interval), wait for the outstanding pongs, print
 * "WSBENCH-MARK held" (the harness reads CPU and memory there, every
 * connection open), and send one text message on each: the connections whose
 * echo comes back are `alive`. A limit met while opening is reported in
 * `limit`; the rest of the run goes on with the connections that opened.
 *
 * --warm: once all are open, before the start barrier, each connection sends
 * one message and waits for its echo, so that the mark reads connections after
 * traffic (with permessage-deflate most stacks create their zlib streams at the
 * first message): ring slot 0 of --text json of WARM_LEN bytes (msgs.c, the
 * JavaScript workload's message 0 too), compressed by the connection's own
 * stream where deflate was agreed; every echo is compared whole. `warmed`
 * counts them.
 */
#include "cap.h"
#include "conn.h"
#include "kinds.h"
#include "msgs.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PONG_WAIT_NS 2000000000u	/* after the hold, for the last pongs */
#define ALIVE_WAIT_NS 10000000000u	/* for the echoes of the alive check */
#define MIN_WAKE_NS 1000000u	/* pings due within 1 ms go out together */

static const char ALIVE[] = "wsbench-alive";
#define ALIVE_LEN (sizeof(ALIVE) - 1)
#define WARM_LEN 1024	/* bytes of the --warm message (clients/workload/idle.js, WARM_SIZE) */

static struct {
	struct cap_conn **live;
	unsigned n, lost;
	int alive_phase;
	uint64_t t0, hold_ns, ping_ns, cursor, pings, alive, deadline;
	uint64_t warmed, warm_waiting;	/* --warm: echoes in, and echoes still due */
	unsigned char warm[WARM_LEN];	/* the message's payload */
	unsigned char ping[FRAME_HEADER_MAX + 7];	/* one masked ping, sent by reference */
	size_t ping_len;
	char lost_first[256];
	char unexpected[256];
} I;

/* A chunk of a message: while the warm echo is due, compared with what was sent. */
static void on_data(struct cap_conn *cc, const unsigned char *p, size_t len)
{
	uint64_t off = cc->c.msg_len - len;	/* conn.c counts the chunk before handing it over */
	size_t i;
	char n[32];

	if (cc->warm != 1 || *I.unexpected)
		return;
	for (i = 0; i < len && off + i < WARM_LEN; i++)
		if (p[i] != I.warm[off + i]) {
			snprintf(I.unexpected, sizeof(I.unexpected),
				 "echo of message 1 on connection %s (warm) differs at byte %llu: "
				 "got 0x%02x, sent 0x%02x", thousands(cc->number, n),
				 (unsigned long long)(off + i), p[i], I.warm[off + i]);
			return;
		}
}

static void on_message(struct cap_conn *cc, int opcode, uint64_t len)
{
	char n[32];

	if (cc->warm == 1) {
		if (opcode != OP_TEXT && !*I.unexpected)
			snprintf(I.unexpected, sizeof(I.unexpected),
				 "echo of message 1 on connection %s (warm) came back as binary of %llu bytes, "
				 "sent as text", thousands(cc->number, n), (unsigned long long)len);
		else if (len != WARM_LEN && !*I.unexpected)
			snprintf(I.unexpected, sizeof(I.unexpected),
				 "echo of message 1 on connection %s (warm) is %llu bytes long, sent %u",
				 thousands(cc->number, n), (unsigned long long)len, WARM_LEN);
		cc->warm = 2;
		I.warmed++;
		I.warm_waiting--;
		return;
	}
	if (!I.alive_phase || cc->alive || opcode != OP_TEXT || len != ALIVE_LEN ||
	    memcmp(cc->c.msg_head, ALIVE, 8)) {
		if (!*I.unexpected)
			snprintf(I.unexpected, sizeof(I.unexpected),
				 "connection %s received an unexpected %s message of %llu bytes",
				 thousands(cc->number, n), opcode == OP_TEXT ? "text" : "binary",
				 (unsigned long long)len);
		return;
	}
	cc->alive = 1;
	I.alive++;
}

static void on_gone(struct cap_conn *cc, const char *why)
{
	char n[32];

	I.lost++;
	if (cc->warm == 1) {
		cc->warm = 0;
		I.warm_waiting--;
	}
	if (!*I.lost_first)
		snprintf(I.lost_first, sizeof(I.lost_first), "connection %s: %s",
			 thousands(cc->number, n), why);
}

static const struct cap_hooks hooks = { .on_data = on_data, .on_message = on_message, .on_gone = on_gone };

/* Every ping due by now (ping i goes to connection i mod n at t0 + i*P/n). */
static void ping_tick(void *x)
{
	uint64_t now = now_ns(), due, next;

	(void)x;
	if (!I.ping_ns || !I.n || now - I.t0 >= I.hold_ns) {
		evloop_wake_at(I.t0 + I.hold_ns);
		return;
	}
	due = (uint64_t)(((unsigned __int128)(now - I.t0) * I.n) / I.ping_ns) + 1;
	for (; I.cursor < due; I.cursor++) {
		struct cap_conn *cc = I.live[I.cursor % I.n];

		if (cc->gone)
			continue;
		conn_send_ref(&cc->c, I.ping, I.ping_len);
		I.pings++;
	}
	next = I.t0 + (uint64_t)(((unsigned __int128)I.cursor * I.ping_ns + I.n - 1) / I.n);
	if (next < now + MIN_WAKE_NS)
		next = now + MIN_WAKE_NS;
	if (next > I.t0 + I.hold_ns)
		next = I.t0 + I.hold_ns;
	evloop_wake_at(next);
}

static int hold_over(void *x)
{
	(void)x;
	return now_ns() - I.t0 >= I.hold_ns;
}

static int pongs_in(void *x)
{
	(void)x;
	return cap_pongs() >= I.pings || now_ns() >= I.deadline;
}

static int warm_in(void *x)
{
	(void)x;
	return !I.warm_waiting || *I.unexpected;
}

/* --warm: the message on every open connection, then every echo (or its connection gone). */
static void warm_up(void)
{
	unsigned i;

	msgs_json_payload(0, WARM_LEN, I.warm);
	evloop_phase("warm: one message and its echo on each of %u connections", I.n);
	for (i = 0; i < I.n; i++) {
		struct cap_conn *cc = I.live[i];

		if (cc->gone)
			continue;
		cc->warm = 1;
		I.warm_waiting++;
		/* masked here; with permessage-deflate compressed by the connection's own stream */
		conn_send_frame(&cc->c, OP_TEXT, I.warm, WARM_LEN);
	}
	evloop_run(warm_in, NULL, NULL);
	if (*I.unexpected)
		fail("%s", I.unexpected);
}

static int echoes_in(void *x)
{
	(void)x;
	return I.alive + I.lost >= I.n || now_ns() >= I.deadline;
}

void run_idle(const struct opts *o)
{
	struct cap_result res;
	unsigned char frame[FRAME_HEADER_MAX + ALIVE_LEN];
	char extra[1536], n[32];
	double hold_s;
	size_t len, flen;
	unsigned i;

	memset(&I, 0, sizeof(I));
	I.hold_ns = o->hold_ms * 1000000u;
	I.ping_ns = o->ping_ms * 1000000u;
	I.ping_len = frame_build(I.ping, OP_PING, "wsbench", 7);
	I.live = cap_open(o, o->connections, &hooks, &res, &I.n);
	if (!I.n)
		fail("no connection opened: %s", *res.limit ? res.limit : "?");
	if (o->warm)
		warm_up();

	start_barrier();
	evloop_phase("hold, %s connections", thousands(I.n, n));
	I.t0 = now_ns();
	evloop_run(hold_over, ping_tick, NULL);
	evloop_phase("hold, waiting for the last pongs");
	I.deadline = now_ns() + PONG_WAIT_NS;
	evloop_wake_at(I.deadline);
	evloop_run(pongs_in, NULL, NULL);
	evloop_wake_at(0);
	hold_s = (double)(now_ns() - I.t0) / 1e9;

	mark("held");

	evloop_phase("alive check");
	I.alive_phase = 1;
	flen = frame_build(frame, OP_TEXT, ALIVE, ALIVE_LEN);
	for (i = 0; i < I.n; i++) {
		if (I.live[i]->gone)
			continue;
		if (I.live[i]->c.z)	/* permessage-deflate: compressed by its own stream */
			conn_send_deflated(&I.live[i]->c, OP_TEXT, ALIVE, ALIVE_LEN);
		else
			conn_send_ref(&I.live[i]->c, frame, flen);
	}
	I.deadline = now_ns() + ALIVE_WAIT_NS;
	evloop_wake_at(I.deadline);
	evloop_run(echoes_in, NULL, NULL);
	evloop_wake_at(0);
	if (*I.unexpected)
		fail("%s", I.unexpected);

	snprintf(extra, sizeof(extra),
		 ", \"connections\": %u, \"open_s\": %.6f, \"opens_per_s\": %.3f, \"hold_s\": %.6f"
		 ", \"pings\": %llu, \"pongs\": %llu, \"alive\": %llu, \"lost\": %u"
		 ", \"concurrency\": %u, \"sources\": %u",
		 I.n, res.seconds, res.seconds > 0 ? (double)I.n / res.seconds : 0.0, hold_s,
		 (unsigned long long)I.pings, (unsigned long long)cap_pongs(),
		 (unsigned long long)I.alive, I.lost, o->concurrency, o->sources);
	if (o->warm) {
		len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, ", \"warmed\": %llu", (unsigned long long)I.warmed);
	}
	if (*res.limit) {
		len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, ", \"limit\": ");
		len = strlen(extra);
		json_string(extra + len, sizeof(extra) - len, res.limit);
	}
	if (*I.lost_first) {
		len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, ", \"lost_first\": ");
		len = strlen(extra);
		json_string(extra + len, sizeof(extra) - len, I.lost_first);
	}
	print_result(I.alive, I.alive * ALIVE_LEN, hold_s, 0, extra);
	evloop_end_barrier();	/* connections open until the harness's end readings */
	cap_close_all();
}
