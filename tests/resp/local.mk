# tests/resp/: RedisBloom parity on the Redis protocol front, each script
# starting the real bloomgated (filters created through RESP, in a
# temporary state_dir) with the real clients: RedisBloom's own flow tests and
# redis-py's Bloom tests ported, redis-py's r.bf() and pipeline, redis-cli,
# and created keys across a restart. Each skips (77) without its client
# (Debian's python3-redis, python3-pytest, redis-tools). docs/resp.md lists
# every test skipped, and why ("Differences from RedisBloom, test by test").
resp_scripts = \
	%reldir%/redisbloom_flow_test.sh \
	%reldir%/redispy_bloom_test.sh \
	%reldir%/clients_test.sh \
	%reldir%/restart_test.sh
TESTS += $(resp_scripts)
EXTRA_DIST += $(resp_scripts) \
	%reldir%/bgdaemon.py %reldir%/differences.py %reldir%/rltest_env.py \
	%reldir%/redisbloom_flow_test.py %reldir%/redispy_bloom_test.py \
	%reldir%/clients_test.py %reldir%/restart_test.py
