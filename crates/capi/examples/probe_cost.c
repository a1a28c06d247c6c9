/*
 * probe_cost.c - the cost of a probe through libdtz50's C interface, on the
 * positions examples/probe_cost.rs writes (see BENCHMARKS.md).
 *
 *   cc -O2 -I crates/capi/include crates/capi/examples/probe_cost.c \
 *      -L target/release -ldtz50 -Wl,-rpath,target/release -o probe_cost
 *   ./probe_cost TABLES < positions.txt
 *
 * Prints the mean time per call of tb_probe_wdl and dtz50_probe (over all
 * positions) and tb_probe_root with its results array (over the first
 * tenth), hot: once to warm up, then ten timed rounds, the fastest kept,
 * as the Rust side measures.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tbprobe.h"

struct Pos {
    uint64_t bb[8];
    unsigned rule50, ep;
    bool turn;
};

static struct Pos *positions;
static size_t count;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long long wdl(const struct Pos *p)
{
    return tb_probe_wdl(p->bb[0], p->bb[1], p->bb[2], p->bb[3], p->bb[4], p->bb[5], p->bb[6],
                        p->bb[7], p->rule50, 0, p->ep, p->turn);
}

static long long verdict(const struct Pos *p)
{
    struct Dtz50Verdict v;
    if (!dtz50_probe(p->bb[0], p->bb[1], p->bb[2], p->bb[3], p->bb[4], p->bb[5], p->bb[6],
                     p->bb[7], p->rule50, 0, p->ep, p->turn, &v))
        return -9;
    return v.dtz;
}

static long long root(const struct Pos *p)
{
    unsigned results[TB_MAX_MOVES];
    return tb_probe_root(p->bb[0], p->bb[1], p->bb[2], p->bb[3], p->bb[4], p->bb[5], p->bb[6],
                         p->bb[7], p->rule50, 0, p->ep, p->turn, results);
}

/* Mean nanoseconds per call over the first n positions, hot. */
static double time_probe(long long (*probe)(const struct Pos *), size_t n)
{
    volatile long long sum = 0;
    double best = 1e300;
    for (int round = 0; round < 11; round++) {
        double start = now();
        for (size_t i = 0; i < n; i++)
            sum += probe(&positions[i]);
        double ns = (now() - start) / (double)n;
        if (round > 0 && ns < best)
            best = ns;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 2 || !tb_init(argv[1]) || TB_LARGEST == 0) {
        fprintf(stderr, "usage: probe_cost TABLES < positions\n");
        return 2;
    }
    size_t cap = 1 << 17;
    positions = malloc(cap * sizeof *positions);
    struct Pos p;
    unsigned turn;
    while (count < cap &&
           scanf("%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
                 " %" SCNx64 " %" SCNx64 " %u %u %u",
                 &p.bb[0], &p.bb[1], &p.bb[2], &p.bb[3], &p.bb[4], &p.bb[5], &p.bb[6],
                 &p.bb[7], &p.rule50, &p.ep, &turn) == 11) {
        p.turn = turn != 0;
        positions[count++] = p;
    }
    fprintf(stderr, "c    tb_probe_wdl        %8.1f ns\n", time_probe(wdl, count));
    fprintf(stderr, "c    dtz50_probe         %8.1f ns\n", time_probe(verdict, count));
    fprintf(stderr, "c    tb_probe_root       %8.1f ns\n", time_probe(root, count / 10));
    tb_free();
    free(positions);
    return 0;
}
