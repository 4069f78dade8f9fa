"""The differences from RedisBloom that the ported tests meet, one line each.

Every test of tests/resp/ that is skipped, or of which a line is not run,
names one key of this table; docs/resp.md ("Differences from RedisBloom,
test by test") says the same, test by test, and why each is a decision.
"""
DIFF = {
    "scandump": "BF.SCANDUMP and BF.LOADCHUNK are not served: a filter is copied as its "
                "files (state_dir, bloomgate build), not in chunks over RESP",
    "debug": "BF.DEBUG is not served: its figures are RedisBloom's own chain layout",
    "restore": "DUMP/RESTORE and RDB payloads are not served: bloomgate keeps its own files",
    "expansion": "EXPANSION other than 2 is refused: a growing filter doubles each sub-filter",
    "size": "BF.INFO Size is the bytes of bloomgate's bits, not RedisBloom's allocation",
    "allornothing": "BF.MADD/BF.INSERT on a full NONSCALING filter refuse the whole request "
                    "(nothing added) instead of an array with an error in the failing place",
    "highfpr": "an error rate above 0.5 is refused (fpr 1e-12 to 0.5), not capped",
    "memory": "MEMORY USAGE is not served",
    "plainkeys": "commands on plain Redis keys (SET, GET, ...) are not served: "
                 "a key is a filter",
    "othertypes": "CF.*, CMS.*, TOPK.* and TDIGEST.* are not served: bloomgate serves "
                  "Bloom filters only",
    "randomseed": "a growing filter's hash seed is drawn at random when it is created "
                  "(RedisBloom's is fixed): a check that one filter shows at most 1 or 10 "
                  "false positives in 10,240 probes fails in about one run in six",
    "resp3": "RESP3 is not spoken (HELLO 3 answers -NOPROTO)",
}
