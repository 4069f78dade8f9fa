#!/usr/bin/env python3
"""Keys created through RESP last across a restart (tests/resp/restart_test.sh):
BF.RESERVE'd, auto-created by BF.ADD and BF.MADD, BF.INSERT'd with options,
a growing one past its first sub-filter and a full NONSCALING one come back
after SIGTERM and a new start on the same state_dir with their items,
options and counts; a DEL'd key is gone, and its files with it. Twice, so
adds made after a restart last too.
"""
import os
import sys

import redis

import bgdaemon

fails = []


def same(what, got, want):
    if got != want:
        fails.append("%s: got %r, want %r" % (what, got, want))


def names_on_disk(state):
    """Filter name -> its files in state_dir (each cN.conf names its filter)."""
    found = {}
    for f in sorted(os.listdir(state)):
        if f.endswith(".conf"):
            first = open(os.path.join(state, f)).readline()
            name = first.split('"')[1]
            base = f[:-len(".conf")]
            found[name] = sorted(g for g in os.listdir(state) if g.split(".")[0] == base)
    return found


def snapshot(r, keys):
    """What a client sees of each key: BF.INFO and BF.CARD."""
    return {k: (r.execute_command("BF.INFO", k), r.execute_command("BF.CARD", k)) for k in keys}


def main():
    d = bgdaemon.Daemon("max_filters 100").start()
    items = ["item%d" % k for k in range(300)]
    try:
        r = d.client()
        same("reserve", r.execute_command("BF.RESERVE", "reserved", 0.001, 1000), b"OK")
        r.execute_command("BF.MADD", "reserved", *items)
        same("auto add", r.execute_command("BF.ADD", "auto", "a1"), 1)
        same("auto madd", r.execute_command("BF.MADD", "automulti", "m1", "m2"), [1, 1])
        same("insert", r.execute_command("BF.INSERT", "inserted", "CAPACITY", 3, "ERROR", 0.001,
                                         "NONSCALING", "ITEMS", "x", "y", "z"), [1, 1, 1])
        r.execute_command("BF.RESERVE", "growing", 0.01, 4)
        r.execute_command("BF.MADD", "growing", *items[:100])
        r.execute_command("BF.RESERVE", "dropped", 0.01, 100)
        r.execute_command("BF.ADD", "dropped", "d1")
        keys = ["auto", "automulti", "growing", "inserted", "reserved"]
        on_disk = names_on_disk(d.state)
        same("on disk", sorted(on_disk), sorted(keys + ["dropped"]))
        same("DEL", r.delete("dropped"), 1)
        same("DEL'd files removed", sorted(names_on_disk(d.state)), keys)
        gone = on_disk["dropped"]
        same("DEL'd files", [f for f in gone if os.path.exists(os.path.join(d.state, f))], [])
        before = snapshot(r, keys)
        same("growing before", before["growing"][0][4:6], [b"Number of filters", 5])
        r.close()

        for round in (1, 2):
            d.restart()
            r = d.client()
            same("keys after restart %d" % round, sorted(r.keys("*")), [k.encode() for k in keys])
            same("info after restart %d" % round, snapshot(r, keys), before)
            same("reserved items %d" % round,
                 r.execute_command("BF.MEXISTS", "reserved", *items), [1] * len(items))
            same("growing items %d" % round,
                 r.execute_command("BF.MEXISTS", "growing", *items[:100]), [1] * 100)
            same("auto items %d" % round, r.execute_command("BF.MEXISTS", "automulti", "m1", "m2"),
                 [1, 1])
            same("dropped gone %d" % round,
                 (r.exists("dropped"), r.execute_command("BF.EXISTS", "dropped", "d1")), (0, 0))
            try:
                r.execute_command("BF.ADD", "inserted", "w")
                fails.append("NONSCALING after restart %d: add to a full filter taken" % round)
            except redis.ResponseError as e:
                same("NONSCALING after restart %d" % round, str(e), "non scaling filter is full")
            # Adds after a restart last through the next one.
            added = "after%d" % round
            same("add after restart %d" % round, r.execute_command("BF.ADD", "auto", added), 1)
            before = snapshot(r, keys)
            r.close()
        r = d.client()
        same("adds after restarts", r.execute_command("BF.MEXISTS", "auto", "a1", "after1",
                                                      "after2"), [1, 1, 1])
        # A key DEL'd and made again is a new, empty filter.
        r.execute_command("BF.RESERVE", "dropped", 0.01, 100)
        same("re-created empty", r.execute_command("BF.EXISTS", "dropped", "d1"), 0)
    except Exception as e:
        fails.append("raised %r" % (e,))
    finally:
        if fails:
            print("--- daemon log (end)\n" + d.log_tail())
        d.stop()
    for f in fails:
        print("FAIL:", f)
    print("restart checks:", "ok" if not fails else "%d failed" % len(fails))
    sys.exit(1 if fails else 0)


main()
