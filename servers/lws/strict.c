/*
 * The protocol checks lws 4.3.5 leaves to us (README.md, "Strictness"); the
 * check of every data chunk is inline, in strict.h.
 *
 * UTF-8: lws' own LWS_SERVER_OPTION_VALIDATE_UTF8 is not set (it misses a
 * sequence left open at a message's end, and fails a close reason that is
 * not UTF-8 without a close frame: README.md); text is checked with the
 * validator the native clients share (wsproto/utf8_core.c), close bodies
 * with wsproto/wsclose.c.
 *
 * Reserved bits: lws is built without extensions (LWS_WITHOUT_EXTENSIONS),
 * and then refuses RSV2 and RSV3 but lets RSV1 through (ops-ws.c, its "rsv
 * bits" check). No extension is ever negotiated here: any bit fails.
 * lws-echo-deflate (-DWSBENCH_PMD, lws with extensions) lets RSV1 through on
 * the frames of a message whose first frame had it (strict.h).
 */
#include "strict.h"
#include "wsclose.h"

#include <string.h>

/*
 * lws sends the close frame and then waits for the client's (up to 5 s,
 * PENDING_TIMEOUT_CLOSE_ACK) before it ends TCP.
 */
int strict_fail(struct lws *wsi, enum lws_close_status code, const char *why)
{
	lws_close_reason(wsi, code, (unsigned char *)why, strlen(why));
	return -1;
}

int strict_pong(struct lws *wsi)
{
	if (lws_get_reserved_bits(wsi))
		return strict_fail(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, "rsv bits");
	return 0;
}

/*
 * The client has closed already, so no answer to our close will come: lws'
 * own way (lws_close_reason() and -1) would send our close and then wait 5 s
 * for an acknowledgement before it ends TCP (PENDING_TIMEOUT_CLOSE_ACK in
 * rops_handle_POLLOUT_ws). Instead our close frame is written here, framed
 * by us (LWS_WRITE_RAW, as the coalesced echoes are: lws' own close opcode
 * for lws_write() is private), and -1 makes lws end the connection at once
 * without echoing the client's close. Nothing of ours is half-sent: lws does
 * not call us while output is pending.
 */
static int fail_closed(struct lws *wsi, int code, const char *why)
{
	unsigned char frame[LWS_PRE + 4 + 32], *p = frame + LWS_PRE;
	size_t n = strlen(why);

	if (n > sizeof(frame) - LWS_PRE - 4)
		n = sizeof(frame) - LWS_PRE - 4;
	p[0] = 0x88;			/* FIN, close */
	p[1] = (unsigned char)(2 + n);	/* unmasked, <= 125 */
	p[2] = (unsigned char)(code >> 8);
	p[3] = (unsigned char)code;
	memcpy(p + 4, why, n);
	lws_write(wsi, p, 4 + n, LWS_WRITE_RAW);
	return -1;
}

int strict_close(struct lws *wsi, const void *in, size_t len)
{
	const char *why;
	int code;

	if (lws_get_reserved_bits(wsi))
		return fail_closed(wsi, LWS_CLOSE_STATUS_PROTOCOL_ERR, "rsv bits");
	code = wsc_body_problem(in, len, &why);
	if (code)
		return fail_closed(wsi, code, why);
	return 0;
}
