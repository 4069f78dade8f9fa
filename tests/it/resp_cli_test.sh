#!/usr/bin/env bash
# redis-cli against bloomgated's Redis protocol front: one-shot commands,
# commands piped on stdin, AUTH with -a, and the interactive mode (under a
# pseudo-terminal, TERM=dumb) that asks COMMAND and COMMAND DOCS on start.
# Skipped (77) only if redis-cli is not installed.
command -v redis-cli >/dev/null || { echo "redis-cli not installed: skipped"; exit 77; }
. "${srcdir:-.}/tests/it/resp_lib.sh"
resp_start "admin_token s3cret"
cli() { timeout 60 redis-cli -p "$RPORT" "$@" 2>&1; }

# --- one-shot
same "BF.EXISTS present" "$(cli BF.EXISTS exact a)" "1"
same "BF.EXISTS absent" "$(cli BF.EXISTS exact zzz)" "0"
same "BF.MEXISTS" "$(cli BF.MEXISTS exact a zzz c)" "$(printf '1\n0\n1')"
same "BF.EXISTS url respelled" "$(cli BF.EXISTS urls 'HTTPS://Evil.Example.com:443/dropper.exe?x=1')" "1"
same "BF.EXISTS url other path" "$(cli BF.EXISTS urls 'http://evil.example.com/other')" "0"
same "BF.EXISTS host subdomain" "$(cli BF.EXISTS hosts deep.bad.example.org)" "1"
same "BF.EXISTS missing key" "$(cli BF.EXISTS nope a)" "0"
same "BF.INFO missing key" "$(cli BF.INFO nope)" "ERR unknown_filter no such filter 'nope'"
same "BF.ADD without AUTH" "$(cli BF.ADD exact new)" \
    "NOPERM BF.ADD needs AUTH <token> first on this connection"
same "BF.ADD with -a" "$(cli -a s3cret --no-auth-warning BF.ADD exact new)" "1"
same "BF.ADD again" "$(cli -a s3cret --no-auth-warning BF.ADD exact new)" "0"
same "BF.MADD with --user" "$(cli --user default --pass s3cret --no-auth-warning BF.MADD exact new newer)" \
    "$(printf '0\n1')"
same "BF.CARD" "$(cli BF.CARD exact)" "5"
same "BF.INFO items" "$(cli BF.INFO exact ITEMS)" "5"
same "BF.INFO" "$(cli BF.INFO exact | head -8 | tr '\n' '|')" \
    "Capacity|3|Size|64|Number of filters|1|Number of items inserted|5|"
same "PING" "$(cli PING)" "PONG"
same "unknown command" "$(cli GET a)" "ERR unknown command 'GET'"
cli INFO >"$T/info"
grep -q '^bloomgate_version:' "$T/info" && grep -q '^exact:keys=exact,layout=blocked,items=5,' "$T/info" &&
    ok || bad "INFO: $(head -c 300 "$T/info")"

# --- the key space
same "KEYS" "$(cli KEYS '*' | sort | tr '\n' ' ')" "exact hosts urls "
same "KEYS pattern" "$(cli KEYS '[eh]*' | sort | tr '\n' ' ')" "exact hosts "
same "SCAN" "$(cli SCAN 0 MATCH 'u*' | tr '\n' ' ')" "0 urls "
same "--scan" "$(cli --scan --pattern '*s' | sort | tr '\n' ' ')" "hosts urls "
same "EXISTS" "$(cli EXISTS exact nope hosts)" "2"
same "TYPE" "$(cli TYPE exact) $(cli TYPE nope)" "MBbloom-- none"

# --- a transaction typed in: MULTI, queued commands, EXEC's one array
printf 'MULTI\nBF.EXISTS exact a\nBF.MEXISTS exact zzz c\nEXEC\n' |
    timeout 60 redis-cli -p "$RPORT" >"$T/tx" 2>&1
same "MULTI/EXEC" "$(tr '\n' ' ' <"$T/tx")" "OK QUEUED QUEUED 1 0 1 "
printf 'MULTI\nNOPE\nBF.EXISTS exact a\nEXEC\n' | timeout 60 redis-cli -p "$RPORT" >"$T/tx" 2>&1
grep -q "EXECABORT Transaction discarded because of previous errors" "$T/tx" &&
    ok || bad "EXECABORT: $(cat "$T/tx")"

# --- piped: many commands on stdin, answered in order
{
    for i in $(seq 1 200); do echo "BF.EXISTS exact a"; echo "BF.EXISTS exact miss$i"; done
    echo "BF.MEXISTS urls http://EVIL.example.com/dropper.exe http://example.com/"
} | timeout 60 redis-cli -p "$RPORT" >"$T/piped" 2>&1
same "piped lines" "$(wc -l <"$T/piped" | tr -d ' ')" "402"
same "piped yes" "$(head -400 "$T/piped" | grep -c '^1$')" "200"
same "piped no" "$(head -400 "$T/piped" | grep -c '^0$')" "200"
same "piped order" "$(head -4 "$T/piped" | tr '\n' ' ')" "1 0 1 0 "
same "piped MEXISTS" "$(tail -2 "$T/piped" | tr '\n' ' ')" "1 0 "

# --- --pipe (raw RESP on stdin, redis-cli's mass-insertion mode)
printf 'AUTH s3cret\r\nBF.ADD exact piped1\r\nBF.ADD exact piped2\r\n' |
    timeout 60 redis-cli -p "$RPORT" --pipe >"$T/pipe" 2>&1
grep -q 'errors: 0, replies: 3' "$T/pipe" && ok || bad "--pipe: $(cat "$T/pipe")"
same "after --pipe" "$(cli BF.MEXISTS exact piped1 piped2 | tr '\n' ' ')" "1 1 "

# --- interactive mode under a pseudo-terminal (script from util-linux)
if command -v script >/dev/null; then
    printf 'BF.MEXISTS exact a zzz\nquit\n' |
        TERM=dumb timeout 60 script -qec "redis-cli -p $RPORT" /dev/null >"$T/tty" 2>&1
    tr -d '\r' <"$T/tty" >"$T/tty2"
    grep -q '1) (integer) 1' "$T/tty2" && grep -q '2) (integer) 0' "$T/tty2" &&
        ok || bad "interactive: $(head -c 400 "$T/tty2")"
fi

# The daemon counted them as Redis-protocol requests.
n=$(line_info resp_requests)
[ "${n:-0}" -ge 430 ] && ok || bad "resp_requests in INFO: ${n:-none}"
finish
