// The cases the differential found, each pinned beside the original (GOBLIN_TEST_SERVER; a server
// without the module, GOBLIN_TEST_BARE): the same calls to the Lua-backed store and to
// goblin-redis's, and the same outcome, read on the server where it is a TTL. Where goblin-redis
// differs on purpose (docs/node.md), the difference is asserted as documented.
import { strict as assert } from 'node:assert'
import { createRequire } from 'node:module'
import { after, before, describe, it } from 'node:test'
import express from 'express'
import { rateLimit } from 'express-rate-limit'
import 'reflect-metadata'
import rlf from 'rate-limiter-flexible'
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis'
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis'
import { GoblinModuleError, RateLimiterGoblin, RateLimiterGoblinUnion } from 'goblin-redis'
import { GoblinStore } from 'goblin-redis/express'
import { GoblinThrottlerStorage } from 'goblin-redis/nest'
import { goblinStore } from 'goblin-redis/fastify'
import { address, admin, close, freshKey, sleep } from './helpers.mjs'

const { RateLimiterRedis, RateLimiterUnion, RateLimiterMemory, RateLimiterRes } = rlf
const FastifyRedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore')
const server = address('GOBLIN_TEST_SERVER')

/**
 * The calls `attempt(at)` returns, made in the millisecond the windows it writes end: each
 * attempt writes them (fresh keys) to expire at `at`, a few milliseconds ahead on the server's
 * clock, with a probe key beside them; makes the calls, the original's and goblin-redis's in the
 * same tick, once the probe's PTTL says 0 (the server holds a key in the millisecond of its
 * expiry); and keeps their outcomes if the probe's PTTL, read after they settled, still says 0
 * (every call ran in that millisecond) and the server expired no key meanwhile. A read keeps a
 * key in its last millisecond, but the server's cron removes it there if its active expiry
 * samples it (`now >= expiry`, where a lookup expires `now > expiry`): the original would then
 * have met no key, and the attempt is not the case asserted. Otherwise it tries again.
 */
async function atTheEnd(redis, attempt) {
  for (let tries = 0; tries < 500; tries++) {
    const expired = await expiredKeys(redis)
    const [seconds, micros] = await redis.time()
    const at = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + 3
    const probe = freshKey('probe')
    await redis.set(probe, '1', 'PXAT', at)
    const calls = await attempt(at)
    let ttl = await redis.pttl(probe)
    while (ttl > 0) {
      ttl = await redis.pttl(probe)
    }
    if (ttl !== 0) {
      continue
    }
    const outcomes = await calls()
    if ((await redis.pttl(probe)) === 0 && (await expiredKeys(redis)) === expired) {
      return outcomes
    }
  }
  assert.fail("500 tries, and no calls within one window's last millisecond")
}

/** How many keys the server has expired so far (`INFO stats`: `expired_keys`). */
async function expiredKeys(redis) {
  const stats = await redis.info('stats')
  const count = /^expired_keys:(\d+)/m.exec(stats)
  assert.ok(count, `no expired_keys in INFO stats: ${stats}`)
  return Number(count[1])
}

/** A RateLimiterRes's fields, or the error's message, of a settled call. */
async function settled(promise) {
  try {
    return { resolved: fields(await promise) }
  } catch (reason) {
    return { rejected: reason instanceof Error ? reason.message : fields(reason) }
  }
}

function fields(value) {
  if (value instanceof RateLimiterRes) {
    const { remainingPoints, consumedPoints, isFirstInDuration } = value
    return { remainingPoints, consumedPoints, isFirstInDuration, msBeforeNext: Math.round(value.msBeforeNext / 100) * 100 }
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, one]) => [name, fields(one)]))
  }
  return value
}

describe('rate-limiter-flexible: RateLimiterGoblin as RateLimiterRedis', () => {
  let redis
  before(async () => {
    redis = await admin(server)
  })
  after(() => close(redis))

  /** The original and goblin-redis's limiter with `options`, each under its own keyPrefix. */
  function both(options) {
    const prefix = freshKey('rlf')
    return [new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:a`, ...options }), new RateLimiterGoblin({ storeClient: redis, keyPrefix: `${prefix}:b`, ...options })]
  }

  /** Each limiter's `calls` in turn, in the same tick; their outcomes. */
  async function side(limiters, calls) {
    const outcomes = [[], []]
    for (const call of calls) {
      const pair = await Promise.all(limiters.map((limiter) => settled(call(limiter))))
      pair.forEach((one, i) => outcomes[i].push(one))
    }
    return outcomes
  }

  it('a fractional blockDuration blocks whole seconds (1.5: 1 s), and one under a second leaves a key without expiry, as RateLimiterRedis', async () => {
    for (const [blockDuration, pttl] of [
      [1.5, (ms) => ms > 900 && ms <= 1000],
      [0.5, (ms) => ms === -1],
    ]) {
      const limiters = both({ points: 1, duration: 1, blockDuration })
      const [a, b] = await side(limiters, [(l) => l.consume('k'), (l) => l.consume('k')])
      assert.deepEqual(b, a)
      assert.equal(a[1].rejected.msBeforeNext, blockDuration * 1000)
      const ttls = await Promise.all(limiters.map((limiter) => redis.pttl(limiter.getKey('k'))))
      assert.ok(ttls.every(pttl), `blockDuration ${blockDuration}: PTTL ${ttls}`)
    }
  })

  it('blockOnConsumed (11.4) blocks at its count, not at points', async () => {
    const limiters = both({ points: 2, duration: 3, blockDuration: 10, blockOnConsumed: 4 })
    const [a, b] = await side(limiters, [(l) => l.consume('k', 2), (l) => l.consume('k'), (l) => l.consume('k')])
    assert.deepEqual(b, a)
    assert.equal(a[1].rejected.msBeforeNext, 3000) // over points, not blocked
    assert.equal(a[2].rejected.msBeforeNext, 10000) // at blockOnConsumed: blocked
    const ttls = await Promise.all(limiters.map((limiter) => redis.pttl(limiter.getKey('k'))))
    assert.ok(ttls.every((ms) => ms > 9000), `PTTL ${ttls}`)
  })

  it("a window's end: in the millisecond its key expires RateLimiterRedis counts the consume in the window that ended, RateLimiterGoblin starts the next (documented)", async () => {
    const [a, b] = await atTheEnd(redis, async (at) => {
      const limiters = both({ points: 3, duration: 10 })
      await Promise.all(limiters.map((limiter) => redis.set(limiter.getKey('k'), '3', 'PXAT', at)))
      return () => Promise.all(limiters.map((limiter) => settled(limiter.consume('k'))))
    })
    assert.deepEqual(a, { rejected: { remainingPoints: 0, consumedPoints: 4, isFirstInDuration: false, msBeforeNext: 0 } })
    assert.deepEqual(b, { resolved: { remainingPoints: 2, consumedPoints: 1, isFirstInDuration: true, msBeforeNext: 10000 } })
  })

  it('points are any finite number: consume(k, 2 ** 53), and points 2.5 with a blockDuration', async () => {
    let [a, b] = await side(both({ points: 5, duration: 5 }), [(l) => l.consume('k', 2 ** 53), (l) => l.get('k')])
    assert.deepEqual(b, a)
    assert.equal(a[0].rejected.consumedPoints, 2 ** 53)
    ;[a, b] = await side(both({ points: 2.5, duration: 5, blockDuration: 2 }), [(l) => l.consume('k', 2), (l) => l.consume('k'), (l) => l.consume('k')])
    assert.deepEqual(b, a)
    assert.ok('resolved' in a[0] && 'rejected' in a[1] && a[1].rejected.msBeforeNext === 2000)
  })

  it('a server without the module is GoblinModuleError, never served by the insuranceLimiter', async () => {
    const bare = await admin(address('GOBLIN_TEST_BARE'))
    try {
      const limiter = new RateLimiterGoblin({ storeClient: bare, points: 5, duration: 5, insuranceLimiter: new RateLimiterMemory({ points: 5, duration: 5 }) })
      await assert.rejects(limiter.consume('k'), GoblinModuleError)
      await assert.rejects(limiter.get('k'), GoblinModuleError)
    } finally {
      await close(bare)
    }
  })

  it("RateLimiterGoblinUnion's refusing limiter holds what RateLimiterUnion's does, key or not", async () => {
    const prefix = freshKey('union')
    const options = [
      { points: 2, duration: 2 },
      { points: 9, duration: 9 },
    ]
    const originals = options.map((o, i) => new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:a${i}`, ...o }))
    const ours = options.map((o, i) => new RateLimiterGoblin({ storeClient: redis, keyPrefix: `${prefix}:b${i}`, ...o }))
    const [a, b] = await Promise.all([settled(new RateLimiterUnion(...originals).consume('{u}', 3)), settled(new RateLimiterGoblinUnion(...ours).consume('{u}', 3))])
    assert.deepEqual(a.rejected[`${prefix}:a0`], { remainingPoints: 0, consumedPoints: 3, isFirstInDuration: true, msBeforeNext: 2000 })
    assert.deepEqual(b.rejected[`${prefix}:b0`], a.rejected[`${prefix}:a0`])
    // All or nothing: the other limiter did not count it (RateLimiterUnion's did).
    assert.equal(await redis.get(ours[1].getKey('{u}')), null)
    assert.equal(await redis.get(originals[1].getKey('{u}')), '3')
  })

  it("RateLimiterGoblinUnion honours its limiters' blockDuration", async () => {
    const prefix = freshKey('union-block')
    const options = [
      { points: 1, duration: 1, blockDuration: 3 },
      { points: 10, duration: 10 },
    ]
    const originals = options.map((o, i) => new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:a${i}`, ...o }))
    const ours = options.map((o, i) => new RateLimiterGoblin({ storeClient: redis, keyPrefix: `${prefix}:b${i}`, ...o }))
    const unions = [new RateLimiterUnion(...originals), new RateLimiterGoblinUnion(...ours)]
    for (let i = 0; i < 2; i++) {
      const [a, b] = await Promise.all(unions.map((union) => settled(union.consume('{u}'))))
      assert.equal('rejected' in a, i === 1)
      assert.equal('rejected' in b, i === 1)
    }
    const ttls = await Promise.all([originals[0], ours[0]].map((limiter) => redis.pttl(limiter.getKey('{u}'))))
    assert.ok(ttls.every((ms) => ms > 2500), `blocked for 3 s: PTTL ${ttls}`)
  })

  it('RateLimiterGoblinUnion: beside a limiter blocked in memory, a limiter over its points still counts the consume and blocks', async () => {
    const prefix = freshKey('union-memory')
    const options = [
      { points: 1, duration: 10, inMemoryBlockOnConsumed: 2, inMemoryBlockDuration: 10 },
      { points: 2, duration: 1, blockDuration: 3 },
    ]
    const originals = options.map((o, i) => new RateLimiterRedis({ storeClient: redis, keyPrefix: `${prefix}:a${i}`, ...o }))
    const ours = options.map((o, i) => new RateLimiterGoblin({ storeClient: redis, keyPrefix: `${prefix}:b${i}`, ...o }))
    // The first limiter blocked in memory, the second at its points, each by its own consumes.
    for (const limiter of [...originals, ...ours]) {
      await settled(limiter.consume('{u}', 2))
    }
    const unions = [new RateLimiterUnion(...originals), new RateLimiterGoblinUnion(...ours)]
    const [a, b] = await Promise.all(unions.map((union) => settled(union.consume('{u}'))))
    // In order: the one blocked in memory (nothing counted, its block's time left), the one over its points.
    const ordered = (rejected, side) => [0, 1].map((i) => rejected[`${prefix}:${side}${i}`])
    const [x, y] = [ordered(a.rejected, 'a'), ordered(b.rejected, 'b')]
    assert.equal(Object.keys(b.rejected).length, 2)
    for (const [one, other] of [[x[0], y[0]], [x[1], y[1]]]) {
      assert.deepEqual({ ...other, msBeforeNext: 0 }, { ...one, msBeforeNext: 0 })
      assert.ok(Math.abs(one.msBeforeNext - other.msBeforeNext) <= 200, `msBeforeNext ${one.msBeforeNext} / ${other.msBeforeNext}`)
    }
    assert.deepEqual({ ...x[0], msBeforeNext: 0 }, { remainingPoints: 0, consumedPoints: 0, isFirstInDuration: false, msBeforeNext: 0 })
    assert.ok(x[0].msBeforeNext > 8000)
    assert.deepEqual(x[1], { remainingPoints: 0, consumedPoints: 3, isFirstInDuration: false, msBeforeNext: 3000 })
    const ttls = await Promise.all([originals[1], ours[1]].map((limiter) => redis.pttl(limiter.getKey('{u}'))))
    assert.ok(ttls.every((ms) => ms > 2500), `the second blocked for 3 s: PTTL ${ttls}`)
  })
})

describe('express-rate-limit: GoblinStore as rate-limit-redis', () => {
  let redis
  before(async () => {
    redis = await admin(server)
  })
  after(() => close(redis))

  function both(windowMs) {
    const prefix = freshKey('erl')
    const stores = [new RateLimitRedisStore({ sendCommand: (...args) => redis.call(...args), prefix: `${prefix}:a:` }), new GoblinStore({ client: redis, prefix: `${prefix}:b:` })]
    return Promise.all(stores.map((store) => store.init({ windowMs }))).then(() => stores)
  }

  it('a decrement where no window counts is not taken off the next window: decrement, increment gives 1', async () => {
    const stores = await both(1000)
    await Promise.all(stores.map((store) => store.decrement('k')))
    const hits = await Promise.all(stores.map((store) => store.increment('k')))
    assert.deepEqual(
      hits.map((hit) => hit.totalHits),
      [1, 1],
    )
  })

  it('over HTTP: a request given back after its key was reset lets no request more through (limit 1, skipSuccessfulRequests)', async () => {
    const stores = await both(5000)
    const statuses = await Promise.all(
      stores.map(async (store) => {
        // Settles when express-rate-limit has given request 1 back.
        const givenBack = new Promise((resolve) => {
          const decrement = store.decrement.bind(store)
          store.decrement = async (key) => {
            await decrement(key)
            resolve()
          }
        })
        const limiter = rateLimit({ windowMs: 5000, limit: 1, skipSuccessfulRequests: true, store, validate: false, keyGenerator: () => 'c' })
        const app = express()
        app.get('/', limiter, async (req, res) => {
          await sleep(Number(req.query.wait ?? 0))
          res.status(req.query.fail ? 500 : 200).send('')
        })
        const server = await new Promise((resolve) => {
          const listening = app.listen(0, '127.0.0.1', () => resolve(listening))
        })
        const url = `http://127.0.0.1:${server.address().port}/`
        try {
          // Request 1 in flight while its key is reset; it succeeds, and is given back.
          const first = fetch(`${url}?wait=300`)
          await sleep(100)
          await limiter.resetKey('c')
          assert.equal((await first).status, 200)
          await givenBack
          // Request 2 fails (counted, not given back); request 3 is over the limit of 1.
          const second = await fetch(`${url}?fail=1`)
          const third = await fetch(url)
          return [second.status, third.status]
        } finally {
          server.close()
        }
      }),
    )
    assert.deepEqual(statuses, [
      [500, 429],
      [500, 429],
    ])
  })

  it("a window's end: in the millisecond its key expires both start the next window", async () => {
    const [hits, ttls] = await atTheEnd(redis, async (at) => {
      const stores = await both(10000)
      await Promise.all(stores.map((store) => redis.set(`${store.prefix}k`, '3', 'PXAT', at)))
      return async () => {
        const hits = await Promise.all(stores.map((store) => store.increment('k')))
        return [hits, await Promise.all(stores.map((store) => redis.pttl(`${store.prefix}k`)))]
      }
    })
    assert.deepEqual(
      hits.map((hit) => hit.totalHits),
      [1, 1],
    )
    assert.ok(ttls.every((ms) => ms > 9000), `a new window of 10 s: PTTL ${ttls}`)
  })

  it('a decrement never takes a count below 0 in GoblinStore (documented: it counts more, never fewer)', async () => {
    const stores = await both(5000)
    await Promise.all(stores.map((store) => store.increment('k')))
    for (let i = 0; i < 2; i++) {
      await Promise.all(stores.map((store) => store.decrement('k')))
    }
    const hits = await Promise.all(stores.map((store) => store.increment('k')))
    assert.deepEqual(
      hits.map((hit) => hit.totalHits),
      [0, 1],
    )
  })

  it('resetExpiryOnChange is refused; a windowMs of 0 or a fraction fails every increment, as rate-limit-redis fails', async () => {
    assert.throws(() => new RateLimitRedisStore({ sendCommand: () => null, resetExpiryOnChange: true }), TypeError)
    assert.throws(() => new GoblinStore({ client: redis, resetExpiryOnChange: true }), TypeError)
    for (const windowMs of [0, 1000.5]) {
      const stores = await both(windowMs)
      for (const store of stores) {
        await assert.rejects(store.increment('k'))
      }
    }
  })
})

describe('NestJS: GoblinThrottlerStorage as @nest-lab/throttler-storage-redis', () => {
  let redis
  before(async () => {
    redis = await admin(server)
  })
  after(() => close(redis))

  it('hits during a block are counted: a block that ends while its window is over the limit blocks again', async () => {
    const storages = [new ThrottlerStorageRedisService(redis), new GoblinThrottlerStorage(redis, { prefix: `${freshKey('nest')}:` })]
    const key = freshKey('nest-key')
    const blocked = [[], []]
    const started = performance.now()
    for (const at of [0, 500, 1100, 1600]) {
      await sleep(Math.max(0, started + at - performance.now()))
      const records = await Promise.all(storages.map((storage) => storage.increment(key, 1000, 1, 1000, 'default')))
      records.forEach((record, i) => blocked[i].push(record.isBlocked))
    }
    assert.deepEqual(blocked[0], [false, true, true, true])
    assert.deepEqual(blocked[1], blocked[0])
  })

  it("a window's end: in the millisecond its key expires @nest-lab counts the hit in the window that ended and arms the next with that count, GoblinThrottlerStorage starts the next at 1 (documented)", async () => {
    const [lab, goblin] = await atTheEnd(redis, async (at) => {
      const prefix = `${freshKey('nest')}:`
      const key = freshKey('nest-edge')
      const storages = [new ThrottlerStorageRedisService(redis), new GoblinThrottlerStorage(redis, { prefix })]
      await Promise.all(['', prefix].map((before) => redis.set(`${before}{${key}:default}:hits`, '3', 'PXAT', at)))
      return () => Promise.all(storages.map((storage) => storage.increment(key, 10000, 3, 5000, 'default')))
    })
    assert.deepEqual(lab, { totalHits: 4, timeToExpire: 10, isBlocked: true, timeToBlockExpire: 5 })
    assert.deepEqual(goblin, { totalHits: 1, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 })
  })

  it("with prefix '', its keys are @nest-lab's own: the two count in one window and honour one block", async () => {
    const [lab, goblin] = [new ThrottlerStorageRedisService(redis), new GoblinThrottlerStorage(redis, { prefix: '' })]
    const key = freshKey('nest-shared')
    const records = []
    for (const storage of [lab, goblin, lab, goblin]) {
      records.push(await storage.increment(key, 5000, 2, 3000, 'default'))
    }
    assert.deepEqual(
      records.map((record) => [record.totalHits, record.isBlocked]),
      [
        [1, false],
        [2, false],
        [3, true],
        [4, true],
      ],
    )
    assert.equal(records[3].timeToBlockExpire, 3)
    assert.ok((await redis.pttl(`{${key}:default}:blocked`)) > 2000)
  })

  it("the throttler's name is part of the key, when the storage is called directly too", async () => {
    const storages = [new ThrottlerStorageRedisService(redis), new GoblinThrottlerStorage(redis, { prefix: `${freshKey('nest')}:` })]
    const key = freshKey('nest-name')
    for (const storage of storages) {
      await storage.increment(key, 5000, 5, 1000, 'first')
      const other = await storage.increment(key, 5000, 5, 1000, 'second')
      assert.equal(other.totalHits, 1)
    }
  })
})

describe('@fastify/rate-limit: goblinStore as its RedisStore', () => {
  let redis
  before(async () => {
    redis = await admin(server)
  })
  after(() => close(redis))

  it("a window's end: in the millisecond its key expires the RedisStore counts the request in the window that ended, goblinStore starts the next (documented)", async () => {
    const incr = (store) => new Promise((resolve, reject) => store.incr('k', (error, result) => (error ? reject(error) : resolve(result)), 10000, 3))
    const [original, ours] = await atTheEnd(redis, async (at) => {
      const prefix = freshKey('fastify')
      const stores = [new FastifyRedisStore(false, false, redis, `${prefix}:a:`), new (goblinStore(redis, { nameSpace: `${prefix}:b:` }))({})]
      await Promise.all(['a', 'b'].map((side) => redis.set(`${prefix}:${side}:k`, '3', 'PXAT', at)))
      return () => Promise.all(stores.map(incr))
    })
    assert.deepEqual(original, { current: 4, ttl: 0 })
    assert.deepEqual(ours, { current: 1, ttl: 10000 })
  })
})
