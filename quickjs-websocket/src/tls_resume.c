/*
 * The sessions our TLS transport resumes (switch QJSWS_TLS_RESUME /
 * setTLSResume(), g_tls_resume): the newest resumable session per host and
 * port, in 64 slots, the least recently used replaced when every slot is
 * taken.  Kept here rather than in OpenSSL's own cache, which a client does
 * not look up; dropped when the CA file changes (they were verified against
 * the former one).
 */
#include "tls_resume.h"
#include "opts.h"

#include <stdint.h>
#include <string.h>

#define RESUME_SLOTS 64
struct resume_slot {
    SSL_SESSION *sess; /* our reference; NULL: a free slot */
    uint64_t used;
    int port;
    char host[256];
};

static struct {
    struct resume_slot slot[RESUME_SLOTS];
    uint64_t tick;
} R;

void tls_resume_clear(void)
{
    int i;
    for (i = 0; i < RESUME_SLOTS; i++) {
        SSL_SESSION_free(R.slot[i].sess);
        R.slot[i].sess = NULL;
    }
}

static struct resume_slot *find(const char *host, int port)
{
    int i;
    for (i = 0; i < RESUME_SLOTS; i++)
        if (R.slot[i].sess && R.slot[i].port == port && !strcmp(R.slot[i].host, host))
            return &R.slot[i];
    return NULL;
}

int tls_resume_keep(const char *host, int port, SSL_SESSION *sess)
{
    struct resume_slot *slot;
    int i;
    if (!g_tls_resume || strlen(host) >= sizeof(slot->host) || !SSL_SESSION_is_resumable(sess))
        return 0;
    slot = find(host, port);
    if (!slot) { /* a free slot, else the least recently used */
        slot = &R.slot[0];
        for (i = 0; i < RESUME_SLOTS && slot->sess; i++)
            if (!R.slot[i].sess || R.slot[i].used < slot->used)
                slot = &R.slot[i];
    }
    SSL_SESSION_free(slot->sess);
    slot->sess = sess;
    slot->used = ++R.tick;
    slot->port = port;
    strcpy(slot->host, host);
    return 1;
}

void tls_resume_offer(SSL *ssl, const char *host, int port)
{
    struct resume_slot *slot;
    if (!g_tls_resume)
        return;
    slot = find(host, port);
    if (slot && SSL_set_session(ssl, slot->sess) == 1)
        slot->used = ++R.tick;
}
