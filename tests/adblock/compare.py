#!/usr/bin/env python3
"""Compare two Adblock verdict programs (issue 26's differential tests) on the same lists
and requests.

  compare.py --a CMD --b CMD --corpus FILE [--threshold PCT] [--known FILE]
             [--examples DIR] LISTFILE...

CMD is a verdict program with the TSV interface (`CMD LISTFILE... < requests`), e.g.
`node tests/adblock/ref_verdicts.mjs` or `_build/tests/adblock/naive_verdicts`, or
`file:PATH`, verdicts an earlier run wrote with --save DIR (DIR/a.tsv, DIR/b.tsv); A is the
side judged against (the reference), B the side under test. Prints the agreement, the
BLOCK/PASS disagreements in each direction, and the disagreements grouped by the syntax
features and options of the rules that decided on either side. Each disagreement is
then put in the first class of the known-differences file (--known) that describes it;
the exit status is 1 when the agreement is below --threshold (percent) or when a
disagreement fits no class, 2 on a usage or run error.

Known-differences file: blocks separated by blank lines, each
    class: NAME
    direction: b-blocks | b-passes | any
    match: PYTHON-REGEX searched in the record
    reason: why the two sides differ (one or more lines)
The record is `url=U type=T from=F a=BLOCK|PASS a_rule=R a_exc=E b=... b_rule=... b_exc=...`
with a TAB before each `key=`. Python 3 standard library only.
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys
import tempfile


def run(cmd, lists, corpus):
    if cmd.startswith('file:'):  # verdicts saved by an earlier run (--save)
        return None, open(cmd[5:], 'rb')
    out = tempfile.TemporaryFile()
    with open(corpus, 'rb') as stdin:
        p = subprocess.Popen(shlex.split(cmd) + lists, stdin=stdin, stdout=out,
                             stderr=subprocess.PIPE)
    return p, out


def finish(cmd, p, out):
    if p is None:
        return out.read().decode('utf-8', errors='replace').split('\n')[:-1]
    _, err = p.communicate()
    if p.returncode != 0:
        sys.stderr.write('compare: %s exited %d: %s\n' % (cmd, p.returncode,
                                                       err.decode(errors='replace').strip()))
        sys.exit(2)
    out.seek(0)
    return out.read().decode('utf-8', errors='replace').split('\n')[:-1]


def features(rule):
    """Syntax features and option names of a rule as written ('-' for none)."""
    if rule in ('-', ''):
        return []
    f = []
    body = rule
    if body.startswith('@@'):
        f.append('exception')
        body = body[2:]
    i = body.rfind('$')
    opts = []
    if i != -1 and body[i + 1:i + 2] != '/':
        opts = [o.split('=')[0] for o in body[i + 1:].split(',')]
        body = body[:i]
    if len(body) >= 2 and body[0] == '/' and body[-1] == '/':
        f.append('regex')
    else:
        if body.startswith('||'):
            f.append('||')
        elif body.startswith('|'):
            f.append('|start')
        if body.endswith('|') and not body.endswith('||'):
            f.append('end|')
        if '^' in body:
            f.append('^')
        if '*' in body.strip('*'):
            f.append('*')
        if not body.strip('|*^'):
            f.append('empty-pattern')
    f.extend('$' + o for o in opts if o)
    return f


def load_known(path):
    classes = []
    if not path:
        return classes
    with open(path, encoding='utf-8') as fh:
        blocks = re.split(r'\n\s*\n', fh.read())
    for block in blocks:
        c = {}
        key = None
        for line in block.split('\n'):
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            m = re.match(r'(class|direction|match|reason):\s?(.*)$', line)
            if m:
                key = m.group(1)
                c[key] = m.group(2).strip()
            elif key == 'reason':
                c['reason'] += ' ' + line.strip()
        if not c:
            continue
        for k in ('class', 'direction', 'match', 'reason'):
            if not c.get(k):
                sys.stderr.write('compare: %s: a class without %s: %r\n' % (path, k, block[:80]))
                sys.exit(2)
        if c['direction'] not in ('b-blocks', 'b-passes', 'any'):
            sys.stderr.write('compare: %s: bad direction %s\n' % (path, c['direction']))
            sys.exit(2)
        c['re'] = re.compile(c['match'])
        classes.append(c)
    return classes


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--a', required=True, help='reference verdict command')
    ap.add_argument('--b', required=True, help='verdict command under test')
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--threshold', type=float, default=0.0)
    ap.add_argument('--known', default='')
    ap.add_argument('--examples', default='')
    ap.add_argument('--top', type=int, default=25)
    ap.add_argument('--save', default='', help='write the verdicts to DIR/a.tsv, DIR/b.tsv')
    ap.add_argument('lists', nargs='+')
    args = ap.parse_args()

    known = load_known(args.known)
    pa, oa = run(args.a, args.lists, args.corpus)
    pb, ob = run(args.b, args.lists, args.corpus)
    va = finish(args.a, pa, oa)
    vb = finish(args.b, pb, ob)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        for name, v in (('a.tsv', va), ('b.tsv', vb)):
            with open(os.path.join(args.save, name), 'w', encoding='utf-8') as fh:
                fh.write(''.join(line + '\n' for line in v))
    with open(args.corpus, encoding='utf-8', errors='replace') as fh:
        reqs = fh.read().split('\n')[:-1]
    if not (len(reqs) == len(va) == len(vb)):
        sys.stderr.write('compare: %d requests, %d and %d verdicts\n' % (len(reqs), len(va), len(vb)))
        sys.exit(2)

    total = len(reqs)
    agree = 0
    by_dir = collections.Counter()
    by_feature = collections.Counter()
    by_set = collections.Counter()
    set_example = {}
    by_class = collections.Counter()
    examples = collections.defaultdict(list)
    unclassified = []
    for req, a, b in zip(reqs, va, vb):
        a3 = (a.split('\t') + ['-', '-'])[:3]
        b3 = (b.split('\t') + ['-', '-'])[:3]
        if a3[0] == b3[0]:
            agree += 1
            continue
        direction = 'b-blocks' if b3[0] == 'BLOCK' else 'b-passes'
        by_dir[direction] += 1
        # The rules that decided: the blocking side's rule, the passing side's exception
        # (or its rule, when it found one but an exception won).
        blocker = b3 if b3[0] == 'BLOCK' else a3
        passer = a3 if b3[0] == 'BLOCK' else b3
        feats = ['block:' + x for x in features(blocker[1])]
        feats += ['pass:' + x for x in features(passer[2])]
        for x in feats or ['(none)']:
            by_feature[(direction, x)] += 1
        key = (direction, ' '.join(feats) or '(none)')
        by_set[key] += 1
        set_example.setdefault(key, req.replace('\t', ' | ') + '  =>  A: ' + a + '  B: ' + b)
        r3 = (req.split('\t') + ['', ''])[:3]
        record = '\t'.join(['url=' + r3[0], 'type=' + r3[1], 'from=' + r3[2],
                            'a=' + a3[0], 'a_rule=' + a3[1], 'a_exc=' + a3[2],
                            'b=' + b3[0], 'b_rule=' + b3[1], 'b_exc=' + b3[2]])
        cls = None
        for c in known:
            if c['direction'] in ('any', direction) and c['re'].search(record):
                cls = c['class']
                break
        by_class[cls or '(unclassified)'] += 1
        if len(examples[cls or '(unclassified)']) < 20:
            examples[cls or '(unclassified)'].append(record)
        if cls is None:
            unclassified.append(record)

    pct = 100.0 * agree / total if total else 100.0
    print('requests      %d' % total)
    print('agreement     %.4f %% (%d)' % (pct, agree))
    print('B blocks, A passes  %d' % by_dir['b-blocks'])
    print('B passes, A blocks  %d' % by_dir['b-passes'])
    if by_dir:
        print('\nby feature of the deciding rules (block: the blocking side\'s rule, '
              'pass: the passing side\'s exception):')
        for (d, x), k in sorted(by_feature.items(), key=lambda t: (-t[1], t[0]))[:args.top * 2]:
            print('  %-9s %-28s %d' % (d, x, k))
        print('\nby feature set (top %d), with an example:' % args.top)
        for (d, s), k in by_set.most_common(args.top):
            print('  %6d  %-9s %s' % (k, d, s))
            print('          e.g. %s' % set_example[(d, s)][:300])
        print('\nby documented class:')
        for c, k in by_class.most_common():
            print('  %6d  %s' % (k, c))
    if args.examples:
        os.makedirs(args.examples, exist_ok=True)
        for c, recs in examples.items():
            name = re.sub(r'[^A-Za-z0-9_.-]+', '_', c).strip('_') or 'unclassified'
            with open(os.path.join(args.examples, name + '.txt'), 'w') as fh:
                fh.write('\n'.join(recs) + '\n')
    bad = False
    if pct < args.threshold:
        print('FAIL: agreement %.4f %% below %.4f %%' % (pct, args.threshold))
        bad = True
    if unclassified and known is not None and args.known:
        print('FAIL: %d disagreements in no documented class (%s), e.g.:' % (len(unclassified), args.known))
        for rec in unclassified[:10]:
            print('  ' + rec[:400])
        bad = True
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
