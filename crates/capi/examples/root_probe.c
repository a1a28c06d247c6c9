/*
 * root_probe.c - an engine's root probe, written against Fathom's
 * tbprobe.h: it compiles unchanged against Fathom or against libdtz50.
 *
 *   cc -O2 -I crates/capi/include crates/capi/examples/root_probe.c \
 *      -L target/release -ldtz50 -Wl,-rpath,target/release -o root_probe
 *   ./root_probe tables "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"
 *   bestmove b1e4 wdl 4 dtz 11
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tbprobe.h"

/* The bitboards, clock, castling rights, en-passant square and side to
 * move of a FEN; 0 if it cannot be read. */
struct Position {
    uint64_t white, black, kings, queens, rooks, bishops, knights, pawns;
    unsigned rule50, castling, ep;
    bool turn;
};

static int parse_fen(const char *fen, struct Position *pos)
{
    memset(pos, 0, sizeof *pos);
    int rank = 7, file = 0;
    for (; *fen && *fen != ' '; fen++) {
        if (*fen == '/') {
            rank--, file = 0;
        } else if (isdigit((unsigned char)*fen)) {
            file += *fen - '0';
        } else {
            if (rank < 0 || file > 7)
                return 0;
            uint64_t bit = 1ULL << (8 * rank + file++);
            *(isupper((unsigned char)*fen) ? &pos->white : &pos->black) |= bit;
            switch (tolower((unsigned char)*fen)) {
            case 'k': pos->kings |= bit; break;
            case 'q': pos->queens |= bit; break;
            case 'r': pos->rooks |= bit; break;
            case 'b': pos->bishops |= bit; break;
            case 'n': pos->knights |= bit; break;
            case 'p': pos->pawns |= bit; break;
            default: return 0;
            }
        }
    }
    char side, castling[5], ep[3];
    if (sscanf(fen, " %c %4s %2s %u", &side, castling, ep, &pos->rule50) != 4)
        return 0;
    pos->turn = side == 'w';
    for (const char *c = castling; *c && *c != '-'; c++)
        pos->castling |= *c == 'K' ? TB_CASTLING_K : *c == 'Q' ? TB_CASTLING_Q
                       : *c == 'k' ? TB_CASTLING_k : TB_CASTLING_q;
    if (ep[0] != '-')
        pos->ep = 8 * (unsigned)(ep[1] - '1') + (unsigned)(ep[0] - 'a');
    return 1;
}

int main(int argc, char **argv)
{
    struct Position p;
    if (argc != 3 || !parse_fen(argv[2], &p)) {
        fprintf(stderr, "usage: root_probe TABLES FEN\n");
        return 2;
    }
    if (!tb_init(argv[1]) || TB_LARGEST == 0) {
        fprintf(stderr, "no tables in %s\n", argv[1]);
        return 2;
    }
    if (tb_pop_count(p.white | p.black) > TB_LARGEST) {
        fprintf(stderr, "too many pieces for the tables\n");
        return 2;
    }
    unsigned res = tb_probe_root(p.white, p.black, p.kings, p.queens, p.rooks, p.bishops,
                                 p.knights, p.pawns, p.rule50, p.castling, p.ep, p.turn, NULL);
    if (res == TB_RESULT_FAILED) {
        fprintf(stderr, "probe failed\n");
        return 2;
    }
    if (res == TB_RESULT_CHECKMATE || res == TB_RESULT_STALEMATE) {
        printf(res == TB_RESULT_CHECKMATE ? "checkmate\n" : "stalemate\n");
    } else {
        unsigned from = TB_GET_FROM(res), to = TB_GET_TO(res);
        static const char promo[] = " qrbn";
        printf("bestmove %c%c%c%c", 'a' + from % 8, '1' + from / 8, 'a' + to % 8, '1' + to / 8);
        if (TB_GET_PROMOTES(res) != TB_PROMOTES_NONE)
            printf("%c", promo[TB_GET_PROMOTES(res)]);
        printf(" wdl %u dtz %u\n", TB_GET_WDL(res), TB_GET_DTZ(res));
    }
    tb_free();
    return 0;
}
