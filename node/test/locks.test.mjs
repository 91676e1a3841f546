// goblin-redis's Mutex, Semaphore and their Redlock twins, on every client library and protocol,
// against a real server (GOBLIN_TEST_SERVER), one without the module (GOBLIN_TEST_BARE) and
// three for the Redlock classes (GOBLIN_TEST_SERVERS). The ground redis-semaphore's own suite
// covers, and what it does not ask: the order of the line, nothing sent while waiting, the
// application's commands not stalled, slices under the client's reply timeouts, the waiters'
// connections, keyPrefix, a lease lost never re-admitted, a server without Goblin.
import { strict as assert } from 'node:assert'
import { after, before, describe, it } from 'node:test'
import {
  GoblinModuleError,
  LostLockError,
  MultiSemaphore,
  Mutex,
  RedlockMutex,
  RedlockSemaphore,
  Semaphore,
  TimeoutError,
  closeWaiters,
} from 'goblin-redis'
import {
  address,
  addresses,
  admin,
  close,
  connected,
  connection,
  delta,
  libraries,
  sleep,
  closeAll,
  commandCalls,
  freshKey,
  goblinWaiting as waiting,
  untilWaiting,
} from './helpers.mjs'

const server = address('GOBLIN_TEST_SERVER')

/** Whether `check` holds within 10 s, asked every 10 ms: a wait for an event, not a bound. */
async function until(check) {
  const deadline = performance.now() + 10_000
  while (performance.now() < deadline) {
    if (await check()) {
      return true
    }
    await sleep(10)
  }
  return await check()
}

for (const library of libraries()) {
  describe(`locks on ${library.name}`, () => {
    const the = connection(library, server)

    /** A fresh key, and a Mutex on it that holds it. */
    async function held(tag, options) {
      const key = freshKey(tag)
      const holder = new Mutex(the.client, key, options)
      await holder.acquire()
      return { key, holder }
    }

    it('a Mutex is mutex:<key> holding its identifier with a PX lease; release deletes it', async () => {
      const key = freshKey('m')
      const mutex = new Mutex(the.client, key, { lockTimeout: 5000 })
      assert.equal(mutex.isAcquired, false)
      await mutex.acquire()
      assert.equal(mutex.isAcquired, true)
      assert.equal(await the.raw.get(`mutex:${key}`), mutex.identifier)
      const pttl = await the.raw.pttl(`mutex:${key}`)
      assert.ok(pttl > 4000 && pttl <= 5000, `PTTL ${pttl}`)
      await mutex.release()
      assert.equal(mutex.isAcquired, false)
      assert.equal(await the.raw.exists(`mutex:${key}`), 0)
    })

    it('waiters are served in the order they came, each the moment the lock is released', async () => {
      const { key, holder } = await held('order', { lockTimeout: 10000 })
      const base = await waiting(the.raw)
      const served = []
      const waiters = []
      for (let i = 0; i < 5; i++) {
        const mutex = new Mutex(the.client, key, { lockTimeout: 10000, acquireTimeout: 10000 })
        waiters.push(
          mutex.acquire().then(async () => {
            served.push(i)
            await mutex.release()
          }),
        )
        await untilWaiting(the.raw, base + i + 1)
      }
      await holder.release()
      await Promise.all(waiters)
      assert.deepEqual(served, [0, 1, 2, 3, 4])
    })

    it('acquire gives up after acquireTimeout with TimeoutError, leaving the line, nothing written for it', async () => {
      const { key, holder } = await held('timeout')
      const waiter = new Mutex(the.client, key, { acquireTimeout: 1000 })
      const base = await waiting(the.raw)
      const started = performance.now()
      const acquiring = assert.rejects(waiter.acquire(), (error) => error instanceof TimeoutError && error.message === `Acquire mutex mutex:${key} timeout`)
      // Not before acquireTimeout from the call; and, from the moment the server has it in line
      // (its waiter connection opened, which a loaded machine makes slow), not a slice later.
      await untilWaiting(the.raw, base + 1)
      const inLine = performance.now()
      await acquiring
      const ended = performance.now()
      assert.ok(ended - started >= 995, `gave up after ${ended - started} ms`)
      assert.ok(ended - inLine < 2000, `gave up ${ended - inLine} ms after it was in line`)
      assert.equal(await waiting(the.raw), base)
      assert.equal(await waiter.tryAcquire(), false)
      await holder.release()
      assert.equal(await the.raw.exists(`mutex:${key}`), 0)
    })

    it('an aborted acquire rejects with the signal\'s reason, leaves the line and is granted nothing', async () => {
      const { key, holder } = await held('abort')
      const waiter = new Mutex(the.client, key, { acquireTimeout: 5000 })
      const reason = new Error('given up')
      const controller = new AbortController()
      const acquiring = waiter.acquire(controller.signal)
      await sleep(50)
      controller.abort(reason)
      await assert.rejects(acquiring, (error) => error === reason)
      await holder.release()
      await sleep(20)
      assert.equal(await the.raw.exists(`mutex:${key}`), 0)
      assert.equal(waiter.isAcquired, false)
      await assert.rejects(waiter.acquire(AbortSignal.abort(reason)), (error) => error === reason)
    })

    it('acquireAttemptsLimit 1 tries once and does not wait', async () => {
      const { key, holder } = await held('once')
      const before = await commandCalls(the.raw)
      assert.equal(await new Mutex(the.client, key, { acquireAttemptsLimit: 1, acquireTimeout: 5000 }).tryAcquire(), false)
      // What reached the server: one GOBLIN.LOCK, which never blocks, and no GOBLIN.BLOCK.
      const sent = delta(before, await commandCalls(the.raw))
      assert.deepEqual(Object.entries(sent).filter(([name]) => name.startsWith('goblin.')), [['goblin.lock', 1]])
      await holder.release()
    })

    it('the lease is refreshed while held; one lost is never taken again: onLockLost fires', async () => {
      const key = freshKey('lost')
      const lost = []
      const mutex = new Mutex(the.client, key, {
        lockTimeout: 3000,
        refreshInterval: 80,
        onLockLost(error) {
          lost.push([error, this.isAcquired])
        },
      })
      await mutex.acquire()
      // Refreshed: the lease's end moves on, on the server's clock (read from the event, not
      // after a guessed sleep).
      const granted = Number(await the.raw.call('PEXPIRETIME', `mutex:${key}`))
      assert.ok(await until(async () => Number(await the.raw.call('PEXPIRETIME', `mutex:${key}`)) > granted), 'never refreshed')
      assert.equal(await the.raw.get(`mutex:${key}`), mutex.identifier)
      await the.raw.del(`mutex:${key}`)
      assert.ok(await until(async () => lost.length > 0), 'the loss was never noticed')
      assert.equal(lost.length, 1)
      assert.ok(lost[0][0] instanceof LostLockError)
      assert.equal(lost[0][0].message, `Lost mutex for key mutex:${key}`)
      assert.equal(lost[0][1], false)
      assert.equal(mutex.isAcquired, false)
      assert.equal(await the.raw.exists(`mutex:${key}`), 0)
    })

    it('release is owner-checked: a lock someone else holds now is left alone', async () => {
      const { key, holder } = await held('owner', { refreshInterval: 0 })
      await the.raw.set(`mutex:${key}`, 'someone-else')
      await holder.release()
      assert.equal(await the.raw.get(`mutex:${key}`), 'someone-else')
    })

    it('an externally acquired lock is taken by refreshing it', async () => {
      const key = freshKey('external')
      const first = new Mutex(the.client, key, { refreshInterval: 0 })
      await first.acquire()
      const second = new Mutex(the.client, key, { identifier: first.identifier, acquiredExternally: true, lockTimeout: 2000 })
      await second.acquire()
      assert.ok((await the.raw.pttl(`mutex:${key}`)) <= 2000)
      await second.release()
      assert.equal(await the.raw.exists(`mutex:${key}`), 0)
    })

    it("a waiter does not stall the application's other commands on the same client", async () => {
      const { key, holder } = await held('stall')
      const base = await waiting(the.raw)
      const waiter = new Mutex(the.client, key, { acquireTimeout: 30_000 })
      let settled = false
      const acquiring = waiter.acquire().finally(() => {
        settled = true
      })
      await untilWaiting(the.raw, base + 1)
      // The client's own commands are answered while its waiter still waits: on a client the
      // waiter stalled they could only come after the waiter's reply, which the holder's
      // release (below) or the 30 s timeout alone would bring.
      await the.client.set(`${key}:other`, 'x')
      assert.equal(await the.client.get(`${key}:other`), 'x')
      assert.equal(settled, false, 'answered only once the waiter was')
      assert.equal(await waiting(the.raw), base + 1)
      await holder.release()
      await acquiring
      await waiter.release()
      await the.client.del(`${key}:other`)
    })

    it('a Semaphore of 2 admits two holders, the third waits for a release', async () => {
      const key = freshKey('sem')
      const [a, b, c] = [0, 1, 2].map(() => new Semaphore(the.client, key, 2, { lockTimeout: 5000 }))
      await a.acquire()
      await b.acquire()
      assert.deepEqual((await the.raw.zrange(`semaphore:${key}`, 0, -1)).sort(), [a.identifier, b.identifier].sort())
      let third = false
      const acquiring = c.acquire().then(() => {
        third = true
      })
      await sleep(100)
      assert.equal(third, false)
      await a.release()
      await acquiring
      assert.deepEqual((await the.raw.zrange(`semaphore:${key}`, 0, -1)).sort(), [b.identifier, c.identifier].sort())
      await assert.rejects(new Semaphore(the.client, key, 2, { acquireTimeout: 100 }).acquire(), new TimeoutError(`Acquire semaphore semaphore:${key} timeout`))
      await b.release()
      await c.release()
      assert.equal(await the.raw.exists(`semaphore:${key}`), 0)
    })

    it("a MultiSemaphore takes its permits all or nothing, named as redis-semaphore names them, given back together", async () => {
      const key = freshKey('multi')
      const stored = `semaphore:${key}`
      const two = new MultiSemaphore(the.client, key, 3, 2, { lockTimeout: 5000 })
      const one = new MultiSemaphore(the.client, key, 3, 1, { lockTimeout: 5000 })
      await two.acquire()
      await one.acquire()
      assert.deepEqual((await the.raw.zrange(stored, 0, -1)).sort(), [`${two.identifier}_0`, `${two.identifier}_1`, `${one.identifier}_0`].sort())
      const waiter = new MultiSemaphore(the.client, key, 3, 2, { lockTimeout: 5000, acquireTimeout: 5000 })
      let held = false
      const acquiring = waiter.acquire().then(() => (held = true))
      await sleep(100)
      assert.equal(held, false) // one permit is free, the waiter needs two
      await two.release()
      await acquiring
      assert.deepEqual((await the.raw.zrange(stored, 0, -1)).sort(), [`${one.identifier}_0`, `${waiter.identifier}_0`, `${waiter.identifier}_1`].sort())
      await assert.rejects(
        new MultiSemaphore(the.client, key, 3, 1, { acquireTimeout: 100 }).acquire(),
        new TimeoutError(`Acquire multi-semaphore ${stored} timeout`),
      )
      await waiter.release()
      await one.release()
      assert.equal(await the.raw.exists(stored), 0)
    })

    it('a permit lost is never re-admitted by its refresh', async () => {
      const key = freshKey('semlost')
      let lost = 0
      const sem = new Semaphore(the.client, key, 3, { lockTimeout: 300, refreshInterval: 80, onLockLost: () => (lost += 1) })
      await sem.acquire()
      await the.raw.zrem(`semaphore:${key}`, sem.identifier)
      await sleep(200)
      assert.equal(lost, 1)
      assert.equal(await the.raw.zscore(`semaphore:${key}`, sem.identifier), null)
    })

    it('fencingToken: each grant a larger token, kept by every refresh, undefined once released or lost', async () => {
      const key = freshKey('fence')
      const stored = `mutex:${key}`
      const first = new Mutex(the.client, key, { lockTimeout: 2000, refreshInterval: 50 })
      assert.equal(first.fencingToken, undefined)
      await first.acquire()
      const token = first.fencingToken
      assert.ok(Number.isSafeInteger(token) && token > 0, `token ${token}`)
      await sleep(200) // a few refreshes (GOBLIN.EXTEND ... FENCE): the same token
      assert.equal(first.fencingToken, token)
      assert.equal(await the.raw.call('GOBLIN.EXTEND', stored, first.identifier, '2000', 'REPLACE', 'FENCE'), token)
      const waiter = new Mutex(the.client, key, { lockTimeout: 2000, refreshInterval: 0, acquireTimeout: 5000 })
      const waiting = waiter.acquire()
      await sleep(50)
      await first.release()
      assert.equal(first.fencingToken, undefined)
      await waiting // granted in line (GOBLIN.BLOCK ... FENCE)
      assert.ok(waiter.fencingToken > token, `${waiter.fencingToken} after ${token}`)
      const external = new Mutex(the.client, key, { identifier: waiter.identifier, acquiredExternally: true, refreshInterval: 0 })
      await external.acquire() // by a refresh: the holder's token
      assert.equal(external.fencingToken, waiter.fencingToken)
      await waiter.release()
      const lost = []
      const last = new Mutex(the.client, key, { lockTimeout: 300, refreshInterval: 60, onLockLost: () => lost.push(1) })
      await last.acquire()
      assert.ok(last.fencingToken > external.fencingToken)
      await the.raw.del(stored)
      await sleep(200)
      assert.deepEqual(lost, [1])
      assert.equal(last.fencingToken, undefined)
    })

    it('permits carry tokens too, each holder its own; fencing: false sends no FENCE', async () => {
      const key = freshKey('fencesem')
      const stored = `semaphore:${key}`
      const a = new Semaphore(the.client, key, 2, { lockTimeout: 5000, refreshInterval: 0 })
      const b = new MultiSemaphore(the.client, key, 3, 2, { lockTimeout: 5000, refreshInterval: 0 })
      await a.acquire()
      await b.acquire()
      assert.ok(b.fencingToken > a.fencingToken, `${b.fencingToken} after ${a.fencingToken}`)
      assert.equal(await the.raw.call('GOBLIN.ZWINDOW', stored, '*', '5', '3', b.identifier, 'PERMITS', '2', 'SEPARATOR', '_', 'XX', 'FENCE'), b.fencingToken)
      assert.equal(await the.raw.call('GOBLIN.ZWINDOW', stored, '*', '5', '2', a.identifier, 'XX', 'FENCE'), a.fencingToken)
      await a.release()
      await b.release()
      assert.equal(a.fencingToken, undefined)
      assert.equal(await the.raw.exists(stored), 0)
      // The token a holder's grant keeps beside the lock (in its slot, a name no client writes).
      const tokenKey = (name) => `{${name}}\0goblin:fence\0${name}`
      const fencedMutex = new Mutex(the.client, key, { refreshInterval: 0 })
      await fencedMutex.acquire()
      assert.equal(await the.raw.exists(tokenKey(`mutex:${key}`)), 1)
      await fencedMutex.release()
      const other = freshKey('plain') // the token above is kept until its lease would have ended
      const plain = new Mutex(the.client, other, { fencing: false, refreshInterval: 0 })
      await plain.acquire()
      assert.equal(plain.isAcquired, true)
      assert.equal(plain.fencingToken, undefined)
      assert.equal(await the.raw.get(`mutex:${other}`), plain.identifier)
      assert.equal(await the.raw.exists(tokenKey(`mutex:${other}`)), 0) // no FENCE: no token kept
      await plain.release()
    })

    it('the constructors check their arguments', () => {
      assert.throws(() => new Mutex(null, 'k'), new TypeError('"client" is required'))
      assert.throws(() => new Mutex({}, 'k'), TypeError)
      assert.throws(() => new Mutex(the.client, ''), new TypeError('"key" is required'))
      assert.throws(() => new Mutex(the.client, 7), new TypeError('"key" must be a string'))
      assert.throws(() => new Mutex(the.client, 'k', { lockTimeout: 0 }), RangeError)
      assert.throws(() => new Mutex(the.client, 'k', { lockTimeout: 1.5 }), RangeError)
      assert.throws(() => new Mutex(the.client, 'k', { lockTimeout: '10' }), TypeError)
      assert.throws(() => new Mutex(the.client, 'k', { acquireTimeout: -1 }), RangeError)
      assert.throws(() => new Mutex(the.client, 'k', { acquireAttemptsLimit: 0 }), RangeError)
      assert.throws(() => new Mutex(the.client, 'k', { refreshInterval: Infinity }), RangeError)
      assert.throws(() => new Mutex(the.client, 'k', { onLockLost: 'no' }), TypeError)
      assert.throws(() => new Mutex(the.client, 'k', { waitOn: {} }), TypeError)
      assert.throws(() => new Mutex(the.client, 'k', { identifier: '' }), new TypeError('identifier must be not empty random string'))
      assert.throws(() => new Semaphore(the.client, 'k', 0), new TypeError('"limit" is required'))
      assert.throws(() => new Semaphore(the.client, 'k', 2.5), RangeError)
      assert.throws(() => new MultiSemaphore(the.client, 'k', 2, 3), RangeError)
      assert.throws(() => new MultiSemaphore(the.client, 'k', 20000, 10001), RangeError)
      assert.throws(() => new Mutex(the.client, 'k', { fencing: 'yes' }), TypeError)
      assert.throws(() => new RedlockMutex(the.client, 'k'), new TypeError('"clients" array is required'))
      assert.throws(() => new RedlockMutex([], 'k'), RangeError)
    })
  })
}

const [first] = libraries()

describe(`waiting, on ${first.name}`, () => {
  let client, raw
  before(async () => ({ client, raw } = await connected(first, server)))
  after(() => closeAll(client, raw))

  it('parked waiters send nothing; a release is one hand-off', async () => {
    const key = freshKey('quiet')
    const holder = new Mutex(client, key, { refreshInterval: 0 })
    await holder.acquire()
    const waiters = [0, 1, 2].map(() => new Mutex(client, key, { refreshInterval: 0, acquireTimeout: 10000 }))
    const base = await waiting(raw)
    const acquired = []
    for (const [i, waiter] of waiters.entries()) {
      acquired.push(waiter.acquire())
      await untilWaiting(raw, base + i + 1) // in this order in the line
    }
    const before = await commandCalls(raw)
    await sleep(500)
    assert.deepEqual(delta(before, await commandCalls(raw)), {})
    await holder.release()
    await acquired[0]
    // The one release; the first waiter's GOBLIN.BLOCK is counted once it is answered (Redis 7.2+
    // and Valkey count a blocked module command then, Redis 7.0 does not).
    const handoff = delta(before, await commandCalls(raw))
    assert.equal(handoff['goblin.cad'], 1)
    assert.ok((handoff['goblin.block'] ?? 0) <= 1)
    assert.deepEqual(Object.keys(handoff).filter((name) => !['goblin.cad', 'goblin.block'].includes(name)), [])
    for (const [i, waiter] of waiters.entries()) {
      await acquired[i]
      await waiter.release()
    }
  })

  it('a wait longer than the client\'s reply timeout goes in slices shorter than it', async () => {
    const slow = await first.connect(server, { commandTimeout: 600 })
    try {
      const key = freshKey('slices')
      const holder = new Mutex(slow, key, { refreshInterval: 0 })
      await holder.acquire()
      const before = await commandCalls(raw)
      const waiter = new Mutex(slow, key, { acquireTimeout: 5000, refreshInterval: 0 })
      const acquiring = waiter.acquire()
      await sleep(1500)
      await holder.release()
      await acquiring
      const blocks = delta(before, await commandCalls(raw))['goblin.block']
      assert.ok(blocks >= 4, `${blocks} slices of at most 150 ms in 1.5 s`)
      await waiter.release()
    } finally {
      await close(slow)
    }
  })

  it('a waiter given waitOn waits on that client', async () => {
    const own = await first.connect(server)
    try {
      const key = freshKey('waiton')
      const holder = new Mutex(client, key)
      await holder.acquire()
      const waiter = new Mutex(client, key, { waitOn: own, acquireTimeout: 3000 })
      const base = await waiting(raw)
      const acquiring = waiter.acquire()
      await untilWaiting(raw, base + 1)
      // The one connection blocked (flags=b) in GOBLIN.BLOCK is the client given, not a waiter
      // connection of the package's own (named goblin-waiter), which it would be without waitOn.
      const blocked = (await raw.client('LIST')).split('\n').filter((line) => line.includes(' flags=b ') && line.includes('cmd=goblin.block'))
      assert.equal(blocked.length, 1, blocked.join('\n'))
      assert.doesNotMatch(blocked[0], /name=goblin-waiter/)
      await holder.release()
      await acquiring
      await waiter.release()
    } finally {
      await close(own)
    }
  })

  it('waiter connections are reused, and closed by closeWaiters or when the client ends', async () => {
    const mine = await first.connect(server)
    const count = async () => (await raw.client('LIST')).split('\n').filter((line) => line.includes('name=goblin-waiter')).length
    const before = await count()
    const key = freshKey('pool')
    for (let i = 0; i < 3; i++) {
      const holder = new Mutex(mine, key)
      await holder.acquire()
      const waiter = new Mutex(mine, key)
      const acquiring = waiter.acquire()
      await sleep(20)
      await holder.release()
      await acquiring
      await waiter.release()
    }
    assert.equal((await count()) - before, 1)
    closeWaiters(mine)
    await sleep(50)
    assert.equal(await count(), before)
    const holder = new Mutex(mine, key)
    await holder.acquire()
    const acquiring = new Mutex(mine, key, { acquireTimeout: 5000 }).acquire()
    await sleep(50)
    assert.equal((await count()) - before, 1)
    await close(mine)
    await assert.rejects(acquiring)
    await sleep(50)
    assert.equal(await count(), before)
  })

  it('keyPrefix applies to the lock key as to core commands', async () => {
    const prefixed = await first.connect(server, { keyPrefix: 'app:' })
    try {
      const key = freshKey('prefix')
      const mutex = new Mutex(prefixed, key)
      await mutex.acquire()
      assert.equal(await raw.get(`app:mutex:${key}`), mutex.identifier)
      const waiter = new Mutex(prefixed, key, { acquireTimeout: 2000 })
      const acquiring = waiter.acquire()
      await sleep(30)
      await mutex.release()
      await acquiring
      assert.equal(await raw.get(`app:mutex:${key}`), waiter.identifier)
      await waiter.release()
    } finally {
      await close(prefixed)
    }
  })
})

describe('a server without Goblin', () => {
  for (const library of libraries()) {
    it(`is GoblinModuleError from every lock method on ${library.name}, MODULE LIST asked once per client`, async () => {
      const bare = address('GOBLIN_TEST_BARE')
      const raw = await admin(bare)
      const client = await library.connect(bare)
      try {
        const before = await commandCalls(raw)
        const mutex = new Mutex(client, 'k')
        await assert.rejects(mutex.acquire(), GoblinModuleError)
        await assert.rejects(mutex.tryAcquire(), /load the Goblin module/)
        await assert.rejects(new Semaphore(client, 'k', 2).acquire(), GoblinModuleError)
        const external = new Mutex(client, 'k', { identifier: 'x', acquiredExternally: true })
        await assert.rejects(external.acquire(), GoblinModuleError)
        await assert.rejects(external.release(), GoblinModuleError)
        // A failed check is not kept: each call asks again, and nothing else reaches the server.
        assert.deepEqual(delta(before, await commandCalls(raw)), { 'module|list': 5 })
      } finally {
        await close(client)
        await close(raw)
      }
    })
  }
})

describe('Redlock on three servers', () => {
  const nodes = addresses('GOBLIN_TEST_SERVERS')
  let clients
  let raws
  before(async () => {
    clients = await Promise.all(nodes.map((node) => first.connect(node)))
    raws = await Promise.all(nodes.map((node) => admin(node)))
  })
  after(async () => {
    await Promise.all([...clients, ...raws].map(close))
  })

  it('RedlockMutex holds mutex:<key> on every server it could take, and waits in line for a quorum', async () => {
    const key = freshKey('redlock')
    const holder = new RedlockMutex(clients, key, { lockTimeout: 5000 })
    await holder.acquire()
    assert.deepEqual(await Promise.all(raws.map((r) => r.get(`mutex:${key}`))), nodes.map(() => holder.identifier))
    const waiter = new RedlockMutex(clients, key, { lockTimeout: 5000, acquireTimeout: 5000 })
    let got = false
    const acquiring = waiter.acquire().then(() => (got = true))
    await sleep(100)
    assert.equal(got, false)
    await holder.release()
    await acquiring
    const values = await Promise.all(raws.map((r) => r.get(`mutex:${key}`)))
    assert.ok(values.filter((v) => v === waiter.identifier).length >= 2, String(values))
    await waiter.release()
    assert.deepEqual(await Promise.all(raws.map((r) => r.exists(`mutex:${key}`))), [0, 0, 0])
  })

  it('a server out of reach is passed over: two of three are a quorum', async () => {
    const down = await first.connect(nodes[2])
    await down.quit()
    const key = freshKey('redlock-down')
    const mutex = new RedlockSemaphore([clients[0], clients[1], down], key, 2, { lockTimeout: 2000, acquireTimeout: 1000 })
    await mutex.acquire()
    assert.equal(await raws[0].zscore(`semaphore:${key}`, mutex.identifier) !== null, true)
    assert.equal(await raws[1].zscore(`semaphore:${key}`, mutex.identifier) !== null, true)
    await mutex.release()
  })

  it('without a quorum in time, what was taken is given back', async () => {
    const key = freshKey('redlock-none')
    const holders = [0, 1].map((i) => new Mutex(clients[i], key, { lockTimeout: 5000 }))
    await Promise.all(holders.map((h) => h.acquire()))
    const mutex = new RedlockMutex(clients, key, { acquireTimeout: 300 })
    await assert.rejects(mutex.acquire(), TimeoutError)
    assert.equal(await raws[2].exists(`mutex:${key}`), 0)
    await Promise.all(holders.map((h) => h.release()))
  })
})
