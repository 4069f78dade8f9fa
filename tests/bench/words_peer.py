#!/usr/bin/python3
"""The peer of bench_words: the same list and texts through Debian's
python3-ahocorasick (pyahocorasick, a C automaton). It gets the easy job:
entries and texts lower-cased beforehand (outside the timing), no other
normalisation, no word boundaries, no exceptions (the @@ lines are dropped),
every occurrence reported. Prints figures; asserts nothing.
  WORDS_BENCH_DUMP=/tmp/wb tests/bench/bench_words 50000 100
  /usr/bin/python3 tests/bench/words_peer.py /tmp/wb
"""
import os
import sys
import time

import ahocorasick


def scan_all(a, text):
    n = 0
    for _ in a.iter(text):
        n += 1
    return n


def main():
    d = sys.argv[1]
    a = ahocorasick.Automaton()
    t0 = time.perf_counter()
    with open(d + "/list.txt", encoding="utf-8") as f:
        for line in f:
            w = line.strip().lower()
            if w and not w.startswith("@@"):
                a.add_word(w, w)
    a.make_automaton()
    t1 = time.perf_counter()
    st = a.get_stats()
    print("peer list: %d entries, built in %.0f ms, %.1f MB (get_stats total_size)"
          % (len(a), (t1 - t0) * 1e3, st["total_size"] / 1e6))
    for name in ("english", "mixed", "licences"):
        if not os.path.exists("%s/%s.txt" % (d, name)):
            continue  # licences.txt: only where words_run.sh wrote it
        with open("%s/%s.txt" % (d, name), "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8", errors="replace").lower()
        c0 = time.process_time()
        n = scan_all(a, text)
        c1 = time.process_time()
        print("peer %-8s one scan of %d MB: CPU %.1f MB/s, %d matches"
              % (name, len(raw) >> 20, len(raw) / 1e6 / (c1 - c0), n))
        # 1 KiB comments, as bench_words cuts them (here on characters
        # of the decoded text, about 1 KiB of bytes each for English).
        pieces = [raw[i:i + 1024].decode("utf-8", errors="replace").lower()
                  for i in range(0, len(raw) - 1023, 1024)]
        c0 = time.process_time()
        n = 0
        for p in pieces:
            n += scan_all(a, p)
        c1 = time.process_time()
        print("peer %-8s %d scans of 1 KiB: CPU %.0f ns per scan, %d matches"
              % (name, len(pieces), (c1 - c0) * 1e9 / len(pieces), n))


main()
