#!/usr/bin/env python3
"""Requests for bloomgate's Adblock differential tests (issue 26), as TSV lines
`url<TAB>type<TAB>from` for the verdict programs (adblock_verdicts, naive_verdicts,
ref_verdicts.mjs).

  make_corpus.py [--seed N] [--variants K] [--urls FILE]... LISTFILE... > corpus.tsv
      For every network rule of the lists: a request built to match it (its pattern
      made concrete, its options satisfied), and up to K variants that must or must not
      match it: the case changed, a subdomain or a longer label, another separator or
      none, text before a left anchor or after a right one, a type, party or page
      outside the options. Then real URLs (--urls: the URLhaus list, bare hosts and
      Adblock lines alike) with varied types and pages. Deterministic for a seed.

  make_corpus.py --random --seed N [--rules R] [--requests M] OUTDIR
      A small random rule set OUTDIR/rules.txt over a small vocabulary, and requests
      OUTDIR/requests.tsv over the same vocabulary, so that rules, exceptions and
      options meet often: for checking the engine against the naive matcher.

Python 3 standard library only.
"""
import argparse
import os
import random
import re
import sys

TYPES = ['document', 'subdocument', 'script', 'image', 'stylesheet', 'object',
         'xmlhttprequest', 'media', 'font', 'ping', 'websocket', 'other']
TYPE_ALIASES = {'doc': 'document', 'frame': 'subdocument', 'css': 'stylesheet',
                'xhr': 'xmlhttprequest', 'beacon': 'ping', 'object-subrequest': 'object'}
SEPARATORS = ['/', '?', '&', '=', ':', ';', ',']
NOT_SEPARATORS = ['a', '0', '.', '-', '_', '%']
PAGES = ['https://www.example-news.com/article/2024/story.html', 'https://shop.example.org/',
         'https://blog.example.net/post?id=7', 'http://forum.example.co.uk/thread/12',
         'https://www.example.de/seite', 'https://m.example-video.com/watch?v=abc']
WORDS = ['ads', 'ad', 'banner', 'track', 'pixel', 'analytics', 'img', 'static', 'cdn',
         'js', 'api', 'v1', 'collect', 'event', 'user', 'media', 'news', 'video', 'sync',
         'tag', 'beacon', 'assets', 'lib', 'page', 'view', 'data']


def parse_rule(line):
    """A network rule as (exception, pattern, options) with options a list of
    (name, negated, value); None for comments, headers and cosmetic rules."""
    line = line.strip()
    if not line or line[0] in '!#[' or re.search(r'#[@?$%]*#|\$@?\$|#@?[$?%]#', line):
        return None
    exception = line.startswith('@@')
    body = line[2:] if exception else line
    opts = []
    i = body.rfind('$')
    if i != -1 and not body[i + 1:i + 2] == '/':
        for word in body[i + 1:].split(','):
            name, _, value = word.partition('=')
            neg = name.startswith('~')
            opts.append((name.lstrip('~').lower(), neg, value))
        body = body[:i]
    return exception, body, opts


def type_sets(opts):
    pos = {TYPE_ALIASES.get(n, n) for n, neg, _ in opts if not neg and TYPE_ALIASES.get(n, n) in TYPES}
    neg = {TYPE_ALIASES.get(n, n) for n, ng, _ in opts if ng and TYPE_ALIASES.get(n, n) in TYPES}
    if any(n == 'all' for n, _, _ in opts):
        pos = set(TYPES)
    return pos, neg


def allowed_types(opts):
    pos, neg = type_sets(opts)
    base = pos if pos else set(TYPES)
    return sorted(base - neg)


def party(opts):
    """'1p', '3p' or None."""
    for n, neg, _ in opts:
        if n in ('third-party', '3p', 'strict3p'):
            return '1p' if neg else '3p'
        if n in ('first-party', '1p', 'strict1p'):
            return '3p' if neg else '1p'
    return None


def domains(opts):
    pos, neg = [], []
    for n, _, v in opts:
        if n in ('domain', 'from') and v:
            for d in v.split('|'):
                if d.startswith('~'):
                    neg.append(d[1:])
                elif d and not d.startswith('/'):
                    pos.append(d)
    return pos, neg


def concrete_domain(d):
    return d[:-2] + '.com' if d.endswith('.*') else d


class Builder:
    def __init__(self, rng):
        self.rng = rng

    def word(self):
        return self.rng.choice(WORDS)

    def path(self):
        r = self.rng
        return '/'.join(self.word() for _ in range(r.randint(1, 3))) + r.choice(['', '.js', '.gif', '?x=1', '.html'])

    def fill(self, pattern, seps=None):
        """Make a pattern concrete: '*' becomes some text, '^' a separator (the last
        may be the end of the URL)."""
        out = []
        r = self.rng
        for i, c in enumerate(pattern):
            if c == '*':
                out.append(r.choice(['', 'x', '/' + self.word() + '/', self.word() + '.']))
            elif c == '^':
                if i == len(pattern) - 1 and r.random() < 0.3:
                    out.append('')
                else:
                    out.append(seps.pop(0) if seps else r.choice(SEPARATORS))
            else:
                out.append(c)
        return ''.join(out)

    def url_for(self, pattern):
        """A URL the pattern matches; None for regex rules and empty patterns."""
        r = self.rng
        p = pattern
        if len(p) >= 2 and p[0] == '/' and p[-1] == '/':
            return None
        end = p.endswith('|') and not p.endswith('||')
        if end:
            p = p[:-1]
        if p.startswith('||'):
            p = p[2:]
            m = re.match(r'[A-Za-z0-9.\-_]*', p)
            host, rest = m.group(0), p[m.end():]
            if not host:
                host = 'cdn.example-' + self.word() + '.com'
            elif host.endswith('.'):
                host += 'example.com'
            elif '.' not in host and not rest:
                host += '.com'
            if rest.startswith('^'):
                # a separator right after a host: what can follow a host in a URL
                rest = rest[1:]
                head = '' if not rest and end else r.choice(['/', '?', ':8080/'])
            else:
                head = ''
            url = 'https://' + host + head + self.fill(rest)
            if '/' not in url[8:] and not end:
                url += '/' + self.path()
            return url
        if p.startswith('|'):
            p = p[1:]
            url = self.fill(p)
            if '://' not in url:
                return url or None
            if url.count('/') < 3 and not end:
                url += '/' + self.path()
            return url
        if not p.strip('*'):
            return 'https://www.example-' + self.word() + '.com/' + self.path()
        fill = self.fill(p)
        if r.random() < 0.3 and re.match(r'[A-Za-z0-9]', fill) and '/' not in fill.split('?')[0][:1]:
            url = 'https://' + fill
        else:
            url = 'https://www.example-' + self.word() + '.com/' + self.word() + ('/' if not fill.startswith('/') else '') + fill
        if not end and r.random() < 0.7:
            url += self.word()
        return url

    def context(self, url, opts, want_party=None, want_type=None):
        """A (type, from) pair meeting the rule's options."""
        r = self.rng
        types = allowed_types(opts)
        prty = want_party or party(opts) or r.choice(['1p', '3p', None])
        if prty == '3p' and 'document' in types and len(types) > 1:
            types = [t for t in types if t != 'document']
        typ = want_type or (r.choice(types) if types else 'other')
        pos, _ = domains(opts)
        host = host_of(url)
        if pos:
            d = concrete_domain(r.choice(pos))
            page = 'https://' + r.choice(['', 'www.', 'sub.']) + d + '/' + self.word()
        elif prty == '1p':
            page = 'https://' + (host or 'example.com') + '/' + self.word() if typ != 'document' else ''
        elif prty == '3p' or typ != 'document':
            page = r.choice(PAGES)
        else:
            page = ''
        if typ == 'document' and not pos and r.random() < 0.7:
            page = ''
        return typ, page


def host_of(url):
    m = re.match(r'[A-Za-z][A-Za-z0-9+.\-]*://([^/?#]*)', url)
    if not m:
        return ''
    h = m.group(1).rsplit('@', 1)[-1]
    return h.split(':')[0].lower()


def variants(b, url, rule, typ, page):
    """Requests near (url, typ, page) that must or must not match the rule."""
    _, pattern, opts = rule
    r = b.rng
    out = []
    host = host_of(url)
    # case changed
    k = url.find('://') + 3
    out.append((url[:k] + ''.join(c.upper() if r.random() < 0.3 else c for c in url[k:]), typ, page))
    if pattern.startswith('||') and host:
        i = url.find(host)
        out.append((url[:i] + 'sub.' + url[i:], typ, page))          # subdomain: matches
        out.append((url[:i] + 'x' + url[i:], typ, page))             # label boundary: no
        hp = re.match(r'[A-Za-z0-9.\-_]*', pattern[2:]).group(0)
        if hp and url[i:i + len(hp)].lower() == hp.lower():
            j = i + len(hp)
            out.append((url[:j] + 'x' + url[j:], typ, page))         # longer label
    if '^' in pattern:
        # another separator, or a byte that is not one, where the pattern has '^'
        u = b.url_for(pattern.replace('^', '\x00'))
        if u:
            # right after a host only what may follow a host in a URL, or a host byte
            after_host = u.find('\x00') < u.find('/', u.find('://') + 3) or '/' not in u[8:]
            seps = ['/', '?'] if pattern.startswith('||') and after_host else SEPARATORS
            out.append((u.replace('\x00', r.choice(seps + NOT_SEPARATORS)), typ, page))
    if pattern.startswith('|') and not pattern.startswith('||'):
        out.append(('https://redirect.example.com/?u=' + url, typ, page))
    if pattern.endswith('|'):
        out.append((url + r.choice(['x', '/', '?a=1']), typ, page))
    pos_t, neg_t = type_sets(opts)
    if pos_t or neg_t:
        others = [t for t in TYPES if t not in allowed_types(opts)]
        if others:
            out.append((url, r.choice(others), page))
    p = party(opts)
    if p == '3p':
        out.append((url, typ, 'https://' + (host or 'example.com') + '/'))
    elif p == '1p':
        out.append((url, typ, r.choice(PAGES)))
    pos_d, neg_d = domains(opts)
    if neg_d:
        out.append((url, typ, 'https://' + concrete_domain(r.choice(neg_d)) + '/'))
    if pos_d:
        out.append((url, typ, r.choice(PAGES)))
        out.append((url, typ, ''))
        d = concrete_domain(r.choice(pos_d))
        out.append((url, typ, 'https://' + d + 'x/'))
    out.append((url, '', ''))
    return out


def real_urls(b, path):
    """URLs and hosts from a list such as URLhaus's (bare hosts, IPs, Adblock lines)."""
    urls = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in '!#[':
                continue
            rule = parse_rule(line)
            if line.startswith('||'):
                u = b.url_for(rule[1]) if rule else None
                if u:
                    urls.append(u)
            elif '/' in line:
                urls.append(line if '://' in line else 'http://' + line)
            else:
                urls.append('http://' + line + '/')
                urls.append('https://' + line + '/' + b.path())
    return urls


def corpus(args):
    rng = random.Random(args.seed)
    b = Builder(rng)
    out = sys.stdout
    n = 0
    seen_pages = []

    def emit(url, typ, page):
        nonlocal n
        if '\t' in url or '\n' in url or not url:
            return
        out.write(url if not typ and not page else '%s\t%s\t%s' % (url, typ, page))
        out.write('\n')
        n += 1

    for path in args.lists:
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                rule = parse_rule(line)
                if rule is None:
                    continue
                url = b.url_for(rule[1])
                if url is None:
                    continue
                typ, page = b.context(url, rule[2])
                emit(url, typ, page)
                vs = variants(b, url, rule, typ, page)
                for v in rng.sample(vs, min(args.variants, len(vs))):
                    emit(*v)
                pos_d, _ = domains(rule[2])
                if pos_d and len(seen_pages) < 5000:
                    seen_pages.append('https://www.' + concrete_domain(pos_d[0]) + '/')
    pages = PAGES + seen_pages
    for path in args.urls:
        for url in real_urls(b, path):
            host = host_of(url)
            emit(url, '', '')
            emit(url, rng.choice(TYPES[1:]), rng.choice(pages))
            emit(url, rng.choice(TYPES[1:]), 'https://' + host + '/' if host else '')
    # Real pages loading each other's resources.
    for page in seen_pages:
        emit(page, '', '')
        emit(page + b.path(), rng.choice(TYPES[1:]), rng.choice(pages))
    print('make_corpus: %d requests (seed %d)' % (n, args.seed), file=sys.stderr)


# ---- random rule sets, for the engine against the naive matcher ----

R_HOSTS = ['a.com', 'b.a.com', 'ads.net', 'x.ads.net', 'tr.io', 'cdn.tr.io', 'a.co.uk', 'ad.b.co.uk']
R_WORDS = ['ad', 'ads', 'x', 'banner', 'p', 'js', 'ga', 'Ad']
R_TYPES = ['script', 'image', 'stylesheet', 'xmlhttprequest', 'subdocument', 'document',
           'media', 'font', 'ping', 'other', 'websocket', 'object']


def random_pattern(rng):
    parts = []
    kind = rng.random()
    if kind < 0.35:
        host = rng.choice(R_HOSTS)
        if rng.random() < 0.2:
            host = host.split('.')[0]            # partial label
        parts.append('||' + host)
        if rng.random() < 0.6:
            parts.append('^')
    elif kind < 0.45:
        parts.append('|' + rng.choice(['http', 'https']) + '://' + rng.choice(R_HOSTS))
    elif kind < 0.5:
        w = rng.choice(R_WORDS)
        return '/' + rng.choice(['', '^https?://[^/]*', '[/.]']) + re.escape(w) + rng.choice(['', '[0-9]', '\\b', '$']) + '/'
    for _ in range(rng.randint(0, 3)):
        parts.append(rng.choice(['/', '.', '-', '*', '^', '?', '=']) + rng.choice(R_WORDS))
    if rng.random() < 0.2:
        parts.append(rng.choice(['^', '*', '.js', '/']))
    if rng.random() < 0.1:
        parts.append('|')
    p = ''.join(parts)
    # a one-byte line is no rule to the engines' list readers
    return p if len(p.strip('|*^')) > 1 else '/' + rng.choice(R_WORDS) + '.'


def random_options(rng, exception):
    opts = []
    if rng.random() < 0.35:
        for t in rng.sample(R_TYPES, rng.randint(1, 3)):
            opts.append(('~' if rng.random() < 0.3 else '') + t)
    if rng.random() < 0.25:
        opts.append(rng.choice(['third-party', '~third-party', '3p', '1p', 'first-party']))
    if rng.random() < 0.25:
        ds = rng.sample(R_HOSTS, rng.randint(1, 3))
        opts.append('domain=' + '|'.join(('~' if rng.random() < 0.3 else '') + d for d in ds))
    if not exception and rng.random() < 0.05:
        opts.append('important')
    if rng.random() < 0.05:
        opts.append('match-case')
    if exception and rng.random() < 0.05:
        opts = ['document']
    return opts


def random_set(args):
    rng = random.Random(args.seed)
    rules = []
    for _ in range(args.rules):
        exc = rng.random() < 0.25
        opts = random_options(rng, exc)
        rule = ('@@' if exc else '') + random_pattern(rng) + ('$' + ','.join(opts) if opts else '')
        rules.append(rule)
    for _ in range(max(1, args.rules // 20)):
        # $badfilter of an existing rule, its options sometimes in another order
        pattern, _, opts = rng.choice(rules).partition('$')
        opts = opts.split(',') if opts else []
        rng.shuffle(opts)
        rules.append(pattern + '$' + ','.join(opts + ['badfilter']))
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, 'rules.txt'), 'w') as f:
        f.write('! random rules, seed %d\n' % args.seed)
        f.write('\n'.join(rules) + '\n')
    with open(os.path.join(args.outdir, 'requests.tsv'), 'w') as f:
        for _ in range(args.requests):
            host = rng.choice(['', 'sub.', 'x', 'b.']) + rng.choice(R_HOSTS)
            path = ''.join(rng.choice(['/', '.', '-', '?', '=', '&', '']) + rng.choice(R_WORDS) for _ in range(rng.randint(0, 4)))
            url = rng.choice(['http', 'https']) + '://' + host + rng.choice(['', ':8080']) + '/' + path.lstrip('/') + rng.choice(['', '.js', '/'])
            if rng.random() < 0.2:  # the case of the host and path (a scheme is lower case)
                k = url.find('://') + 3
                url = url[:k] + (url[k:].upper() if rng.random() < 0.5 else url[k:].replace('a', 'A'))
            typ = rng.choice([''] + R_TYPES)
            page = '' if rng.random() < 0.3 else 'https://' + rng.choice(['', 'www.']) + rng.choice(R_HOSTS) + '/'
            f.write('%s\t%s\t%s\n' % (url, typ, page))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, default=26)
    ap.add_argument('--variants', type=int, default=2)
    ap.add_argument('--urls', action='append', default=[])
    ap.add_argument('--random', action='store_true')
    ap.add_argument('--rules', type=int, default=200)
    ap.add_argument('--requests', type=int, default=5000)
    ap.add_argument('paths', nargs='+')
    args = ap.parse_args()
    if args.random:
        if len(args.paths) != 1:
            ap.error('--random takes one OUTDIR')
        args.outdir = args.paths[0]
        random_set(args)
    else:
        args.lists = args.paths
        corpus(args)


if __name__ == '__main__':
    main()
