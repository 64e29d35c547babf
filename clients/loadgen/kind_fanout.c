/*
 * fanout: --connections N subscribers on /broadcast (servers/README.md), the
 * first of them also the publisher. After the start barrier the publisher
 * sends --count binary messages of --size bytes at --rate per second, open
 * loop (message i is due at t0 + i/R and goes out then, or as soon as the loop
 * can), each carrying its number (bytes 0-7) and its due time (bytes 8-15,
 * CLOCK_MONOTONIC ns, little-endian). Every subscriber, the publisher
 * included, must receive every message once and in order; a delivery's latency
 * is its arrival minus the due time it carries (no coordinated omission). The
 * clock is the machine's, so subscribers in another process (--publish off)
 * time the same messages alike.
 *
 * A message that never reached a subscriber, or one that came twice or out of
 * order, fails the run naming the first such message and subscriber (both
 * counted from 1; subscribers in the order their connections were started).
 */
#include "cap.h"
#include "conn.h"
#include "histogram.h"
#include "kinds.h"
#include "stamp.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAN_HEAD STAMP_BYTES	/* number + due time (stamp.h) */

static struct {
	struct cap_conn **live;
	unsigned n, complete, broken;	/* subscribers with every message / lost early */
	int publish, known_t0;
	uint64_t count, size, sent, delivered, lost, disorder;
	double interval_ns;
	uint64_t t0, t_last, drain_ns, deadline;
	unsigned char *payload;
	struct histogram hist;
	char first[512];	/* the first message lost, duplicated or out of order */
	unsigned gone_number;	/* the first subscriber lost, and why */
	char gone_why[256];
} F;

static uint64_t due(uint64_t i)
{
	return F.t0 + (uint64_t)llround((double)i * F.interval_ns);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
	va_list ap;

	if (*F.first)
		return;
	va_start(ap, fmt);
	vsnprintf(F.first, sizeof(F.first), fmt, ap);
	va_end(ap);
}

static void on_data(struct cap_conn *cc, const unsigned char *p, size_t n)
{
	size_t take = FAN_HEAD - cc->nfirst;

	if (take > n)
		take = n;
	memcpy(cc->first + cc->nfirst, p, take);
	cc->nfirst += (unsigned)take;
}

static void on_message(struct cap_conn *cc, int opcode, uint64_t len)
{
	uint64_t now = now_ns(), seq, t;
	char s[32], m[32], k[32];

	if (opcode != OP_BINARY || len != F.size || cc->nfirst < FAN_HEAD ||
	    (seq = stamp_le64(cc->first)) >= F.count) {
		cc->nfirst = 0;
		F.disorder++;
		note("subscriber %s received a message that is not one of the %s published "
		     "(%s, %llu bytes)", thousands(cc->number, s), thousands(F.count, m),
		     opcode == OP_TEXT ? "text" : "binary", (unsigned long long)len);
		return;
	}
	t = stamp_le64(cc->first + 8);
	cc->nfirst = 0;
	if (!F.known_t0) {	/* --publish off: the publisher's t0, from the first message */
		F.t0 = t - (uint64_t)llround((double)seq * F.interval_ns);
		F.known_t0 = 1;
		F.deadline = due(F.count - 1) + F.drain_ns;
	}
	if (seq < cc->next) {
		F.disorder++;
		note("subscriber %s received message %s again or out of order (after message %s)",
		     thousands(cc->number, s), thousands(seq + 1, m), thousands(cc->next, k));
		return;
	}
	if (seq > cc->next) {
		F.lost += seq - cc->next;
		note("message %s never reached subscriber %s (it received message %s next)",
		     thousands(cc->next + 1, m), thousands(cc->number, s), thousands(seq + 1, k));
	}
	cc->next = seq + 1;
	F.delivered++;
	hist_record(&F.hist, now > t ? now - t : 0);
	F.t_last = now;
	if (cc->next == F.count)
		F.complete++;
}

static void on_gone(struct cap_conn *cc, const char *why)
{
	if (cc->next < F.count)
		F.broken++;
	if (!F.gone_number) {
		F.gone_number = cc->number;
		snprintf(F.gone_why, sizeof(F.gone_why), "%s", why);
	}
	if (cc == F.live[0] && F.publish && F.sent < F.count)
		fail("the publisher (subscriber 1) was lost after %llu of %llu messages: %s",
		     (unsigned long long)F.sent, (unsigned long long)F.count, why);
}

static const struct cap_hooks hooks = {
	.on_data = on_data, .on_message = on_message, .on_gone = on_gone,
};

static void publish_tick(void *x)
{
	uint64_t now = now_ns();

	(void)x;
	if (!F.publish) {
		evloop_wake_at(F.known_t0 ? F.deadline : 0);
		return;
	}
	while (F.sent < F.count && due(F.sent) <= now) {
		stamp_put(F.payload, F.sent, due(F.sent));
		conn_send_frame(&F.live[0]->c, OP_BINARY, F.payload, F.size);
		F.sent++;
	}
	evloop_wake_at(F.sent < F.count ? due(F.sent) : F.deadline);
}

static int over(void *x)
{
	(void)x;
	if (F.publish && F.sent < F.count)
		return 0;
	return F.complete + F.broken >= F.n || (F.known_t0 && now_ns() >= F.deadline);
}

/* What never arrived, per subscriber, once the wait is over. */
static void count_missing(void)
{
	char s[32], m[32];
	unsigned i;

	for (i = 0; i < F.n; i++) {
		struct cap_conn *cc = F.live[i];

		if (cc->next >= F.count)
			continue;
		F.lost += F.count - cc->next;
		if (cc->gone)
			note("message %s never reached subscriber %s (its connection was lost: %s)",
			     thousands(cc->next + 1, m), thousands(cc->number, s),
			     cc->number == F.gone_number ? F.gone_why : "see the first one lost");
		else
			note("message %s never reached subscriber %s (not delivered %.1f s after "
			     "the last message was due)", thousands(cc->next + 1, m),
			     thousands(cc->number, s), (double)F.drain_ns / 1e9);
	}
}

static void latency_us(char *out, size_t cap)
{
	hist_format_us(&F.hist, true, out, cap);
}

static void check_path(const struct url *u)
{
	size_t n = strlen("/broadcast");

	if (strncmp(u->target, "/broadcast", n) || (u->target[n] && u->target[n] != '?'))
		fail("--kind fanout needs a /broadcast URL (servers/README.md), not %s", u->target);
}

void run_fanout(const struct opts *o)
{
	struct cap_result res;
	char extra[1536], keys[512], a[32], b[32];
	uint64_t expected;
	double seconds;
	size_t len;

	check_path(&o->url);
	memset(&F, 0, sizeof(F));
	F.count = o->count;
	F.size = o->size;
	F.publish = o->publish;
	F.interval_ns = 1e9 / o->rate;
	F.drain_ns = o->drain_ms * 1000000u;
	F.payload = xcalloc(1, F.size);
	memset(F.payload + FAN_HEAD, 'x', F.size - FAN_HEAD);
	hist_init(&F.hist);

	F.live = cap_open(o, o->connections, &hooks, &res, &F.n);
	if (F.n < o->connections) {
		len = (size_t)snprintf(keys, sizeof(keys), ", \"connections\": %u, \"limit\": ", F.n);
		json_string(keys + len, sizeof(keys) - len, res.limit);
		fail_keys(keys, "limit: stopped at %s of %s subscribers: %s", thousands(F.n, a),
			  thousands(o->connections, b), res.limit);
	}

	start_barrier();
	evloop_phase("fan-out, %s subscribers", thousands(F.n, a));
	if (F.publish) {
		F.t0 = now_ns();
		F.known_t0 = 1;
		F.deadline = due(F.count - 1) + F.drain_ns;
	}
	evloop_run(over, publish_tick, NULL);
	evloop_wake_at(0);
	count_missing();

	expected = (uint64_t)F.n * F.count;
	if (F.lost || F.disorder) {
		snprintf(keys, sizeof(keys), ", \"lost\": %llu, \"disordered\": %llu, \"delivered\": %llu, "
			 "\"expected\": %llu", (unsigned long long)F.lost,
			 (unsigned long long)F.disorder, (unsigned long long)F.delivered,
			 (unsigned long long)expected);
		fail_keys(keys, "%s; %s of %s deliveries lost", F.first, thousands(F.lost, a),
			  thousands(expected, b));
	}

	seconds = F.t_last > F.t0 ? (double)(F.t_last - F.t0) / 1e9 : 0.0;
	latency_us(extra, sizeof(extra));
	len = strlen(extra);
	snprintf(extra + len, sizeof(extra) - len,
		 ", \"subscribers\": %u, \"delivered\": %llu, \"expected\": %llu, "
		 "\"delivered_per_s\": %.3f, \"lost\": 0, \"sent\": %llu, \"rate\": %.3f, "
		 "\"connections\": %u, \"open_s\": %.6f, \"opens_per_s\": %.3f, \"sources\": %u",
		 F.n, (unsigned long long)F.delivered, (unsigned long long)expected,
		 seconds > 0 ? (double)F.delivered / seconds : 0.0, (unsigned long long)F.sent,
		 o->rate, F.n, res.seconds, res.seconds > 0 ? (double)F.n / res.seconds : 0.0,
		 o->sources);
	print_result(F.delivered, F.delivered * F.size, seconds, 0, extra);
	evloop_end_barrier();	/* connections open until the harness's end readings */
	cap_close_all();
	hist_free(&F.hist);
	free(F.payload);
}
