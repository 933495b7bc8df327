/*
 * fuzz_dwarfrec.c - libFuzzer target: lines of bt/profile-dwarf.bt's
 * flushed maps (@stackfold_du_a ...) and of the per-sample records of
 * earlier versions (#U, #K ... #k, #W) through the sample assembler.
 *
 * Checked on every input: each emitted sample's stack copy and kernel
 * frames are read whole (ASan sees any overrun), its comm is as long as
 * said; and when each CPU's sequence numbers never go back (as bpftrace
 * prints them), every sample is counted once: emitted + partial is at
 * most the number of headers plus the seqs first named by another record;
 * with the flushed maps' lines, emitted samples are at most their headers.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/dwarfrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static int on_sample(void *ctx, const struct dw_sample *s)
{
	for (size_t i = 0; i < s->stack_len; i++)
		sink += s->stack[i];
	for (size_t i = 0; i < s->nkframes; i++)
		sink += s->kframes[i];
	if (s->nkframes > DWREC_MAX_KFRAMES || s->comm_len > 16 ||
	    strlen(s->comm) != s->comm_len)
		abort();
	(void)ctx;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwrec *d = dwrec_new(on_sample, NULL);
	uint64_t last[64], keys = 0, map_headers = 0;
	bool ordered = true, maps = false;
	memset(last, 0xff, sizeof(last));
	if (!d)
		abort();
	const char *p = (const char *)data, *end = p + size;
	for (size_t line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		/* the whole line: a cut copy can lose a seq the parser sees */
		char *buf = malloc(len + 3);
		unsigned long long cpu, seq;
		if (!buf)
			abort();
		memcpy(buf, p, len);
		memset(buf + len, 0, 3);
		int n = buf[0] == '#' && buf[1] == 'W' ? sscanf(buf + 2, "%llu %llx", &cpu, &seq)
							 : sscanf(buf + 2, "%llu %llu", &cpu, &seq);
		if (buf[0] == '#' && buf[1] == 'W')
			seq >>= 8;
		if (n == 2 && buf[0] == '#' && strchr("UWK", buf[1])) {
			if (cpu >= 64)
				ordered = false;
			else if (last[cpu] != UINT64_MAX && last[cpu] > seq)
				ordered = false;
			else if (buf[1] == 'U' || last[cpu] == UINT64_MAX || last[cpu] < seq)
				keys++;	/* a header, or a seq whose header was lost */
			if (cpu < 64)
				last[cpu] = seq;
		}
		if (len >= 12 && !memcmp(buf, "@stackfold_d", 12)) {
			maps = true;
			map_headers += len >= 14 && buf[12] == 'u' && buf[13] == '_';
		}
		free(buf);
		if (dwrec_wants(d, p, len) && dwrec_line(d, p, len, line) < 0)
			abort();	/* only -ENOMEM: not under the fuzzer */
		p += len + 1;
	}
	if (dwrec_finish(d) < 0)
		abort();
	const struct dwrec_counters *c = dwrec_counters(d);
	if (!maps && ordered && c->samples + c->partial > keys)
		abort();
	if (maps && c->samples > keys + map_headers)
		abort();
	dwrec_free(d);
	return 0;
}
