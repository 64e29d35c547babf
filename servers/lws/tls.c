#include "tls.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

/* The first error OpenSSL queued, or `dflt`, as text in `why`. */
static void openssl_reason(char *why, size_t len, const char *what,
			   const char *file, const char *dflt)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	snprintf(why, len, "%s %s: %s", what, file, r ? r : dflt);
	ERR_clear_error();
}

int tls_check_files(const char *cert, const char *key, char *why, size_t len)
{
	FILE *f;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int rc = -1;

	if (!(f = fopen(cert, "r"))) {
		snprintf(why, len, "cannot read the certificate %s: %s", cert, strerror(errno));
		return -1;
	}
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!x) {
		openssl_reason(why, len, "no PEM certificate in", cert, "unreadable");
		return -1;
	}
	if (!(f = fopen(key, "r"))) {
		snprintf(why, len, "cannot read the private key %s: %s", key, strerror(errno));
		goto out;
	}
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!k) {
		openssl_reason(why, len, "no PEM private key in", key, "unreadable");
		goto out;
	}
	if (X509_check_private_key(x, k) != 1) {
		ERR_clear_error();
		snprintf(why, len, "the private key %s does not belong to the certificate %s",
			 key, cert);
		goto out;
	}
	rc = 0;
out:
	EVP_PKEY_free(k);
	X509_free(x);
	return rc;
}

/* The negotiated key-exchange group by its IANA name ("x25519", "secp256r1"). */
static const char *group_name(SSL *ssl)
{
	int nid = SSL_get_negotiated_group(ssl);
	const char *name = nid > 0 ? SSL_group_to_name(ssl, nid) : NULL;

	return name ? name : "?";
}

void tls_report(struct lws *wsi)
{
	SSL *ssl;
	const SSL_CIPHER *cipher;
	const char *std;

	if (!lws_is_ssl(wsi) || !(ssl = lws_get_ssl(wsi)))
		return;
	cipher = SSL_get_current_cipher(ssl);
	std = cipher ? SSL_CIPHER_standard_name(cipher) : NULL;
	printf("WSBENCH-TLS version=%s cipher=%s group=%s resumed=%s library=\"%s\"\n",
	       SSL_get_version(ssl), std ? std : "?", group_name(ssl),
	       SSL_session_reused(ssl) ? "yes" : "no", OpenSSL_version(OPENSSL_VERSION));
	fflush(stdout);
}
