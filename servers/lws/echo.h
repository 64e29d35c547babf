#ifndef WSBENCH_ECHO_H
#define WSBENCH_ECHO_H

#include <libwebsockets.h>

/* Bytes lws reads from a socket per poll (also the per-chunk rx size). */
#define ECHO_RX_BUFFER (256 * 1024)

/* Nonzero (default): send queued small messages in one write; see echo.c. */
extern int echo_coalesce;

/* The echo protocol (NULL-terminated list, first entry is the default). */
extern const struct lws_protocols echo_protocols[];

#endif
