/*
 * curlapi.c - libcurl through dlopen() (see curlapi.h for why).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "store/curlapi.h"

#define CURL_SONAME "libcurl.so.4"

static struct curl_api api;
static char why[256];
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym() returns void *; POSIX makes it convertible to a function pointer. */
#define SYM(field, name)                                             \
	do {                                                             \
		*(void **)&api.field = dlsym(h, name);                       \
		if (!api.field) {                                            \
			snprintf(why, sizeof(why), "%s: no %s", CURL_SONAME, name); \
			return;                                                  \
		}                                                            \
	} while (0)

static void load(void)
{
	void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, sizeof(why), "cannot load %s (install libcurl4): %s",
			 CURL_SONAME, e ? e : "not found");
		return;
	}
	SYM(global_init, "curl_global_init");
	SYM(easy_init, "curl_easy_init");
	SYM(easy_cleanup, "curl_easy_cleanup");
	SYM(easy_reset, "curl_easy_reset");
	SYM(easy_setopt, "curl_easy_setopt");
	SYM(easy_perform, "curl_easy_perform");
	SYM(easy_getinfo, "curl_easy_getinfo");
	SYM(easy_strerror, "curl_easy_strerror");
	SYM(slist_append, "curl_slist_append");
	SYM(slist_free_all, "curl_slist_free_all");
	if (api.global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(why, sizeof(why), "curl_global_init failed");
		return;
	}
	loaded = true;
}

const struct curl_api *curl_api_load(struct sf_err *err)
{
	pthread_once(&once, load);
	if (loaded)
		return &api;
	sf_err_set(err, ENOENT, "%s", why);
	return NULL;
}
