/*
 * pyroscope.h - windows to Grafana Pyroscope's HTTP ingest API:
 *   POST /ingest?name=APP{host=H,kernel=K[,LABELS]}&from=S&until=E&sampleRate=HZ
 *        &spyName=stackfold&units=samples&aggregationType=sum&format=folded
 * with the window's stacks as folded text ("comm;frame;... COUNT", the
 * process frame without its pid, as scripts/flame shows it).
 *
 * Pyroscope has no idempotency key: a window resent after an answer that
 * never arrived is counted twice there (ClickHouse deduplicates; see
 * clickhouse.h).  Label values keep [A-Za-z0-9_.-] and turn the rest into
 * '_' (Pyroscope's label syntax).  Nothing here prints.
 */
#ifndef SF_STORE_PYROSCOPE_H
#define SF_STORE_PYROSCOPE_H

#include "store/http.h"
#include "store/window.h"

/* 0 when Pyroscope answered 2xx; a negative errno otherwise. */
int pyro_deliver(struct http_conn *c, const struct store_window *w,
		 struct sf_err *err);

#endif
