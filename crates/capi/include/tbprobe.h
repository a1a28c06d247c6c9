/*
 * tbprobe.h - libdtz50's C interface: Fathom's probing API over dtz50 tables.
 *
 * Part of dtz50 (GPL-3.0-or-later). Written for dtz50 after the public
 * interface of Fathom's tbprobe.h (jdart1/Fathom): the same names, argument
 * lists and meanings, so that a program written against Fathom compiles
 * unchanged and links against libdtz50 instead (-ldtz50).
 *
 * What differs from Fathom, because dtz50 tables store DTZ to the ply:
 *   - tb_init() takes directories of dtz50 tables (*.dtz50), built for the
 *     fifty-move rule; dtz50_init_rule() opens tables of the 75-move rule
 *     or of no rule.
 *   - DTZ values (TB_GET_DTZ, and the move scores behind the ranks) are
 *     exact, never one ply off.
 *   - Root probes apply the halfmove clock exactly: a win is TB_WIN iff its
 *     DTZ plus the clock is at most 100 plies (150 under the 75-move rule),
 *     otherwise TB_CURSED_WIN; likewise for losses. The suggested move keeps
 *     a win within the clock whenever one exists.
 *   - Root moves (the results array, TbRootMoves) come ranked best first.
 *   - tb_probe_root_wdl() judges each move with the clock too, from the
 *     exact DTZ behind it.
 *   - Scores (tbScore) are computed with Fathom's default tbconfig.h values
 *     below; the library is compiled, so redefining them changes nothing.
 *
 * Probing is thread-safe. The only global state is what tb_init() and
 * tb_free() set. Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63.
 */

#ifndef TBPROBE_H
#define TBPROBE_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TB_NO_STDINT
#include <stdint.h>
#else
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned uint32_t;
typedef long long unsigned uint64_t;
typedef char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
#endif

#ifndef TB_NO_STDBOOL
#include <stdbool.h>
#else
#ifndef __cplusplus
typedef uint8_t bool;
#define true 1
#define false 0
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Implementation entry points: call the functions further down instead.    */
/* ------------------------------------------------------------------------ */

extern bool tb_init_impl(const char *_path);

extern unsigned tb_probe_wdl_impl(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _ep, bool _turn);

extern unsigned tb_probe_root_impl(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _rule50, unsigned _ep, bool _turn, unsigned *_results);

/* ------------------------------------------------------------------------ */
/* Constants                                                                */
/* ------------------------------------------------------------------------ */

/* Size of a results array: every legal move of a position, plus one. */
#define TB_MAX_MOVES (192 + 1)
/* Upper bound on captures in a position. */
#define TB_MAX_CAPTURES 64
/* Length of a root move's principal variation array. */
#define TB_MAX_PLY 256

/* Castling rights; any of them makes a position unprobeable. */
#define TB_CASTLING_K 0x1 /* White, king side */
#define TB_CASTLING_Q 0x2 /* White, queen side */
#define TB_CASTLING_k 0x4 /* Black, king side */
#define TB_CASTLING_q 0x8 /* Black, queen side */

/* WDL codes, for the side to move. */
#define TB_LOSS 0         /* lost */
#define TB_BLESSED_LOSS 1 /* lost, but drawn by the move-count rule */
#define TB_DRAW 2         /* drawn */
#define TB_CURSED_WIN 3   /* won, but drawn by the move-count rule */
#define TB_WIN 4          /* won */

/* Promotion codes. */
#define TB_PROMOTES_NONE 0
#define TB_PROMOTES_QUEEN 1
#define TB_PROMOTES_ROOK 2
#define TB_PROMOTES_BISHOP 3
#define TB_PROMOTES_KNIGHT 4

/*
 * A TB_RESULT packs into 32 bits, from the lowest: WDL (4 bits), target
 * square (6), origin square (6), promotion (3), en-passant flag (1), DTZ in
 * plies (12).
 */
#define TB_RESULT_WDL_MASK 0x0000000F
#define TB_RESULT_TO_MASK 0x000003F0
#define TB_RESULT_FROM_MASK 0x0000FC00
#define TB_RESULT_PROMOTES_MASK 0x00070000
#define TB_RESULT_EP_MASK 0x00080000
#define TB_RESULT_DTZ_MASK 0xFFF00000
#define TB_RESULT_WDL_SHIFT 0
#define TB_RESULT_TO_SHIFT 4
#define TB_RESULT_FROM_SHIFT 10
#define TB_RESULT_PROMOTES_SHIFT 16
#define TB_RESULT_EP_SHIFT 19
#define TB_RESULT_DTZ_SHIFT 20

/* Read one field of a TB_RESULT. */
#define TB_GET_WDL(_res) (((_res) & TB_RESULT_WDL_MASK) >> TB_RESULT_WDL_SHIFT)
#define TB_GET_TO(_res) (((_res) & TB_RESULT_TO_MASK) >> TB_RESULT_TO_SHIFT)
#define TB_GET_FROM(_res) (((_res) & TB_RESULT_FROM_MASK) >> TB_RESULT_FROM_SHIFT)
#define TB_GET_PROMOTES(_res) \
    (((_res) & TB_RESULT_PROMOTES_MASK) >> TB_RESULT_PROMOTES_SHIFT)
#define TB_GET_EP(_res) (((_res) & TB_RESULT_EP_MASK) >> TB_RESULT_EP_SHIFT)
#define TB_GET_DTZ(_res) (((_res) & TB_RESULT_DTZ_MASK) >> TB_RESULT_DTZ_SHIFT)

/* Replace one field of a TB_RESULT. */
#define TB_SET_WDL(_res, _wdl) \
    (((_res) & ~TB_RESULT_WDL_MASK) | (((_wdl) << TB_RESULT_WDL_SHIFT) & TB_RESULT_WDL_MASK))
#define TB_SET_TO(_res, _to) \
    (((_res) & ~TB_RESULT_TO_MASK) | (((_to) << TB_RESULT_TO_SHIFT) & TB_RESULT_TO_MASK))
#define TB_SET_FROM(_res, _from) \
    (((_res) & ~TB_RESULT_FROM_MASK) | (((_from) << TB_RESULT_FROM_SHIFT) & TB_RESULT_FROM_MASK))
#define TB_SET_PROMOTES(_res, _promotes)   \
    (((_res) & ~TB_RESULT_PROMOTES_MASK) | \
     (((_promotes) << TB_RESULT_PROMOTES_SHIFT) & TB_RESULT_PROMOTES_MASK))
#define TB_SET_EP(_res, _ep) \
    (((_res) & ~TB_RESULT_EP_MASK) | (((_ep) << TB_RESULT_EP_SHIFT) & TB_RESULT_EP_MASK))
#define TB_SET_DTZ(_res, _dtz) \
    (((_res) & ~TB_RESULT_DTZ_MASK) | (((_dtz) << TB_RESULT_DTZ_SHIFT) & TB_RESULT_DTZ_MASK))

/* Special results of tb_probe_root(), as Fathom encodes them. */
#define TB_RESULT_CHECKMATE TB_SET_WDL(0, TB_WIN)
#define TB_RESULT_STALEMATE TB_SET_WDL(0, TB_DRAW)
#define TB_RESULT_FAILED 0xFFFFFFFF

/*
 * Score constants of Fathom's default tbconfig.h, which libdtz50 uses for
 * tbScore. Defined here only where the including program has not.
 */
#ifndef TB_VALUE_PAWN
#define TB_VALUE_PAWN 100
#endif
#ifndef TB_VALUE_MATE
#define TB_VALUE_MATE 32000
#endif
#ifndef TB_VALUE_INFINITE
#define TB_VALUE_INFINITE 32767
#endif
#ifndef TB_VALUE_DRAW
#define TB_VALUE_DRAW 0
#endif
#ifndef TB_MAX_MATE_PLY
#define TB_MAX_MATE_PLY 255
#endif

/* ------------------------------------------------------------------------ */
/* Main API                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Positions with at most this many pieces can be probed: the most pieces of
 * any table tb_init() found, 0 if it found none (and before tb_init(), after
 * tb_free()).
 */
extern unsigned TB_LARGEST;

/*
 * Open the tables of a PATH string: directories of dtz50 tables built for
 * the fifty-move rule, separated by ':' (';' on Windows). Directories that
 * do not exist are skipped. Replaces the tables of an earlier call.
 *
 * Returns true on success and sets TB_LARGEST (to 0 if no table was found,
 * or for an empty path or "<empty>", which leave no tables open). Returns
 * false for a NULL path or one that is not UTF-8 (no tables are open then).
 */
bool tb_init(const char *_path);

/* Release the tables (memory maps and cached pages); TB_LARGEST becomes 0. */
void tb_free(void);

/*
 * Probe WDL: the result for the side to move with the halfmove clock at 0.
 *
 * white, black, kings, queens, rooks, bishops, knights, pawns: the position
 * as bitboards. rule50: the halfmove clock. castling: castling rights (0 for
 * none). ep: the en-passant target square, 0 for none. turn: true for White
 * to move.
 *
 * Returns TB_LOSS, TB_BLESSED_LOSS, TB_DRAW, TB_CURSED_WIN or TB_WIN, or
 * TB_RESULT_FAILED: for a non-zero clock or castling rights (as Fathom), a
 * position that is not legal, more than TB_LARGEST pieces, a missing table,
 * or no tables. Reads only WDL; meant for the search. Thread-safe.
 */
static inline unsigned tb_probe_wdl(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _rule50, unsigned _castling, unsigned _ep, bool _turn)
{
    if (_castling != 0 || _rule50 != 0)
        return TB_RESULT_FAILED;
    return tb_probe_wdl_impl(_white, _black, _kings, _queens, _rooks,
                             _bishops, _knights, _pawns, _ep, _turn);
}

/*
 * Probe at the root: the position's result with the clock rule50 applied
 * exactly, and the best move.
 *
 * Arguments as for tb_probe_wdl(), rule50 being used; results (may be
 * NULL): an array of TB_MAX_MOVES entries that receives one TB_RESULT per
 * legal move (its WDL with the clock, its exact DTZ), best first, ended by
 * TB_RESULT_FAILED.
 *
 * Returns a TB_RESULT: WDL (TB_GET_WDL), exact DTZ of the position
 * (TB_GET_DTZ), and the best move (TB_GET_FROM, TB_GET_TO, TB_GET_PROMOTES,
 * TB_GET_EP), which keeps the result. TB_RESULT_CHECKMATE or
 * TB_RESULT_STALEMATE if the side to move has no move; TB_RESULT_FAILED if
 * the probe failed (castling rights, a bad position, a missing table).
 * Meant for the root, not the search. Thread-safe.
 */
static inline unsigned tb_probe_root(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _rule50, unsigned _castling, unsigned _ep, bool _turn,
    unsigned *_results)
{
    if (_castling != 0)
        return TB_RESULT_FAILED;
    return tb_probe_root_impl(_white, _black, _kings, _queens, _rooks,
                              _bishops, _knights, _pawns, _rule50, _ep, _turn,
                              _results);
}

/* A move: origin << 6 | target | promotion << 12. */
typedef uint16_t TbMove;

#define TB_MOVE_FROM(move) (((move) >> 6) & 0x3F)
#define TB_MOVE_TO(move) ((move) & 0x3F)
#define TB_MOVE_PROMOTES(move) (((move) >> 12) & 0x7)

/* A root move, its rank and score, and its principal variation (here the
 * move alone: pv[0] == move, pvSize == 1). */
struct TbRootMove {
    TbMove move;
    TbMove pv[TB_MAX_PLY];
    unsigned pvSize;
    int32_t tbScore, tbRank;
};

/* The legal moves of a root position. */
struct TbRootMoves {
    unsigned size;
    struct TbRootMove moves[TB_MAX_MOVES];
};

/*
 * Rank and score every legal root move from its exact DTZ and the clock.
 *
 * Arguments as for tb_probe_root(); hasRepeated: the position has repeated
 * since the last zeroing move; useRule50: score results the clock turns
 * into draws as draws (else as wins and losses).
 *
 * Fills *results: size, and per move (best first) move, pv, pvSize, tbRank
 * (1000: a win within the clock; 900 + 100 - (dtz + clock) after a
 * repetition, below 900 a win the clock turns into a draw; 0 a draw; -1000
 * a loss far from the limit, -1000 + (-dtz + clock) near it, above -900 a
 * loss the clock saves) and tbScore (TB_VALUE_MATE - TB_MAX_MATE_PLY - 1 for
 * a sure win, a few centipawns for a result the clock turns).
 *
 * Returns non-zero if every probe succeeded, 0 otherwise (also for castling
 * rights or a NULL results).
 */
int tb_probe_root_dtz(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _rule50, unsigned _castling, unsigned _ep, bool _turn,
    bool hasRepeated, bool useRule50, struct TbRootMoves *_results);

/*
 * Rank and score every legal root move by its WDL with the clock applied:
 * tbRank -1000, -899, 0, 899, 1000 and tbScore -(TB_VALUE_MATE -
 * TB_MAX_MATE_PLY - 1), -2, 0, 2, +(...) for loss, blessed loss, draw,
 * cursed win, win (cursed and blessed count as win and loss without
 * useRule50).
 *
 * Returns non-zero if every probe succeeded, 0 otherwise.
 */
int tb_probe_root_wdl(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _rule50, unsigned _castling, unsigned _ep, bool _turn,
    bool useRule50, struct TbRootMoves *_results);

/* ------------------------------------------------------------------------ */
/* Helper API (leave it out with TB_NO_HELPER_API)                          */
/* ------------------------------------------------------------------------ */

#ifndef TB_NO_HELPER_API

/* Number of set bits. */
extern unsigned tb_pop_count(uint64_t _bb);
/* Index of the lowest set bit (64 for an empty board). */
extern unsigned tb_lsb(uint64_t _bb);
/* The board without its lowest set bit. */
extern uint64_t tb_pop_lsb(uint64_t _bb);
/* Attacks from a square (none from a square above 63). */
extern uint64_t tb_king_attacks(unsigned _square);
extern uint64_t tb_queen_attacks(unsigned _square, uint64_t _occ);
extern uint64_t tb_rook_attacks(unsigned _square, uint64_t _occ);
extern uint64_t tb_bishop_attacks(unsigned _square, uint64_t _occ);
extern uint64_t tb_knight_attacks(unsigned _square);
/* Attacks of a pawn: a white one if _color is true, else a black one. */
extern uint64_t tb_pawn_attacks(unsigned _square, bool _color);

#endif

/* ------------------------------------------------------------------------ */
/* dtz50's additions                                                        */
/* ------------------------------------------------------------------------ */

/* Rule codes: what a table was built for. */
#define DTZ50_RULE_50 50   /* fifty-move rule, 100 plies (claimable draw) */
#define DTZ50_RULE_75 75   /* seventy-five-move rule, 150 plies (automatic) */
#define DTZ50_RULE_NONE 0  /* no move-count rule */

/* Outcomes with the clock applied. */
#define DTZ50_OUTCOME_LOSS (-1)
#define DTZ50_OUTCOME_DRAW 0
#define DTZ50_OUTCOME_WIN 1

/* Margin of a result without one (draws, results the clock turned, no rule). */
#define DTZ50_NO_MARGIN (-1)

/* A position's value with a given halfmove clock. */
struct Dtz50Verdict {
    int wdl;           /* WDL with the clock at 0: -2 loss .. 2 win */
    int dtz;           /* exact DTZ in plies (signed, as Syzygy's DTZ50'') */
    unsigned halfmove; /* the clock applied */
    int rule;          /* DTZ50_RULE_50, DTZ50_RULE_75 or DTZ50_RULE_NONE */
    int outcome;       /* DTZ50_OUTCOME_*: does the result survive the clock? */
    int margin;        /* plies to spare: limit - clock - |dtz|, or DTZ50_NO_MARGIN */
};

/*
 * As tb_init(), for tables built for rule (DTZ50_RULE_50, DTZ50_RULE_75 or
 * DTZ50_RULE_NONE); false for another rule. Tables of another rule than the
 * one opened fail every probe.
 */
bool dtz50_init_rule(const char *_path, unsigned _rule);

/* The rule of the open tables (DTZ50_RULE_*), -1 if none are open. */
int dtz50_rule(void);

/*
 * As dtz50_init_rule(), reading the table files with positional reads
 * through a cache of at most cache_bytes bytes of file pages (shared by
 * all the directories; the least recently used are dropped first). For processes
 * that live long or must stay small; a file changed under the process gives
 * TB_RESULT_FAILED, never a crash. false for another rule, a bound of 0, or
 * a path as for tb_init().
 */
bool dtz50_init_cached(const char *_path, unsigned _rule, size_t _cache_bytes);

/*
 * The bound in bytes on the page cache of the open tables: what
 * dtz50_init_cached() was given, or 0 if they are memory-mapped (tb_init(),
 * dtz50_init_rule()) or no tables are open.
 */
size_t dtz50_cache_bound(void);

/*
 * The verdict with the halfmove clock rule50: WDL, exact DTZ, and whether
 * the result survives the clock, with how many plies to spare. Arguments as
 * for tb_probe_root(). Returns true and fills *verdict, or false (castling
 * rights, a bad position, a missing table, no tables, a NULL verdict).
 */
bool dtz50_probe(
    uint64_t _white, uint64_t _black, uint64_t _kings, uint64_t _queens,
    uint64_t _rooks, uint64_t _bishops, uint64_t _knights, uint64_t _pawns,
    unsigned _rule50, unsigned _castling, unsigned _ep, bool _turn,
    struct Dtz50Verdict *_verdict);

#ifdef __cplusplus
}
#endif

#endif /* TBPROBE_H */
