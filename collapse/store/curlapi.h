/*
 * curlapi.h - libcurl, loaded when a store is first used.
 *
 * Only continuous --push and query talk HTTP.  Linking libcurl would load
 * it and its 30-odd libraries (TLS, LDAP, SSH, Kerberos...) into every
 * stackfold run, some 7 ms and 6 MiB each; dlopen() keeps that cost to the
 * runs that use a store.  The table holds the few calls http.c makes.
 */
#ifndef SF_STORE_CURLAPI_H
#define SF_STORE_CURLAPI_H

#include <curl/curl.h>

#include "base/util.h"

struct curl_api {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *h);
	void (*easy_reset)(CURL *h);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};

/* Load libcurl.so.4 and run curl_global_init(), once per process (safe
 * from any thread).  The table, valid until exit; or NULL with the reason
 * in err (libcurl not installed, or a symbol missing). */
const struct curl_api *curl_api_load(struct sf_err *err);

#endif
