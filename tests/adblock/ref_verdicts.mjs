// The reference side of bloomgate's Adblock differential tests (issue 26): the pinned
// @ghostery/adblocker (package.json, package-lock.json; `npm ci --prefix tests/adblock`)
// behind the same TSV interface as tests/adblock/adblock_verdicts and naive_verdicts.
//
//   node ref_verdicts.mjs [--optimized] LISTFILE...     < requests.tsv > verdicts.tsv
//   node ref_verdicts.mjs --bench LISTFILE...           < requests.tsv
//
// stdin: one request a line, `url<TAB>type<TAB>from` (type empty: a top-level document;
// from empty: no initiator; a line may hold the url alone). stdout: one line a request,
// `BLOCK` or `PASS`, TAB, the deciding rule as written (or `-`), TAB, the exception as
// written (or `-`). Errors: a message on stderr, exit status 1. Each URL (and page) is
// handed to the engine as a browser would: scheme and host lower-cased (browserCase).
//
// Verdict mode parses with `debug: true` (each filter keeps its line as written) and
// without the engine's optimizations, which fuse rules into one regex and so lose which
// rule decided; `--optimized` keeps them (the verdict is the same, the rule may read
// `a <+> b`). `--bench` measures the engine as shipped (default config): one warm-up
// pass over the requests, three timed passes, and prints the best pass's time per
// request (wall clock, and the process's CPU time, which a loaded machine disturbs
// less), the parse time and the serialized size.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { FiltersEngine, Request } from '@ghostery/adblocker';

// Adblock's request types (as lists and bloomgate's fronts name them) onto the type
// names the engine takes (webRequest's). The engine's own names are accepted as well.
const TYPES = new Map([
    ['', 'main_frame'],
    ['document', 'main_frame'],
    ['main_frame', 'main_frame'],
    ['subdocument', 'sub_frame'],
    ['sub_frame', 'sub_frame'],
    ['script', 'script'],
    ['image', 'image'],
    ['stylesheet', 'stylesheet'],
    ['object', 'object'],
    ['object-subrequest', 'object'],
    ['xmlhttprequest', 'xmlhttprequest'],
    ['xhr', 'xmlhttprequest'],
    ['fetch', 'xmlhttprequest'],
    ['media', 'media'],
    ['font', 'font'],
    ['ping', 'ping'],
    ['beacon', 'ping'],
    ['websocket', 'websocket'],
    ['csp_report', 'csp_report'],
    ['other', 'other'],
]);

function die(msg) {
    process.stderr.write(`ref_verdicts: ${msg}\n`);
    process.exit(1);
}

function readLists(files) {
    if (files.length === 0) {
        die('usage: ref_verdicts.mjs [--optimized|--bench] LISTFILE... < requests.tsv');
    }
    const texts = [];
    for (const f of files) {
        try {
            texts.push(readFileSync(f, 'utf8'));
        } catch (e) {
            die(`${f}: ${e.message}`);
        }
    }
    return texts.join('\n');
}

// A URL as a browser hands it to a blocker: WHATWG's parser lower-cases the scheme and
// the host (bloomgate's engine does the same before matching). Only those two parts are
// taken from `new URL()`; the rest stays byte for byte as given (no re-encoding, no
// normalised path), so that this is the one change. A URL the parser refuses, or one
// whose host it rewrites beyond case (IDNA, IPv4 forms), is handed on as given.
function browserCase(url) {
    let u;
    try {
        u = new URL(url);
    } catch {
        return url;
    }
    const colon = url.indexOf(':');
    if (colon < 0 || url.slice(0, colon).toLowerCase() + ':' !== u.protocol) {
        return url;
    }
    let out = u.protocol + url.slice(colon + 1);
    if (u.hostname === '') {
        return out;
    }
    let start = u.protocol.length;
    while (out[start] === '/') {
        start += 1;
    }
    let end = start;
    while (end < out.length && !'/?#'.includes(out[end])) {
        end += 1;
    }
    const at = out.lastIndexOf('@', end - 1);
    if (at >= start) {
        start = at + 1;
    }
    let hostEnd = start;
    if (out[start] === '[') {
        hostEnd = out.indexOf(']', start) + 1;
    } else {
        while (hostEnd < end && out[hostEnd] !== ':') {
            hostEnd += 1;
        }
    }
    const host = out.slice(start, hostEnd);
    if (host.toLowerCase() !== u.hostname && host.toLowerCase() !== `${u.hostname}.`) {
        return out;
    }
    return out.slice(0, start) + host.toLowerCase() + out.slice(hostEnd);
}

// The requests on stdin, parsed once (so that a bench pass times matching alone).
function readRequests() {
    let text;
    try {
        text = readFileSync(0, 'utf8');
    } catch (e) {
        die(`stdin: ${e.message}`);
    }
    const lines = text.split('\n');
    if (lines.length > 0 && lines[lines.length - 1] === '') {
        lines.pop();
    }
    const requests = [];
    lines.forEach((line, i) => {
        if (line.endsWith('\r')) {
            line = line.slice(0, -1);
        }
        const [url = '', type = '', from = ''] = line.split('\t');
        if (url === '') {
            die(`stdin line ${i + 1}: no url`);
        }
        const t = TYPES.get(type.toLowerCase());
        if (t === undefined) {
            die(`stdin line ${i + 1}: unknown type '${type}'`);
        }
        requests.push({ url: browserCase(url), type: t, sourceUrl: browserCase(from) });
    });
    return requests;
}

// One pass: every request through Request.fromRawDetails and engine.match, as an
// embedding program would call them.
function matchAll(engine, requests, out) {
    let blocked = 0;
    for (const r of requests) {
        const res = engine.match(Request.fromRawDetails(r));
        if (res.match) {
            blocked += 1;
        }
        if (out !== undefined) {
            const rule = res.filter === undefined ? '-' : res.filter.toString();
            const exc = res.exception === undefined ? '-' : res.exception.toString();
            out.push(`${res.match ? 'BLOCK' : 'PASS'}\t${rule}\t${exc}`);
        }
    }
    return blocked;
}

function verdicts(files, optimized) {
    const engine = FiltersEngine.parse(readLists(files), {
        debug: true,
        enableOptimizations: optimized,
        loadCosmeticFilters: false,
    });
    const requests = readRequests();
    const out = [];
    matchAll(engine, requests, out);
    out.push('');
    process.stdout.write(out.join('\n'));
}

function bench(files) {
    const text = readLists(files);
    const requests = readRequests();
    if (requests.length === 0) {
        die('--bench needs requests on stdin');
    }
    let t0 = performance.now();
    const engine = FiltersEngine.parse(text);
    const parseMs = performance.now() - t0;
    const size = engine.serialize().length;
    t0 = performance.now();
    const network = FiltersEngine.parse(text, { loadCosmeticFilters: false });
    const parseNetMs = performance.now() - t0;
    const sizeNet = network.serialize().length;

    matchAll(engine, requests, undefined); // warm-up
    let best = Infinity;
    let bestCpu = Infinity;
    let blocked = 0;
    for (let pass = 0; pass < 3; pass += 1) {
        const c0 = process.cpuUsage();
        t0 = performance.now();
        blocked = matchAll(engine, requests, undefined);
        best = Math.min(best, performance.now() - t0);
        const c = process.cpuUsage(c0);
        bestCpu = Math.min(bestCpu, (c.user + c.system) / 1000);
    }
    const lines = [
        `engine          @ghostery/adblocker ${engineVersion()} on node ${process.version}`,
        `requests        ${requests.length} (${blocked} blocked)`,
        `match           ${((best * 1000) / requests.length).toFixed(3)} us/request (best of 3 passes after a warm-up)`,
        `match cpu       ${((bestCpu * 1000) / requests.length).toFixed(3)} us/request of process CPU time (best of the 3)`,
        `parse           ${parseMs.toFixed(1)} ms (default config)`,
        `serialized      ${size} bytes (default config)`,
        `parse network   ${parseNetMs.toFixed(1)} ms (loadCosmeticFilters: false)`,
        `serialized net  ${sizeNet} bytes (loadCosmeticFilters: false)`,
        '',
    ];
    process.stdout.write(lines.join('\n'));
}

function engineVersion() {
    try {
        const url = new URL('node_modules/@ghostery/adblocker/package.json', import.meta.url);
        return JSON.parse(readFileSync(url, 'utf8')).version;
    } catch {
        return '?';
    }
}

const args = process.argv.slice(2);
if (args[0] === '--bench') {
    bench(args.slice(1));
} else if (args[0] === '--optimized') {
    verdicts(args.slice(1), true);
} else if (args[0] === '--version') {
    process.stdout.write(`${engineVersion()}\n`);
} else {
    verdicts(args, false);
}
