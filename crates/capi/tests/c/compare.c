/*
 * compare.c - drives every function of tbprobe.h for the Rust test
 * (tests/c_api.rs), which compares what it prints with the Rust API.
 *
 * Usage: compare PATHS RULE [CACHE_BYTES] < positions
 * With CACHE_BYTES the tables are opened by dtz50_init_cached (positional
 * reads, a bounded cache), else by tb_init / dtz50_init_rule (maps).
 * Each input line is a position: eight bitboards in hex (white black kings
 * queens rooks bishops knights pawns), then the halfmove clock, the
 * en-passant square and the side to move (1 White) in decimal. Each
 * position prints one line per function, tagged by its first letter; then
 * four threads probe every position again and must agree with the first
 * pass ("THREADS ok").
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbprobe.h"

_Static_assert(sizeof(struct TbRootMove) == 528, "TbRootMove layout");
_Static_assert(sizeof(struct TbRootMoves) == 4 + 528 * TB_MAX_MOVES, "TbRootMoves layout");

struct Pos {
    uint64_t bb[8];
    unsigned rule50, ep;
    bool turn;
    unsigned wdl, root;
};

#define MAX_POSITIONS 100000
static struct Pos positions[MAX_POSITIONS];
static size_t count;

static unsigned probe_wdl(const struct Pos *p)
{
    return tb_probe_wdl(p->bb[0], p->bb[1], p->bb[2], p->bb[3], p->bb[4], p->bb[5], p->bb[6],
                        p->bb[7], 0, 0, p->ep, p->turn);
}

static unsigned probe_root(const struct Pos *p, unsigned *results)
{
    return tb_probe_root(p->bb[0], p->bb[1], p->bb[2], p->bb[3], p->bb[4], p->bb[5], p->bb[6],
                         p->bb[7], p->rule50, 0, p->ep, p->turn, results);
}

static void print_root_moves(char tag, int ok, const struct TbRootMoves *rm)
{
    printf("%c %d %u", tag, ok, rm->size);
    for (unsigned i = 0; i < rm->size; i++) {
        const struct TbRootMove *m = &rm->moves[i];
        if (m->pvSize != 1 || m->pv[0] != m->move)
            printf(" badpv");
        printf(" %u:%d:%d", (unsigned)m->move, (int)m->tbRank, (int)m->tbScore);
    }
    printf("\n");
}

static void *recheck(void *arg)
{
    size_t *bad = arg;
    unsigned results[TB_MAX_MOVES];
    for (size_t i = 0; i < count; i++) {
        if (probe_wdl(&positions[i]) != positions[i].wdl)
            (*bad)++;
        if (probe_root(&positions[i], results) != positions[i].root)
            (*bad)++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: compare PATHS RULE [CACHE_BYTES] < positions\n");
        return 2;
    }
    unsigned rule = (unsigned)atoi(argv[2]);
    bool opened = argc == 4 ? dtz50_init_cached(argv[1], rule, (size_t)strtoull(argv[3], NULL, 10))
                  : rule == 50 ? tb_init(argv[1])
                               : dtz50_init_rule(argv[1], rule);
    printf("INIT %d %u %d\n", opened, TB_LARGEST, dtz50_rule());
    printf("CACHE %zu\n", dtz50_cache_bound());

    static struct TbRootMoves rm;
    unsigned results[TB_MAX_MOVES];
    struct Pos p;
    unsigned turn;
    while (count < MAX_POSITIONS &&
           scanf("%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
                 " %" SCNx64 " %" SCNx64 " %u %u %u",
                 &p.bb[0], &p.bb[1], &p.bb[2], &p.bb[3], &p.bb[4], &p.bb[5], &p.bb[6],
                 &p.bb[7], &p.rule50, &p.ep, &turn) == 11) {
        p.turn = turn != 0;
        const uint64_t *b = p.bb;

        p.wdl = probe_wdl(&p);
        printf("W %u %u\n", p.wdl,
               tb_probe_wdl(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], p.rule50, 0, p.ep,
                            p.turn));

        p.root = probe_root(&p, results);
        printf("R %u", p.root);
        for (unsigned i = 0; i < TB_MAX_MOVES && results[i] != TB_RESULT_FAILED; i++)
            printf(" %u", results[i]);
        printf("\nN %u\n", probe_root(&p, NULL));

        int ok = tb_probe_root_dtz(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], p.rule50, 0,
                                   p.ep, p.turn, false, true, &rm);
        print_root_moves('D', ok, &rm);
        ok = tb_probe_root_dtz(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], p.rule50, 0, p.ep,
                               p.turn, true, false, &rm);
        print_root_moves('d', ok, &rm);
        ok = tb_probe_root_wdl(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], p.rule50, 0, p.ep,
                               p.turn, true, &rm);
        print_root_moves('L', ok, &rm);
        ok = tb_probe_root_wdl(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], p.rule50, 0, p.ep,
                               p.turn, false, &rm);
        print_root_moves('l', ok, &rm);

        struct Dtz50Verdict v;
        memset(&v, 0, sizeof v);
        ok = dtz50_probe(b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], p.rule50, 0, p.ep,
                         p.turn, &v);
        printf("V %d %d %d %u %d %d %d\n", ok, v.wdl, v.dtz, v.halfmove, v.rule, v.outcome,
               v.margin);

        /* The helpers, on a square and the occupancy of this position. */
        uint64_t occ = b[0] | b[1];
        unsigned sq = (unsigned)(count % 64);
        printf("A %u %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
               " %" PRIx64 " %u %u %" PRIx64 "\n",
               sq, tb_king_attacks(sq), tb_queen_attacks(sq, occ), tb_rook_attacks(sq, occ),
               tb_bishop_attacks(sq, occ), tb_knight_attacks(sq), tb_pawn_attacks(sq, true),
               tb_pawn_attacks(sq, false), tb_pop_count(occ), tb_lsb(occ), tb_pop_lsb(occ));

        positions[count++] = p;
    }

    pthread_t threads[4];
    size_t bad[4] = {0, 0, 0, 0};
    for (int t = 0; t < 4; t++)
        pthread_create(&threads[t], NULL, recheck, &bad[t]);
    size_t total = 0;
    for (int t = 0; t < 4; t++) {
        pthread_join(threads[t], NULL);
        total += bad[t];
    }
    printf(total == 0 ? "THREADS ok\n" : "THREADS %zu mismatches\n", total);
    tb_free();
    printf("FREE %u %d\n", TB_LARGEST, dtz50_rule());
    return 0;
}
