// goblin-redis's ReadWriteLock on every client library and protocol, against a real server
// (GOBLIN_TEST_SERVER) and one without the module (GOBLIN_TEST_BARE): readers share, a writer
// waits for them and a later reader waits behind it; promotion, demotion and DeadlockError;
// fencing tokens; the refresh cycle and a lost lease; a server without Goblin.
import { strict as assert } from 'node:assert'
import { describe, it } from 'node:test'
import { DeadlockError, GoblinModuleError, LostLockError, ReadWriteLock, TimeoutError } from 'goblin-redis'
import { address, admin, close, commandCalls, connection, delta, freshKey, libraries, sleep } from './helpers.mjs'

const server = address('GOBLIN_TEST_SERVER')

async function waiting(conn) {
  const info = await conn.info('goblin')
  return Number(/goblin_waiting:(\d+)/.exec(info)[1])
}

async function untilWaiting(conn, n) {
  for (let i = 0; i < 500; i++) {
    if ((await waiting(conn)) === n) {
      return
    }
    await sleep(5)
  }
  assert.fail(`the server never had ${n} waiters`)
}

for (const library of libraries()) {
  describe(`ReadWriteLock on ${library.name}`, () => {
    const the = connection(library, server)

    it('readers share rwlock:<key>; a writer waits for them, and a later reader waits behind it', async () => {
      const key = freshKey('rw')
      const stored = `rwlock:${key}`
      const base = await waiting(the.raw)
      const before = await commandCalls(the.raw)
      const r1 = new ReadWriteLock(the.client, key, { lockTimeout: 10000 })
      const r2 = new ReadWriteLock(the.client, key, { lockTimeout: 10000 })
      await r1.readLock().acquire()
      assert.equal(await r2.readLock().tryAcquire(), true)
      assert.deepEqual((await the.raw.zrange(stored, 0, -1)).sort(), [r1.identifier, r2.identifier].sort())
      assert.equal(r1.mode, 'read')
      assert.equal(r1.readLock().isAcquired, true)
      assert.equal(r1.writeLock().isAcquired, false)
      const order = []
      const writer = new ReadWriteLock(the.client, key, { lockTimeout: 10000, acquireTimeout: 10000 })
      const writing = writer.writeLock().acquire().then(() => order.push('writer'))
      await untilWaiting(the.raw, base + 1)
      const late = new ReadWriteLock(the.client, key, { lockTimeout: 10000, acquireAttemptsLimit: 1 })
      assert.equal(await late.readLock().tryAcquire(), false, 'a writer waits: no reader passes it')
      const later = new ReadWriteLock(the.client, key, { lockTimeout: 10000, acquireTimeout: 10000 })
      const reading = later.readLock().acquire().then(() => order.push('later'))
      await untilWaiting(the.raw, base + 2)
      await r1.release()
      await sleep(50)
      assert.deepEqual(order, [])
      await r2.readLock().release()
      await writing
      assert.equal(await the.raw.get(stored), writer.identifier)
      assert.equal(await writer.held(), 'write')
      await writer.release()
      await reading
      assert.deepEqual(order, ['writer', 'later'])
      assert.deepEqual(await the.raw.zrange(stored, 0, -1), [later.identifier])
      await later.release()
      assert.equal(await the.raw.exists(stored), 0)
      const used = delta(before, await commandCalls(the.raw))
      for (const name of ['goblin.rlock', 'goblin.brlock', 'goblin.bwlock', 'goblin.rwunlock', 'goblin.rwheld']) {
        assert.ok(used[name] > 0, `${name}: ${JSON.stringify(used)}`)
      }
    })

    it('a reader is promoted once alone, a writer demoted at once; a second promotion is a DeadlockError; tokens grow', async () => {
      const key = freshKey('switch')
      const stored = `rwlock:${key}`
      const a = new ReadWriteLock(the.client, key, { lockTimeout: 10000, acquireTimeout: 10000 })
      const b = new ReadWriteLock(the.client, key, { lockTimeout: 10000, acquireTimeout: 10000 })
      await a.readLock().acquire()
      await b.readLock().acquire()
      const readToken = a.fencingToken
      assert.ok(readToken > 0)
      assert.ok(b.fencingToken > readToken)
      const base = await waiting(the.raw)
      const promoting = a.writeLock().acquire()
      await untilWaiting(the.raw, base + 1)
      await assert.rejects(b.writeLock().acquire(), (error) => error instanceof DeadlockError && error.message.includes(stored))
      assert.equal(b.mode, 'read', 'b keeps its read lease')
      assert.equal(await b.held(), 'read')
      const readerToken = b.fencingToken
      await b.release()
      await promoting
      assert.equal(a.mode, 'write')
      assert.equal(await the.raw.get(stored), a.identifier)
      assert.ok(a.fencingToken > readerToken, 'a new grant, a new token')
      const writeToken = a.fencingToken
      assert.equal(await a.writeLock().tryAcquire(), true, 'renewed')
      assert.equal(a.fencingToken, writeToken)
      await a.readLock().acquire()
      assert.equal(a.mode, 'read')
      assert.ok(a.fencingToken > writeToken, 'demoted: a new token')
      assert.equal(await b.readLock().tryAcquire(), true, 'others read beside it')
      await a.release()
      await b.release()
      assert.equal(a.fencingToken, undefined)
    })

    it('the lease is refreshed while held, one lost fires onLockLost; acquire gives up with TimeoutError', async () => {
      const key = freshKey('lost')
      const stored = `rwlock:${key}`
      const lost = []
      const reader = new ReadWriteLock(the.client, key, {
        lockTimeout: 300,
        refreshInterval: 80,
        onLockLost(error) {
          lost.push([error, this.isAcquired])
        },
      })
      await reader.readLock().acquire()
      await sleep(400)
      assert.notEqual(await the.raw.zscore(stored, reader.identifier), null, 'refreshed past its first lease')
      const writer = new ReadWriteLock(the.client, key, { acquireTimeout: 150 })
      const started = performance.now()
      await assert.rejects(writer.acquire(), (error) => error instanceof TimeoutError && error.message === `Acquire read-write lock ${stored} timeout`)
      assert.ok(performance.now() - started >= 145)
      await the.raw.del(stored)
      await sleep(200)
      assert.equal(lost.length, 1)
      assert.ok(lost[0][0] instanceof LostLockError)
      assert.equal(lost[0][1], false)
      assert.equal(reader.mode, undefined)
      assert.equal(await writer.tryAcquire(), true, 'a writer, as a Mutex, by default')
      await writer.release()
    })
  })
}

describe('a server without Goblin', () => {
  for (const library of libraries()) {
    it(`is GoblinModuleError from every ReadWriteLock method on ${library.name}`, async () => {
      const bare = address('GOBLIN_TEST_BARE')
      const raw = await admin(bare)
      const client = await library.connect(bare)
      try {
        const rw = new ReadWriteLock(client, 'k')
        await assert.rejects(rw.readLock().acquire(), GoblinModuleError)
        await assert.rejects(rw.writeLock().tryAcquire(), /load the Goblin module/)
        await assert.rejects(rw.held(), GoblinModuleError)
        const used = Object.keys(await commandCalls(raw)).filter((name) => name.startsWith('goblin'))
        assert.deepEqual(used, [])
      } finally {
        await close(client)
        await close(raw)
      }
    })
  }
})
