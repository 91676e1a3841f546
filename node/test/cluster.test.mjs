// goblin-redis on a three-node cluster (GOBLIN_TEST_CLUSTER), with the cluster client of every
// library and protocol: every command the package sends, multi-key ones included, reaches the
// node that owns its keys the first time (no MOVED, by INFO errorstats on every node), locks and
// readers-writer locks on keys in different slots each wait on their own node, and keyPrefix
// applies as it does to core commands.
import { strict as assert } from 'node:assert'
import { after, before, describe, it } from 'node:test'
import { Mutex, ReadWriteLock, Semaphore, call, commands } from 'goblin-redis'
import { RateLimiterGoblin, RateLimiterGoblinUnion } from 'goblin-redis/rate-limiter-flexible'
import { GoblinStore } from 'goblin-redis/express'
import { GoblinThrottlerGuard, GoblinThrottlerStorage } from 'goblin-redis/nest'
import { ADAPTERS, nestApp } from './nest-app.mjs'
import { addresses, admin, close, errorCounts, freshKey, libraries, sleep } from './helpers.mjs'

const nodes = addresses('GOBLIN_TEST_CLUSTER')

/** MOVED and ASK replies, summed over the nodes. */
async function redirections(raws) {
  let total = 0
  for (const raw of raws) {
    const counts = await errorCounts(raw)
    total += (counts.MOVED ?? 0) + (counts.ASK ?? 0)
  }
  return total
}

/**
 * `count` fresh keys, each with a hash tag, as many on each node as the count allows: the tag
 * alone decides the slot, whatever prefix a lock puts before the key. Chosen by the server's own
 * CLUSTER KEYSLOT and CLUSTER SLOTS, so that every node's line is exercised on every run.
 */
async function keysOnEveryNode(raw, tag, count) {
  const shards = await raw.call('CLUSTER', 'SLOTS')
  const byNode = shards.map(() => [])
  for (let n = 0; byNode.some((keys) => keys.length < count / shards.length); n++) {
    const key = `{${tag}${n}}:${freshKey(tag)}`
    const slot = await raw.call('CLUSTER', 'KEYSLOT', key)
    const node = shards.findIndex(([low, high]) => slot >= low && slot <= high)
    if (byNode[node].length < count / shards.length) byNode[node].push(key)
  }
  return byNode.flat()
}

/** Which node holds `key` (the ports of `raws` in order). */
async function holders(raws, key) {
  const found = []
  for (const [i, raw] of raws.entries()) {
    const slot = await raw.call('CLUSTER', 'KEYSLOT', key)
    if ((await raw.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000)).includes(key)) {
      found.push(i)
    }
  }
  return found
}

for (const library of libraries()) {
  describe(`on a cluster, with ${library.name}`, () => {
    let cluster
    let raws
    before(async () => {
      cluster = await library.cluster(nodes)
      raws = await Promise.all(nodes.map((node) => admin(node)))
    })
    after(async () => {
      await close(cluster)
      await Promise.all(raws.map(close))
    })

    it('locks on keys in every slot range each hand off on their own node, with no redirection', async () => {
      const before = await redirections(raws)
      const keys = await keysOnEveryNode(raws[0], 'ck', 12)
      await Promise.all(
        keys.map(async (key, i) => {
          const Lock = i % 2 === 0 ? Mutex : Semaphore
          const make = () => (Lock === Mutex ? new Mutex(cluster, key, { lockTimeout: 5000 }) : new Semaphore(cluster, key, 1, { lockTimeout: 5000 }))
          const holder = make()
          await holder.acquire()
          const waiter = make()
          const acquiring = waiter.acquire()
          await sleep(50)
          await holder.release()
          await acquiring
          await waiter.release()
        }),
      )
      const owners = new Set()
      for (const [i, key] of keys.entries()) {
        const slot = await raws[0].call('CLUSTER', 'KEYSLOT', `${i % 2 === 0 ? 'mutex' : 'semaphore'}:${key}`)
        const shards = await raws[0].call('CLUSTER', 'SLOTS')
        owners.add(shards.findIndex(([low, high]) => slot >= low && slot <= high))
      }
      assert.equal(owners.size, 3, 'the keys fell on every node')
      assert.equal((await redirections(raws)) - before, 0)
    })

    it('readers-writer locks on keys in every slot range hand off on their own node, with no redirection', async () => {
      const before = await redirections(raws)
      const keys = await keysOnEveryNode(raws[0], 'rw', 12)
      await Promise.all(
        keys.map(async (key) => {
          const reader = new ReadWriteLock(cluster, key, { lockTimeout: 5000 })
          await reader.readLock().acquire()
          const writer = new ReadWriteLock(cluster, key, { lockTimeout: 5000 })
          const writing = writer.writeLock().acquire()
          await sleep(50)
          assert.equal(await reader.held(), 'read')
          await reader.release()
          await writing
          assert.equal(await writer.held(), 'write')
          await writer.readLock().acquire()
          assert.equal(writer.mode, 'read', 'demoted')
          await writer.release()
        }),
      )
      const owners = new Set()
      for (const key of keys) {
        const slot = await raws[0].call('CLUSTER', 'KEYSLOT', `rwlock:${key}`)
        const shards = await raws[0].call('CLUSTER', 'SLOTS')
        owners.add(shards.findIndex(([low, high]) => slot >= low && slot <= high))
      }
      assert.equal(owners.size, 3, 'the keys fell on every node')
      assert.equal((await redirections(raws)) - before, 0)
    })

    it('every rate limiter command, multi-key ones included, reaches the owner the first time', async () => {
      const before = await redirections(raws)
      const tag = freshKey('tag')
      for (let i = 0; i < 12; i++) {
        const key = freshKey(`rl${i}`)
        const limiter = new RateLimiterGoblin({ storeClient: cluster, points: 5, duration: 10 })
        await limiter.consume(key)
        await limiter.get(key)
        await limiter.set(key, 2, 5)
        await limiter.delete(key)
        const store = new GoblinStore({ client: cluster, prefix: `${tag}:${i}:` })
        store.init({ windowMs: 5000 })
        await store.increment('ip')
        await store.decrement('ip')
        await store.get('ip')
        await new GoblinThrottlerStorage(cluster).increment(key, 1000, 2, 1000, 'default')
      }
      for (let i = 0; i < 6; i++) {
        const union = new RateLimiterGoblinUnion(
          new RateLimiterGoblin({ storeClient: cluster, keyPrefix: 'a', points: 5, duration: 10 }),
          new RateLimiterGoblin({ storeClient: cluster, keyPrefix: 'b', points: 5, duration: 60 }),
        )
        await union.consume(`{${tag}-${i}}`)
        const storage = new GoblinThrottlerStorage(cluster)
        const decision = await storage.incrementAll([
          { key: `${tag}-${i}-short`, ttl: 1000, limit: 2 },
          { key: `${tag}-${i}-long`, ttl: 60000, limit: 5 },
        ])
        assert.equal(decision.refused, false)
        const policies = [`{${tag}-${i}}:sec`, `{${tag}-${i}}:hour`].map((key) => ({ key, maxBurst: 9, tokensPerPeriod: 10, period: 1 }))
        assert.equal((await call(cluster, commands.mgcra(policies))).limited, false)
      }
      assert.equal((await redirections(raws)) - before, 0)
    })
  })
}

describe('keyPrefix on a cluster', () => {
  for (const library of libraries().filter((l) => l.kind === 'ioredis' || l.name.startsWith('node-redis 6'))) {
    it(`applies to the package's keys as to core commands, with ${library.name}`, async () => {
      const prefix = `${freshKey('kp')}:`
      const options = library.kind === 'ioredis' ? { keyPrefix: prefix } : { keyPrefix: prefix }
      const cluster = await library.cluster(nodes, options)
      const raws = await Promise.all(nodes.map((node) => admin(node)))
      try {
        const before = await redirections(raws)
        const mutex = new Mutex(cluster, 'job')
        await mutex.acquire()
        const waiter = new Mutex(cluster, 'job', { acquireTimeout: 3000 })
        const acquiring = waiter.acquire()
        await sleep(30)
        await mutex.release()
        await acquiring
        assert.equal((await holders(raws, `${prefix}mutex:job`)).length, 1)
        await waiter.release()
        await new RateLimiterGoblin({ storeClient: cluster, points: 1, duration: 5 }).consume('ip')
        assert.equal((await holders(raws, `${prefix}rlflx:ip`)).length, 1)
        assert.equal((await redirections(raws)) - before, 0)
      } finally {
        await close(cluster)
        await Promise.all(raws.map(close))
      }
    })
  }
})

describe('NestJS over HTTP on a cluster', () => {
  for (const library of libraries().filter((l) => /^(ioredis 6 \(RESP3\)|node-redis 6 \(RESP3\))$/.test(l.name))) {
    for (const [adapterName, makeAdapter] of ADAPTERS) {
      it(`throttles named throttlers all or nothing on the ${adapterName} adapter, with ${library.name}, with no redirection`, async () => {
        const cluster = await library.cluster(nodes)
        const raws = await Promise.all(nodes.map((node) => admin(node)))
        const throttlers = [
          { name: 'short', ttl: 1000, limit: 2 },
          { name: 'long', ttl: 60_000, limit: 3 },
        ]
        const { application, url } = await nestApp(cluster, makeAdapter(), throttlers, GoblinThrottlerGuard)
        try {
          const before = await redirections(raws)
          const statuses = []
          for (let i = 0; i < 3; i++) {
            const res = await fetch(`${url}/`)
            statuses.push([res.status, res.headers.get('x-ratelimit-remaining-long')])
          }
          assert.deepEqual(statuses, [[200, '2'], [200, '1'], [429, null]])
          await sleep(1100)
          const res = await fetch(`${url}/`)
          assert.deepEqual([res.status, res.headers.get('x-ratelimit-remaining-long')], [200, '0'])
          assert.equal((await redirections(raws)) - before, 0)
        } finally {
          await application.close()
          await close(cluster)
          await Promise.all(raws.map(close))
        }
      })
    }
  }
})
