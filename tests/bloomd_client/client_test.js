// client_test.js HOST PORT: bloomd's NodeJS driver (npm `bloomd` 0.2.6,
// pinned in package-lock.json beside this file, used as it is) against a
// running bloomgated's bloomd front (bloomd_listen). Every call goes through
// the library's own API and every answer, as the library parses it, is
// checked; the first mismatch ends the run with exit 1 and what differed.
// Run by tests/it/bloomd_client_test.sh, which starts and stops the daemon.
'use strict'
const path = require('path')
const assert = require('assert')
const bloomd = require(path.join(__dirname, 'node_modules', 'bloomd'))

const host = process.argv[2] || '127.0.0.1'
const port = Number(process.argv[3])
if (!port) {
  console.error('usage: node client_test.js HOST PORT')
  process.exit(2)
}

const client = bloomd.createClient({ host: host, port: port, maxConnectionAttempts: 3 })
client.on('error', (err) => fail('client error: ' + err))
let steps = 0

function fail(msg) {
  console.error('FAIL after ' + steps + ' checks: ' + msg)
  process.exit(1)
}

// call('set', 'f', 'k') -> a promise of [error, data] from the callback.
function call(method, ...args) {
  return new Promise((resolve) => {
    client[method](...args, (error, data) => resolve([error, data]))
  })
}

// ok(method, args, want): the call succeeds and its data deep-equals want.
async function ok(method, args, want) {
  const [error, data] = await call(method, ...args)
  const what = method + '(' + JSON.stringify(args) + ')'
  if (error) fail(what + ': error ' + error.message + ', want ' + JSON.stringify(want))
  if (want !== undefined) {
    try {
      assert.deepStrictEqual(data, want)
    } catch (e) {
      fail(what + ': got ' + JSON.stringify(data) + ', want ' + JSON.stringify(want))
    }
  }
  steps++
  return data
}

// err(method, args, message): the call fails with that bloomd message.
async function err(method, args, message) {
  const [error, data] = await call(method, ...args)
  const what = method + '(' + JSON.stringify(args) + ')'
  if (!error) fail(what + ': got ' + JSON.stringify(data) + ', want error ' + message)
  if (error.message !== message) fail(what + ': error ' + error.message + ', want ' + message)
  steps++
}

function names(list) {
  return list.map((f) => f.name)
}

async function main() {
  const f = 'nodecli'
  await ok('create', [f, { capacity: 20000, prob: 0.001 }], true)
  await ok('create', [f, {}], true) // `Exists`, which the library takes as success
  let list = await ok('list', [null])
  if (!names(list).includes(f)) fail('list: no ' + f + ' in ' + JSON.stringify(names(list)))
  list = await ok('list', ['node'])
  if (!names(list).includes(f)) fail('list node: no ' + f)
  await ok('list', ['zz-none'], [])
  const entry = list.find((e) => e.name === f)
  if (Number(entry.capacity) < 20000) fail('list: capacity ' + entry.capacity)
  if (Math.abs(Number(entry.probability) - 0.001) > 1e-9) fail('list: prob ' + entry.probability)

  // An empty filter answers No to every check.
  await ok('check', [f, 'alpha'], false)
  await ok('set', [f, 'alpha'], true)
  await ok('set', [f, 'alpha'], false)
  await ok('check', [f, 'alpha'], true)
  await ok('check', [f, 'two words'], false)
  await ok('bulk', [f, ['b1', 'b2', 'b3']], { b1: true, b2: true, b3: true })
  await ok('bulkSet', [f, ['b3', 'b4']], { b3: false, b4: true })
  await ok('multi', [f, ['alpha', 'b1', 'absent1']], { alpha: true, b1: true, absent1: false })
  await ok('multiCheck', [f, ['b4', 'absent2']], { b4: true, absent2: false })

  const info = await ok('info', [f])
  const want = {
    name: f,
    size: '5',
    sets: '7',
    setHits: '5',
    setMisses: '2',
    checks: '8',
    checkHits: '4',
    checkMisses: '4',
  }
  for (const k of Object.keys(want)) {
    if (info[k] !== want[k]) fail('info.' + k + ': got ' + info[k] + ', want ' + want[k])
  }
  for (const k of ['capacity', 'probability', 'storage', 'pageIns', 'pageOuts']) {
    if (info[k] === undefined || info[k] === null) fail('info.' + k + ' missing')
  }
  steps++

  await err('check', ['no-such-filter', 'k'], 'Filter does not exist')
  await err('set', ['no-such-filter', 'k'], 'Filter does not exist')
  await err('info', ['no-such-filter'], 'Filter does not exist')
  await ok('flush', [f], true)
  await ok('flush', [null], true)

  // clear needs a closed filter; after it the name is gone, and a create
  // takes the cleared contents back.
  await err('clear', [f], 'Filter is not proxied. Close it first.')
  await ok('close', [f], true)
  await ok('clear', [f], true)
  list = await ok('list', [null])
  if (names(list).includes(f)) fail('list after clear: ' + f + ' still there')
  await ok('create', [f, { capacity: 20000, prob: 0.001 }], true)
  await ok('check', [f, 'alpha'], true)
  await ok('multi', [f, ['b2', 'b4']], { b2: true, b4: true })

  await ok('drop', [f], true)
  list = await ok('list', [null])
  if (names(list).includes(f)) fail('list after drop: ' + f + ' still there')
  await err('check', [f, 'alpha'], 'Filter does not exist')
  await ok('drop', [f], true) // `Filter does not exist`, squashed by the library

  // The library's 'safe' calls: a set on a missing filter creates it.
  const g = 'nodecli-safe'
  await ok('setSafe', [g, 'k1'], true)
  await ok('check', [g, 'k1'], true)
  await ok('bulkSafe', [g, ['k1', 'k2']], { k1: false, k2: true })
  await ok('multiSafe', [g, ['k2', 'k3']], { k2: true, k3: false })
  await ok('drop', [g], true)

  client.dispose()
  console.log('bloomd client (npm bloomd 0.2.6): ' + steps + ' checks passed')
}

main().catch((e) => fail(e.stack || String(e)))
