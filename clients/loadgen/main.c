/*
 * wsbench-loadgen: a native WebSocket load generator implementing the client
 * contract of clients/README.md (kinds echo, latency, openloop, handshake,
 * request, observe, idle, fanout, slow, cycles, pinghold).
 *
 *   wsbench-loadgen --url ws://127.0.0.1:PORT/ --type text --size 11 --count 50000
 *   wsbench-loadgen --kind latency --url ... --type binary --size 32 --count 10000
 *   wsbench-loadgen --kind openloop --url ... --type text --size 32 --rate 20000 --duration-ms 2000
 *   wsbench-loadgen --kind handshake --url ... --count 1000
 *   wsbench-loadgen --kind request --url 'ws://.../?serve=utf8&bytes=N' --count 5 --expect text --expect-length L
 *   wsbench-loadgen --kind observe --url ws://.../ --timeout-ms 5000
 *   wsbench-loadgen --kind idle --url ws://.../ --connections N|max --concurrency C --hold-ms H --ping-ms P [--sources K] [--warm]
 *   wsbench-loadgen --kind fanout --url ws://.../broadcast --connections N --rate R --count M --size S [--sources K]
 *   wsbench-loadgen --kind storm --url ws://.../ --connections N [--concurrency C] [--sources K] [--stall-ms MS] [--settle-ms MS]
 *   wsbench-loadgen --kind slow --url ws://.../broadcast --connections N --slow K --rate R --duration-ms D --size S [--rcvbuf B] [--drain-ms MS]
 *   wsbench-loadgen --kind cycles --url ws://.../ --count C --connections B [--size S] [--marks M]
 *   wsbench-loadgen --kind pinghold --url ws://.../ --connections N --hold-ms H --ping-ms P --mark-ms M
 *   wsbench-loadgen --url wss://127.0.0.1:PORT/ --ca build/tls/ca.pem ...   (any kind)
 *   wsbench-loadgen --kind handshake --url wss://... --ca ... --count 1000 --tls-resume
 *   wsbench-loadgen --deflate on [--deflate-server-no-context-takeover] ...   (any kind)
 *   wsbench-loadgen --type text --size 1024 --text json --dump-messages   (the ring's payloads
 *       to stdout, then exit: clients/tests/test_corpus.py; not in the usage line)
 */
#include "conn.h"
#include "deflate_core.h"
#include "kinds.h"
#include "msgs.h"
#include "tls.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <signal.h>

#define USAGE "wsbench-loadgen --url ws://HOST:PORT/PATH|wss://HOST:PORT/PATH [--ca FILE] [--tls-resume] " \
	"[--kind echo|latency|openloop|handshake|request|observe|idle|fanout|slow|cycles|pinghold|storm] " \
	"[--type text|binary] [--size BYTES] [--count N] [--warmup N] [--mode burst|window|pingpong] " \
	"[--window W] [--connections C] [--text ascii|mixed|json] [--bytes counting|random] [--rate R] [--duration-ms D] " \
	"[--expect text|close] [--expect-length L] [--min-ms MS] [--verify on|off] [--timeout-ms MS] " \
	"[--concurrency C] [--sources K] [--stall-ms MS] [--hold-ms H] [--ping-ms P] [--warm] [--drain-ms MS] [--settle-ms MS] " \
	"[--publish on|off] [--slow K] [--rcvbuf BYTES] [--marks M] [--mark-ms MS] [--deflate on|off] [--deflate-server-no-context-takeover] " \
	"[--deflate-client-no-context-takeover] [--deflate-server-max-window-bits N] " \
	"[--deflate-client-max-window-bits N]"

static const char *const known[] = {
	"url", "kind", "type", "size", "count", "warmup", "mode", "window",
	"timeout-ms", "text", "connections", "transfer", "rate", "duration-ms",
	"expect", "expect-length", "polls", "min-ms", "verify", "ca", "tls-resume",
	"concurrency", "sources", "stall-ms", "hold-ms", "ping-ms", "drain-ms", "publish", "settle-ms",
	"deflate", "deflate-server-no-context-takeover", "deflate-client-no-context-takeover",
	"deflate-server-max-window-bits", "deflate-client-max-window-bits", "bytes",
	"dump-messages", "warm", "marks", "mark-ms", "slow", "rcvbuf", NULL,
};
#define NKNOWN (sizeof(known) / sizeof(known[0]) - 1)

static const char *vals[NKNOWN];

static int key_index(const char *k, size_t len)
{
	size_t i;

	for (i = 0; i < NKNOWN; i++)
		if (strlen(known[i]) == len && !strncmp(known[i], k, len))
			return (int)i;
	return -1;
}

static const char *get(const char *name)
{
	return vals[key_index(name, strlen(name))];
}

static uint64_t int_arg(const char *name, uint64_t dflt, uint64_t min)
{
	const char *v = get(name), *p;
	unsigned long long n;
	char *end;

	if (!v)
		return dflt;
	for (p = v; *p; p++)
		if (*p < '0' || *p > '9')
			fail("--%s needs a non-negative integer, got \"%s\"", name, v);
	n = strtoull(v, &end, 10);
	if (!*v || n < min || n > (1ull << 53))
		fail("--%s must be an integer >= %llu, got %s", name,
		     (unsigned long long)min, v);
	return n;
}

static void require(const char *name)
{
	if (!get(name))
		fail("missing --%s; usage: %s", name, USAGE);
}

/* A bare flag (or =on/=true, =off/=false). */
static int flag_arg(const char *name)
{
	const char *v = get(name);

	if (!v || !strcmp(v, "false") || !strcmp(v, "off"))
		return 0;
	if (strcmp(v, "true") && strcmp(v, "on"))
		fail("--%s takes no value (or on/off), got \"%s\"", name, v);
	return 1;
}

/* A window size of 9 to 15 bits, or 0 if not given. */
static uint8_t window_bits_arg(const char *name)
{
	const char *v = get(name);
	uint64_t n;

	if (!v)
		return 0;
	n = int_arg(name, 0, 0);
	if (n < 9 || n > 15)
		fail("--%s must be 9 to 15, got %s", name, v);
	return (uint8_t)n;
}

/* --deflate on|off and the RFC 7692 parameters of the offer (none without --deflate on). */
static void parse_deflate(struct opts *o)
{
	static const char *const knobs[] = {
		"deflate-server-no-context-takeover", "deflate-client-no-context-takeover",
		"deflate-server-max-window-bits", "deflate-client-max-window-bits",
	};
	const char *v = get("deflate");
	struct pmd_params p = PMD_PARAMS_DEFAULT;
	uint8_t bits;
	size_t i;

	if (v && strcmp(v, "on") && strcmp(v, "off"))
		fail("--deflate must be on or off, got \"%s\"", v);
	o->deflate = v && !strcmp(v, "on");
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (get(knobs[i]) && !o->deflate)
			fail("--%s needs --deflate on", knobs[i]);
	p.server_no_context_takeover = (uint8_t)flag_arg("deflate-server-no-context-takeover");
	p.client_no_context_takeover = (uint8_t)flag_arg("deflate-client-no-context-takeover");
	p.server_max_window_bits = window_bits_arg("deflate-server-max-window-bits");
	if ((bits = window_bits_arg("deflate-client-max-window-bits")))
		p.client_max_window_bits = bits;
	o->deflate_offer = p;
}

/* The options of the capacity kinds (idle, fanout). */
static void parse_capacity(const char *kind, struct opts *o)
{
	const char *v;

	o->concurrency = (unsigned)int_arg("concurrency", 100, 1);
	o->sources = (unsigned)int_arg("sources", 1, 1);
	if (o->sources > 254)
		fail("--sources is at most 254 (127.0.0.1 ... 127.0.0.254)");
	o->stall_ms = int_arg("stall-ms", 5000, 1);
	o->hold_ms = int_arg("hold-ms", 0, 0);
	o->ping_ms = int_arg("ping-ms", 0, 0);
	o->warm = flag_arg("warm");
	if (o->warm && strcmp(kind, "idle"))
		fail("--warm does not apply to --kind %s", kind);
	o->drain_ms = int_arg("drain-ms", 5000, 0);
	o->settle_ms = int_arg("settle-ms", 2000, 0);
	if (get("settle-ms") && strcmp(kind, "storm"))
		fail("--settle-ms goes with --kind storm");
	if (!strcmp(kind, "storm"))
		require("connections");
	v = get("publish");
	if (v && strcmp(v, "on") && strcmp(v, "off"))
		fail("--publish must be on or off");
	o->publish = !v || !strcmp(v, "on");
	if (!strcmp(kind, "idle")) {
		require("connections");
		require("hold-ms");
	}
	if (!strcmp(kind, "fanout")) {
		require("connections");
		require("rate");
		require("count");
		o->rate = (double)int_arg("rate", 0, 1);
		int_arg("size", 16, 16);	/* room for the number and the due time */
	}
	if (!strcmp(kind, "slow")) {
		require("connections");
		require("slow");
		require("rate");
		require("duration-ms");
		o->slow = (unsigned)int_arg("slow", 0, 0);
		o->rcvbuf = (unsigned)int_arg("rcvbuf", 4096, 1024);
		if (o->rcvbuf > (1u << 30))
			fail("--rcvbuf is at most 1 GiB");
		o->rate = (double)int_arg("rate", 0, 1);
		o->duration_ms = int_arg("duration-ms", 0, 1);
		int_arg("size", 16, 16);	/* room for the number and the due time */
	} else if (get("slow") || get("rcvbuf")) {
		fail("--slow and --rcvbuf go with --kind slow");
	}
}

/* The soak kinds' options (kind_soak.c); --marks and --mark-ms belong to them only. */
static void parse_soak(const char *kind, struct opts *o)
{
	int cycles = !strcmp(kind, "cycles"), hold = !strcmp(kind, "pinghold");

	if (get("marks") && !cycles)
		fail("--marks does not apply to --kind %s", kind);
	if (get("mark-ms") && !hold)
		fail("--mark-ms does not apply to --kind %s", kind);
	o->marks = (unsigned)int_arg("marks", 50, 1);
	o->mark_ms = int_arg("mark-ms", 1000, 1);
	if (cycles) {
		require("count");
		require("connections");
	}
	if (hold) {
		require("connections");
		require("hold-ms");
		require("mark-ms");
	}
}

static void parse(int argc, char **argv, struct opts *o)
{
	const char *kind, *v;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		int k;

		if (strncmp(a, "--", 2))
			fail("unexpected argument \"%s\"; usage: %s", a, USAGE);
		a += 2;
		eq = strchr(a, '=');
		k = key_index(a, eq ? (size_t)(eq - a) : strlen(a));
		if (k < 0)
			fail("unknown option --%s; usage: %s", a, USAGE);
		if (eq)
			vals[k] = eq + 1;
		else if ((!strcmp(a, "transfer") || !strcmp(a, "tls-resume") ||
			  !strcmp(a, "deflate-server-no-context-takeover") ||
			  !strcmp(a, "deflate-client-no-context-takeover") ||
			  !strcmp(a, "dump-messages") || !strcmp(a, "warm")) &&
			 (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2)))
			vals[k] = "true";	/* bare flags */
		else if (i + 1 < argc)
			vals[k] = argv[++i];
		else
			fail("--%s needs a value", a);
	}

	kind = get("kind") ? get("kind") : "echo";
	o->kind = kind;
	if (!strcmp(kind, "buffered"))
		fail_unsupported("kind buffered (no bufferedAmount)");
	if (strcmp(kind, "echo") && strcmp(kind, "latency") &&
	    strcmp(kind, "openloop") && strcmp(kind, "handshake") &&
	    strcmp(kind, "request") && strcmp(kind, "observe") && strcmp(kind, "storm") &&
	    strcmp(kind, "idle") && strcmp(kind, "fanout") &&
	    strcmp(kind, "cycles") && strcmp(kind, "pinghold") && strcmp(kind, "slow"))
		fail("unknown --kind %s", kind);
	if (get("transfer"))
		fail_unsupported("--transfer");

	require("url");
	url_parse(&o->url, get("url"));
	o->tls = o->url.secure;
	o->ca = get("ca");
	v = get("tls-resume");
	o->tls_resume = v && strcmp(v, "false") && strcmp(v, "off");
	if (o->tls && !o->ca)
		fail("a wss:// URL needs --ca FILE (the CA to trust)");
	if (!o->tls && (o->ca || o->tls_resume))
		fail("--ca and --tls-resume go with a wss:// URL");
	o->timeout_ms = int_arg("timeout-ms", 60000, 1);
	parse_deflate(o);

	v = get("type");
	if (v && strcmp(v, "text") && strcmp(v, "binary"))
		fail("--type must be text or binary");
	o->binary = v && !strcmp(v, "binary");
	v = get("text");
	if (v && strcmp(v, "ascii") && strcmp(v, "mixed") && strcmp(v, "json"))
		fail("--text must be ascii, mixed or json");
	if (v && strcmp(v, "ascii") && o->binary)
		fail("--text %s needs --type text", v);
	o->mixed = v && !strcmp(v, "mixed");
	o->corpus = v && !strcmp(v, "json");
	v = get("bytes");
	if (v && strcmp(v, "counting") && strcmp(v, "random"))
		fail("--bytes must be counting or random");
	if (v && strcmp(v, "counting") && !o->binary)
		fail("--bytes %s needs --type binary", v);
	if (v && !strcmp(v, "random"))
		o->corpus = 1;

	v = get("mode");
	o->mode = MODE_BURST;
	if (v && !strcmp(v, "window"))
		o->mode = MODE_WINDOW;
	else if (v && !strcmp(v, "pingpong"))
		o->mode = MODE_PINGPONG;
	else if (v && strcmp(v, "burst"))
		fail("--mode must be burst, window or pingpong");
	if (o->mode == MODE_WINDOW && !get("window"))
		fail("--mode window needs --window W");
	o->window = int_arg("window", 1, 1);
	v = get("connections");
	if (!strcmp(kind, "idle") && v && !strcmp(v, "max"))
		o->connections = 0;	/* until a limit */
	else
		o->connections = (unsigned)int_arg("connections", 1, 1);
	if (o->connections > 1000000)
		fail("--connections too large");
	parse_capacity(kind, o);

	if (!strcmp(kind, "echo") || !strcmp(kind, "latency")) {
		require("type");
		require("size");
		require("count");
	}
	if (!strcmp(kind, "openloop")) {
		require("type");
		require("size");
		require("rate");
		require("duration-ms");
		o->rate = (double)int_arg("rate", 0, 1);
		o->duration_ms = int_arg("duration-ms", 0, 1);
	}
	if (!strcmp(kind, "handshake") || !strcmp(kind, "request"))
		require("count");
	parse_soak(kind, o);
	o->min_ms = int_arg("min-ms", 0, 0);
	v = get("verify");
	if (v && strcmp(v, "on") && strcmp(v, "off"))
		fail("--verify must be on or off");
	o->verify = !v || !strcmp(v, "on");
	if (o->corpus && !o->verify)
		fail("--%s needs --verify on (unverified, one message is sent over and over)",
		     o->binary ? "bytes random" : "text json");
	o->size = (size_t)int_arg("size", !strcmp(kind, "fanout") || !strcmp(kind, "slow") ? 16 : 0, 0);
	o->count = int_arg("count", 1, 1);
	if (!strcmp(kind, "openloop")) {
		uint64_t total = (uint64_t)(o->rate * (double)o->duration_ms / 1000.0);

		o->warmup = int_arg("warmup", total < 1000 ? total : 1000, 0);
	} else {
		o->warmup = int_arg("warmup", o->count < 1000 ? o->count : 1000, 0);
	}
	if (!strcmp(kind, "request")) {
		require("expect");
		v = get("expect");
		if (strcmp(v, "text") && strcmp(v, "close"))
			fail("--expect must be text or close");
		o->expect_close = !strcmp(v, "close");
		o->has_expect_length = get("expect-length") != NULL;
		o->expect_length = int_arg("expect-length", 0, 0);
	}
}

/* 1000+ connections need more descriptors than the usual soft limit. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* what the result line adds: "tls" (wss://), "extensions" (what the first connection
 * agreed, as the JavaScript clients' WebSocket.extensions) */
static int more_tls;

static const char *result_tail(void)
{
	static char out[1024];
	char ext[600];
	size_t n = 0;

	out[0] = 0;
	if (more_tls)
		n = (size_t)snprintf(out, sizeof(out), "%s", tls_result());
	if (conn_extensions() && n < sizeof(out)) {
		json_string(ext, sizeof(ext), conn_extensions());
		snprintf(out + n, sizeof(out) - n, ", \"extensions\": %s", ext);
	}
	return out;
}

int main(int argc, char **argv)
{
	struct opts o;

	memset(&o, 0, sizeof(o));
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	parse(argc, argv, &o);
	if (flag_arg("dump-messages")) {	/* the messages' payloads, then exit */
		struct msgs m;

		msgs_init(&m, o.binary, o.mixed, o.size, o.verify, o.corpus);
		msgs_dump(&m, stdout);
		msgs_free(&m);
		return 0;
	}
	/* the capacity kinds report the limit they meet instead */
	if (strcmp(o.kind, "idle") && strcmp(o.kind, "fanout") && strcmp(o.kind, "slow") &&
	    o.connections + 16 > 1024) {
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < o.connections + 16)
			fail("--connections %u needs more file descriptors (limit %llu)",
			     o.connections, (unsigned long long)rl.rlim_cur);
	}

	evloop_init(o.timeout_ms);
	if (o.tls) {
		tls_init(o.ca, &o.url, o.tls_resume);
		conn_use_tls();
		more_tls = 1;
	}
	if (o.deflate)
		conn_use_deflate(&o.deflate_offer);
	result_more = result_tail;
	if (!strcmp(o.kind, "echo"))
		run_echo(&o, 0);
	else if (!strcmp(o.kind, "latency"))
		run_echo(&o, 1);
	else if (!strcmp(o.kind, "openloop"))
		run_openloop(&o);
	else if (!strcmp(o.kind, "handshake"))
		run_handshake(&o);
	else if (!strcmp(o.kind, "observe"))
		run_observe(&o);
	else if (!strcmp(o.kind, "idle"))
		run_idle(&o);
	else if (!strcmp(o.kind, "fanout"))
		run_fanout(&o);
	else if (!strcmp(o.kind, "storm"))
		run_storm(&o);
	else if (!strcmp(o.kind, "slow"))
		run_slow(&o);
	else if (!strcmp(o.kind, "cycles"))
		run_cycles(&o);
	else if (!strcmp(o.kind, "pinghold"))
		run_pinghold(&o);
	else
		run_request(&o);
	evloop_free();
	if (o.tls)
		tls_cleanup();
	hold_if_requested();
	return 0;
}
