/* protocol.c - see protocol.h. */
#include "capture/protocol.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static bool is(const char *s, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(s, word, len) == 0;
}

static int own(const char *name, size_t len, const char *stem);

/* "@stackfold_t[_a|_b]:" */
static bool short_total(const char *s, size_t len)
{
	const char *c = memchr(s, ':', len);
	return c && own(s, (size_t)(c - s), PROTOCOL_OWN_TOTAL_SHORT) >= 0;
}

enum protocol_line protocol_line(const char *s, size_t len)
{
	if (sf_starts(s, len, "@"))
		return sf_starts(s, len, PROTOCOL_OWN_TOTAL) ||
		       short_total(s, len) ? PROTOCOL_TOTAL : PROTOCOL_OTHER;
	if (!sf_starts(s, len, "#"))
		return PROTOCOL_OTHER;
	if (sf_starts(s, len, "#pid "))
		return PROTOCOL_PID;
	if (sf_starts(s, len, "#attached"))
		return PROTOCOL_ATTACHED;
	if (is(s, len, "#flushed"))
		return PROTOCOL_FLUSHED;
	if (is(s, len, "#end"))
		return PROTOCOL_END;
	if (sf_starts(s, len, "#window "))
		return PROTOCOL_WINDOW;
	if (sf_starts(s, len, PROTOCOL_MAPS_WORD " "))
		return PROTOCOL_MAPS;
	if (sf_starts(s, len, PROTOCOL_ENDMAPS_WORD))
		return PROTOCOL_ENDMAPS;
	if (sf_starts(s, len, "#meta "))
		return PROTOCOL_META;
	if (len > 8 && sf_starts(s, len, PROTOCOL_PYTHON_WORD " "))
		return PROTOCOL_PYTHON;
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
	int o = own(name, len, PROTOCOL_OWN_TOTAL);
	return o >= 0 ? o : own(name, len, PROTOCOL_OWN_TOTAL_SHORT);
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
	/* bt/profile-dwarf.bt's maps: a flush is one until "#flushed" */
	if (len > 15 && s[11] == 'd' && strchr("ukwn", s[12]) && s[13] == '_')
		return 1;
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
	[PROTOCOL_META_SIDEBAND_LOST] = "sideband_lost",
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

/* A byte bpftrace prints as itself in a buf(): it writes \xNN only for the
 * others, and a backslash as itself. */
static bool printable(int c)
{
	return c >= 32 && c <= 126;
}

/* The \xNN at s[i] (i + 3 < len): its byte, else -1. */
static int esc_at(const char *s, size_t len, size_t i)
{
	int hi, lo;
	if (s[i] != '\\' || i + 3 >= len || s[i + 1] != 'x' ||
	    (hi = sf_hexval((unsigned char)s[i + 2])) < 0 ||
	    (lo = sf_hexval((unsigned char)s[i + 3])) < 0)
		return -1;
	return hi << 4 | lo;
}

size_t protocol_comm_decode(const char *s, size_t len, char *out, size_t cap)
{
	/* Tokens: bytes, and \xNN.  A \xNN of a printable byte is the four
	 * characters (bpftrace would have printed the byte); one of another
	 * is that byte, or the four characters of a name that holds them:
	 * the PROTOCOL_COMM_BYTES bytes printed tell how many are which. */
	size_t ntok = 0, nesc = 0, amb = 0, min = 0;
	int c = -1;	/* the last token's byte, -1 for a character */
	for (size_t i = 0; i < len; ntok++) {
		c = esc_at(s, len, i);
		nesc += c >= 0;
		amb += c >= 0 && !printable(c);
		min += c >= 0 && printable(c) ? 4 : 1;
		i += c >= 0 ? 4 : 1;
	}
	/* %rx (every byte escaped): exactly PROTOCOL_COMM_BYTES escapes */
	bool rx = nesc == ntok && ntok == PROTOCOL_COMM_BYTES;
	size_t literal = 0;
	/* a comm has at most 15 bytes: the last one printed is a NUL */
	if (!rx && c == 0 && min < PROTOCOL_COMM_BYTES &&
	    (PROTOCOL_COMM_BYTES - min) % 3 == 0 && (PROTOCOL_COMM_BYTES - min) / 3 < amb)
		literal = (PROTOCOL_COMM_BYTES - min) / 3;
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < cap;) {
		c = esc_at(s, len, i);
		bool esc = c >= 0 && (rx || !printable(c));
		if (esc && !rx && literal) {	/* the leftmost are the text */
			literal--;
			esc = false;
		}
		if (esc && !c)
			break;	/* the name ends at its NUL */
		if (esc) {
			out[n++] = (char)c;
			i += 4;
		} else {
			out[n++] = s[i++];
		}
	}
	out[n] = 0;
	return n;
}

bool protocol_pid_line(const char *s, size_t len, struct protocol_pid *out)
{
	const char *e = s + len;
	if (!sf_starts(s, len, "#pid "))
		return false;
	/* PID[:STACK[:PARENT]] */
	const char *q = skip_ws(s + 5, e);
	uint64_t v[3] = { 0, 0, 0 };
	for (int f = 0; f < 3; f++) {
		const char *fe = q;
		while (fe < e && *fe != ' ' && *fe != ':')
			fe++;
		if (!sf_parse_u64(q, (size_t)(fe - q), &v[f]))
			return false;
		q = fe;
		if (q >= e || *q != ':')
			break;
		q++;
	}
	if ((q < e && *q != ' ') || !protocol_pid_of(v[0]) ||
	    protocol_pid_of(v[0]) > INT32_MAX || protocol_pid_of(v[2]) > INT32_MAX)
		return false;
	q = skip_ws(q, e);
	*out = (struct protocol_pid){ .pid = protocol_pid_of(v[0]),
				      .image = protocol_image_of(v[0]),
				      .start_stack = v[1],
				      .parent_pid = protocol_pid_of(v[2]),
				      .parent_image = protocol_image_of(v[2]) };
	out->comm_len = protocol_comm_decode(q, (size_t)(e - q), out->comm_buf,
					     sizeof(out->comm_buf));
	out->comm = out->comm_buf;
	return true;
}

/* A child whose own map could not be read (it exited) and whose line names
 * its parent (no exec since the fork, the parent's start of stack: the
 * probe checked) gets a copy of the parent's map, the parent snapshotted
 * now if it has none.  The parent's map as it is now, not at the fork: a
 * library it mapped since is in it too.  0 or -errno. */
static int snapshot_from_parent(struct sym_session *ss,
				const struct protocol_pid *pl)
{
	int ppid = (int)pl->parent_pid;
	uint32_t pimage = pl->parent_image;
	if (!ppid || protocol_image_capped(pimage))
		return -ENOENT;
	if (!sym_process_known(ss, ppid, pimage) &&
	    sym_process_snapshot(ss, ppid, pimage, pl->start_stack, NULL))
		return -ESRCH;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	int ret = sym_process_write_maps(ss, ppid, pimage, f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret)
		ret = sym_process_load_maps(ss, (int)pl->pid, pl->image, text, len,
					    NULL, NULL);
	free(text);
	return ret;
}

int protocol_snapshot(struct sym_session *ss, const struct protocol_pid *pl)
{
	int pid = (int)pl->pid;
	if (!ss || protocol_image_capped(pl->image))
		return -1;	/* past the exec cap: several programs' key */
	if (!sym_process_newer_known(ss, pid, pl->image) &&
	    !sym_process_snapshot(ss, pid, pl->image, pl->start_stack, NULL))
		return 0;
	/* gone, or exec'd since: the image of the sample ran no exec since
	 * its fork when the parent is named, so the parent's map is its */
	return snapshot_from_parent(ss, pl) ? -1 : 0;
}
