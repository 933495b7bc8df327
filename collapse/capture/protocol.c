/* protocol.c - see protocol.h. */
#include "capture/protocol.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

static bool starts(const char *s, size_t len, const char *pfx)
{
	size_t n = strlen(pfx);
	return len >= n && memcmp(s, pfx, n) == 0;
}

static bool is(const char *s, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(s, word, len) == 0;
}

enum protocol_line protocol_line(const char *s, size_t len)
{
	if (starts(s, len, "@"))
		return starts(s, len, PROTOCOL_OWN_TOTAL) ? PROTOCOL_TOTAL :
							    PROTOCOL_OTHER;
	if (!starts(s, len, "#"))
		return PROTOCOL_OTHER;
	if (starts(s, len, "#pid "))
		return PROTOCOL_PID;
	if (starts(s, len, "#attached"))
		return PROTOCOL_ATTACHED;
	if (is(s, len, "#flushed"))
		return PROTOCOL_FLUSHED;
	if (is(s, len, "#end"))
		return PROTOCOL_END;
	if (starts(s, len, PROTOCOL_MAPS_WORD " "))
		return PROTOCOL_MAPS;
	if (starts(s, len, PROTOCOL_ENDMAPS_WORD))
		return PROTOCOL_ENDMAPS;
	if (starts(s, len, "#meta "))
		return PROTOCOL_META;
	return PROTOCOL_OTHER;
}

/* NAME after STEM: "_a" 0, "_b" 1, "" 2, else -1. */
static int own(const char *name, size_t len, const char *stem)
{
	size_t n = strlen(stem);
	if (len < n || memcmp(name, stem, n))
		return -1;
	if (len == n)
		return 2;
	if (len == n + 2 && name[n] == '_' && (name[n + 1] == 'a' || name[n + 1] == 'b'))
		return name[n + 1] - 'a';
	return -1;
}

int protocol_own_map(const char *name, size_t len)
{
	return own(name, len, PROTOCOL_OWN_MAP);
}

int protocol_own_total(const char *name, size_t len)
{
	return own(name, len, PROTOCOL_OWN_TOTAL);
}

int protocol_own_entry(const char *s, size_t len)
{
	const char *b = memchr(s, '[', len);
	return b ? protocol_own_map(s, (size_t)(b - s)) : -1;
}

bool protocol_own_stem(const char *name)
{
	return strncmp(name, PROTOCOL_OWN_MAP, strlen(PROTOCOL_OWN_MAP)) == 0;
}

int protocol_in_print(const char *s, size_t len)
{
	if (len <= 13 || memcmp(s, "@stackfold_", 11) != 0)
		return -1;
	return s[12] == '[' && (s[11] == 'a' || s[11] == 'b');
}

static const char *const meta_names[PROTOCOL_META_UNKNOWN] = {
	[PROTOCOL_META_HZ] = "hz",
	[PROTOCOL_META_START_NS] = "start_ns",
	[PROTOCOL_META_DURATION_NS] = "duration_ns",
	[PROTOCOL_META_BPFTRACE] = "bpftrace",
	[PROTOCOL_META_KERNEL] = "kernel",
	[PROTOCOL_META_HOST] = "host",
	[PROTOCOL_META_CMDLINE] = "cmdline",
	[PROTOCOL_META_LOST] = "lost",
	[PROTOCOL_META_STACKID_ERRORS] = "stackid_errors",
	[PROTOCOL_META_ENDED] = "ended",
};

const char *protocol_meta_name(enum protocol_meta k)
{
	return k < PROTOCOL_META_UNKNOWN ? meta_names[k] : "";
}

enum protocol_meta protocol_meta_key(const char *k, size_t klen)
{
	for (int i = 0; i < PROTOCOL_META_UNKNOWN; i++)
		if (is(k, klen, meta_names[i]))
			return (enum protocol_meta)i;
	return PROTOCOL_META_UNKNOWN;
}

size_t protocol_meta_line(char *buf, size_t size, enum protocol_meta k,
			  const char *value)
{
	int n = snprintf(buf, size, "#meta %s %s", protocol_meta_name(k), value);
	if (n <= 0 || !size)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* bpftrace prints a buf()'s NUL bytes as "\x00": dropped from a comm's end */
static size_t strip_nul_escapes(const char *s, size_t len)
{
	static const char esc[] = "\\x00";
	const size_t n = sizeof(esc) - 1;
	while (len >= n && memcmp(s + len - n, esc, n) == 0)
		len -= n;
	return len;
}

bool protocol_pid_line(const char *s, size_t len, struct protocol_pid *out)
{
	const char *e = s + len;
	if (!starts(s, len, "#pid "))
		return false;
	const char *p = skip_ws(s + 5, e), *q = p, *colon = NULL;
	uint64_t v, stack = 0;
	while (q < e && *q != ' ') {
		if (*q == ':' && !colon)
			colon = q;
		q++;
	}
	const char *ve = colon ? colon : q;
	if (!sf_parse_u64(p, (size_t)(ve - p), &v) || !protocol_pid_of(v) ||
	    protocol_pid_of(v) > INT32_MAX ||
	    (colon && !sf_parse_u64(colon + 1, (size_t)(q - colon - 1), &stack)))
		return false;
	q = skip_ws(q, e);
	*out = (struct protocol_pid){ .pid = protocol_pid_of(v),
				      .image = protocol_image_of(v),
				      .start_stack = stack, .comm = q,
				      .comm_len = strip_nul_escapes(q, (size_t)(e - q)) };
	return true;
}

int protocol_snapshot(struct sym_session *ss, const struct protocol_pid *pl)
{
	int pid = (int)pl->pid;
	if (!ss || sym_process_newer_known(ss, pid, pl->image) ||
	    sym_process_snapshot(ss, pid, pl->image, pl->start_stack, NULL))
		return -1;
	return 0;
}
