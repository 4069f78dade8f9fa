-- wrk script for tests/bench/words_http.sh: POST /v1/filters/NAME/scan with
-- each body of a file in turn (one comment a line, sent without the line
-- feed), text/plain. Args after `--`: the file, the filter name. Each wrk
-- thread starts at its own place in the file. Counts the answers that are
-- not 200 and those that are blocked, printed at the end.
local bodies, i, path = {}, 0, "/"
local threads = {}

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

function init(args)
    for line in io.lines(args[1]) do
        bodies[#bodies + 1] = line
    end
    path = "/v1/filters/" .. args[2] .. "/scan"
    i = (id or 0) * 997
    bad, blocked = 0, 0
end

function request()
    i = i % #bodies + 1
    return wrk.format("POST", path, {["Content-Type"] = "text/plain"}, bodies[i])
end

function response(status, headers, body)
    if status ~= 200 then
        bad = bad + 1
    elseif body:find('"blocked":true', 1, true) then
        blocked = blocked + 1
    end
end

function done(summary, latency, requests)
    local b, k = 0, 0
    for _, t in ipairs(threads) do
        b = b + t:get("bad")
        k = k + t:get("blocked")
    end
    io.write(string.format("wrk: requests %d, not 200 %d, blocked %d, p50 %.0f us, p99 %.0f us\n",
        summary.requests, b, k, latency:percentile(50), latency:percentile(99)))
end
