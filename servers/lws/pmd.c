/*
 * permessage-deflate for lws-echo-deflate (pmd.h). lws 4.3.5 has no server
 * setting for any RFC 7692 parameter: its answer is made from the client's
 * offer alone (server-ws.c, lws_extension_server_handshake: the offer's
 * parameters without a value are echoed, the window-bits ones dropped), so
 * every --deflate-* knob is refused here (README.md, "lws-echo-deflate").
 */
#include "pmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const knobs[] = {
	"--deflate-server-no-context-takeover",
	"--deflate-client-no-context-takeover",
	"--deflate-server-max-window-bits",
	"--deflate-client-max-window-bits",
	"--deflate-threshold",
	"--deflate-compressor",
};

static void refuse(const char *arg, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n",
#ifdef WSBENCH_PMD
		"lws-echo-deflate",
#else
		"lws-echo",
#endif
		arg, why);
	exit(2);
}

int pmd_arg(int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	size_t k;

	(void)argc;
	if (strcmp(a, "--deflate") && strncmp(a, "--deflate-", 10))
		return 0;
#ifndef WSBENCH_PMD
	refuse(a, "this lws-echo is built without permessage-deflate (libwebsockets with "
	       "LWS_WITHOUT_EXTENSIONS=ON): use build/bin/lws-echo-deflate");
#else
	if (!strcmp(a, "--deflate")) {
		pmd_on = 1;
		return 1;
	}
	for (k = 0; k < sizeof(knobs) / sizeof(knobs[0]); k++) {
		size_t n = strlen(knobs[k]);

		if (!strncmp(a, knobs[k], n) && (!a[n] || a[n] == '='))
			refuse(knobs[k], "libwebsockets 4.3.5 has no server setting for it "
			       "(its answer follows the client's offer)");
	}
	refuse(a, "unknown deflate argument");
#endif
	(void)k;
	(void)knobs;
	return 0;
}

#ifdef WSBENCH_PMD
int pmd_on;

/*
 * The option string is what lws' client side would offer; a server uses
 * only the name and the callback.
 */
static const struct lws_extension extensions[] = {
	{
		.name = "permessage-deflate",
		.callback = lws_extension_callback_pm_deflate,
		.client_offer = "permessage-deflate; client_max_window_bits",
	},
	{ NULL, NULL, NULL }
};

const struct lws_extension *pmd_extensions(void)
{
	return pmd_on ? extensions : NULL;
}

/*
 * lws writes its 101 in one buffer, "HTTP/1.1 101 Switching Protocols" first
 * (server-ws.c, handshake_0405), then the extension header, then calls
 * LWS_CALLBACK_ADD_HEADERS with args->p just after it. The 101 is found
 * looking back from args->p (never further back than its first byte), and
 * the extension header looking forward from there.
 */
void pmd_read_answer(struct pmd_conn *pc, const struct lws_process_html_args *args)
{
	static const char start[] = "HTTP/1.1 101 ", hdr[] = "\r\nSec-WebSocket-Extensions: ";
	const char *end = args->p, *p, *v, *e;
	size_t n;

	pc->answer[0] = '\0';
	pc->known = 0;
	for (p = end - (sizeof(start) - 1); ; p--) {
		if (end - p > 1024)
			return;	/* not the layout of 4.3.5: the line says ? */
		if (!memcmp(p, start, sizeof(start) - 1))
			break;
	}
	pc->known = 1;
	for (; p + sizeof(hdr) - 1 <= end; p++)
		if (!memcmp(p, hdr, sizeof(hdr) - 1))
			break;
	if (p + sizeof(hdr) - 1 > end)
		return;	/* none */
	v = p + sizeof(hdr) - 1;
	for (e = v; e < end && *e != '\r'; e++)
		;
	n = (size_t)(e - v);
	if (n >= sizeof(pc->answer))
		n = sizeof(pc->answer) - 1;
	memcpy(pc->answer, v, n);
	pc->answer[n] = '\0';
}

/* `"value"` with any '"' made '\'', or none. */
static void quoted(char *out, size_t len, const char *v)
{
	size_t i;

	if (!*v) {
		snprintf(out, len, "none");
		return;
	}
	snprintf(out, len, "\"%s\"", v);
	for (i = 1; out[i] && out[i + 1]; i++)
		if (out[i] == '"')
			out[i] = '\'';
}

void pmd_report(struct lws *wsi, const struct pmd_conn *pc)
{
	char offer[512], o[520], r[PMD_ANSWER_MAX + 8];
	int n;

	if (!pmd_on)
		return;
	n = lws_hdr_copy(wsi, offer, sizeof(offer), WSI_TOKEN_EXTENSIONS);
	if (n < 0)
		snprintf(o, sizeof(o), "?");
	else
		quoted(o, sizeof(o), offer);
	if (pc->known)
		quoted(r, sizeof(r), pc->answer);
	else
		snprintf(r, sizeof(r), "?");
	printf("WSBENCH-DEFLATE offered=%s response=%s\n", o, r);
	fflush(stdout);
}

int pmd_too_big(struct lws *wsi)
{
	static const char why[] = "message too big";
	unsigned char frame[LWS_PRE + 4 + sizeof(why)], *p = frame + LWS_PRE;
	size_t n = sizeof(why) - 1;

	if (!lws_get_close_length(wsi)) {
		/* lws' own record of it: nothing more is echoed (echo.c) */
		lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
				 (unsigned char *)why, n);
		p[0] = 0x88;			/* FIN, close */
		p[1] = (unsigned char)(2 + n);	/* unmasked, <= 125 */
		p[2] = (unsigned char)(LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE >> 8);
		p[3] = (unsigned char)LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE;
		memcpy(p + 4, why, n);
		lws_write(wsi, p, 4 + n, LWS_WRITE_RAW);
		lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
	}
	return -1;
}
#endif
