/*
 * Client connections on non-blocking sockets and the epoll loop that drives
 * them: connect, upgrade, send queue (zero-copy references to pre-built
 * frames, flushed with writev), receive and parse, ping/pong, close. With
 * conn_use_tls(), every connection runs over TLS (tls.c) on the same loop.
 */
#ifndef LG_CONN_H
#define LG_CONN_H

#include "deflate_core.h"
#include "frame.h"
#include "http.h"
#include "wsproto.h"

#include <stddef.h>
#include <stdint.h>

/* C_TLS: the TLS handshake (wss:// only), between TCP connect and upgrade */
enum conn_state { C_IDLE, C_CONNECTING, C_TLS, C_UPGRADING, C_OPEN, C_CLOSING, C_DONE };

struct conn;

/* What a workload wants to hear about; any hook may be NULL. */
struct conn_ops {
	void (*on_open)(struct conn *c);
	/* payload chunk of a data message (before on_message for it) */
	void (*on_data)(struct conn *c, const unsigned char *p, size_t n);
	void (*on_message)(struct conn *c, int opcode, uint64_t len);
	/* a pong arrived (pings are answered by conn.c itself) */
	void (*on_pong)(struct conn *c);
	/* the server's close frame arrived (we answer it ourselves) */
	void (*on_close_frame)(struct conn *c, int code);
	/* the socket is closed; c->close_code holds the server's code or 1006 */
	void (*on_closed)(struct conn *c);
	/*
	 * The connection failed (a protocol error, a bad upgrade, a lost socket).
	 * Without this hook such a failure fails the whole run (the benchmark
	 * kinds); with it the connection is failed as RFC 6455 7.1.7 says (see
	 * conn_fail) and the run goes on.
	 */
	void (*on_error)(struct conn *c, const char *why);
};

struct outq_item {
	const unsigned char *p;
	size_t len;
	unsigned char *owned;	/* freed once sent (control frames, HTTP) */
};

/* permessage-deflate on one connection (conn_use_deflate), once the server agreed:
 * the room's two streams (zlib's state made at the first message each way) and the
 * compressor's output buffer, kept for the next message */
struct conn_z {
	struct pmd_stream tx, rx;
	struct pmd_buf out;
};

struct conn {
	int fd;
	enum conn_state state;
	const struct conn_ops *ops;
	void *user;		/* the workload's per-connection state */
	/* send queue: ring of items; `off` bytes of the head already sent */
	struct outq_item *q;
	size_t qcap, qhead, qcount, off;
	int want_out;		/* EPOLLOUT currently requested */
	int dirty;		/* on the flush list */
	struct conn *next_dirty;
	/* upgrade */
	char accept[29];
	char *head;
	size_t head_len;
	/* receive: the room's parser (wsproto.h) and what we keep of the message */
	struct wsp parser;
	int msg_opcode;		/* OP_TEXT/OP_BINARY from its first frame's header to its end, or 0 */
	uint64_t msg_len;
	unsigned char msg_head[8];	/* its first (up to 8) payload bytes, kept after it ends */
	int want_data;		/* deliver payload chunks to ops->on_data (1 after conn_start) */
	int close_sent, close_code;
	int failed;		/* our close code after conn_fail(), else 0 */
	int paused;		/* conn_pause_reading: out of epoll, nothing read */
	struct conn_z *z;	/* permessage-deflate agreed, else NULL (and always without --deflate) */
};

/* Set up the loop (epoll, timer); the deadline fails the run when passed. */
void evloop_init(uint64_t timeout_ms);

/* Every connection from now on speaks TLS (tls_init done): wss://. */
void conn_use_tls(void);

/*
 * Every connection from now on offers permessage-deflate with `offer` (the room's
 * pmd_offer; fails the run if it cannot be written). A connection whose server agrees
 * compresses every data message it sends (conn_send_frame, conn_send_deflated) and
 * inflates every message that comes with RSV1; one that answers without the extension
 * runs uncompressed; a refused answer (pmd_agree) fails it like a bad upgrade.
 */
void conn_use_deflate(const struct pmd_params *offer);

/* The Sec-WebSocket-Extensions value the first agreeing server answered (the first
 * connection's, for the result line), or NULL. */
const char *conn_extensions(void);

/* A message inflates to at most this many bytes (default 256 MiB), else close 1009. */
void conn_set_max_message(uint64_t max);

/* Move that deadline to `timeout_ms` from now. */
void evloop_set_deadline(uint64_t timeout_ms);

/*
 * The end barrier, after the result line: with WSBENCH_HOLD=1, wait (the loop not
 * running, the connections still open) until the harness has taken its end readings
 * (stdin at end-of-file; the bytes on the wire of the server's sockets among them),
 * then give the clean close that follows the whole timeout again. A kind calls it
 * before closing the connections it measured over, so closing is not measured.
 */
void evloop_end_barrier(void);
void evloop_free(void);

/* Describe the current phase (for the timeout message). */
void evloop_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Run until done(ctx) is true. tick(ctx), if given, runs every iteration
 * (after events, before sends are flushed).
 */
void evloop_run(int (*done)(void *ctx), void (*tick)(void *ctx), void *ctx);

/* Wake the loop at this CLOCK_MONOTONIC time (0: no wake-up). */
void evloop_wake_at(uint64_t t_ns);

/* Start connecting; ops->on_open is called once the upgrade succeeded. */
void conn_start(struct conn *c, const struct url *u,
		const struct conn_ops *ops, void *user);

/*
 * The same, without failing the run: from source address `src` (NULL: the
 * kernel's choice; the port is picked at connect(), IP_BIND_ADDRESS_NO_PORT,
 * so every source address has the whole ephemeral range per destination).
 * Returns 0, or -1 with errno set and *what naming the call that failed
 * ("socket()", "bind()", "connect()", "epoll_ctl()"); the connection is then
 * C_DONE with nothing to free.
 */
int conn_open(struct conn *c, const struct url *u, const struct sockaddr_in *src,
	      const struct conn_ops *ops, void *user, const char **what);

/* Connections opened from now on get this SO_RCVBUF (set before connect(); 0: the
 * kernel's default): the slow kind's subscribers that stop reading. */
void conn_set_rcvbuf(int bytes);

/*
 * Stop (1) or resume (0) reading the connection: while paused its socket is out of
 * epoll altogether (nothing read, no event, not even a reset), so the kernel's receive
 * buffer fills and the peer's sends back up; nothing may be queued to send meanwhile.
 */
void conn_pause_reading(struct conn *c, int pause);

/* Queue `len` bytes that stay valid and unchanged until sent. */
void conn_send_ref(struct conn *c, const unsigned char *p, size_t len);

/* Queue a control frame (masked here, copied). */
void conn_send_control(struct conn *c, int opcode, const void *payload,
		       size_t len);

/* Queue a data frame of any length with FIN set (masked here, copied); compressed
 * (RSV1) when the connection agreed to permessage-deflate. */
void conn_send_frame(struct conn *c, int opcode, const void *payload,
		     size_t len);

/* Queue a data message compressed (c->z must be set): one FIN frame with RSV1,
 * masked, in a buffer of its own. */
void conn_send_deflated(struct conn *c, int opcode, const void *payload, size_t len);

/* Send a close frame with `code` (once) and wait for the server's close. */
void conn_close(struct conn *c, int code);

/*
 * Fail the connection (RFC 6455 7.1.7): tell ops->on_error, send a close frame
 * with `code` if the connection is open, ignore whatever the server sends
 * after it and wait for its close and the end of TCP; before the upgrade
 * completed, just close the socket. Without ops->on_error: fail the run.
 */
void conn_fail(struct conn *c, int code, const char *why);

/* Close the socket now (no handshake) and free the connection's buffers. */
void conn_free(struct conn *c);

#endif
