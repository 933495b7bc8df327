/*
 * kallsyms.h - kernel text symbols from /proc/kallsyms.
 *
 * Only text symbols (types t, T, w, W) are kept, sorted by address,
 * without the __pfx_ padding symbols and the _etext marker.
 * Kernel symbols have no size, so an address matches the symbol at or
 * below it only up to the next symbol, never past `_etext` for the core
 * kernel and never past the module's end (from /proc/modules) for a
 * module; the last symbol with no known bound matches only its own
 * address.  When every address reads as zero (kptr_restrict, or no
 * CAP_SYSLOG) the table is marked `restricted` and nothing matches.
 *
 * Test hooks: the environment variables STACKFOLD_KALLSYMS and
 * STACKFOLD_MODULES replace the paths /proc/kallsyms and /proc/modules
 * (sym_session reads them through kallsyms_default_paths()).
 *
 * Ownership: names and modules are owned by the struct kallsyms and stay
 * valid until kallsyms_release().  Nothing prints.
 */
#ifndef SF_KALLSYMS_H
#define SF_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"
#include "base/util.h"

struct ksym {
	uint64_t addr, end;	/* matches [addr, end) */
	uint32_t name;		/* id in names */
	uint32_t mod;		/* index in mods: 0 is [kernel] */
};

struct kallsyms {
	struct ksym *v;
	size_t n, cap;
	struct strtab names;
	struct sym_module *mods;	/* path "[kernel]", "[ext4]", ... */
	size_t nmods;
	bool restricted;	/* all addresses were zero */
	uint64_t bad_lines;
};

/* Paths to read: $STACKFOLD_KALLSYMS / $STACKFOLD_MODULES or /proc's. */
void kallsyms_default_paths(const char **kallsyms, const char **modules);

/*
 * Load from a kallsyms file and (optional, may be NULL or unreadable) a
 * modules file.  Returns 0, -ENOMEM, or -errno when kallsyms cannot be
 * read.  On error k is left empty but valid for kallsyms_release().
 */
int kallsyms_load(struct kallsyms *k, const char *kallsyms_path,
		  const char *modules_path);
void kallsyms_release(struct kallsyms *k);

/* Symbol covering addr, or NULL. */
const struct ksym *kallsyms_find(const struct kallsyms *k, uint64_t addr);

/* Module an address falls into by module bounds, else mods[0]. */
const struct sym_module *kallsyms_module_of(const struct kallsyms *k,
					    uint64_t addr);

#endif
