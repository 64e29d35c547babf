/* Options and the workload kinds (clients/README.md, "Workload kinds"). */
#ifndef LG_KINDS_H
#define LG_KINDS_H

#include "deflate_core.h"
#include "http.h"

#include <stddef.h>
#include <stdint.h>

enum mode { MODE_BURST, MODE_WINDOW, MODE_PINGPONG };

struct opts {
	const char *kind;
	struct url url;
	int binary;		/* --type binary */
	int mixed;		/* --text mixed */
	int corpus;		/* --text json or --bytes random (corpus.c) */
	size_t size;
	uint64_t count;
	uint64_t warmup;
	enum mode mode;
	uint64_t window;
	uint64_t timeout_ms;
	unsigned connections;
	double rate;		/* openloop: messages per second */
	uint64_t duration_ms;
	int expect_close;	/* request: --expect close */
	int has_expect_length;
	uint64_t expect_length;
	uint64_t min_ms;	/* --min-ms: echo, request and handshake repeat until */
	int verify;		/* --verify on (default) or off */
	int tls;		/* a wss:// URL */
	const char *ca;		/* --ca: the CA file trusted for wss:// */
	int tls_resume;		/* --tls-resume: offer the newest session */
	/* idle, fanout, storm (cap.c) */
	unsigned concurrency;	/* --concurrency: handshakes in flight at most */
	unsigned sources;	/* --sources K: 127.0.0.1 ... 127.0.0.K in turn */
	uint64_t stall_ms;	/* --stall-ms: no handshake done that long is a limit */
	uint64_t hold_ms;	/* idle: --hold-ms */
	uint64_t ping_ms;	/* idle: --ping-ms (0: no pings) */
	int warm;		/* idle: --warm (one message and its echo on each before the hold) */
	uint64_t drain_ms;	/* fanout: --drain-ms after the last message was due */
	uint64_t settle_ms;	/* storm: --settle-ms between the marks storm and after */
	int publish;		/* fanout: --publish on (default) or off */
	unsigned slow;		/* slow: --slow K subscribers stop reading */
	unsigned rcvbuf;	/* slow: --rcvbuf BYTES, their SO_RCVBUF */
	unsigned marks;		/* cycles: --marks (marks over the run besides cycles-0) */
	uint64_t mark_ms;	/* pinghold: --mark-ms */
	int deflate;		/* --deflate on: offer permessage-deflate */
	struct pmd_params deflate_offer;	/* what it offers (the --deflate-* knobs) */
};

/*
 * Each announces its measured phase with start_barrier() (util.h), prints the
 * result line, or fails the run.
 */
void run_echo(const struct opts *o, int latency);
void run_openloop(const struct opts *o);
void run_handshake(const struct opts *o);
void run_request(const struct opts *o);
void run_observe(const struct opts *o);
void run_idle(const struct opts *o);
void run_fanout(const struct opts *o);
void run_storm(const struct opts *o);
void run_slow(const struct opts *o);
void run_cycles(const struct opts *o);	/* kind_soak.c */
void run_pinghold(const struct opts *o);

#endif
