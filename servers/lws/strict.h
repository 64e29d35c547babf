#ifndef WSBENCH_STRICT_H
#define WSBENCH_STRICT_H

/*
 * What RFC 6455 asks of a server that libwebsockets 4.3.5, as built here,
 * does not check itself (strict.c; README.md, "Strictness"): UTF-8 of text
 * messages and of close reasons, RSV1 without an extension, RSV bits on a
 * pong or a close, a 1-byte close body. A check that fails sets the close
 * frame (1002 or 1007) and returns -1, which the callback returns to lws.
 */

#include "utf8_core.h"

#include <libwebsockets.h>
#include <stddef.h>
#include <stdint.h>

struct strict {
	uint32_t utf8;		/* utf8_stream() state of the text message */
#ifdef WSBENCH_PMD
	int compressed;		/* the message's first frame had RSV1 */
#endif
};

/* Fail the connection: lws sends a close frame with `code` and `why`; -1. */
int strict_fail(struct lws *wsi, enum lws_close_status code, const char *why);

/*
 * A chunk of a data frame (LWS_CALLBACK_RECEIVE) of a text or binary message,
 * the message's first chunk and/or its last: 0, or -1 to fail. Inline: it
 * runs for every chunk; a whole message in one chunk is checked with
 * utf8_valid() alone, the others stream through utf8_stream() and fail at
 * the chunk that holds the first invalid byte.
 */
static inline int strict_data(struct lws *wsi, struct strict *s, int text,
			      int first, int final, const void *in, size_t len)
{
#ifdef WSBENCH_PMD
	/*
	 * lws refuses RSV1 unless permessage-deflate is on, and RSV2/3 always;
	 * RSV1 is then the mark of a compressed message, on its first frame.
	 * A chunk does not say which frame it came from: RSV1 on a
	 * continuation of a compressed message passes (README.md).
	 */
	int rsv = lws_get_reserved_bits(wsi);

	if (first)
		s->compressed = rsv == 0x40;
	if (rsv && !(rsv == 0x40 && s->compressed))
		return strict_fail(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, "rsv bits");
#else
	if (lws_get_reserved_bits(wsi))	/* no extension is ever negotiated */
		return strict_fail(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, "rsv bits");
#endif
	if (!text)
		return 0;
	if (first && final) {
		if (!utf8_valid(in, len))
			return strict_fail(wsi, LWS_CLOSE_STATUS_INVALID_PAYLOAD, "bad utf8");
		return 0;
	}
	if (first)
		s->utf8 = 0;
	if (!utf8_stream(&s->utf8, in, len) ||
	    (final && !utf8_stream_complete(s->utf8)))
		return strict_fail(wsi, LWS_CLOSE_STATUS_INVALID_PAYLOAD, "bad utf8");
	return 0;
}

#ifdef WSBENCH_PMD
/* The message being received came compressed (its first frame had RSV1). */
static inline int strict_compressed(const struct strict *s)
{
	return s->compressed;
}
#endif

/* A pong with a payload (LWS_CALLBACK_RECEIVE_PONG): 0, or -1 to fail. */
int strict_pong(struct lws *wsi);

/*
 * The client's close frame (LWS_CALLBACK_WS_PEER_INITIATED_CLOSE; lws has
 * already replaced a code no one may send by 1002): 0 lets lws echo it, -1
 * ends the connection after our close frame with 1002 or 1007.
 */
int strict_close(struct lws *wsi, const void *in, size_t len);

#endif
