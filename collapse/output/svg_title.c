/*
 * svg_title.c - the SVG flame graph's title and default subtitle (what
 * was captured, how, and what was lost or left out): see svg_title.h.
 */
#include "output/svg_title.h"
#include "model/losses.h"
#include "output/svg_layout.h"
#include "output/svg_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Samples drawn, whichever way the graph was built. */
uint64_t svg_input_total(const struct out_input *in)
{
	if (in->svg)
		return svg_stream_total(in->svg);
	return in->tree ? svg_tree_total(in->tree) : in->fold->total;
}

/* Append SEP (when buf is not empty) and "V WHAT". */
static void sub_add(char *buf, size_t cap, const char *sep, const char *what,
		    uint64_t v)
{
	size_t n = strlen(buf);
	if (n + 1 < cap)
		snprintf(buf + n, cap - n, "%s%" PRIu64 " %s", n ? sep : "", v,
			 what);
}

static void sub_meta(char *buf, size_t cap, const struct profile *p,
		     uint64_t samples, const char *unit);
static void sub_losses(char *buf, size_t cap, const struct pf_counters *c,
		       const char *who);

/* Does byte c start a character (not a UTF-8 continuation byte)? */
static bool u8_start(char c)
{
	return ((unsigned char)c & 0xc0) != 0x80;
}

/* Characters in s, counting UTF-8 sequences as one. */
static size_t u8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += u8_start(*s);
	return n;
}

/* "CMDLINE, " before rest, the command line cut ("..") to what the
 * subtitle's width leaves of its chars, at a character's start; left out
 * where fewer than 8 would show.  The counts and losses always show:
 * centred and unclipped, a long command line pushed them off the graph
 * (and a 1 KiB one off the buffer). */
static void sub_cmdline(char *buf, size_t cap, const char *cmd,
			const char *rest, size_t chars)
{
	size_t used = u8_chars(rest) + 2, room = chars > used ? chars - used : 0;
	if (room < 8) {
		snprintf(buf, cap, "%s", rest);
		return;
	}
	size_t len = 0, k = 0;
	for (; cmd[len] && k < room; len++)
		k += u8_start(cmd[len]);
	while (cmd[len] && !u8_start(cmd[len]))
		len++;	/* the rest of the last character */
	bool cut = cmd[len] != 0;
	if (cut)	/* room for "..": k falls only at a character's first
			 * byte, so len stops at one */
		while (len && k > room - 2)
			k -= u8_start(cmd[--len]);
	snprintf(buf, cap, "%.*s%s, %s", (int)len, cmd, cut ? ".." : "", rest);
}

/* "; 517 frames narrower than 0.1 px left out": what --minwidth dropped
 * (flamegraph.pl drops them silently) */
void svg_sub_left_out(char *buf, size_t cap, const struct out_opts *o,
		      size_t n)
{
	size_t len = strlen(buf);
	if (!n || len + 1 >= cap)
		return;
	if (o->minwidth_px)
		snprintf(buf + len, cap - len, "%s%zu frame%s narrower than %g px "
			 "left out", len ? "; " : "", n, n == 1 ? "" : "s",
			 o->minwidth);
	else
		snprintf(buf + len, cap - len, "%s%zu frame%s under %g%% left out",
			 len ? "; " : "", n, n == 1 ? "" : "s",
			 o->minwidth > 0 ? o->minwidth : DEFAULT_MIN_PCT);
}

/* "CMDLINE, 20.0 s at 999 Hz, 39876 samples; lost: 12 events, ..." from
 * what the profile knows, fitted to width px; "" when it knows nothing. */
void svg_default_subtitle(char *buf, size_t cap,
			     const struct out_input *in,
			     const struct out_opts *o, size_t left_out,
			     unsigned width, double fs, double fw)
{
	const struct profile *p = in->prof;
	uint64_t total = svg_input_total(in);
	buf[0] = 0;
	if (in->fold && in->fold->has_second) {
		snprintf(buf, cap,
			 "Differential: widths from after (%" PRIu64
			 "), colour by change %s before (%" PRIu64 "): %s",
			 in->fold->total, o->diff_counts ? "in count against" :
			 "in share against", in->fold->total2, o->negate ?
			 "blue grew, red shrank" : "red grew, blue shrank");
		if (in->counters)
			sub_losses(buf, cap, in->counters, "after ");
		if (in->counters_before)
			sub_losses(buf, cap, in->counters_before, "before ");
		svg_sub_left_out(buf, cap, o, left_out);
		return;
	}
	/* the sample count is the fold's: what the graph really shows, also
	 * for folded-text input, which has no profile */
	char rest[1024];
	rest[0] = 0;
	/* --countname: the counts' unit ("4000 ns"), as the tooltips say */
	const char *unit = o->countname && strcmp(o->countname, "samples") ?
			   o->countname : total == 1 ? "sample" : "samples";
	if (p)
		sub_meta(rest, sizeof(rest), p, total, unit);
	else
		sub_add(rest, sizeof(rest), "", unit, total);
	const struct pf_counters *k = p ? &p->counters : in->counters;
	if (k)
		sub_losses(rest, sizeof(rest), k, "");
	svg_sub_left_out(rest, sizeof(rest), o, left_out);
	size_t chars = (size_t)((width - 2.0 * XPAD) / (fs * fw));
	if (p && p->meta.cmdline)
		sub_cmdline(buf, cap, profile_str(p, p->meta.cmdline), rest, chars);
	else
		snprintf(buf, cap, "%s", rest);
}

/* "20.0 s at 999 Hz, 39876 samples" (the command line goes before it,
 * cut to fit: sub_cmdline()); unit names the count */
static void sub_meta(char *buf, size_t cap, const struct profile *p,
		     uint64_t samples, const char *unit)
{
	if (p->meta.duration_nanos) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, "%s%.1f s", n ? ", " : "",
			 (double)p->meta.duration_nanos / 1e9);
	}
	if (p->meta.hz)
		sub_add(buf, cap, p->meta.duration_nanos ? " at " : ", ", "Hz",
			p->meta.hz);
	sub_add(buf, cap, ", ", unit, samples);
}

/* "; lost: 12 events, 3 map-full drops; 2 truncated stacks", each part
 * after "; " led by who ("after ": "; after lost: 12 events") */
static void sub_losses(char *buf, size_t cap, const struct pf_counters *c,
		       const char *who)
{
	char first[32], semi[32];
	snprintf(first, sizeof(first), "; %slost: ", who);
	snprintf(semi, sizeof(semi), "; %s", who);
	const char *sep = first;
	/* samples lost, after "lost: ", then the marks, each after "; " */
	static const enum loss_id lost[] = {
		LOSS_LOST_EVENTS, LOSS_MAP_DROPPED, LOSS_MAP_FULL_WARNINGS,
		LOSS_CAPTURES_CUT, LOSS_STACKID_ERRORS, LOSS_INCOMPLETE_RECORDS,
		LOSS_UNPARSABLE_LINES,
	};
	static const enum loss_id marks[] = {
		LOSS_OVER_TOTAL, LOSS_TRUNCATED_STACKS, LOSS_NONSTACK_IGNORED,
		LOSS_MAPS_UNSAVED,
	};
	for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
		uint64_t v = loss_value(c, lost[i]);
		if (!v)
			continue;
		sub_add(buf, cap, sep, loss_word(lost[i], v), v);
		sep = ", ";
	}
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		uint64_t v = loss_value(c, marks[i]);
		if (v)
			sub_add(buf, cap, semi, loss_word(marks[i], v), v);
	}
}

const char *svg_default_title(const struct out_opts *o)
{
	if (o->title)
		return o->title;
	if (o->flamechart)
		return "Flame Chart";
	return o->inverted ? "Icicle Graph" : "Flame Graph";
}
