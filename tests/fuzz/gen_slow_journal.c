/* gen_slow_journal: write the journal of issue 15's quadratic scan, for
 * timing the fix and as a fuzz_journal input.
 *   gen_slow_journal [--fuzz] [HEADERS [CLAIM]] > FILE
 * A valid header, one bad record, then HEADERS (default 65,536) fake record
 * headers, each "JRN\x1e", a length of CLAIM bytes (default: half the file,
 * HEADERS * 8; 512 KiB for the default 1 MiB) and a wrong checksum. After the
 * bad record the reader looks for a valid record further on, and each fake
 * header whose claimed payload fits in the file costs a checksum over CLAIM
 * bytes, so the scan hashes about HEADERS/2 * CLAIM bytes (16 GiB with the
 * defaults), and doubling HEADERS quadruples the time. --fuzz writes the option byte fuzz_journal
 * reads first (0: the bytes as they are). Built by `make fuzz` into
 * tests/fuzz/bin; no sanitizers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

int main(int argc, char **argv)
{
    int a = 1, fuzz = 0;
    if (a < argc && strcmp(argv[a], "--fuzz") == 0) {
        fuzz = 1;
        a++;
    }
    unsigned long headers = a < argc ? strtoul(argv[a++], NULL, 0) : 65536;
    unsigned long claim = a < argc ? strtoul(argv[a++], NULL, 0) : headers * 8;
    if (a != argc || claim > 16u << 20) {
        fputs("usage: gen_slow_journal [--fuzz] [HEADERS [CLAIM <= 16 MiB]] > FILE\n", stderr);
        return 2;
    }
    unsigned char h[32] = "BGJOURN\x1a";
    put32(h + 8, 1);                     /* version */
    put64(h + 16, 0x5eed5eed5eed5eedull); /* salt */
    put64(h + 24, XXH3_64bits(h, 24));
    if (fuzz)
        putchar(0);
    fwrite(h, 1, sizeof(h), stdout);
    /* A record with a wrong checksum: the scan stops here and looks ahead. */
    unsigned char r[16 + 4] = "JRN\x1e";
    put32(r + 4, 4);
    fwrite(r, 1, sizeof(r), stdout);
    unsigned char fake[16] = "JRN\x1e";
    put32(fake + 4, (uint32_t)claim);
    for (unsigned long i = 0; i < headers; i++)
        fwrite(fake, 1, sizeof(fake), stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}
