/*
 * The hand solver's search in C: an optional speedup of service/engine/solver/python_search.py
 * (service/engine/solver/switch.py decides which one runs).
 *
 * This is a line-for-line port of search_free() and search_one() there, which
 * remain the reference (and what runs when this module could not be built).
 * It explores the same states in the same order and breaks ties the same way,
 * so both give the same plan for every hand: tests/engine/test_solver_native_*.py
 * checks exactly that.  Read the Python first; the comments here only say
 * where the C differs in form.
 *
 * A multiset of natural cards is four 64-bit words, four bits a card id
 * (the Python packs it into one int the same way): id i is the nibble at bit
 * 4*(i % 16) of word i / 16.  The four ids of a rank share one word.
 *
 * Python API (the solver's own calls; arguments are checked as far as memory
 * safety, the memo key's ranges and int64 sums need: at most MAX_CARDS ids and
 * wilds, costs from 0 to INF, a cost for each of the 52 natural ids):
 *   solve_free(ids, wilds, pts, cheap, allwild_ok, high)
 *   solve_one(ids, jokers, wr_base, pts, leaf, high)   leaf = (jokers, joker_cost, slots, wr_cost)
 * both -> (value, steps, leftover, cap) where a step is
 *   (ids tuple, need, "set" | "run") or ((id,), 0, "designate");
 *   solve_free_each(..., drops), solve_one_each(..., drops) -> [what the
 *   search answers without one copy of d, for d in drops] (the same
 *   arguments, and drops).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 4
#define MAX_ID 64
#define MAX_CARDS 32 /* ids, and wilds; a hand holds at most 16 cards */
#define INF ((int64_t)1 << 30)
#define NOSET 1
#define NODEAD 2

enum { STEP_NONE = 0, STEP_DEAD, STEP_SET, STEP_RUN, STEP_RUN_HIGH, STEP_DESIGNATE };

typedef struct {
    uint64_t w[WORDS];
} Cards;

static inline int count_of(const Cards *c, int id) {
    return (int)((c->w[id >> 4] >> ((id & 15) << 2)) & 15);
}

static inline void add_card(Cards *c, int id, int n) {
    c->w[id >> 4] += (uint64_t)n << ((id & 15) << 2);
}

static inline void subtract(Cards *c, const Cards *m) {
    for (int k = 0; k < WORDS; k++) c->w[k] -= m->w[k];
}

static inline int is_empty(const Cards *c) {
    return (c->w[0] | c->w[1] | c->w[2] | c->w[3]) == 0;
}

/* The bit index of the lowest card (4 * id), or -1 when empty. */
static inline int lowest_bit(const Cards *c) {
    for (int k = 0; k < WORDS; k++)
        if (c->w[k]) return k * 64 + __builtin_ctzll(c->w[k]);
    return -1;
}

/* The rank of the lowest card, -1 when empty (the Python's bit_length trick). */
static inline int lowest_rank(const Cards *c) {
    int b = lowest_bit(c);
    return b < 0 ? -1 : b >> 4;
}

/* ---------------------------------------------------------------- memo */

typedef struct {
    Cards rem;
    int32_t small; /* flag, wl and cap (small_key) */
    uint32_t gen;  /* the slot is filled when this is its memo's generation */
    int64_t value;
    /* the choice made, to trace the plan: the step (the next state's cards are
     * rem less `card` and `mask`) and the next state's wl, cap and flag */
    uint8_t kind;
    uint8_t card;
    uint8_t need;
    uint8_t has_next;
    int16_t nwl, ncap;
    uint8_t nflag;
    Cards mask; /* cards of the meld other than `card` */
} Entry;

typedef struct {
    Entry *slots;
    size_t cap, used;
    uint32_t gen;
} Memo;

/* The Python key's (flag, wl, cap) part; wl > -128 and cap < 256 as ids and wilds
 * number at most MAX_CARDS each. */
static inline int32_t small_key(int wl, int cap, int flag) {
    return (flag << 16) | ((wl + 128) << 8) | cap;
}

/* Each word times an odd constant of its own (independent products, which the
 * CPU overlaps), summed, then mixed (splitmix64's finalizer). */
static inline uint64_t hash_of(const Cards *rem, int32_t small) {
    uint64_t h = (uint64_t)small * 0x9E3779B97F4A7C15ULL + rem->w[0] * 0xBF58476D1CE4E5B9ULL +
                 rem->w[1] * 0x94D049BB133111EBULL + rem->w[2] * 0xD6E8FEB86659FD93ULL +
                 rem->w[3] * 0xA0761D6478BD642FULL;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 29;
    return h;
}

/* An empty memo of `cap` slots (a power of two). */
static int memo_init(Memo *m, size_t cap) {
    m->slots = (Entry *)calloc(cap, sizeof(Entry)); /* generation 0: every slot empty */
    if (!m->slots) return -1;
    m->cap = cap;
    m->used = 0;
    m->gen = 1;
    return 0;
}

/* Memos of MEMO_FIRST slots are kept from one search to the next (at most
 * SPARES of them, while the GIL is held, as everything here), so that the
 * common search, of a few dozen states, neither allocates nor clears one: a
 * new generation empties every slot at once. */
#define MEMO_FIRST 256
#define SPARES 2
static Entry *spare_slots[SPARES];
static uint32_t spare_gen[SPARES];
static int n_spares;

/* memo_init(m, MEMO_FIRST), from a spare memo if there is one. */
static int memo_open(Memo *m) {
    if (n_spares == 0) return memo_init(m, MEMO_FIRST);
    n_spares--;
    m->slots = spare_slots[n_spares];
    m->cap = MEMO_FIRST;
    m->used = 0;
    m->gen = spare_gen[n_spares] + 1;
    if (m->gen == 0) { /* wrapped around: generation 0 must read as empty again */
        for (size_t i = 0; i < m->cap; i++) m->slots[i].gen = 0;
        m->gen = 1;
    }
    return 0;
}

/* Done with a memo (NULL slots: never opened): kept as a spare, or freed. */
static void memo_close(Memo *m) {
    if (m->slots && m->cap == MEMO_FIRST && n_spares < SPARES) {
        spare_slots[n_spares] = m->slots;
        spare_gen[n_spares] = m->gen;
        n_spares++;
    } else {
        free(m->slots);
    }
    m->slots = NULL;
}

/* The slot of state (rem, small), whose hash_of is `h`, or NULL. */
static Entry *memo_find(const Memo *m, const Cards *rem, int32_t small, uint64_t h) {
    size_t i = h & (m->cap - 1);
    for (;;) {
        Entry *e = &m->slots[i];
        if (e->gen != m->gen) return NULL;
        if (e->small == small && memcmp(&e->rem, rem, sizeof(Cards)) == 0) return e;
        i = (i + 1) & (m->cap - 1);
    }
}

static int memo_grow(Memo *m) {
    Memo bigger;
    if (memo_init(&bigger, m->cap * 2) < 0) return -1;
    for (size_t i = 0; i < m->cap; i++) {
        Entry *e = &m->slots[i];
        if (e->gen != m->gen) continue;
        size_t j = hash_of(&e->rem, e->small) & (bigger.cap - 1);
        while (bigger.slots[j].gen == bigger.gen) j = (j + 1) & (bigger.cap - 1);
        bigger.slots[j] = *e;
        bigger.slots[j].gen = bigger.gen;
    }
    bigger.used = m->used;
    free(m->slots);
    *m = bigger;
    return 0;
}

/* Store a state's value and choice (the slot is the caller's to fill); `h`
 * as for memo_find (f hashes a state once). */
static Entry *memo_put(Memo *m, const Cards *rem, int32_t small, uint64_t h) {
    if ((m->used + 1) * 2 > m->cap && memo_grow(m) < 0) return NULL;
    size_t i = h & (m->cap - 1);
    while (m->slots[i].gen == m->gen) i = (i + 1) & (m->cap - 1);
    Entry *e = &m->slots[i];
    e->rem = *rem;
    e->small = small;
    e->gen = m->gen;
    e->kind = STEP_NONE;
    e->has_next = 0;
    m->used++;
    return e;
}

/* ---------------------------------------------------------------- search */

typedef struct {
    int one; /* mode one (max one wild a meld) */
    int high; /* aces may be high */
    int allwild_ok;
    int capmax;
    int wr_base, wr_word, wr_shift; /* mode one: the wild rank's first id, where its nibbles are */
    int64_t pts[MAX_ID];
    int64_t *cheap;
    Py_ssize_t n_cheap;
    int64_t leaf_jokers, leaf_joker_cost, leaf_slots, leaf_wr_cost;
    Memo memo;
    int failed; /* out of memory */
} Search;

/* One option at a state, as the Python's arg: the next state and the step. */
typedef struct {
    Cards nrem;
    int nwl, ncap, nflag;
    int kind, need, card;
    Cards mask;
} Choice;

static int64_t f(Search *s, Cards rem, int wl, int cap, int flag);

static inline int wild_rank_cards(const Search *s, const Cards *rem) {
    uint64_t w = (rem->w[s->wr_word] >> s->wr_shift) & 0xFFFF;
    return (int)((w & 15) + (w >> 4 & 15) + (w >> 8 & 15) + (w >> 12));
}

/* Record a state's value and the choice that gives it (memo[key] = (best, *arg));
 * `arg` NULL when there is none (a leaf, or nothing is possible). */
static void remember(Search *s, const Cards *rem, int32_t small, uint64_t h, int64_t best,
                     const Choice *arg) {
    Entry *e = memo_put(&s->memo, rem, small, h);
    if (!e) {
        s->failed = 1;
        return;
    }
    e->value = best;
    if (arg) {
        e->has_next = 1;
        e->nwl = (int16_t)arg->nwl;
        e->ncap = (int16_t)arg->ncap;
        e->nflag = (uint8_t)arg->nflag;
        e->kind = (uint8_t)arg->kind;
        e->need = (uint8_t)arg->need;
        e->mask = arg->mask;
        e->card = (uint8_t)arg->card;
    }
}

/* Sub-multisets of the rank of `base` in `rest`, as _set_options orders them:
 * itertools.product over the four suits' counts, then stably by size, largest first. */
typedef struct {
    uint64_t bits; /* the counts taken, in the word that holds the rank */
    int size;
} SetOption;

static int set_option_count(const Cards *rest, int base) {
    uint64_t pattern = (rest->w[base >> 4] >> ((base & 15) << 2)) & 0xFFFF;
    int n = 1;
    for (int k = 0; k < 4; k++) n *= (int)((pattern >> (k << 2)) & 15) + 1;
    return n;
}

static void set_options(const Cards *rest, int base, SetOption *out) {
    int shift = (base & 15) << 2;
    uint64_t pattern = (rest->w[base >> 4] >> shift) & 0xFFFF;
    int c[4];
    for (int k = 0; k < 4; k++) c[k] = (int)((pattern >> (k << 2)) & 15);
    int n = 0;
    for (int a = 0; a <= c[0]; a++)
        for (int b = 0; b <= c[1]; b++)
            for (int d = 0; d <= c[2]; d++)
                for (int e = 0; e <= c[3]; e++) {
                    uint64_t bits = (uint64_t)a | (uint64_t)b << 4 | (uint64_t)d << 8 |
                                    (uint64_t)e << 12;
                    out[n].bits = bits << shift;
                    out[n].size = a + b + d + e;
                    n++;
                }
    /* stable insertion sort by size, descending */
    for (int x = 1; x < n; x++) {
        SetOption v = out[x];
        int y = x - 1;
        while (y >= 0 && out[y].size < v.size) {
            out[y + 1] = out[y];
            y--;
        }
        out[y + 1] = v;
    }
}

/* Runs from card i, as _find_walks lists them (same stack discipline, same order). */
typedef struct {
    Cards mask;
    int span, gaps;
} Walk;

/* The runs found: in `few` (no malloc at each state) until they outgrow it. */
typedef struct {
    Walk *items;
    int n, cap;
    Walk few[16];
} Walks;

/* An empty list of runs, in `few`. */
static void walks_init(Walks *ws) {
    ws->items = ws->few;
    ws->n = 0;
    ws->cap = 16;
}

/* Free what walks_push allocated, if it did. */
static void walks_free(Walks *ws) {
    if (ws->items != ws->few) free(ws->items);
}

static int walks_push(Walks *ws, const Cards *mask, int span, int gaps) {
    if (ws->n == ws->cap) {
        int cap = ws->cap * 2;
        Walk *items = (Walk *)malloc((size_t)cap * sizeof(Walk));
        if (!items) return -1;
        memcpy(items, ws->items, (size_t)ws->n * sizeof(Walk));
        walks_free(ws);
        ws->items = items;
        ws->cap = cap;
    }
    ws->items[ws->n].mask = *mask;
    ws->items[ws->n].span = span;
    ws->items[ws->n].gaps = gaps;
    ws->n++;
    return 0;
}

typedef struct {
    int q, gaps;
    Cards mask;
} WalkFrame;

/* (not inlined: f recurses, and its frame would hold this one's stack at every depth) */
__attribute__((noinline)) static int find_walks(const Cards *rest, int i, int high, int max_gaps,
                                                Walks *out) {
    int suit = i & 3;
    int start, step, stop, anchor;
    if (high) {
        start = 13, step = -1, stop = 1, anchor = 14;
    } else {
        start = (i >> 2) + 2, step = 1, stop = 14, anchor = (i >> 2) + 1;
    }
    WalkFrame stack[64];
    int top = 0;
    memset(&stack[0], 0, sizeof(WalkFrame));
    stack[top].q = start;
    top++;
    while (top > 0) {
        WalkFrame fr = stack[--top];
        int q = fr.q, gaps = fr.gaps;
        Cards mask = fr.mask;
        while (q != stop) {
            int cid = ((q - 1) << 2) | suit;
            if (count_of(rest, cid) > count_of(&mask, cid)) {
                if (gaps < max_gaps) {
                    if (top == 64) return -1;
                    stack[top].q = q + step;
                    stack[top].gaps = gaps + 1;
                    stack[top].mask = mask;
                    top++;
                }
                add_card(&mask, cid, 1);
                if (walks_push(out, &mask, abs(q - anchor) + 1, gaps) < 0) return -1;
            } else {
                gaps++;
                if (gaps > max_gaps) break;
            }
            q += step;
        }
    }
    return 0;
}

static inline int64_t leaf_one(const Search *s, int wl, int cap) {
    int64_t d = wl - cap;
    if (d <= 0) return 0;
    int64_t j = d < s->leaf_jokers ? d : s->leaf_jokers;
    int64_t rest = d - s->leaf_jokers - s->leaf_slots;
    int64_t v = j * s->leaf_joker_cost + (rest > 0 ? rest : 0) * s->leaf_wr_cost;
    return v < INF ? v : INF;
}

/* The Python's "if v < best: best, arg = v, (...)", true when v is 0 (then it
 * returns at once: nothing beats 0). */
static inline int better(int64_t v, const Choice *c, int64_t *best, Choice *arg, int *has_arg) {
    if (v >= *best) return 0;
    *best = v;
    *arg = *c;
    *has_arg = 1;
    return v == 0;
}

static int64_t f(Search *s, Cards rem, int wl, int cap, int flag) {
    if (s->one) {
        int most = wl + wild_rank_cards(s, &rem);
        if (most < 0) return INF;
        if (cap > most) cap = most;
    } else if (cap > wl) {
        cap = wl;
    }
    int32_t key = small_key(wl, cap, flag);
    uint64_t h = hash_of(&rem, key);
    Entry *hit = memo_find(&s->memo, &rem, key, h);
    if (hit) return hit->value;
    if (is_empty(&rem)) {
        int64_t v;
        if (s->one) {
            v = wl < 0 ? INF : leaf_one(s, wl, cap);
        } else if (wl == 0 || (wl >= 3 && s->allwild_ok) || wl <= cap) {
            v = 0;
        } else {
            v = s->cheap[wl - cap];
        }
        remember(s, &rem, key, h, v, NULL);
        return v;
    }
    int i = lowest_bit(&rem) >> 2;
    int r = i >> 2;
    Cards rest = rem;
    add_card(&rest, i, -1);
    int64_t best = INF;
    int has_arg = 0;
    Choice arg, c;
    memset(&arg, 0, sizeof arg);
    memset(&c, 0, sizeof c);
    c.card = i;

    if (!(flag & NOSET)) {
        SetOption few[64];
        int n = set_option_count(&rest, i & ~3);
        SetOption *opts = n <= 64 ? few : (SetOption *)malloc((size_t)n * sizeof(SetOption));
        if (!opts) {
            s->failed = 1;
            return INF;
        }
        set_options(&rest, i & ~3, opts);
        int done = 0;
        for (int k = 0; k < n && !done; k++) {
            int size = opts[k].size;
            if (s->one) {
                if (size == 0) continue;
                c.need = size == 1 ? 1 : 0;
                c.ncap = cap + 1 - c.need;
                if (c.ncap > s->capmax) c.ncap = s->capmax;
            } else {
                c.need = size < 2 ? 2 - size : 0;
                if (c.need > wl) continue;
                c.ncap = s->capmax;
            }
            c.kind = STEP_SET;
            memset(&c.mask, 0, sizeof c.mask);
            c.mask.w[(i & ~3) >> 4] = opts[k].bits;
            c.nrem = rest;
            subtract(&c.nrem, &c.mask);
            c.nwl = wl - c.need;
            if (lowest_rank(&c.nrem) != r)
                c.nflag = 0;
            else
                c.nflag = s->one ? (flag | NODEAD) : (NOSET | NODEAD);
            int64_t v = f(s, c.nrem, c.nwl, c.ncap, c.nflag);
            done = s->failed || better(v, &c, &best, &arg, &has_arg);
        }
        if (opts != few) free(opts);
        if (s->failed) return INF;
        if (done) goto zero;
    }
    for (int hi = 0; hi <= ((s->high && i < 4) ? 1 : 0); hi++) {
        Walks ws;
        walks_init(&ws);
        int done = find_walks(&rest, i, hi, s->one ? 1 : wl, &ws) < 0;
        s->failed |= done;
        for (int k = 0; k < ws.n && !done; k++) {
            const Walk *w = &ws.items[k];
            int pad = w->span < 3 ? 3 - w->span : 0;
            c.need = w->gaps + pad;
            if (s->one) {
                if (c.need > 1) continue;
                c.ncap = (c.need == 0 && w->span < 13 && cap < s->capmax) ? cap + 1 : cap;
            } else {
                if (c.need > wl) continue;
                c.ncap = cap + 13 - w->span - pad;
                if (c.ncap > s->capmax) c.ncap = s->capmax;
            }
            c.kind = hi ? STEP_RUN_HIGH : STEP_RUN;
            c.mask = w->mask;
            c.nrem = rest;
            subtract(&c.nrem, &w->mask);
            c.nwl = wl - c.need;
            c.nflag = lowest_rank(&c.nrem) == r ? flag : 0;
            int64_t v = f(s, c.nrem, c.nwl, c.ncap, c.nflag);
            done = s->failed || better(v, &c, &best, &arg, &has_arg);
        }
        walks_free(&ws);
        if (s->failed) return INF;
        if (done) goto zero;
    }
    int same = lowest_rank(&rest) == r;
    memset(&c.mask, 0, sizeof c.mask);
    c.nrem = rest;
    c.need = 0;
    c.ncap = cap;
    if (s->one && s->wr_base <= i && i < s->wr_base + 4) {
        c.kind = STEP_DESIGNATE;
        c.nwl = wl + 1;
        c.nflag = same ? flag : 0;
        int64_t v = f(s, rest, c.nwl, cap, c.nflag);
        if (s->failed) return INF;
        if (better(v, &c, &best, &arg, &has_arg)) goto zero;
    }
    if (!(flag & NODEAD) && s->pts[i] < best) {
        c.kind = STEP_DEAD;
        c.nwl = wl;
        c.nflag = same ? (flag | NOSET) : 0;
        int64_t v = s->pts[i] + f(s, rest, wl, cap, c.nflag);
        if (s->failed) return INF;
        if (better(v, &c, &best, &arg, &has_arg)) goto zero;
    }
    remember(s, &rem, key, h, best, has_arg ? &arg : NULL);
    return best;
zero:
    remember(s, &rem, key, h, 0, &arg);
    return 0;
}

/* ---------------------------------------------------------------- plans */

/* One step of a plan: a meld -- `card` (the lowest card at its state) and the
 * cards of `mask`, short of `need` wilds -- or, mode one, `card` designated. */
typedef struct {
    int kind, card, need;
    Cards mask;
} PlanStep;

/* A plan as _trace leaves it in a Result: the steps (each takes a natural card
 * at least, so there are at most MAX_CARDS), the leftover wilds and their room. */
typedef struct {
    int n;
    PlanStep steps[MAX_CARDS];
    int leftover, cap;
} Plan;

/* _trace: follow the choices recorded from the root (rem, wl, 0, 0) into `p`. */
static void follow(const Search *s, int64_t value, Cards rem, int wl, Plan *p) {
    int cap = 0, flag = 0;
    p->n = 0;
    if (value >= INF) { /* as the Python's Result() defaults */
        p->leftover = p->cap = 0;
        return;
    }
    for (;;) {
        int most = s->one ? wl + wild_rank_cards(s, &rem) : wl;
        if (cap > most) cap = most;
        int32_t key = small_key(wl, cap, flag);
        const Entry *e = memo_find(&s->memo, &rem, key, hash_of(&rem, key));
        if (!e || !e->has_next) break;
        if (e->kind != STEP_DEAD && p->n < MAX_CARDS) {
            PlanStep *st = &p->steps[p->n++];
            st->kind = e->kind;
            st->card = e->card;
            st->need = e->need;
            st->mask = e->mask;
        }
        add_card(&rem, e->card, -1);
        subtract(&rem, &e->mask);
        wl = e->nwl;
        cap = e->ncap;
        flag = e->nflag;
    }
    p->leftover = wl;
    p->cap = cap;
}

/* ---------------------------------------------------------------- Python glue */

/* A tuple of `n` ints. */
static PyObject *int_tuple(const int *ids, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int k = 0; k < n; k++) {
        PyObject *id = PyLong_FromLong(ids[k]);
        if (!id) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, id);
    }
    return t;
}

static PyObject *ids_tuple(int first, const Cards *mask, int descending) {
    int ids[128];
    int n = 0;
    ids[n++] = first;
    int rest[128], m = 0;
    for (int id = 0; id < MAX_ID; id++)
        for (int c = count_of(mask, id); c > 0; c--) rest[m++] = id;
    for (int k = 0; k < m; k++) ids[n++] = descending ? rest[m - 1 - k] : rest[k];
    return int_tuple(ids, n);
}

/* The steps of a plan as the Python's Result lists them: (ids, need, "set" |
 * "run") or ((id,), 0, "designate"). */
static PyObject *steps_list(const Plan *p) {
    PyObject *steps = PyList_New(p->n);
    if (!steps) return NULL;
    for (int k = 0; k < p->n; k++) {
        const PlanStep *st = &p->steps[k];
        PyObject *step;
        if (st->kind == STEP_DESIGNATE) {
            step = Py_BuildValue("((i)is)", st->card, 0, "designate");
        } else {
            PyObject *ids = ids_tuple(st->card, &st->mask, st->kind == STEP_RUN_HIGH);
            step = ids ? Py_BuildValue("(Nis)", ids, st->need, st->kind == STEP_SET ? "set" : "run")
                       : NULL;
        }
        if (!step) {
            Py_DECREF(steps);
            return NULL;
        }
        PyList_SET_ITEM(steps, k, step);
    }
    return steps;
}

/* _trace: follow the choices from the root; (value, steps, leftover, cap). */
static PyObject *trace(const Search *s, int64_t value, Cards rem, int wl) {
    Plan p;
    follow(s, value, rem, wl, &p);
    PyObject *steps = steps_list(&p);
    if (!steps) return NULL;
    return Py_BuildValue("(LNii)", (long long)value, steps, p.leftover, p.cap);
}

static int read_ids(PyObject *seq, Cards *out) {
    memset(out, 0, sizeof *out);
    PyObject *fast = PySequence_Fast(seq, "ids must be a sequence");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > MAX_CARDS) {
        PyErr_SetString(PyExc_ValueError, "too many cards");
        goto fail;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        long id = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, k));
        if (id == -1 && PyErr_Occurred()) goto fail;
        if (id < 0 || id >= 52 || count_of(out, (int)id) == 15) {
            PyErr_SetString(PyExc_ValueError, "card id out of range, or 16 copies of one");
            goto fail;
        }
        add_card(out, (int)id, 1);
    }
    Py_DECREF(fast);
    return 0;
fail:
    Py_DECREF(fast);
    return -1;
}

static inline int is_cost(long long v) { return v >= 0 && v <= INF; }

/* `min` to `max` costs (each 0 to INF) into `out`. */
static int read_costs(PyObject *seq, int64_t *out, Py_ssize_t min, Py_ssize_t max,
                      Py_ssize_t *n_out) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < min || n > max) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "wrong number of costs");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, k));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (!is_cost(v)) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "a cost out of 0..INF");
            return -1;
        }
        out[k] = v;
    }
    Py_DECREF(fast);
    if (n_out) *n_out = n;
    return 0;
}

static PyObject *run(Search *s, Cards rem0, int wl0) {
    if (memo_open(&s->memo) < 0) return PyErr_NoMemory();
    s->failed = 0;
    int64_t value = f(s, rem0, wl0, 0, 0);
    PyObject *out = s->failed ? PyErr_NoMemory() : trace(s, value, rem0, wl0);
    memo_close(&s->memo);
    return out;
}

/* The searches from rem0 less one copy of each card of `drops`, in order, all
 * in one memo: a state's value, and the choice that gives it, do not depend on
 * where the search started (as long as the wilds, and so capmax, are the same:
 * natural drops only, and not wild-rank cards in mode one), so each plan is
 * the one a search of its own finds. */
static PyObject *each(Search *s, Cards rem0, int wl0, PyObject *drops) {
    PyObject *fast = PySequence_Fast(drops, "drops must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject *out = PyList_New(n);
    if (!out) {
        Py_DECREF(fast);
        return NULL;
    }
    if (memo_open(&s->memo) < 0) {
        Py_DECREF(fast);
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    s->failed = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        long id = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, k));
        if (id == -1 && PyErr_Occurred()) goto fail;
        if (id < 0 || id >= 52 || count_of(&rem0, (int)id) == 0 ||
            (s->one && s->wr_base <= id && id < s->wr_base + 4)) {
            PyErr_SetString(PyExc_ValueError, "a drop must be one of the ids, not of the wild rank");
            goto fail;
        }
        Cards rem = rem0;
        add_card(&rem, (int)id, -1);
        int64_t v = f(s, rem, wl0, 0, 0);
        if (s->failed) {
            PyErr_NoMemory();
            goto fail;
        }
        PyObject *found = trace(s, v, rem, wl0);
        if (!found) goto fail;
        PyList_SET_ITEM(out, k, found);
    }
    memo_close(&s->memo);
    Py_DECREF(fast);
    return out;
fail:
    memo_close(&s->memo);
    Py_DECREF(fast);
    Py_DECREF(out);
    return NULL;
}

/* Mode free's arguments into `s` and `rem`; `cheap_buf` holds MAX_CARDS + 1. */
static int init_free(Search *s, Cards *rem, PyObject *ids, int wilds, PyObject *pts,
                     PyObject *cheap, int allwild_ok, int high, int64_t *cheap_buf) {
    memset(s, 0, sizeof *s);
    if (wilds < 0 || wilds > MAX_CARDS) {
        PyErr_SetString(PyExc_ValueError, "wilds out of range");
        return -1;
    }
    if (read_ids(ids, rem) < 0 || read_costs(pts, s->pts, 52, MAX_ID, NULL) < 0 ||
        read_costs(cheap, cheap_buf, wilds + 1, MAX_CARDS + 1, &s->n_cheap) < 0)
        return -1;
    s->cheap = cheap_buf;
    s->allwild_ok = allwild_ok;
    s->high = high;
    s->capmax = wilds;
    return 0;
}

static PyObject *solve_free(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ids, *pts, *cheap;
    int wilds, allwild_ok, high;
    if (!PyArg_ParseTuple(args, "OiOOpp", &ids, &wilds, &pts, &cheap, &allwild_ok, &high))
        return NULL;
    Search s;
    Cards rem;
    int64_t cheap_buf[MAX_CARDS + 1];
    if (init_free(&s, &rem, ids, wilds, pts, cheap, allwild_ok, high, cheap_buf) < 0) return NULL;
    return run(&s, rem, wilds);
}

static PyObject *solve_free_each(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ids, *pts, *cheap, *drops;
    int wilds, allwild_ok, high;
    if (!PyArg_ParseTuple(args, "OiOOppO", &ids, &wilds, &pts, &cheap, &allwild_ok, &high, &drops))
        return NULL;
    Search s;
    Cards rem;
    int64_t cheap_buf[MAX_CARDS + 1];
    if (init_free(&s, &rem, ids, wilds, pts, cheap, allwild_ok, high, cheap_buf) < 0) return NULL;
    return each(&s, rem, wilds, drops);
}

/* Mode one's arguments into `s` and `rem`. */
static int init_one(Search *s, Cards *rem, PyObject *ids, int jokers, int wr_base, PyObject *pts,
                    long long lj, long long ljc, long long ls, long long lwc, int high) {
    memset(s, 0, sizeof *s);
    if (jokers < 0 || jokers > MAX_CARDS || wr_base < 0 || wr_base > 48 || (wr_base & 3) ||
        lj < 0 || lj > MAX_CARDS || ls < 0 || ls > MAX_CARDS || !is_cost(ljc) || !is_cost(lwc)) {
        PyErr_SetString(PyExc_ValueError, "jokers, wild rank or leaf costs out of range");
        return -1;
    }
    if (read_ids(ids, rem) < 0 || read_costs(pts, s->pts, 52, MAX_ID, NULL) < 0) return -1;
    s->one = 1;
    s->high = high;
    s->wr_base = wr_base;
    s->wr_word = wr_base >> 4;
    s->wr_shift = (wr_base & 15) << 2;
    s->leaf_jokers = lj;
    s->leaf_joker_cost = ljc;
    s->leaf_slots = ls;
    s->leaf_wr_cost = lwc;
    s->capmax = jokers + wild_rank_cards(s, rem);
    return 0;
}

static PyObject *solve_one(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ids, *pts;
    int jokers, wr_base, high;
    long long lj, ljc, ls, lwc;
    if (!PyArg_ParseTuple(args, "OiiO(LLLL)p", &ids, &jokers, &wr_base, &pts, &lj, &ljc, &ls,
                          &lwc, &high))
        return NULL;
    Search s;
    Cards rem;
    if (init_one(&s, &rem, ids, jokers, wr_base, pts, lj, ljc, ls, lwc, high) < 0) return NULL;
    return run(&s, rem, jokers);
}

static PyObject *solve_one_each(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ids, *pts, *drops;
    int jokers, wr_base, high;
    long long lj, ljc, ls, lwc;
    if (!PyArg_ParseTuple(args, "OiiO(LLLL)pO", &ids, &jokers, &wr_base, &pts, &lj, &ljc, &ls,
                          &lwc, &high, &drops))
        return NULL;
    Search s;
    Cards rem;
    if (init_one(&s, &rem, ids, jokers, wr_base, pts, lj, ljc, ls, lwc, high) < 0) return NULL;
    return each(&s, rem, jokers, drops);
}

static int add_constants(PyObject *m) {
    return PyModule_AddIntConstant(m, "MAX_CARDS", MAX_CARDS);
}

static PyMethodDef methods[] = {
    {"solve_free", solve_free, METH_VARARGS, "Mode free search (see search.solve_free)."},
    {"solve_one", solve_one, METH_VARARGS, "Mode one search (see search.solve_one)."},
    {"solve_free_each", solve_free_each, METH_VARARGS, "See search.solve_free_each."},
    {"solve_one_each", solve_one_each, METH_VARARGS, "See search.solve_one_each."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The hand solver's search in C (optional speedup of python_search).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && add_constants(m) < 0) Py_CLEAR(m);
    return m;
}
