/*
 * http.h - the stores' addresses and their HTTP transport (libcurl).
 *
 * A store URL names the kind of store, where it listens and what to write
 * to:
 *   clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE   (HTTP, port 8123)
 * HOST is a name, an IPv4 address or an IPv6 literal in brackets ([::1]).
 *   clickhouses://...                                     (HTTPS, port 8443)
 *   pyroscope://HOST[:PORT][/APP]  (HTTP, port 4040; APP default stackfold)
 *   pyroscopes://...               (HTTPS)
 * A password can also come from a file (store_url_auth_file()), so that it
 * is never on a command line that ps shows.
 *
 * HTTPS is always verified (peer certificate and host name; there is no
 * way to turn that off).  By default against the system's CAs; with
 * store_url_cacert() against the CA certificates of one PEM file only,
 * for a store whose certificate a private CA signed.
 *
 * struct http_conn keeps one libcurl handle (libcurl is loaded at run time): its connection is reused
 * between requests.  Nothing here prints; errors are negative errno values
 * with a text in sf_err.
 */
#ifndef SF_STORE_HTTP_H
#define SF_STORE_HTTP_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "store/buf.h"
#include "base/util.h"

enum store_kind { STORE_CLICKHOUSE = 1, STORE_PYROSCOPE };

struct store_url {
	enum store_kind kind;
	bool tls;
	char host[256];		/* an IPv6 literal with its brackets */
	unsigned port;
	char path[256];		/* DATABASE or APP, without the '/' */
	char user[128], password[256];
	char cacert[PATH_MAX];	/* PEM file of the CAs trusted; "" system's */
	char text[800];		/* the URL without its password, for logs */
};

/* Parse s.  0, or -EINVAL with the reason in err. */
int store_url_parse(const char *s, struct store_url *u, struct sf_err *err);
/* Read "USER:PASSWORD" or "PASSWORD" (first line) from path into u.  0,
 * or a negative errno with err filled. */
int store_url_auth_file(struct store_url *u, const char *path,
			struct sf_err *err);

/* Trust only the CA certificates in the PEM file path for u (HTTPS; no
 * effect on plain HTTP).  libcurl opens the file when it connects; it
 * is checked here first: a regular file (not a FIFO, device or socket:
 * root does not block on a name other users may control), readable, that
 * holds a PEM certificate.  0, or a negative errno (-EINVAL: not a
 * regular file, no certificate, or a name too long) with err filled. */
int store_url_cacert(struct store_url *u, const char *path,
		     struct sf_err *err);

struct http_conn {
	void *curl;		/* CURL * */
	const struct store_url *url;	/* not owned */
	long status;		/* of the last request, 0 when none came */
	size_t sent_bytes;	/* request bodies so far */
	/* An answer without a header of this prefix ("X-ClickHouse-") is
	 * no answer of the store's (another server on its port): NULL none */
	const char *need_header;
	/* When set and *abort_at_ns (CLOCK_MONOTONIC, read atomically) is
	 * nonzero and past, a request under way is abandoned (a stop that
	 * must not wait for a store that hangs): not owned */
	const uint64_t *abort_at_ns;
};

/* Load libcurl (once; see store/curlapi.h): 0, or -ENOENT with the reason
 * in err.  Must succeed before http_conn_init(). */
int http_global_init(struct sf_err *err);
int http_conn_init(struct http_conn *c, const struct store_url *u);
void http_conn_release(struct http_conn *c);

/*
 * POST body (may be empty) to the store at path_query ("/?query=..." or
 * "/ingest?..."), with content_type (NULL for none); the response body is
 * appended to resp (may be NULL).  timeout_s bounds the whole request.
 * An answer longer than resp_max (0: HTTP_ANSWER_MAX, or HTTP_NOBODY_MAX
 * when resp is NULL) fails the request: each caller bounds an answer to
 * what it can hold (a count is a few bytes).  An INSERT is never sent
 * twice by the transport (no resend on a fresh connection after a reused
 * one died): a request either reaches the store once or fails.
 * 0 on a 2xx answer; -EACCES on 401 or 403 (authentication failed);
 * -EIO when the store answered otherwise (err holds the status and the
 * answer's first line); -EPROTO a 2xx without need_header; -ECONNREFUSED,
 * -ETIMEDOUT or -EHOSTDOWN when it could not be reached; -ECANCELED
 * abandoned at abort_at_ns; -EFBIG an answer past the bound; -ENOMEM.
 */
#define HTTP_ANSWER_MAX ((size_t)1 << 30)	/* a query's rows */
#define HTTP_NOBODY_MAX ((size_t)1 << 20)	/* "ok", an error text */
int http_post(struct http_conn *c, const char *path_query,
	      const char *content_type, const void *body, size_t len,
	      struct buf *resp, size_t resp_max, long timeout_s,
	      struct sf_err *err);
/* The URL-encoded form of s appended to b (RFC 3986 unreserved kept). */
void http_urlencode(struct buf *b, const char *s, size_t n);

#endif
