/*
 * demangle.c - C++ and Rust symbol demangling through the toolchain's own
 * demangler, so names match `addr2line -C` byte for byte.
 *
 * Preferred: libiberty's cplus_demangle() (libiberty-dev), the demangler
 * binutils itself uses; it knows C++ (_Z) and Rust (legacy _ZN..17h<hash>E
 * and v0 _R).  Built in when SF_HAVE_LIBIBERTY is defined and the binary is
 * linked with -liberty.
 *
 * Fallback (no Makefile support for -liberty): libstdc++'s __cxa_demangle,
 * the same cp-demangle code, looked up with dlopen("libstdc++.so.6") so that a
 * C program need not link the C++ runtime.  It only knows C++; Rust names
 * are then left mangled rather than demangled wrongly (a legacy Rust name
 * would otherwise keep its ::h<hash> suffix).  When neither is available,
 * names stay mangled.
 */
#include "elfidx_priv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef SF_HAVE_LIBIBERTY
#include <libiberty/demangle.h>

static char *demangle_raw(const char *name)
{
	if (!name || (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

#else

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);
static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void cxa_load(void)
{
	/* Never dlclose()d: the library stays for the process lifetime. */
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&cxa_demangle = dlsym(h, "__cxa_demangle");
}

/* _ZN...17h<16 hex>E: a legacy Rust symbol; cp-demangle would keep the hash. */
static bool is_rust_legacy(const char *name)
{
	size_t n = strlen(name);
	if (n < 23 || name[n - 1] != 'E' || strncmp(name, "_ZN", 3))
		return false;
	const char *h = name + n - 20;	/* "17h" 16 hex digits "E" */
	if (strncmp(h, "17h", 3))
		return false;
	for (int i = 3; i < 19; i++)
		if (!strchr("0123456789abcdef", h[i]))
			return false;
	return true;
}

static char *demangle_raw(const char *name)
{
	if (!name || strncmp(name, "_Z", 2) || is_rust_legacy(name))
		return NULL;
	pthread_once(&cxa_once, cxa_load);
	if (!cxa_demangle)
		return NULL;
	int status = 0;
	char *out = cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
#endif

/* A PLT stub's synthesized name (elfplt.c) keeps its suffix, as perf
 * prints it: std::__throw_length_error(char const*)@plt. */
char *sf_demangle(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n <= 4 || strcmp(name + n - 4, "@plt"))
		return demangle_raw(name);
	char *base = strndup(name, n - 4), *dm = base ? demangle_raw(base) : NULL;
	free(base);
	char *out = dm ? malloc(strlen(dm) + sizeof("@plt")) : NULL;
	if (out) {
		strcpy(out, dm);
		strcat(out, "@plt");
	}
	free(dm);
	return out;
}

/* --- demangled at lookup --- */

struct dmcache {
	struct u64map ids;	/* name offset + 1 -> uint32_t id in strs */
	struct strtab strs;
};

struct dmcache *dmcache_new(void)
{
	struct dmcache *c = calloc(1, sizeof(*c));
	if (c && strtab_init(&c->strs)) {
		free(c);
		return NULL;
	}
	if (c)
		c->ids.valsz = sizeof(uint32_t);
	return c;
}

void dmcache_free(struct dmcache *c)
{
	if (!c)
		return;
	u64map_release(&c->ids);
	strtab_release(&c->strs);
	free(c);
}

const char *dmcache_name(struct dmcache *c, const char *strs, uint32_t off)
{
	const char *raw = strs + off;
	bool found;
	uint32_t *id;

	if (!c || raw[0] != '_' ||
	    !(id = u64map_slot(&c->ids, (uint64_t)off + 1, &found)))
		return raw;
	if (!found) {
		char *dm = sf_demangle(raw);
		int64_t n = strtab_intern_cstr(&c->strs, dm ? dm : raw);
		free(dm);
		*id = n < 0 ? UINT32_MAX : (uint32_t)n;
	}
	return *id == UINT32_MAX ? raw : strtab_get(&c->strs, *id);
}
