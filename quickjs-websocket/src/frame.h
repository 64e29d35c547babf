/* own RFC 6455 client framing, opt "framing" (frame.c) */
#ifndef QJSWS_FRAME_H
#define QJSWS_FRAME_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

/* received bytes of an own-framing connection go to this function (set once) */
typedef void (*own_sink_fn)(conn *c, const uint8_t *p, size_t n);
void own_init(own_sink_fn sink);
void framing_destroy(void);
void own_free_queue(conn *c);
int own_append(conn *c, int opcode, const uint8_t *p, size_t len);
int own_flush(conn *c);
void own_kick(conn *c);
void own_mark_dirty(conn *c);
void own_random(uint8_t *out, size_t n);
void own_read_now(conn *c);
void own_post_service(void);
void own_send_close(conn *c, int code, const char *reason, size_t rlen);
void own_release(conn *c);
void own_established(conn *c);
void own_message_end(conn *c);
void own_handover(void);
void own_read_all(void);
void service_one(int fd, short events, short revents);

#pragma GCC visibility pop

#endif
