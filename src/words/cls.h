/* words/cls: a plain ASCII text's byte classes under the usual skip set
 * (words_fast.simd), 16 bytes at a time as bit masks: letters and digits,
 * whitespace, and skipped bytes (the rest of printable ASCII). A byte in
 * none of them (not ASCII, a control, DEL) is one the skip (skip.c) and
 * the delta's pre-check (delta_pre.c) leave to the exact scan. x86-64 with
 * SSE2 only (WORDS_CLS_SSE2). Pure; any thread. */
#ifndef BLOOMGATE_WORDS_CLS_H
#define BLOOMGATE_WORDS_CLS_H

#if defined(__SSE2__) && defined(__x86_64__)
#define WORDS_CLS_SSE2 1
#include <emmintrin.h>

static inline __attribute__((always_inline)) void words_cls16(const unsigned char *p, unsigned *w,
                                                              unsigned *sp, unsigned *sk)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
    /* x - lo < n, unsigned, as a signed compare after adding 0x80 - lo */
    __m128i alpha = _mm_cmplt_epi8(_mm_add_epi8(low, _mm_set1_epi8((char)(0x80 - 'a'))),
                                   _mm_set1_epi8((char)(0x80 + 26)));
    __m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0'))),
                                   _mm_set1_epi8((char)(0x80 + 10)));
    __m128i ctl = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - 9))),
                                 _mm_set1_epi8((char)(0x80 + 5)));
    __m128i blank = _mm_or_si128(ctl, _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    __m128i print = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - 0x21))),
                                   _mm_set1_epi8((char)(0x80 + 0x7f - 0x21)));
    *w = (unsigned)_mm_movemask_epi8(_mm_or_si128(alpha, digit));
    *sp = (unsigned)_mm_movemask_epi8(blank);
    *sk = (unsigned)_mm_movemask_epi8(print) & ~*w;
}
#endif

#endif
