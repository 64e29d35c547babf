/*
 * permessage-deflate (RFC 7692) for lws-echo-deflate: the same sources as
 * lws-echo compiled with -DWSBENCH_PMD and linked against the libwebsockets
 * built with extensions (build/prefix-pmd; servers/lws/README.md,
 * "lws-echo-deflate"). Without WSBENCH_PMD (lws-echo) only the refusal of
 * --deflate is here.
 */
#ifndef WSBENCH_PMD_H
#define WSBENCH_PMD_H

#include <libwebsockets.h>

/*
 * A deflate argument at argv[*i] (--deflate, --deflate-*): 1 if it was one
 * (taken, *i moved past its value), 0 if not. An argument this build cannot
 * honour is one line on stderr and exit 2 (servers/README.md, item 15).
 */
int pmd_arg(int argc, char **argv, int *i);

#ifdef WSBENCH_PMD
/* Nonzero with --deflate: the vhost offers lws' permessage-deflate. */
extern int pmd_on;

/* lws' extension list for the context (NULL without --deflate). */
const struct lws_extension *pmd_extensions(void);

/* The Sec-WebSocket-Extensions value lws answered a connection with. */
#define PMD_ANSWER_MAX 200
struct pmd_conn {
	char answer[PMD_ANSWER_MAX];	/* "" for none */
	int known;			/* the answer was read */
};

/*
 * LWS_CALLBACK_ADD_HEADERS of an upgrade: lws has written its 101 up to here,
 * its extension header included; read that header back into `pc`.
 */
void pmd_read_answer(struct pmd_conn *pc, const struct lws_process_html_args *args);

/* Print and flush the connection's WSBENCH-DEFLATE line (with --deflate). */
void pmd_report(struct lws *wsi, const struct pmd_conn *pc);

/*
 * A message over the limit on a connection: our close 1009 is written at once
 * (a raw frame) and lws is told to end the connection at its next service,
 * since -1 from the callback alone does not end one whose message lws is
 * still inflating (README.md, "lws-echo-deflate"). Returns -1.
 */
int pmd_too_big(struct lws *wsi);
#endif

#endif
