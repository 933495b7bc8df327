/*
 * demangle.c - C++ and Rust symbol demangling through the toolchain's own
 * demangler, so names match `addr2line -C` byte for byte: libiberty's
 * cplus_demangle() (libiberty-dev), the demangler binutils itself uses; it
 * knows C++ (_Z) and Rust (legacy _ZN..17h<hash>E and v0 _R).
 */
#include "elf/elfidx_priv.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

static char *demangle_raw(const char *name)
{
	if (!name || (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

/* A PLT stub's synthesized name (elfplt.c) keeps its suffix, as perf
 * prints it: std::__throw_length_error(char const*)@plt. */
char *demangle_name(const char *name)
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

struct demangle_cache {
	struct u64map ids;	/* name offset + 1 -> uint32_t id in strs */
	struct strtab strs;
};

struct demangle_cache *demangle_cache_new(void)
{
	struct demangle_cache *c = calloc(1, sizeof(*c));
	if (c && strtab_init(&c->strs)) {
		free(c);
		return NULL;
	}
	if (c)
		c->ids.valsz = sizeof(uint32_t);
	return c;
}

void demangle_cache_free(struct demangle_cache *c)
{
	if (!c)
		return;
	u64map_release(&c->ids);
	strtab_release(&c->strs);
	free(c);
}

const char *demangle_cache_name(struct demangle_cache *c, const char *strs,
				uint32_t off)
{
	const char *raw = strs + off;
	bool found;
	uint32_t *id;

	if (!c || raw[0] != '_' ||
	    !(id = u64map_slot(&c->ids, (uint64_t)off + 1, &found)))
		return raw;
	if (!found) {
		char *dm = demangle_name(raw);
		int64_t n = strtab_intern_cstr(&c->strs, dm ? dm : raw);
		free(dm);
		*id = n < 0 ? UINT32_MAX : (uint32_t)n;
	}
	return *id == UINT32_MAX ? raw : strtab_get(&c->strs, *id);
}
