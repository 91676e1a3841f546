// The locks when processes die and servers fail over, against a real server
// (GOBLIN_TEST_SERVER) and a primary with its replica (GOBLIN_TEST_FAILOVER, both with the
// module): 1,000 waiters in 10 processes, 3 of them killed while they wait; a holder's process
// killed; waiters parked through a failover.
import { strict as assert } from 'node:assert'
import { fork } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Mutex, Semaphore } from 'goblin-redis'
import { address, addresses, admin, close, closeAll, connected, freshKey, libraries, sleep } from './helpers.mjs'

const server = address('GOBLIN_TEST_SERVER')
const WORKER = fileURLToPath(new URL('./workers/waiter.mjs', import.meta.url))

async function waiting(raw) {
  return Number(/goblin_waiting:(\d+)/.exec(await raw.info('goblin'))[1])
}

async function until(check, what, ms = 30_000) {
  const deadline = performance.now() + ms
  while (performance.now() < deadline) {
    if (await check()) {
      return
    }
    await sleep(10)
  }
  assert.fail(`never: ${what}`)
}

/** A process of `waiters` locks on `key`: its identifiers, grants, and exit. */
function spawnWaiters(key, waiters, env = {}) {
  const child = fork(WORKER, {
    env: { ...process.env, GOBLIN_KEY: key, GOBLIN_WAITERS: String(waiters), GOBLIN_HOLD_MS: '0', GOBLIN_LEASE_MS: '60000', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const process_ = { child, ids: [], grants: [], exited: new Promise((resolve) => child.once('exit', resolve)) }
  process_.ready = new Promise((resolve) => {
    child.on('message', (message) => {
      if (message.type === 'ready') {
        process_.ids = message.ids
        resolve()
      } else if (message.type === 'granted') {
        process_.grants.push({ ...message, at: performance.now() })
      }
    })
  })
  return process_
}

describe('processes that die', () => {
  let client, raw
  before(async () => ({ client, raw } = await connected(libraries()[0], server)))
  after(() => closeAll(client, raw))

  for (const shape of ['mutex', 'semaphore']) {
    it(`1,000 waiters of a ${shape} in 10 processes, 3 killed while they wait: no dead process is granted, the line moves on`, async () => {
      const key = freshKey(`crowd-${shape}`)
      const stored = `${shape}:${key}`
      const holder = shape === 'mutex' ? new Mutex(client, key, { lockTimeout: 60_000 }) : new Semaphore(client, key, 1, { lockTimeout: 60_000 })
      await holder.acquire()
      const base = await waiting(raw)
      const processes = Array.from({ length: 10 }, () => spawnWaiters(key, 100, { GOBLIN_SHAPE: shape }))
      await Promise.all(processes.map((p) => p.ready))
      await until(async () => (await waiting(raw)) === base + 1000, '1,000 waiting')
      const killed = processes.slice(3, 6)
      for (const p of killed) {
        p.child.kill('SIGKILL')
      }
      await Promise.all(killed.map((p) => p.exited))
      await until(async () => (await waiting(raw)) === base + 700, 'the dead waiters out of the line')
      const dead = new Set(killed.flatMap((p) => p.ids))
      const live = processes.filter((p) => !killed.includes(p))
      // Watch who holds the lock while the line moves: a dead waiter granted would hold it for its
      // whole 60 s lease, and be seen here.
      const seen = new Set()
      let watching = true
      const watcher = (async () => {
        while (watching) {
          const holders = shape === 'mutex' ? [await raw.get(stored)] : await raw.zrange(stored, 0, -1)
          holders.forEach((id) => id && seen.add(id))
          await sleep(5)
        }
      })()
      const started = performance.now()
      await holder.release()
      await Promise.all(live.map((p) => p.exited))
      watching = false
      await watcher
      const elapsed = performance.now() - started
      const grants = live.flatMap((p) => p.grants)
      assert.equal(grants.length, 700)
      assert.deepEqual(new Set(grants.map((g) => g.id)), new Set(live.flatMap((p) => p.ids)))
      assert.ok(grants.every((g) => g.held), 'a holder the server did not know')
      assert.deepEqual([...seen].filter((id) => dead.has(id)), [])
      // A dead waiter granted would have held the line for its whole 60 s lease.
      assert.ok(elapsed < 50_000, `the line took ${elapsed} ms`)
      assert.equal(await raw.exists(stored), 0)
    })

    it(`a ${shape} holder's process killed: the next waiter gets it when the lease ends, and not before`, async () => {
      const key = freshKey(`dead-holder-${shape}`)
      const stored = `${shape}:${key}`
      const env = { GOBLIN_SHAPE: shape, GOBLIN_LEASE_MS: '1500', GOBLIN_REFRESH_MS: '300', GOBLIN_HOLD_MS: '600000' }
      const first = spawnWaiters(key, 1, env)
      await first.ready
      await until(() => first.grants.length === 1, 'the first holder')
      const second = spawnWaiters(key, 1, { ...env, GOBLIN_HOLD_MS: '0' })
      await second.ready
      await sleep(700) // a refresh or two of the first holder's lease
      first.child.kill('SIGKILL')
      await first.exited
      const leaseEnd = Number(await raw.call('PEXPIRETIME', stored))
      const [seconds, micros] = await raw.time()
      assert.ok(leaseEnd - (Number(seconds) * 1000 + Number(micros) / 1000) > 500, 'the lease had time left')
      await until(() => second.grants.length === 1, 'the second holder', 5000)
      const [grantedS, grantedUs] = await raw.time()
      const granted = Number(grantedS) * 1000 + Number(grantedUs) / 1000
      assert.ok(granted >= leaseEnd, `granted ${leaseEnd - granted} ms before the lease ended`)
      assert.ok(granted - leaseEnd < 500, `granted ${granted - leaseEnd} ms after the lease ended`)
      await second.exited
    })
  }
})

describe('a failover', () => {
  const [primaryAddress, replicaAddress] = addresses('GOBLIN_TEST_FAILOVER')

  for (const library of libraries()) {
    it(`ends the waits parked on the old primary in an error, and none of them holds the lock, on ${library.name}`, async () => {
      const primary = await admin(primaryAddress)
      const replica = await admin(replicaAddress)
      const client = await library.connect(primaryAddress)
      try {
        const key = freshKey('failover')
        const holder = new Mutex(client, key, { lockTimeout: 60_000, refreshInterval: 0 })
        await holder.acquire()
        const base = await waiting(primary)
        const waiters = Array.from({ length: 20 }, () => new Mutex(client, key, { acquireTimeout: 30_000, refreshInterval: 0 }))
        const outcomes = waiters.map((waiter) => waiter.acquire().then(() => 'held', (error) => error))
        await until(async () => (await waiting(primary)) === base + 20, '20 waiting')
        await primary.call('FAILOVER')
        await until(async () => (await replica.info('replication')).includes('role:master'), 'the replica promoted')
        const results = await Promise.all(outcomes)
        for (const result of results) {
          assert.ok(result instanceof Error, `a waiter got ${String(result)}`)
          assert.match(result.message, /UNBLOCKED|MOVED|REDIRECT|READONLY|closed/i)
        }
        assert.ok(waiters.every((waiter) => !waiter.isAcquired))
        assert.equal(await replica.get(`mutex:${key}`), holder.identifier)
      } finally {
        // Back as it was, for the next library: the old primary is promoted again.
        await replica.call('FAILOVER').catch(() => {})
        await until(async () => (await primary.info('replication')).includes('role:master'), 'the primary back')
        await close(client)
        await close(primary)
        await close(replica)
      }
    })
  }
})
