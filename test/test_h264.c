/* SPDX-License-Identifier: MIT */
/* The H.264 example: its bit writer, CAVLC tables, transforms, and the network's stream on any runners */
#include <stdio.h>
#include <string.h>
#include "unity.h"
#include "kpn.h"
#include "bits.h"
#include "cavlc.h"
#include "h264_net.h"
#include "predict.h"
#include "stages.h"
#include "transform.h"

TEST_SOURCE_FILE("examples/h264/bits.c")
TEST_SOURCE_FILE("examples/h264/cavlc.c")
TEST_SOURCE_FILE("examples/h264/h264_net.c")
TEST_SOURCE_FILE("examples/h264/predict.c")
TEST_SOURCE_FILE("examples/h264/stages.c")
TEST_SOURCE_FILE("examples/h264/transform.c")
TEST_SOURCE_FILE("src/arena.c")
TEST_SOURCE_FILE("src/chan.c")
TEST_SOURCE_FILE("src/net.c")
TEST_SOURCE_FILE("src/place.c")
TEST_SOURCE_FILE("src/pool.c")
TEST_SOURCE_FILE("src/proc.c")
TEST_SOURCE_FILE("src/report.c")
TEST_SOURCE_FILE("src/resolve.c")
TEST_SOURCE_FILE("src/runners.c")
TEST_SOURCE_FILE("src/sched.c")
TEST_SOURCE_FILE("src/stats.c")
TEST_SOURCE_FILE("src/status.c")
TEST_SOURCE_FILE("port/posix/port_posix.c")
TEST_SOURCE_FILE("port/pthread/thread_pthread.c")

void setUp(void) {}

void tearDown(void) {}

/* ------------------------------------------------------------ bits */

static uint8_t buffer[256];
static char text[2048];

/* The bits written so far as a string of '0' and '1'. */
static const char *bit_string(const h264_bits *b)
{
    size_t i, n = h264_bits_count(b);
    for (i = 0; i < n && i + 1 < sizeof text; ++i) {
        int bit = i < 8 * b->bytes ? (b->buf[i / 8] >> (7 - i % 8)) & 1
                                   : (int)(b->acc >> (b->pending - 1 - (int)(i - 8 * b->bytes))) & 1;
        text[i] = (char)('0' + bit);
    }
    text[i] = '\0';
    return text;
}

void test_the_bit_writer_puts_fields_most_significant_bit_first(void)
{
    h264_bits b;
    h264_bits_init(&b, buffer, sizeof buffer);
    h264_put(&b, 3, 5);
    h264_put(&b, 1, 0);
    h264_put(&b, 12, 0xabc);
    h264_put(&b, 0, 1);
    TEST_ASSERT_EQUAL_STRING("1010101010111100", bit_string(&b));
    TEST_ASSERT_EQUAL_UINT(2, b.bytes);
    TEST_ASSERT_EQUAL_HEX8(0xaa, buffer[0]);
    TEST_ASSERT_EQUAL_HEX8(0xbc, buffer[1]);
    h264_put(&b, 32, 0x80000001u);
    TEST_ASSERT_EQUAL_size_t(48, h264_bits_count(&b));
    TEST_ASSERT_EQUAL_HEX8(0x80, buffer[2]);
    TEST_ASSERT_EQUAL_HEX8(0x01, buffer[5]);
    h264_put(&b, 3, 1);
    h264_put_trailing(&b); /* a one, then zeros to the byte */
    TEST_ASSERT_EQUAL_UINT(7, b.bytes);
    TEST_ASSERT_EQUAL_HEX8(0x30, buffer[6]);
    TEST_ASSERT_EQUAL_INT(0, b.overflow);
}

void test_the_bit_writer_stops_at_its_end(void)
{
    h264_bits b;
    h264_bits_init(&b, buffer, 1);
    h264_put(&b, 16, 0xffff);
    TEST_ASSERT_EQUAL_INT(1, b.overflow);
    TEST_ASSERT_EQUAL_UINT(1, b.bytes);
}

/* Table 9-2: the bit strings of codeNum 0..8, and one far out. */
void test_ue_codes_are_those_of_table_9_2(void)
{
    static const char *const want[] = {"1",       "010",     "011",     "00100",  "00101",
                                       "00110",   "00111",   "0001000", "0001001"};
    h264_bits b;
    unsigned v;
    for (v = 0; v < 9; ++v) {
        h264_bits_init(&b, buffer, sizeof buffer);
        h264_put_ue(&b, v);
        TEST_ASSERT_EQUAL_STRING(want[v], bit_string(&b));
        TEST_ASSERT_EQUAL_INT((int)strlen(want[v]), h264_ue_size(v));
    }
    /* 2^k - 1 needs k zeros: 254 = 2^8 - 2 has 7, 255 has 8 */
    TEST_ASSERT_EQUAL_INT(15, h264_ue_size(254));
    TEST_ASSERT_EQUAL_INT(17, h264_ue_size(255));
    h264_bits_init(&b, buffer, sizeof buffer);
    h264_put_ue(&b, 255);
    TEST_ASSERT_EQUAL_STRING("00000000100000000", bit_string(&b));
}

/* Table 9-3: se(v) is codeNum 2|v|-1 for v > 0 and 2|v| for v <= 0. */
void test_se_codes_map_as_table_9_3(void)
{
    static const int values[] = {0, 1, -1, 2, -2, 3, -3};
    static const char *const want[] = {"1", "010", "011", "00100", "00101", "00110", "00111"};
    h264_bits b;
    size_t i;
    for (i = 0; i < sizeof values / sizeof values[0]; ++i) {
        h264_bits_init(&b, buffer, sizeof buffer);
        h264_put_se(&b, values[i]);
        TEST_ASSERT_EQUAL_STRING(want[i], bit_string(&b));
        TEST_ASSERT_EQUAL_INT((int)strlen(want[i]), h264_se_size(values[i]));
    }
}

void test_a_nal_unit_escapes_start_code_emulation(void)
{
    static const uint8_t rbsp[] = {0, 0, 0, 0, 0, 1, 0, 0, 3, 0, 4};
    /* five zeros: a 3 before the third and the fifth; 0 0 3 becomes 0 0 3 3 */
    static const uint8_t want[] = {0, 0, 0, 1, 0x65, 0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 3, 3, 0, 4};
    uint8_t out[64];
    size_t n = h264_nal(out, sizeof out, 3, 5, rbsp, sizeof rbsp);
    TEST_ASSERT_EQUAL_size_t(sizeof want, n);
    TEST_ASSERT_EQUAL_MEMORY(want, out, sizeof want);
    TEST_ASSERT_EQUAL_size_t(0, h264_nal(out, 8, 3, 5, rbsp, sizeof rbsp));
}

/* ------------------------------------------------------------ CAVLC */

static void assert_vlc(const char *want, h264_vlc v)
{
    h264_bits b;
    h264_bits_init(&b, buffer, sizeof buffer);
    TEST_ASSERT_EQUAL_INT((int)strlen(want), v.length);
    h264_put(&b, v.length, v.code);
    TEST_ASSERT_EQUAL_STRING(want, bit_string(&b));
}

/* Spot values of table 9-5, every nC column. */
void test_coeff_token_matches_table_9_5(void)
{
    /* 0 <= nC < 2 */
    assert_vlc("1", h264_coeff_token(0, 0, 0));
    assert_vlc("01", h264_coeff_token(1, 1, 1));
    assert_vlc("000101", h264_coeff_token(0, 1, 0));
    assert_vlc("001", h264_coeff_token(0, 2, 2));
    assert_vlc("00011", h264_coeff_token(1, 3, 3));
    assert_vlc("0000100", h264_coeff_token(0, 5, 3));
    assert_vlc("0000000000001000", h264_coeff_token(0, 16, 3));
    /* 2 <= nC < 4 */
    assert_vlc("11", h264_coeff_token(2, 0, 0));
    assert_vlc("10", h264_coeff_token(3, 1, 1));
    assert_vlc("001011", h264_coeff_token(2, 1, 0));
    assert_vlc("011", h264_coeff_token(2, 2, 2));
    assert_vlc("0101", h264_coeff_token(3, 3, 3));
    assert_vlc("00000000000100", h264_coeff_token(2, 16, 3));
    /* 4 <= nC < 8 */
    assert_vlc("1111", h264_coeff_token(4, 0, 0));
    assert_vlc("1110", h264_coeff_token(7, 1, 1));
    assert_vlc("1101", h264_coeff_token(5, 2, 2));
    assert_vlc("1100", h264_coeff_token(6, 3, 3));
    assert_vlc("0000000001", h264_coeff_token(4, 16, 0));
    /* 8 <= nC: six bits, TotalCoeff - 1 and TrailingOnes; none is 000011 */
    assert_vlc("000011", h264_coeff_token(8, 0, 0));
    assert_vlc("000000", h264_coeff_token(8, 1, 0));
    assert_vlc("000001", h264_coeff_token(16, 1, 1));
    assert_vlc("010010", h264_coeff_token(9, 5, 2));
    assert_vlc("111111", h264_coeff_token(12, 16, 3));
    /* nC = -1: chroma DC */
    assert_vlc("01", h264_coeff_token(-1, 0, 0));
    assert_vlc("1", h264_coeff_token(-1, 1, 1));
    assert_vlc("001", h264_coeff_token(-1, 2, 2));
    assert_vlc("000010", h264_coeff_token(-1, 4, 0));
    assert_vlc("0000000", h264_coeff_token(-1, 4, 3));
    /* pairs that cannot occur */
    TEST_ASSERT_EQUAL_INT(0, h264_coeff_token(0, 1, 2).length);
    TEST_ASSERT_EQUAL_INT(0, h264_coeff_token(-1, 5, 0).length);
}

/* Every column of table 9-5 is a prefix code: no code is the start of
 * another, so a decoder can always tell them apart. */
void test_each_coeff_token_column_is_a_prefix_code(void)
{
    static const int columns[] = {0, 2, 4, 8, -1};
    size_t k;
    int a, b;
    for (k = 0; k < sizeof columns / sizeof columns[0]; ++k)
        for (a = 0; a < 17 * 4; ++a)
            for (b = 0; b < 17 * 4; ++b) {
                h264_vlc x = h264_coeff_token(columns[k], a / 4, a % 4);
                h264_vlc y = h264_coeff_token(columns[k], b / 4, b % 4);
                if (a == b || x.length == 0 || y.length == 0 || x.length > y.length)
                    continue;
                TEST_ASSERT_NOT_EQUAL(x.code, y.code >> (y.length - x.length));
            }
}

/* Tables 9-7, 9-8, 9-9a and 9-10, spot values. */
void test_total_zeros_and_run_before_match_their_tables(void)
{
    assert_vlc("1", h264_total_zeros(16, 1, 0));
    assert_vlc("011", h264_total_zeros(16, 1, 1));
    assert_vlc("000000001", h264_total_zeros(15, 1, 15));
    assert_vlc("111", h264_total_zeros(16, 2, 0));
    assert_vlc("000000", h264_total_zeros(16, 2, 14));
    assert_vlc("111", h264_total_zeros(16, 5, 3));
    assert_vlc("1", h264_total_zeros(16, 11, 4));
    assert_vlc("0", h264_total_zeros(16, 15, 0));
    assert_vlc("1", h264_total_zeros(16, 15, 1));
    assert_vlc("1", h264_total_zeros(4, 1, 0));   /* chroma DC */
    assert_vlc("000", h264_total_zeros(4, 1, 3));
    assert_vlc("00", h264_total_zeros(4, 2, 2));
    assert_vlc("0", h264_total_zeros(4, 3, 1));
    TEST_ASSERT_EQUAL_INT(0, h264_total_zeros(4, 2, 3).length);
    assert_vlc("1", h264_run_before(1, 0));
    assert_vlc("0", h264_run_before(1, 1));
    assert_vlc("00", h264_run_before(2, 2));
    assert_vlc("000", h264_run_before(6, 1));
    assert_vlc("100", h264_run_before(6, 6));
    assert_vlc("111", h264_run_before(7, 0));
    assert_vlc("001", h264_run_before(9, 6));
    assert_vlc("0001", h264_run_before(10, 7));
    assert_vlc("00000000001", h264_run_before(14, 14));
}

void test_nc_averages_the_available_neighbours(void)
{
    TEST_ASSERT_EQUAL_INT(0, h264_cavlc_nc(-1, -1));
    TEST_ASSERT_EQUAL_INT(5, h264_cavlc_nc(5, -1));
    TEST_ASSERT_EQUAL_INT(3, h264_cavlc_nc(-1, 3));
    TEST_ASSERT_EQUAL_INT(4, h264_cavlc_nc(3, 4)); /* (3 + 4 + 1) >> 1 */
    TEST_ASSERT_EQUAL_INT(0, h264_cavlc_nc(0, 0));
}

/* The worked example of Richardson's "H.264 and MPEG-4 video compression"
 * (section 6.4.13.2): the block 0 3 -1 0 / 0 -1 1 0 / 1 0 0 0 / 0 0 0 0
 * in zig-zag order, nC 0: coeff_token 0000100 (5 coefficients, 3 trailing
 * ones), signs 0 1 1, levels 1 and 0010, total_zeros 111, runs 10 1 1 01. */
void test_a_whole_block_codes_as_the_textbook_example(void)
{
    static const int16_t scanned[16] = {0, 3, 0, 1, -1, -1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    h264_bits b;
    h264_bits_init(&b, buffer, sizeof buffer);
    TEST_ASSERT_EQUAL_INT(5, h264_cavlc_block(&b, scanned, 16, 0));
    TEST_ASSERT_EQUAL_STRING("000010001110010111101101", bit_string(&b));
}

/* Chroma DC {2, 0, 0, -1}, nC = -1: TotalCoeff 2 with one trailing one
 * (000110), its sign 1, the level 2 as levelCode 2*2-2-2 = 0 ("1"),
 * total_zeros 2 of table 9-9a (00), run_before 2 with 2 left (00). */
void test_a_chroma_dc_block_uses_the_2x2_tables(void)
{
    static const int16_t dc[4] = {2, 0, 0, -1};
    h264_bits b;
    h264_bits_init(&b, buffer, sizeof buffer);
    TEST_ASSERT_EQUAL_INT(2, h264_cavlc_block(&b, dc, 4, -1));
    TEST_ASSERT_EQUAL_STRING("0001101" "1" "00" "00", bit_string(&b));
}

/* Levels past the suffixLength 0 range: 20 is levelCode 38-2 = 36 with
 * no trailing ones: prefix 15 and a 12-bit suffix of 36 - 30 = 6. */
void test_large_levels_take_the_escape(void)
{
    static const int16_t one[16] = {20};
    h264_bits b;
    h264_bits_init(&b, buffer, sizeof buffer);
    h264_cavlc_block(&b, one, 16, 0);
    TEST_ASSERT_EQUAL_STRING("000101" "0000000000000001" "000000000110" "1", bit_string(&b));
}

/* A reader of residual_block_cavlc() written from the decoding process
 * of clause 9.2 (not from the writer): the tables' codes are matched as
 * the prefix codes they are (their entries are checked above); the
 * levels follow 9.2.2.1 step by step: suffixLength 1 from the start
 * when TotalCoeff > 10 and TrailingOnes < 3, level_prefix 14 and 15,
 * the first level after fewer than three trailing ones raised by 2,
 * and suffixLength growing with each level's size. */
struct bit_reader { const char *bits; int at; };

static int read_bit(struct bit_reader *r)
{
    TEST_ASSERT_NOT_EQUAL('\0', r->bits[r->at]);
    return r->bits[r->at++] - '0';
}

static unsigned read_bits(struct bit_reader *r, int n)
{
    unsigned v = 0;
    while (n-- > 0)
        v = v << 1 | (unsigned)read_bit(r);
    return v;
}

static int next_is(const struct bit_reader *r, h264_vlc v)
{
    int i;
    if (v.length == 0)
        return 0;
    for (i = 0; i < v.length; ++i)
        if (r->bits[r->at + i] != (char)('0' + ((v.code >> (v.length - 1 - i)) & 1)))
            return 0;
    return 1;
}

static void read_coeff_token(struct bit_reader *r, int nc, int *total, int *trailing)
{
    int t, o;
    for (t = 0; t <= 16; ++t)
        for (o = 0; o <= 3; ++o)
            if (next_is(r, h264_coeff_token(nc, t, o))) {
                r->at += h264_coeff_token(nc, t, o).length;
                *total = t;
                *trailing = o;
                return;
            }
    TEST_FAIL_MESSAGE("no coeff_token matches");
}

static int read_total_zeros(struct bit_reader *r, int max_coeff, int total)
{
    int z;
    for (z = 0; z <= max_coeff - total; ++z)
        if (next_is(r, h264_total_zeros(max_coeff, total, z))) {
            r->at += h264_total_zeros(max_coeff, total, z).length;
            return z;
        }
    TEST_FAIL_MESSAGE("no total_zeros matches");
    return 0;
}

static int read_run_before(struct bit_reader *r, int zeros_left)
{
    int run;
    for (run = 0; run <= zeros_left; ++run)
        if (next_is(r, h264_run_before(zeros_left, run))) {
            r->at += h264_run_before(zeros_left, run).length;
            return run;
        }
    TEST_FAIL_MESSAGE("no run_before matches");
    return 0;
}

/* residual_block_cavlc() of 'max' coefficients with nC 'nc' into 'coef'
 * (scanning order); returns TotalCoeff */
static int read_block(struct bit_reader *r, int16_t *coef, int max, int nc)
{
    int level[16], run[16];
    int total = 0, trailing = 0, suffix_length, i, zeros_left, pos;

    memset(coef, 0, (size_t)max * sizeof *coef);
    read_coeff_token(r, nc, &total, &trailing);
    if (total == 0)
        return 0;
    suffix_length = total > 10 && trailing < 3 ? 1 : 0;
    for (i = 0; i < total; ++i) {
        if (i < trailing) {
            level[i] = 1 - 2 * read_bit(r);
            continue;
        }
        {
            int prefix = 0, code, suffix_size;
            while (read_bit(r) == 0)
                ++prefix;
            TEST_ASSERT_LESS_OR_EQUAL(15, prefix); /* the baseline profile's bound */
            code = (prefix < 15 ? prefix : 15) << suffix_length;
            suffix_size = prefix == 14 && suffix_length == 0 ? 4 : prefix >= 15 ? prefix - 3 : suffix_length;
            if (suffix_length > 0 || prefix >= 14)
                code += (int)read_bits(r, suffix_size);
            if (prefix >= 15 && suffix_length == 0)
                code += 15;
            if (i == trailing && trailing < 3)
                code += 2;
            level[i] = code % 2 == 0 ? (code + 2) >> 1 : (-code - 1) >> 1;
        }
        if (suffix_length == 0)
            suffix_length = 1;
        if ((level[i] < 0 ? -level[i] : level[i]) > (3 << (suffix_length - 1)) && suffix_length < 6)
            ++suffix_length;
    }
    zeros_left = total < max ? read_total_zeros(r, max, total) : 0;
    for (i = 0; i < total - 1; ++i) {
        run[i] = zeros_left > 0 ? read_run_before(r, zeros_left) : 0;
        zeros_left -= run[i];
    }
    run[total - 1] = zeros_left;
    pos = -1;
    for (i = total - 1; i >= 0; --i) {
        pos += run[i] + 1;
        TEST_ASSERT_TRUE(pos < max);
        coef[pos] = (int16_t)level[i];
    }
    return total;
}

static uint64_t lcg_state;

static unsigned lcg(unsigned n)
{
    lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)(lcg_state >> 33) % n;
}

/* A level of every size the writer meets: trailing ones, the
 * suffixLength 0 codes, level_prefix 14 and 15, up to the largest. */
static int16_t random_level(void)
{
    static const int tops[] = {1, 3, 8, 15, 30, 100, 2063};
    int v = 1 + (int)lcg((unsigned)tops[lcg(7)]);
    return (int16_t)(lcg(2) != 0 ? -v : v);
}

/* Blocks of every density (the most above ten coefficients, which start
 * at suffixLength 1 unless three trailing ones end them), of 16, 15
 * (AC) and 4 (chroma DC) coefficients, under every nC column, read back
 * as written, bit for bit to the last. */
void test_blocks_of_every_density_read_back_as_written(void)
{
    static const int ncs[] = {0, 1, 2, 3, 4, 7, 8, 13};
    int16_t coef[16], back[16];
    int trial, above_ten = 0, above_ten_no_t1 = 0, escapes = 0;

    lcg_state = 12345;
    for (trial = 0; trial < 3000; ++trial) {
        int max = trial % 3 == 0 ? 16 : trial % 3 == 1 ? 15 : 4;
        int nc = max == 4 ? -1 : ncs[lcg(8)];
        int dense = (int)lcg(17), i, total;
        struct bit_reader r;
        h264_bits b;

        for (i = 0; i < max; ++i)
            coef[i] = (int)lcg(16) < dense ? random_level() : 0;
        if (lcg(4) == 0) /* trailing ones at the end */
            for (i = max - 1 - (int)lcg(4); i < max; ++i)
                coef[i] = (int16_t)(lcg(2) != 0 ? 1 : -1);
        h264_bits_init(&b, buffer, sizeof buffer);
        total = h264_cavlc_block(&b, coef, max, nc);
        r.bits = bit_string(&b);
        r.at = 0;
        TEST_ASSERT_EQUAL_INT(total, read_block(&r, back, max, nc));
        TEST_ASSERT_EQUAL_MEMORY(coef, back, (size_t)max * sizeof coef[0]);
        TEST_ASSERT_EQUAL_INT((int)strlen(r.bits), r.at); /* nothing left over */
        if (total > 10) {
            int ones = 0;
            for (i = max - 1; i >= 0 && ones < 3; --i)
                if (coef[i] == 1 || coef[i] == -1)
                    ++ones;
                else if (coef[i] != 0)
                    break;
            ++above_ten;
            above_ten_no_t1 += ones < 3;
        }
        for (i = 0; i < max; ++i)
            escapes += coef[i] > 1000 || coef[i] < -1000;
    }
    /* the cases the sweep is for did come up */
    TEST_ASSERT_GREATER_THAN(100, above_ten);
    TEST_ASSERT_GREATER_THAN(50, above_ten_no_t1);
    TEST_ASSERT_GREATER_THAN(100, escapes);
}

/* ------------------------------------------------------------ transforms */

/* C X C^T by plain matrix products, with the forward core matrix C */
static void reference_forward(const int16_t x[16], int32_t y[16])
{
    static const int c[4][4] = {{1, 1, 1, 1}, {2, 1, -1, -2}, {1, -1, -1, 1}, {1, -2, 2, -1}};
    int32_t t[4][4];
    int i, j, k;
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 4; ++j) {
            t[i][j] = 0;
            for (k = 0; k < 4; ++k)
                t[i][j] += c[i][k] * x[4 * k + j];
        }
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 4; ++j) {
            y[4 * i + j] = 0;
            for (k = 0; k < 4; ++k)
                y[4 * i + j] += t[i][k] * c[j][k];
        }
}

void test_the_forward_transform_is_c_x_c_transposed(void)
{
    int16_t x[16];
    int32_t y[16];
    int i, trial;
    for (trial = 0; trial < 20; ++trial) {
        for (i = 0; i < 16; ++i)
            x[i] = (int16_t)(((i * 37 + trial * 101) % 511) - 255);
        reference_forward(x, y);
        h264_forward4x4(x);
        for (i = 0; i < 16; ++i)
            TEST_ASSERT_EQUAL_INT(y[i], x[i]);
    }
    /* a flat block of 3s has only a DC of 16 * 3 */
    for (i = 0; i < 16; ++i)
        x[i] = 3;
    h264_forward4x4(x);
    TEST_ASSERT_EQUAL_INT(48, x[0]);
    for (i = 1; i < 16; ++i)
        TEST_ASSERT_EQUAL_INT(0, x[i]);
}

/* Clause 8.5.12.2 by hand: a DC of 640 gives (640 + 32) >> 6 = 10
 * everywhere; a lone 64 at row 0, column 1 gives rows (64, 32, -32, -64)
 * after the horizontal pass (d1 and d1 >> 1), copied down every column,
 * then (v + 32) >> 6 = 1, 1, 0, -1. */
void test_the_inverse_transform_matches_hand_worked_blocks(void)
{
    int16_t d[16] = {640};
    int i;
    h264_inverse4x4(d);
    for (i = 0; i < 16; ++i)
        TEST_ASSERT_EQUAL_INT(10, d[i]);
    memset(d, 0, sizeof d);
    d[1] = 64;
    h264_inverse4x4(d);
    for (i = 0; i < 4; ++i) {
        TEST_ASSERT_EQUAL_INT(1, d[4 * i + 0]);
        TEST_ASSERT_EQUAL_INT(1, d[4 * i + 1]);
        TEST_ASSERT_EQUAL_INT(0, d[4 * i + 2]);
        TEST_ASSERT_EQUAL_INT(-1, d[4 * i + 3]);
    }
}

void test_the_hadamard_transforms_are_their_own_inverse_up_to_scale(void)
{
    int32_t h[16], k[4] = {7, -3, 2, 5};
    int i;
    for (i = 0; i < 16; ++i)
        h[i] = i * i - 20;
    h264_hadamard4x4(h);
    TEST_ASSERT_EQUAL_INT(16 * 0 + (0 + 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 81 + 100 + 121 + 144 + 169 +
                                    196 + 225) - 16 * 20, h[0]); /* the sum */
    h264_hadamard4x4(h);
    for (i = 0; i < 16; ++i)
        TEST_ASSERT_EQUAL_INT(16 * (i * i - 20), h[i]);
    h264_hadamard2x2(k);
    TEST_ASSERT_EQUAL_INT(7 - 3 + 2 + 5, k[0]);
    TEST_ASSERT_EQUAL_INT(7 + 3 + 2 - 5, k[1]); /* columns differ */
    TEST_ASSERT_EQUAL_INT(7 - 3 - 2 - 5, k[2]); /* rows differ */
    TEST_ASSERT_EQUAL_INT(7 + 3 - 2 + 5, k[3]);
}

/* Quantisation by the formula: level = (|c| * MF + f) >> (15 + qp/6) with
 * MF from the position class at qp % 6, f = 2^(15+qp/6)/3 (intra) or /6. */
void test_quantisation_follows_its_formula(void)
{
    /* qp 28: qp % 6 = 4 (MF 8192, 3355, 5243), qp / 6 = 4 */
    TEST_ASSERT_EQUAL_INT((1000 * 8192 + (1 << 19) / 3) >> 19, h264_quant(1000, 0, 28, 1));
    TEST_ASSERT_EQUAL_INT(15, h264_quant(1000, 0, 28, 1));
    TEST_ASSERT_EQUAL_INT(-((1000 * 3355 + (1 << 19) / 6) >> 19), h264_quant(-1000, 5, 28, 0));
    TEST_ASSERT_EQUAL_INT((700 * 5243 + (1 << 19) / 6) >> 19, h264_quant(700, 1, 28, 0));
    /* qp 0: MF 13107 at the DC, shift 15 */
    TEST_ASSERT_EQUAL_INT((100 * 13107 + (1 << 15) / 3) >> 15, h264_quant(100, 0, 0, 1));
    /* levels stop at the largest baseline CAVLC code */
    TEST_ASSERT_EQUAL_INT(2063, h264_quant(30000, 0, 0, 1));
    /* the DC quantisers shift two bits more (luma) and one more (chroma) */
    TEST_ASSERT_EQUAL_INT((4000 * 8192 + 4 * ((1 << 19) / 3)) >> 21, h264_quant_luma_dc(4000, 28, 1));
    TEST_ASSERT_EQUAL_INT((4000 * 8192 + 2 * ((1 << 19) / 6)) >> 20, h264_quant_chroma_dc(4000, 28, 0));
}

void test_the_block_quantiser_equals_the_per_coefficient_one(void)
{
    int16_t block[16], copy[16];
    int i, qp;
    for (qp = 0; qp <= 51; qp += 7) {
        for (i = 0; i < 16; ++i)
            block[i] = copy[i] = (int16_t)((i * 523 + qp * 97) % 4001 - 2000);
        h264_quant4x4(block, 1, qp, qp & 1);
        TEST_ASSERT_EQUAL_INT(copy[0], block[0]); /* 'first' skips it */
        for (i = 1; i < 16; ++i)
            TEST_ASSERT_EQUAL_INT(h264_quant(copy[i], i, qp, qp & 1), block[i]);
        for (i = 0; i < 16; ++i)
            copy[i] = block[i] = (int16_t)(i - 8);
        h264_dequant4x4(block, 0, qp);
        for (i = 0; i < 16; ++i)
            TEST_ASSERT_EQUAL_INT(h264_dequant(copy[i], i, qp), block[i]);
    }
}

/* The standard's normAdjust4x4 (clause 8.5.9, v for qp % 6 and the
 * positions with both coordinates even, both odd, and one odd), typed
 * from the standard: a level of 1 at qp < 6 dequantises to v itself.
 * The forward quantiser's factors MF must undo them: the forward core
 * transform's odd rows have a squared norm of 10 and the inverse's 5/2,
 * against 4 and 4 for the even rows, so each odd coordinate asks 5/4 more
 * of the scaling, and MF v (5/4)^odd = 2^17 (2^15 of the quantiser's
 * shift, 2^6 of the inverse transform's, less 2^4 of LevelScale's 16).
 * A level of 2048 at qp < 6 quantises to about MF / 16. */
void test_every_scaling_factor_is_the_standards(void)
{
    static const int v[6][3] = {{10, 16, 13}, {11, 18, 14}, {13, 20, 16},
                                {14, 23, 18}, {16, 25, 20}, {18, 29, 23}};
    static const int pos[3] = {0, 5, 1}; /* (0,0), (1,1), (0,1) */
    static const double odd[3] = {1.0, 1.5625, 1.25};
    int qp, k;

    for (qp = 0; qp < 6; ++qp)
        for (k = 0; k < 3; ++k) {
            double mf = 131072.0 / (v[qp][k] * odd[k]);
            int got = h264_quant(2048, pos[k], qp, 1);

            TEST_ASSERT_EQUAL_INT(v[qp][k], h264_dequant(1, pos[k], qp));
            TEST_ASSERT_TRUE(got * 16.0 > mf - 32.0 && got * 16.0 < mf + 32.0);
        }
}

/* Scaling by hand (clause 8.5.12.1 with flat matrices, LevelScale = 16 v):
 * level 15 at the DC, qp 28: 15 * 16 << 4 >> 4 = 15 * 16 * 16 / 16 = 240;
 * position (1,1), v = 25: 2 * 25 * 16 = 800.  DC of Intra16x16 (8.5.10),
 * a single level 1 at qp 28: every f = 1, dcY = (1 * 256 + 2) >> 2 = 64;
 * at qp 40 (qp/6 = 6): 1 * 16 * 16 << 0 = 256.  Chroma DC (8.5.11) at 28:
 * ((1 * 256) << 4) >> 5 = 128. */
void test_scaling_matches_hand_worked_values(void)
{
    int32_t dc[16] = {1}, cdc[4] = {1};
    int i;
    TEST_ASSERT_EQUAL_INT(15 * 16 * 16, h264_dequant(15, 0, 28));
    TEST_ASSERT_EQUAL_INT(2 * 25 * 16, h264_dequant(2, 5, 28));
    TEST_ASSERT_EQUAL_INT(-3 * 13, h264_dequant(-3, 1, 0)); /* (1,0): v = 13 */
    TEST_ASSERT_EQUAL_INT(-3 * 10, h264_dequant(-3, 2, 0)); /* (2,0): v = 10 */
    h264_dequant_luma_dc(dc, 28);
    for (i = 0; i < 16; ++i)
        TEST_ASSERT_EQUAL_INT(64, dc[i]);
    memset(dc, 0, sizeof dc);
    dc[0] = 1;
    h264_dequant_luma_dc(dc, 40);
    for (i = 0; i < 16; ++i)
        TEST_ASSERT_EQUAL_INT(256, dc[i]);
    h264_dequant_chroma_dc(cdc, 28);
    for (i = 0; i < 4; ++i)
        TEST_ASSERT_EQUAL_INT(128, cdc[i]);
    TEST_ASSERT_EQUAL_INT(29, h264_chroma_qp(29));
    TEST_ASSERT_EQUAL_INT(29, h264_chroma_qp(30));
    TEST_ASSERT_EQUAL_INT(35, h264_chroma_qp(39));
    TEST_ASSERT_EQUAL_INT(39, h264_chroma_qp(51));
}

/* A flat Intra16x16 residual of +20 comes back as +20 through the whole
 * chain: forward, DC Hadamard, quantisation, scaling, inverse. */
void test_a_flat_macroblock_survives_quantisation(void)
{
    static h264_mb_levels m;
    int b, i, qp;
    for (qp = 10; qp <= 40; qp += 6) {
        memset(&m, 0, sizeof m);
        for (b = 0; b < 16; ++b)
            for (i = 0; i < 16; ++i)
                m.luma[b][i] = 20;
        h264_mb_transform(&m);
        h264_mb_quantise(&m, qp, 1);
        TEST_ASSERT_EQUAL_INT(0, m.cbp & 15); /* no AC */
        h264_mb_rescale(&m, qp, 1);
        h264_mb_inverse(&m);
        for (b = 0; b < 16; ++b)
            for (i = 0; i < 16; ++i)
                TEST_ASSERT_UINT_WITHIN(1, 20, m.luma[b][i]);
    }
}

/* ------------------------------------------------------------ prediction */

void test_intra_prediction_follows_the_standard(void)
{
    h264_edge e;
    uint8_t p[256];
    int i;
    memset(&e, 0, sizeof e);
    h264_predict_luma16(p, H264_I16_DC, &e); /* no neighbour: 128 */
    for (i = 0; i < 256; ++i)
        TEST_ASSERT_EQUAL_INT(128, p[i]);
    for (i = 0; i < 16; ++i) {
        e.top[i] = (uint8_t)(10 * i);
        e.left[i] = 7;
    }
    e.has_top = 1;
    TEST_ASSERT_FALSE(h264_luma_mode_usable(H264_I16_HORIZONTAL, &e));
    h264_predict_luma16(p, H264_I16_DC, &e); /* (sum of 0..150 + 8) >> 4 = 75 */
    TEST_ASSERT_EQUAL_INT((1200 + 8) >> 4, p[17]);
    h264_predict_luma16(p, H264_I16_VERTICAL, &e);
    TEST_ASSERT_EQUAL_INT(130, p[16 * 9 + 13]);
    e.has_left = 1;
    h264_predict_luma16(p, H264_I16_DC, &e); /* (1200 + 112 + 16) >> 5 */
    TEST_ASSERT_EQUAL_INT((1200 + 112 + 16) >> 5, p[200]);
    /* chroma DC: the top-right block takes the top alone, the bottom-left
     * one the left alone */
    h264_predict_chroma8(p, H264_CHROMA_DC, &e);
    TEST_ASSERT_EQUAL_INT((40 + 50 + 60 + 70 + 2) >> 2, p[5]);
    TEST_ASSERT_EQUAL_INT(7, p[8 * 5 + 1]);
    TEST_ASSERT_EQUAL_INT((0 + 10 + 20 + 30 + 28 + 4) >> 3, p[0]);
}

/* ------------------------------------------------------------ the encoder */

/* A tiny video: 48x32 pixels (3x2 macroblocks), 4 frames of a pattern
 * sliding right by 2 pixels a frame. */
#define W 48
#define H 32
#define FRAMES 4
#define FRAME_SIZE (W * H * 3 / 2)

static uint8_t video[FRAMES][FRAME_SIZE];
static const uint8_t *frames[FRAMES];
static uint8_t stream_a[1 << 16], stream_b[1 << 16];
static uint8_t recon_a[FRAMES * FRAME_SIZE], recon_b[FRAMES * FRAME_SIZE];
static unsigned char arena[12 << 20];
static unsigned char work[4 << 20];

static void make_video(int still)
{
    int f, x, y;
    for (f = 0; f < FRAMES; ++f) {
        int shift = still ? 0 : 2 * f;
        for (y = 0; y < H; ++y)
            for (x = 0; x < W; ++x)
                video[f][y * W + x] = (uint8_t)(((x - shift) * 5 + y * 3) ^ ((x - shift) / 8 * 40));
        for (y = 0; y < H / 2; ++y)
            for (x = 0; x < W / 2; ++x) {
                video[f][W * H + y * W / 2 + x] = (uint8_t)(100 + x - shift / 2);
                video[f][W * H + W * H / 4 + y * W / 2 + x] = (uint8_t)(160 - y);
            }
        frames[f] = video[f];
    }
}

static h264_job make_job(uint8_t *stream, uint8_t *recon, int workers)
{
    h264_job job;
    memset(&job, 0, sizeof job);
    TEST_ASSERT_EQUAL_INT(0, h264_setup_init(&job.setup, W, H, 26, FRAMES));
    job.frames = frames;
    job.stream = stream;
    job.stream_cap = sizeof stream_a;
    job.recon = recon;
    job.workers = workers;
    return job;
}

static void sequential(h264_result *res)
{
    h264_job job = make_job(stream_a, recon_a, 1);
    TEST_ASSERT_LESS_OR_EQUAL(sizeof work, h264_sequential_work_size(&job));
    TEST_ASSERT_EQUAL_INT(KPN_OK, h264_encode_sequential(&job, work, sizeof work, res));
    TEST_ASSERT_EQUAL_INT(0, res->overflow);
}

static void network(unsigned runners, int workers, h264_result *res)
{
    h264_job job = make_job(stream_b, recon_b, workers);
    kpn_config cfg;
    kpn_net *net;
    h264_net *hn;
    kpn_stats st;

    kpn_config_default(&cfg);
    cfg.runners = runners;
    cfg.reserve_size = 64 * 1024;
    TEST_ASSERT_LESS_OR_EQUAL(sizeof arena, h264_arena_size(&job, &cfg));
    TEST_ASSERT_LESS_OR_EQUAL(sizeof work, h264_work_size(&job));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, &cfg));
    TEST_ASSERT_EQUAL_INT(KPN_OK, h264_build(net, &job, work, sizeof work, &hn));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_run(net));
    h264_collect(hn, res);
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_stats(net, &st));
    TEST_ASSERT_EQUAL_size_t(st.procs, st.procs_exited);
    TEST_ASSERT_EQUAL_UINT64(0, st.discarded);
}

void test_the_stream_has_parameter_sets_an_idr_and_p_slices(void)
{
    h264_result res;
    size_t i, idr = 0, p = 0;
    make_video(0);
    sequential(&res);
    /* start code, then SPS (nal_ref_idc 3, type 7): 0x67, profile 66, constraint 0xc0 */
    TEST_ASSERT_EQUAL_HEX8(0x67, stream_a[4]);
    TEST_ASSERT_EQUAL_HEX8(66, stream_a[5]);
    TEST_ASSERT_EQUAL_HEX8(0xc0, stream_a[6]);
    for (i = 0; i + 4 < res.bytes; ++i)
        if (stream_a[i] == 0 && stream_a[i + 1] == 0 && stream_a[i + 2] == 0 && stream_a[i + 3] == 1) {
            idr += stream_a[i + 4] == 0x65;
            p += stream_a[i + 4] == 0x61;
        }
    TEST_ASSERT_EQUAL_size_t(1, idr);
    TEST_ASSERT_EQUAL_size_t(FRAMES - 1, p);
    TEST_ASSERT_GREATER_OR_EQUAL(6, res.intra_mbs); /* all of frame 0 */
}

/* A still picture: after the IDR every macroblock is predicted from the
 * reconstruction with no residual left to code, so all are P_Skip. */
void test_a_still_picture_is_skipped_after_the_first_frame(void)
{
    h264_result res;
    make_video(1);
    sequential(&res);
    TEST_ASSERT_EQUAL_INT(6, res.intra_mbs);
    TEST_ASSERT_EQUAL_INT((FRAMES - 1) * 6, res.skip_mbs);
    TEST_ASSERT_EQUAL_MEMORY(recon_a, recon_a + 3 * FRAME_SIZE, FRAME_SIZE);
}

/* The loop is real: the P frames depend on frame 0's reconstruction, so a
 * change to frame 0 alone changes the coded P frames too. */
void test_p_frames_are_predicted_from_the_previous_reconstruction(void)
{
    h264_result a, b;
    size_t first;
    make_video(0);
    sequential(&a);
    memcpy(stream_b, stream_a, a.bytes);
    video[0][W * 9 + 20] ^= 0x40; /* one pixel of frame 0 */
    sequential(&b);
    TEST_ASSERT_NOT_EQUAL(a.checksum, b.checksum);
    /* the frames after 0 now read a different reference */
    for (first = a.bytes; first > 0 && a.bytes == b.bytes; --first)
        if (stream_a[first - 1] != stream_b[first - 1])
            break;
    TEST_ASSERT_TRUE(a.bytes != b.bytes || first > a.bytes / 2);
}

void test_the_network_gives_the_plain_loops_stream_on_any_runners_and_workers(void)
{
    static const unsigned runners[] = {1, 2, 3};
    static const int workers[] = {1, 2, 3, 5};
    h264_result want, got;
    char what[64];
    size_t r, w;

    make_video(0);
    sequential(&want);
    for (w = 0; w < sizeof workers / sizeof workers[0]; ++w)
        for (r = 0; r < sizeof runners / sizeof runners[0]; ++r) {
            snprintf(what, sizeof what, "runners=%u w=%d", runners[r], workers[w]);
            memset(stream_b, 0, sizeof stream_b);
            memset(recon_b, 0, sizeof recon_b);
            network(runners[r], workers[w], &got);
            TEST_ASSERT_EQUAL_INT_MESSAGE(0, (int)got.errors, what);
            TEST_ASSERT_EQUAL_INT_MESSAGE((int)want.bytes, (int)got.bytes, what);
            TEST_ASSERT_EQUAL_MEMORY_MESSAGE(stream_a, stream_b, want.bytes, what);
            TEST_ASSERT_EQUAL_MEMORY_MESSAGE(recon_a, recon_b, sizeof recon_a, what);
            TEST_ASSERT_EQUAL_UINT64_MESSAGE(want.checksum, got.checksum, what);
        }
}

void test_malformed_jobs_are_refused(void)
{
    h264_setup s;
    h264_job job = make_job(stream_b, recon_b, 1);
    kpn_net *net;
    h264_net *hn;
    TEST_ASSERT_EQUAL_INT(-1, h264_setup_init(&s, 47, 32, 26, 1));
    TEST_ASSERT_EQUAL_INT(-1, h264_setup_init(&s, 48, 32, 52, 1));
    TEST_ASSERT_EQUAL_INT(-1, h264_setup_init(&s, 16 * H264_MAX_MB_W + 2, 32, 26, 1));
    job.workers = 0;
    TEST_ASSERT_EQUAL_size_t(0, h264_work_size(&job));
    TEST_ASSERT_EQUAL_INT(KPN_OK, kpn_net_init(&net, arena, sizeof arena, NULL));
    TEST_ASSERT_EQUAL_INT(KPN_EINVAL, h264_build(net, &job, work, sizeof work, &hn));
    job.workers = 1;
    TEST_ASSERT_EQUAL_INT(KPN_ENOMEM, h264_build(net, &job, work, 1000, &hn));
}
