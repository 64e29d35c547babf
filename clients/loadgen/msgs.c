#include "msgs.h"
#include "corpus.h"
#include "utf8.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames up to this size come from the prebuilt ring. */
#define RING_FRAME_MAX (65536 + FRAME_HEADER_MAX)
#define RING_BYTES (2u << 20)
#define RING_MIN 16
#define RING_MAX 4096
#define SAMPLE_EVERY 64
#define SAMPLE_BYTES_PER_ECHO 16

/* permessage-deflate: the payload of the message being compressed (send_deflated) */
static unsigned char *zplain;

static const char ascii[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

/* The sequence field of message number k (as many bytes as m->field_len). */
static void field_of(const struct msgs *m, uint64_t k, unsigned char *out)
{
	unsigned i;

	if (m->opcode == OP_TEXT) {
		for (i = m->field_len; i-- > 0; k >>= 4)
			out[i] = (unsigned char)"0123456789abcdef"[k & 15];
	} else {
		for (i = 0; i < m->field_len; i++, k >>= 8)
			out[i] = (unsigned char)k;
	}
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "sequence fields are loaded little-endian");

/* A sequence field's bytes as one integer: field_len bytes, little-endian, the rest 0. */
static inline uint64_t load_field(const unsigned char *p, unsigned len)
{
	uint64_t v = 0;
	uint32_t v4;
	uint16_t v2;

	switch (len) {	/* constant sizes: plain loads, no library call */
	case 8:
		memcpy(&v, p, 8);
		return v;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	default:
		memcpy(&v, p, len);
		return v;
	}
}

/* The number a sequence field holds, or -1 if it is not one (text). */
static int64_t number_in(const struct msgs *m, const unsigned char *f)
{
	int64_t v = 0;
	unsigned i;

	if (m->opcode == OP_TEXT) {
		for (i = 0; i < m->field_len; i++) {
			int d = f[i] >= '0' && f[i] <= '9' ? f[i] - '0' :
				f[i] >= 'a' && f[i] <= 'f' ? f[i] - 'a' + 10 : -1;

			if (d < 0)
				return -1;
			v = v * 16 + d;
		}
	} else {
		for (i = m->field_len; i-- > 0;)
			v = v * 256 + f[i];
	}
	return v;
}

static uint64_t pow2_at_most(uint64_t n)
{
	uint64_t p = 1;

	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* The payload of ring slot j (numbered) while the ring is built: the corpus's own body
 * of slot j, or the one plain body. */
static void slot_payload(const struct msgs *m, int corpus, uint64_t j, unsigned char *out)
{
	if (!corpus)
		memcpy(out, m->plain, m->size);
	else if (m->opcode == OP_BINARY)
		corpus_random((unsigned)j, out, m->size);
	else
		corpus_json((unsigned)j, out + m->field_len, m->size - m->field_len);
	field_of(m, j, out);
}

void msgs_init(struct msgs *m, int binary, int mixed, size_t size, int verify, int corpus)
{
	size_t i, frame_len = FRAME_HEADER_MAX + size;
	unsigned char *scratch;
	uint64_t r, k;

	memset(m, 0, sizeof(*m));
	m->opcode = binary ? OP_BINARY : OP_TEXT;
	m->size = size;
	m->verify = verify;
	m->field_len = binary ? (size >= 4 ? 4 : size >= 2 ? 2 : (unsigned)size) :
				(size >= 8 ? 8 : (unsigned)size);
	m->plain = xmalloc(size);
	if (corpus && !verify)
		fail("--%s needs --verify on (unverified, one message is sent over and over)",
		     binary ? "bytes random" : "text json");
	if (corpus) {
		slot_payload(m, 1, 0, m->plain);
	} else if (binary) {
		for (i = 0; i < size; i++)
			m->plain[i] = (unsigned char)i;
	} else if (mixed) {
		utf8_mixed(m->plain + m->field_len, size - m->field_len);
	} else {
		for (i = m->field_len; i < size; i++)
			m->plain[i] = (unsigned char)ascii[(i - m->field_len) % (sizeof(ascii) - 1)];
	}
	field_of(m, 0, m->plain);
	m->field_mask = m->field_len >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * m->field_len)) - 1;
	for (k = SAMPLE_EVERY; k < (size + SAMPLE_BYTES_PER_ECHO - 1) / SAMPLE_BYTES_PER_ECHO; k *= 2)
		;
	m->sample_every = k;
	if (!corpus && (!verify || frame_len > RING_FRAME_MAX)) {
		/* identical frames; in head mode each message adds its own head */
		frameset_init(&m->fs, m->opcode, m->plain, size);
		m->head_mode = verify;
		m->hdr_len = m->fs.frame_len - size;
		return;
	}
	/* the corpus's ring has the JavaScript workload's size (verify.js ringSize) */
	r = pow2_at_most(RING_BYTES / (corpus ? (size ? size : 1) : frame_len));
	r = r < RING_MIN ? RING_MIN : r > RING_MAX ? RING_MAX : r;
	m->ring_mask = r - 1;
	m->fields = xcalloc(r, sizeof(*m->fields));
	m->fs.frames = xcalloc(r, sizeof(*m->fs.frames));
	m->fs.n = (unsigned)r;
	scratch = xmalloc(size);
	if (corpus)
		m->bodies = xmalloc(r * size);
	for (k = 0; k < r; k++) {
		slot_payload(m, corpus, k, scratch);
		if (corpus)
			memcpy(m->bodies + k * size, scratch, size);
		m->fields[k] = load_field(scratch, m->field_len);
		m->fs.frames[k] = xmalloc(frame_len);
		m->fs.frame_len = frame_build(m->fs.frames[k], m->opcode, scratch, size);
	}
	free(scratch);
	m->hdr_len = m->fs.frame_len - size;
}

void msgs_json_payload(uint64_t j, size_t size, unsigned char *out)
{
	struct msgs m;

	memset(&m, 0, sizeof(m));
	m.opcode = OP_TEXT;
	m.size = size;
	m.field_len = size >= 8 ? 8 : (unsigned)size;
	slot_payload(&m, 1, j, out);
}

void msgs_free(struct msgs *m)
{
	frameset_free(&m->fs);
	free(zplain);
	zplain = NULL;
	free(m->fields);
	free(m->bodies);
	free(m->plain);
	memset(m, 0, sizeof(*m));
}

void msgs_conn_init(const struct msgs *m, struct msgs_conn *mc, struct conn *c, uint64_t inflight)
{
	memset(mc, 0, sizeof(*mc));
	mc->c = c;
	mc->every = 1;
	mc->diff = -1;
	if (m->head_mode) {
		mc->nheads = inflight ? inflight : 1;
		mc->heads = xmalloc(mc->nheads * (m->hdr_len + m->field_len));
	}
}

void msgs_conn_free(struct msgs_conn *mc)
{
	free(mc->heads);
	mc->heads = NULL;
}

/* permessage-deflate: message k's payload (numbered), compressed by the connection's own
 * stream (context takeover makes every connection's bytes its own) and sent in a frame
 * of its own; the payload is stamped in zplain, one buffer for the process */

static __attribute__((noinline)) void send_deflated(const struct msgs *m, struct conn *c, uint64_t k)
{
	if (!m->verify) {
		conn_send_deflated(c, m->opcode, m->plain, m->size);
		return;
	}
	if (m->bodies) {	/* the corpus: the slot's own payload */
		conn_send_deflated(c, m->opcode, m->bodies + (k & m->ring_mask) * m->size, m->size);
		return;
	}
	if (!zplain) {
		zplain = xmalloc(m->size ? m->size : 1);
		memcpy(zplain, m->plain, m->size);
	}
	/* the number the checks expect: the ring slot's (k mod R), or k in head mode */
	field_of(m, m->head_mode ? k : k & m->ring_mask, zplain);
	conn_send_deflated(c, m->opcode, zplain, m->size);
}

void msgs_send(const struct msgs *m, struct msgs_conn *mc)
{
	struct conn *c = mc->c;
	uint64_t k = mc->ks++;
	const unsigned char *f;
	unsigned char *h;
	size_t hl;
	unsigned i;

	if (__builtin_expect(c->z != NULL, 0)) {
		send_deflated(m, c, k);
		return;
	}
	if (!m->head_mode) {
		f = m->fs.frames[m->verify ? k & m->ring_mask : k % m->fs.n];
		conn_send_ref(c, f, m->fs.frame_len);
		return;
	}
	/*
	 * The head of message k is reused for message k + nheads, which is only
	 * sent after the echo of k arrived (so after k was written whole).
	 */
	f = m->fs.frames[k % m->fs.n];
	hl = m->hdr_len + m->field_len;
	h = mc->heads + (k % mc->nheads) * hl;
	memcpy(h, f, m->hdr_len);
	field_of(m, k, h + m->hdr_len);
	for (i = 0; i < m->field_len; i++)
		h[m->hdr_len + i] ^= f[m->hdr_len - 4 + (i & 3)];
	conn_send_ref(c, h, hl);
	conn_send_ref(c, f + hl, m->size - m->field_len);
}

/* Whether echo kr is compared whole, and which echo is the next one that is. */
static void next_echo(const struct msgs *m, struct msgs_conn *mc)
{
	uint64_t last = mc->round_end ? mc->round_end - 1 : 0;

	mc->off = 0;
	mc->diff = -1;
	if (mc->kr > mc->next_whole)
		mc->next_whole += mc->every * ((mc->kr - mc->next_whole + mc->every - 1) / mc->every);
	mc->next_slow = mc->next_whole < last || mc->kr > last ? mc->next_whole : last;
	mc->whole = m->verify && mc->kr == mc->next_slow;
	mc->c->want_data = mc->whole;
}

void msgs_phase(const struct msgs *m, struct msgs_conn *mc, int measuring)
{
	mc->measuring = measuring;
	mc->every = measuring ? m->sample_every : 1;
	mc->next_whole = measuring ? mc->kr + mc->every - 1 : mc->kr;
	next_echo(m, mc);
}

void msgs_round(const struct msgs *m, struct msgs_conn *mc, uint64_t n)
{
	mc->round_end = mc->kr + n;
	next_echo(m, mc);
}

/* The payload echo k is compared with (its sequence field aside). */
static inline const unsigned char *payload_of(const struct msgs *m, uint64_t k)
{
	return m->bodies ? m->bodies + (k & m->ring_mask) * m->size : m->plain;
}

void msgs_dump(const struct msgs *m, FILE *out)
{
	unsigned char *p = xmalloc(m->size);
	uint64_t k, n = m->head_mode || !m->verify ? 1 : m->ring_mask + 1;

	for (k = 0; k < n; k++) {
		memcpy(p, payload_of(m, k), m->size);
		field_of(m, k, p);
		if (m->size && fwrite(p, 1, m->size, out) != m->size)
			fail("--dump-messages: cannot write");
	}
	free(p);
	fflush(out);
}

void msgs_on_data(const struct msgs *m, struct msgs_conn *mc,
		  const unsigned char *p, size_t n)
{
	const unsigned char *want = payload_of(m, mc->kr);
	size_t i, from, to;

	if (mc->whole && mc->diff < 0) {
		/* bytes [off, off + n) against the payload, the field excepted */
		from = mc->off > m->field_len ? mc->off : m->field_len;
		to = mc->off + n < m->size ? mc->off + n : m->size;
		if (from < to && memcmp(p + (from - mc->off), want + from, to - from)) {
			for (i = from; p[i - mc->off] == want[i]; i++)
				;
			mc->diff = (int64_t)i;
			mc->got = p[i - mc->off];
		}
	}
	mc->off += n;
}

static _Noreturn void wrong(const struct msgs *m, const struct msgs_conn *mc, int conn,
			    int opcode, uint64_t len, uint64_t got_field, uint64_t want_field)
{
	char who[128], on[48] = "", why[256] = "", tail[160] = "";
	unsigned char got[8], want[8];
	unsigned i;
	int64_t got_k, want_k;

	for (i = 0; i < 8; i++) {
		got[i] = (unsigned char)(got_field >> (8 * i));
		want[i] = (unsigned char)(want_field >> (8 * i));
	}
	if (conn >= 0)
		snprintf(on, sizeof(on), " on connection %d", conn + 1);
	snprintf(who, sizeof(who), "echo of message %" PRIu64 "%s (%s)", mc->kr + 1, on,
		 mc->measuring ? "measured" : "warm-up");
	if (opcode != m->opcode)
		fail("%s came back as %s of %" PRIu64 " bytes, sent as %s", who,
		     opcode == OP_TEXT ? "text" : "binary", len,
		     m->opcode == OP_TEXT ? "text" : "binary");
	if (len != m->size)
		fail("%s is %" PRIu64 " bytes long, sent %zu", who, len, m->size);
	for (i = 0; i < m->field_len; i++) {
		if (got[i] != want[i]) {
			snprintf(why, sizeof(why), "differs at byte %u: got 0x%02x, sent 0x%02x",
				 i, got[i], want[i]);
			got_k = number_in(m, got);
			want_k = number_in(m, want);
			if (got_k >= 0)
				snprintf(tail, sizeof(tail), "; it carries sequence number %" PRId64
					 ", this message's is %" PRId64 " (lost, duplicated or reordered echoes)",
					 got_k, want_k);
			fail("%s %s%s", who, why, tail);
		}
	}
	fail("%s differs at byte %" PRId64 ": got 0x%02x, sent 0x%02x", who, mc->diff,
	     mc->got, payload_of(m, mc->kr)[mc->diff]);
}

void msgs_echo_slow(const struct msgs *m, struct msgs_conn *mc, int conn, int opcode, uint64_t len)
{
	unsigned char want[8];
	uint64_t w, got;

	memcpy(&got, mc->c->msg_head, sizeof(got));
	got &= m->field_mask;
	if (m->head_mode) {
		field_of(m, mc->kr, want);
		w = load_field(want, m->field_len);
	} else {
		w = m->fields[mc->kr & m->ring_mask];
	}
	if (opcode != m->opcode || len != m->size || got != w || mc->diff >= 0)
		wrong(m, mc, conn, opcode, len, got, w);
	if (mc->whole && mc->measuring)
		mc->compared++;
	if (mc->kr == mc->next_whole)
		mc->next_whole += mc->every;
	mc->kr++;
	next_echo(m, mc);
}
