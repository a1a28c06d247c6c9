/*
 * bad_input.c - bad input gives Fathom's failure values, never a crash.
 *
 * Usage: bad_input TABLES_DIR
 * Prints "ok" and exits 0 if every check holds; otherwise prints each
 * failed check and exits 1.
 */
#include <stdio.h>
#include <string.h>

#include "tbprobe.h"

static int failures;

#define CHECK(cond)                                          \
    do {                                                     \
        if (!(cond)) {                                       \
            printf("failed: %s (line %d)\n", #cond, __LINE__); \
            failures++;                                      \
        }                                                    \
    } while (0)

/* KQvK, White to move: white Ka1 Qb1, black Kc3 (a win). */
#define W (0x1ULL | 0x2ULL)
#define B (1ULL << 18)
#define K (0x1ULL | (1ULL << 18))
#define Q 0x2ULL

static unsigned wdl(uint64_t w, uint64_t b, uint64_t k, uint64_t q, unsigned rule50,
                    unsigned castling, unsigned ep)
{
    return tb_probe_wdl(w, b, k, q, 0, 0, 0, 0, rule50, castling, ep, true);
}

static unsigned root(uint64_t w, uint64_t b, uint64_t k, uint64_t q, unsigned castling,
                     unsigned *results)
{
    return tb_probe_root(w, b, k, q, 0, 0, 0, 0, 0, castling, 0, true, results);
}

static int root_dtz(uint64_t w, uint64_t b, uint64_t k, uint64_t q, unsigned castling,
                    struct TbRootMoves *rm)
{
    return tb_probe_root_dtz(w, b, k, q, 0, 0, 0, 0, 0, castling, 0, true, false, true, rm);
}

static int root_wdl(uint64_t w, uint64_t b, uint64_t k, uint64_t q, unsigned castling,
                    struct TbRootMoves *rm)
{
    return tb_probe_root_wdl(w, b, k, q, 0, 0, 0, 0, 0, castling, 0, true, true, rm);
}

static bool verdict(uint64_t w, uint64_t b, uint64_t k, uint64_t q, unsigned castling,
                    struct Dtz50Verdict *v)
{
    return dtz50_probe(w, b, k, q, 0, 0, 0, 0, 0, castling, 0, true, v);
}

/* Every probe of KQvK fails. */
static void all_fail(void)
{
    static struct TbRootMoves rm;
    struct Dtz50Verdict v;
    unsigned results[TB_MAX_MOVES];
    CHECK(wdl(W, B, K, Q, 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(root(W, B, K, Q, 0, results) == TB_RESULT_FAILED);
    CHECK(results[0] == TB_RESULT_FAILED);
    CHECK(root(W, B, K, Q, 0, NULL) == TB_RESULT_FAILED);
    CHECK(root_dtz(W, B, K, Q, 0, &rm) == 0);
    CHECK(root_wdl(W, B, K, Q, 0, &rm) == 0);
    CHECK(!verdict(W, B, K, Q, 0, &v));
    CHECK(dtz50_rule() == -1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bad_input TABLES_DIR\n");
        return 2;
    }
    static struct TbRootMoves rm;
    struct Dtz50Verdict v;
    unsigned results[TB_MAX_MOVES];

    /* Before tb_init: no tables. */
    CHECK(TB_LARGEST == 0);
    all_fail();

    /* No tables: a directory that does not exist, an empty path, NULL. */
    CHECK(tb_init("/no/such/directory"));
    CHECK(TB_LARGEST == 0);
    CHECK(wdl(W, B, K, Q, 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(tb_init(""));
    CHECK(TB_LARGEST == 0);
    all_fail();
    CHECK(tb_init("<empty>"));
    all_fail();
    CHECK(!tb_init(NULL));
    CHECK(TB_LARGEST == 0);
    all_fail();
    CHECK(!dtz50_init_rule(argv[1], 51));
    all_fail();

    /* Tables open: the position probes, bad variants of it fail. */
    CHECK(tb_init(argv[1]));
    CHECK(TB_LARGEST == 4);
    CHECK(wdl(W, B, K, Q, 0, 0, 0) == TB_WIN);
    CHECK(TB_GET_WDL(root(W, B, K, Q, 0, NULL)) == TB_WIN);
    /* A clock or castling rights: Fathom's failure values. */
    CHECK(wdl(W, B, K, Q, 1, 0, 0) == TB_RESULT_FAILED);
    CHECK(wdl(W, B, K, Q, 0, TB_CASTLING_K, 0) == TB_RESULT_FAILED);
    CHECK(root(W, B, K, Q, TB_CASTLING_q, results) == TB_RESULT_FAILED);
    CHECK(root_dtz(W, B, K, Q, TB_CASTLING_Q, &rm) == 0);
    CHECK(root_wdl(W, B, K, Q, TB_CASTLING_k, &rm) == 0);
    CHECK(!verdict(W, B, K, Q, TB_CASTLING_K, &v));
    /* Null pointers where Fathom takes them, or where it would crash. */
    CHECK(root_dtz(W, B, K, Q, 0, NULL) == 0);
    CHECK(root_wdl(W, B, K, Q, 0, NULL) == 0);
    CHECK(!verdict(W, B, K, Q, 0, NULL));
    /* Not a position: overlapping colours, a piece of no colour, no black
     * king, two white kings, a pawn on the first rank, the side not to move
     * in check, an en-passant square off the board. */
    CHECK(wdl(W, B | 0x2ULL, K, Q, 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(wdl(W, B, K, Q | (1ULL << 40), 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(wdl(W, 0, 0x1ULL, Q, 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(wdl(W | 0x4ULL, B, K | 0x4ULL, Q, 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(tb_probe_wdl(0x1ULL | 0x2ULL, B, K, 0, 0, 0, 0, 0x2ULL, 0, 0, 0, true) ==
          TB_RESULT_FAILED);
    CHECK(tb_probe_wdl(0x1ULL | (1ULL << 17), B, K, 1ULL << 17, 0, 0, 0, 0, 0, 0, 0, true) ==
          TB_RESULT_FAILED);
    CHECK(wdl(W, B, K, Q, 0, 0, 64) == TB_RESULT_FAILED);
    CHECK(root(W, B | 0x2ULL, K, Q, 0, results) == TB_RESULT_FAILED);
    CHECK(root_dtz(W, B | 0x2ULL, K, Q, 0, &rm) == 0 && rm.size == 0);
    CHECK(!verdict(W, B | 0x2ULL, K, Q, 0, &v));
    /* Too many pieces: six (white Ka1 Qb1 Rc1 Bd1 Ne1, black Kh8). */
    {
        uint64_t w = 0x1FULL, b = 1ULL << 63, k = 0x1ULL | (1ULL << 63);
        CHECK(tb_probe_wdl(w, b, k, 0x2ULL, 0x4ULL, 0x8ULL, 0x10ULL, 0, 0, 0, 0, true) ==
              TB_RESULT_FAILED);
        CHECK(tb_probe_root(w, b, k, 0x2ULL, 0x4ULL, 0x8ULL, 0x10ULL, 0, 0, 0, 0, true,
                            results) == TB_RESULT_FAILED);
        CHECK(tb_probe_root_dtz(w, b, k, 0x2ULL, 0x4ULL, 0x8ULL, 0x10ULL, 0, 0, 0, 0, true,
                                false, true, &rm) == 0);
        CHECK(tb_probe_root_wdl(w, b, k, 0x2ULL, 0x4ULL, 0x8ULL, 0x10ULL, 0, 0, 0, 0, true,
                                true, &rm) == 0);
        CHECK(!dtz50_probe(w, b, k, 0x2ULL, 0x4ULL, 0x8ULL, 0x10ULL, 0, 0, 0, 0, true, &v));
    }
    /* Tables of another rule than asked: every probe fails. */
    CHECK(dtz50_init_rule(argv[1], DTZ50_RULE_75));
    CHECK(dtz50_rule() == DTZ50_RULE_75);
    CHECK(wdl(W, B, K, Q, 0, 0, 0) == TB_RESULT_FAILED);
    CHECK(root(W, B, K, Q, 0, results) == TB_RESULT_FAILED);
    CHECK(!verdict(W, B, K, Q, 0, &v));

    /* Mate and stalemate at the root (KQvK): Fathom's special results. */
    CHECK(tb_init(argv[1]));
    /* Black Ka8 mated by Qb7 guarded by Kc6; Black to move. */
    {
        uint64_t w = (1ULL << 49) | (1ULL << 42), b = 1ULL << 56;
        uint64_t k = (1ULL << 42) | (1ULL << 56), q = 1ULL << 49;
        CHECK(tb_probe_root(w, b, k, q, 0, 0, 0, 0, 0, 0, 0, false, results) ==
              TB_RESULT_CHECKMATE);
        CHECK(results[0] == TB_RESULT_FAILED);
        CHECK(tb_probe_root_dtz(w, b, k, q, 0, 0, 0, 0, 0, 0, 0, false, false, true, &rm) == 1);
        CHECK(rm.size == 0);
        CHECK(dtz50_probe(w, b, k, q, 0, 0, 0, 0, 99, 0, 0, false, &v));
        CHECK(v.dtz == -1 && v.outcome == DTZ50_OUTCOME_LOSS);
    }
    /* Black Ka8 stalemated by Qb6 (White Kc1); Black to move. */
    {
        uint64_t w = (1ULL << 41) | (1ULL << 2), b = 1ULL << 56;
        uint64_t k = (1ULL << 2) | (1ULL << 56), q = 1ULL << 41;
        CHECK(tb_probe_root(w, b, k, q, 0, 0, 0, 0, 0, 0, 0, false, NULL) ==
              TB_RESULT_STALEMATE);
    }
    tb_free();
    CHECK(TB_LARGEST == 0);
    all_fail();

    if (failures == 0)
        printf("ok\n");
    return failures == 0 ? 0 : 1;
}
