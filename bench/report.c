/* report.c - collecting result rows, printing the table and writing the CSV. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define BENCH_MAX_ROWS 256
static bench_row rows[BENCH_MAX_ROWS];
static size_t n_rows;

static const char *result_name(bench_result r) {
  switch (r) {
    case BENCH_PASS: return "PASS";
    case BENCH_FAIL: return "FAIL";
    case BENCH_INFO: return "info";
    default: return "SKIP";
  }
}

/* "12.3 ms", "-" for NAN. */
static void fmt_value(char *out, size_t size, double v, const char *unit) {
  if (isnan(v))
    snprintf(out, size, "-");
  else
    snprintf(out, size, "%.4g %s", v, unit);
}

static double ratio_of(const bench_row *r) {
  if (isnan(r->cujit) || isnan(r->baseline) || r->baseline == 0) return NAN;
  return r->cujit / r->baseline;
}

void bench_add(const bench_row *row) {
  char c[32], b[32];
  if (n_rows == BENCH_MAX_ROWS) return;
  rows[n_rows++] = *row;
  fmt_value(c, sizeof c, row->cujit, row->unit);
  fmt_value(b, sizeof b, row->baseline, row->unit);
  fprintf(stderr, "  %-44s %12s %12s  %s %s\n", row->metric, c, b, result_name(row->result),
          row->result == BENCH_SKIP ? row->goal : "");
}

static void fill(bench_row *r, const char *group, const char *metric, double param,
                 const char *unit, double cujit, double baseline, const char *goal) {
  memset(r, 0, sizeof *r);
  snprintf(r->group, sizeof r->group, "%s", group);
  snprintf(r->metric, sizeof r->metric, "%s", metric);
  snprintf(r->unit, sizeof r->unit, "%s", unit);
  snprintf(r->goal, sizeof r->goal, "%s", goal ? goal : "");
  r->param = param;
  r->cujit = cujit;
  r->baseline = baseline;
  r->allowed = NAN;
}

void bench_ratio(const char *group, const char *metric, double param, const char *unit,
                 double cujit, double baseline, double limit, const char *goal) {
  bench_row r;
  double ratio;
  fill(&r, group, metric, param, unit, cujit, baseline, goal);
  r.allowed = limit * baseline;
  ratio = ratio_of(&r);
  r.result = !isnan(ratio) && ratio <= limit ? BENCH_PASS : BENCH_FAIL;
  bench_add(&r);
}

void bench_info(const char *group, const char *metric, double param, const char *unit, double cujit,
                double baseline, const char *note) {
  bench_row r;
  fill(&r, group, metric, param, unit, cujit, baseline, note);
  r.result = BENCH_INFO;
  bench_add(&r);
}

void bench_check(const char *group, const char *metric, double param, const char *unit,
                 double cujit, double baseline, double allowed, int ok, const char *goal) {
  bench_row r;
  fill(&r, group, metric, param, unit, cujit, baseline, goal);
  r.allowed = allowed;
  r.result = ok ? BENCH_PASS : BENCH_FAIL;
  bench_add(&r);
}

void bench_skip(const char *group, const char *metric, const char *why) {
  bench_row r;
  fill(&r, group, metric, 0, "", NAN, NAN, why);
  r.result = BENCH_SKIP;
  bench_add(&r);
}

/* CSV fields never hold commas or quotes: they are replaced. */
static void csv_text(FILE *f, const char *s) {
  for (; *s; s++) fputc(*s == ',' ? ';' : *s == '"' ? '\'' : *s, f);
}

static void csv_number(FILE *f, double v) {
  if (!isnan(v)) fprintf(f, "%.6g", v);
}

int bench_write_csv(const char *path, const char *header) {
  FILE *f = fopen(path, "w");
  size_t i;
  const char *p;
  if (!f) return -1;
  for (p = header; p && *p;) { /* each header line as a comment */
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    fprintf(f, "# %.*s\n", (int)len, p);
    p += len + (eol ? 1 : 0);
  }
  fprintf(f, "group,metric,param,unit,cujit,baseline,ratio,allowed,goal,result\n");
  for (i = 0; i < n_rows; i++) {
    const bench_row *r = &rows[i];
    fprintf(f, "%s,", r->group);
    csv_text(f, r->metric);
    fprintf(f, ",%.17g,%s,", r->param, r->unit);
    csv_number(f, r->cujit);
    fputc(',', f);
    csv_number(f, r->baseline);
    fputc(',', f);
    csv_number(f, ratio_of(r));
    fputc(',', f);
    csv_number(f, r->allowed);
    fputc(',', f);
    csv_text(f, r->goal);
    fprintf(f, ",%s\n", result_name(r->result));
  }
  return fclose(f);
}

int bench_finish(const char *header) {
  size_t i;
  char c[32], b[32], q[16];
  int failed = 0;
  printf("%s\n", header);
  printf("%-46s %13s %13s %8s  %-40s %s\n", "metric", "cujit", "baseline", "ratio", "goal",
         "result");
  for (i = 0; i < n_rows; i++) {
    const bench_row *r = &rows[i];
    double ratio = ratio_of(r);
    fmt_value(c, sizeof c, r->cujit, r->unit);
    fmt_value(b, sizeof b, r->baseline, r->unit);
    if (isnan(ratio))
      snprintf(q, sizeof q, "-");
    else
      snprintf(q, sizeof q, "%.3f", ratio);
    printf("%-46s %13s %13s %8s  %-40s %s\n", r->metric, c, b, q, r->goal, result_name(r->result));
    failed += r->result == BENCH_FAIL;
  }
  return failed;
}
