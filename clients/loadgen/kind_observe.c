/*
 * observe: connect, send nothing, and record what the server makes of us
 * (wsbench conformance): open, every message (a digest: type, length in
 * UTF-16 code units for text or bytes for binary, the first and last 8 units,
 * 16 units spread over it), errors and the close, in order. When the
 * connection is over, or after --timeout-ms, one result line carries them.
 *
 * The connection is failed as RFC 6455 7.1.7 says (conn_fail): a protocol
 * error closes with 1002 (conn.c), invalid UTF-8 in a text message with 1007
 * (here, as it arrives), a message over 64 MiB with 1009.
 */
#include "conn.h"
#include "kinds.h"
#include "utf8.h"
#include "utf8_core.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EDGE 8
#define SAMPLES 16
#define MAX_EVENTS 256
#define MAX_MESSAGE ((size_t)64 << 20)
#define CLOSE_WAIT_NS 500000000u

struct sbuf {
	char *p;
	size_t len, cap;
};

static struct {
	struct conn c;
	struct sbuf events;	/* JSON objects, comma-separated */
	unsigned nevents, untold;
	uint64_t t0, deadline, messages, units;
	unsigned char *msg;	/* the message being received */
	size_t len, cap;
	struct utf8v v;
	int got_close, server_code;
	char reason[128];	/* the server's close reason (UTF-8, checked) */
} O;

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			fail("observe: cannot format an event");
		if (b->len + (size_t)n < b->cap)
			break;
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	b->len += (size_t)n;
}

/* A JSON string of UTF-8 text (valid or not: bytes that are not become U+FFFD). */
static void sb_string(struct sbuf *b, const char *s, size_t n)
{
	size_t i;

	sb_printf(b, "\"");
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			sb_printf(b, "\\u%04x", c);
		else if (c < 0x80)
			sb_printf(b, "%c", c);
		else {
			struct utf8v v;
			size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			uint16_t u[2];

			memset(&v, 0, sizeof(v));
			if (i + len <= n)
				utf8v_feed(&v, (const unsigned char *)s + i, len);
			if (i + len > n || !utf8v_ok(&v)) {
				sb_printf(b, "\\ufffd");
				continue;
			}
			if (decode_utf16((const unsigned char *)s + i, len, u) == 2)
				sb_printf(b, "\\u%04x\\u%04x", u[0], u[1]);
			else
				sb_printf(b, "\\u%04x", u[0]);
			i += len - 1;
		}
	}
	sb_printf(b, "\"");
}

/* Start an event object (0: the list is full, the event is only counted). */
static int event(const char *type)
{
	if (O.nevents >= MAX_EVENTS) {
		O.untold++;
		return 0;
	}
	sb_printf(&O.events, "%s{\"type\": \"%s\", \"t\": %.1f", O.nevents++ ? ", " : "",
		  type, (double)(now_ns() - O.t0) / 1e6);
	return 1;
}

static unsigned unit_at(const uint16_t *u16, size_t i)
{
	return u16 ? u16[i] : O.msg[i];
}

static void units_list(const char *key, const uint16_t *u16, const size_t *at, size_t n)
{
	size_t i;

	sb_printf(&O.events, ", \"%s\": [", key);
	for (i = 0; i < n; i++)
		sb_printf(&O.events, "%s%u", i ? ", " : "", unit_at(u16, at[i]));
	sb_printf(&O.events, "]");
}

/* The message in O.msg is whole: report its digest. */
static void digest(int text)
{
	uint16_t *u16 = NULL;
	size_t n = O.len, at[SAMPLES] = { 0 }, i, k;

	if (text) {
		/* room for a unit per byte, not just per unit: decode_utf16 widens 16
		 * bytes at a time and may write past the last unit it keeps */
		u16 = xmalloc((size_t)O.len * sizeof(*u16) + sizeof(*u16));
		n = decode_utf16(O.msg, O.len, u16);
	}
	O.messages++;
	O.units += n;
	if (event("message")) {
		sb_printf(&O.events, ", \"kind\": \"%s\", \"length\": %zu", text ? "text" : "binary", n);
		for (k = 0; k < EDGE && k < n; k++)
			at[k] = k;
		units_list("head", u16, at, k);
		for (k = 0, i = n > EDGE ? n - EDGE : 0; i < n; i++)
			at[k++] = i;
		units_list("tail", u16, at, k);
		for (k = 0; n && k < SAMPLES; k++)
			at[k] = (size_t)((uint64_t)k * n / SAMPLES);
		units_list("sample", u16, at, k);
		sb_printf(&O.events, "}");
	}
	free(u16);
}

static void on_open(struct conn *c)
{
	(void)c;
	if (event("open"))
		sb_printf(&O.events, "}");
}

static void on_data(struct conn *c, const unsigned char *p, size_t n)
{
	if (O.len + n > MAX_MESSAGE) {
		conn_fail(c, 1009, "message over 64 MiB");
		return;
	}
	if (O.len + n > O.cap) {
		O.cap = O.len + n > O.cap * 2 ? O.len + n : O.cap * 2;
		O.msg = xrealloc(O.msg, O.cap);
	}
	memcpy(O.msg + O.len, p, n);
	O.len += n;
	if (c->msg_opcode == OP_TEXT) {
		utf8v_feed(&O.v, p, n);
		if (O.v.bad)
			conn_fail(c, 1007, "invalid UTF-8 in a text message");
	}
}

static void on_message(struct conn *c, int opcode, uint64_t len)
{
	(void)len;
	if (opcode == OP_TEXT && !utf8v_ok(&O.v)) {
		conn_fail(c, 1007, "text message ends inside a UTF-8 sequence");
		return;
	}
	digest(opcode == OP_TEXT);
	O.len = 0;
	memset(&O.v, 0, sizeof(O.v));
}

static void on_close_frame(struct conn *c, int code)
{
	size_t n = c->parser.ctllen > 2 ? c->parser.ctllen - 2 : 0;

	if (n >= sizeof(O.reason))
		n = sizeof(O.reason) - 1;
	memcpy(O.reason, c->parser.ctl + 2, n);
	O.reason[n] = 0;
	O.got_close = 1;
	O.server_code = code;
}

static void on_error(struct conn *c, const char *why)
{
	(void)c;
	if (event("error")) {
		sb_printf(&O.events, ", \"message\": ");
		sb_string(&O.events, why, strlen(why));
		sb_printf(&O.events, "}");
	}
}

/* Like a browser's close event; after our own failure, the code we sent. */
static void on_closed(struct conn *c)
{
	int clean = O.got_close && c->close_sent && !c->failed;
	int code = O.got_close && !c->failed ? O.server_code : c->failed ? c->failed : 1006;

	if (!event("close"))
		return;
	sb_printf(&O.events, ", \"code\": %d, \"reason\": ", code);
	sb_string(&O.events, clean ? O.reason : "", clean ? strlen(O.reason) : 0);
	sb_printf(&O.events, ", \"wasClean\": %s}", clean ? "true" : "false");
}

static const struct conn_ops ops = {
	.on_open = on_open,
	.on_data = on_data,
	.on_message = on_message,
	.on_close_frame = on_close_frame,
	.on_closed = on_closed,
	.on_error = on_error,
};

static int over(void *x)
{
	(void)x;
	return O.c.state == C_DONE || now_ns() >= O.deadline;
}

void run_observe(const struct opts *o)
{
	struct sbuf extra = { 0 };
	int timed_out;

	start_barrier();
	O.t0 = now_ns();
	O.deadline = O.t0 + o->timeout_ms * 1000000u;
	evloop_set_deadline(o->timeout_ms + 2000);	/* ours comes first */
	evloop_wake_at(O.deadline);
	evloop_phase("observe");
	sb_printf(&O.events, "[");
	conn_set_max_message(MAX_MESSAGE);	/* a compressed message inflates no further */
	conn_start(&O.c, &o->url, &ops, NULL);
	evloop_run(over, NULL, NULL);
	timed_out = O.c.state != C_DONE;
	sb_printf(&O.events, "]");
	sb_printf(&extra, ", \"timed_out\": %s, \"events\": %s", timed_out ? "true" : "false", O.events.p);
	if (O.untold)
		sb_printf(&extra, ", \"events_untold\": %u", O.untold);
	print_result(O.messages, O.units, (double)(now_ns() - O.t0) / 1e9, 0, extra.p);
	if (timed_out) {	/* close cleanly, briefly, as the other kinds do */
		conn_close(&O.c, 1000);
		O.deadline = now_ns() + CLOSE_WAIT_NS;
		evloop_wake_at(O.deadline);
		evloop_run(over, NULL, NULL);
	}
	conn_free(&O.c);
	free(O.msg);
	free(O.events.p);
	free(extra.p);
}
