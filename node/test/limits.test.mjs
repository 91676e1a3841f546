// goblin-redis's rate limiters against a real server (GOBLIN_TEST_SERVER) and one without the
// module (GOBLIN_TEST_BARE): rate-limiter-flexible's RateLimiterGoblin on every client library and
// protocol (each operation one command, no script), the all-or-nothing union, and the stores of
// @fastify/rate-limit, express-rate-limit (with express-slow-down) and NestJS's throttler, each in
// a real app driven over HTTP (or fastify.inject), on ioredis and node-redis.
import { strict as assert } from 'node:assert'
import { describe, it } from 'node:test'
import { once } from 'node:events'
import { createServer } from 'node:http'
import rateLimiterFlexible from 'rate-limiter-flexible'
import express from 'express'
import { rateLimit } from 'express-rate-limit'
import { slowDown } from 'express-slow-down'
import { Hono } from 'hono'
import { rateLimiter as honoRateLimiter } from 'hono-rate-limiter'
import Fastify from 'fastify'
import fastifyRateLimitPlugin from '@fastify/rate-limit'
import { ThrottlerGuard } from '@nestjs/throttler'
import { GoblinModuleError, call, commands } from 'goblin-redis'
import { RateLimiterGoblin, RateLimiterGoblinUnion } from 'goblin-redis/rate-limiter-flexible'
import { goblinStore } from 'goblin-redis/fastify'
import { GoblinStore } from 'goblin-redis/express'
import { GoblinThrottlerGuard, GoblinThrottlerStorage } from 'goblin-redis/nest'
import { ADAPTERS, nestApp } from './nest-app.mjs'
import { LIBRARIES, address, admin, close, connection, delta, libraries, sleep, commandCalls, freshKey } from './helpers.mjs'

const { RateLimiterMemory, RateLimiterRes } = rateLimiterFlexible
const server = address('GOBLIN_TEST_SERVER')

/** `operation`'s commands (commandstats), and its result. */
async function commandsOf(raw, operation) {
  const before = await commandCalls(raw)
  let result
  try {
    result = await operation()
  } catch (rejection) {
    result = rejection
  }
  return [delta(before, await commandCalls(raw)), result]
}

for (const library of libraries()) {
  describe(`RateLimiterGoblin on ${library.name}`, () => {
    const the = connection(library, server)

    it('consume is one GOBLIN.FWINDOW on rlflx:<key>, a decimal counter with its window', async () => {
      const key = freshKey('rl')
      const limiter = new RateLimiterGoblin({ storeClient: the.client, points: 2, duration: 5 })
      const [sent, res] = await commandsOf(the.raw, () => limiter.consume(key))
      assert.deepEqual(sent, { 'goblin.fwindow': 1, 'module|list': 1 }) // the client's first call: the module check
      assert.ok(res instanceof RateLimiterRes)
      assert.deepEqual([res.consumedPoints, res.remainingPoints, res.isFirstInDuration], [1, 1, true])
      assert.ok(res.msBeforeNext > 4000 && res.msBeforeNext <= 5000)
      assert.equal(await the.raw.get(`rlflx:${key}`), '1')
      assert.deepEqual((await commandsOf(the.raw, () => limiter.consume(key)))[0], { 'goblin.fwindow': 1 })
      const [, rejected] = await commandsOf(the.raw, () => limiter.consume(key))
      assert.ok(rejected instanceof RateLimiterRes)
      assert.deepEqual([rejected.consumedPoints, rejected.remainingPoints], [3, 0])
    })

    it('the consume that crosses the limit blocks the key for blockDuration in the same command', async () => {
      const key = freshKey('block')
      const limiter = new RateLimiterGoblin({ storeClient: the.client, points: 1, duration: 2, blockDuration: 10 })
      await limiter.consume(key)
      const [sent, rejected] = await commandsOf(the.raw, () => limiter.consume(key))
      assert.deepEqual(sent, { 'goblin.fwindow': 1 })
      assert.ok(rejected.msBeforeNext > 9000, `msBeforeNext ${rejected.msBeforeNext}`)
      assert.ok((await the.raw.pttl(`rlflx:${key}`)) > 9000)
      const [, later] = await commandsOf(the.raw, () => limiter.consume(key))
      assert.ok(later.msBeforeNext <= rejected.msBeforeNext)
    })

    it('penalty, reward, get, set, block and delete are one command each', async () => {
      const key = freshKey('ops')
      const limiter = new RateLimiterGoblin({ storeClient: the.client, points: 5, duration: 10 })
      assert.deepEqual((await commandsOf(the.raw, () => limiter.penalty(key, 3)))[0], { 'goblin.fwindow': 1 })
      assert.deepEqual((await commandsOf(the.raw, () => limiter.reward(key, 1)))[0], { 'goblin.fwindow': 1 })
      assert.equal(await the.raw.get(`rlflx:${key}`), '2')
      const [sentGet, got] = await commandsOf(the.raw, () => limiter.get(key))
      assert.deepEqual(sentGet, { 'goblin.fwstats': 1 })
      assert.deepEqual([got.consumedPoints, got.remainingPoints], [2, 3])
      assert.equal(await limiter.get(freshKey('none')), null)
      assert.deepEqual((await commandsOf(the.raw, () => limiter.set(key, 4, 20)))[0], { set: 1 })
      assert.equal(await the.raw.get(`rlflx:${key}`), '4')
      assert.ok((await the.raw.pttl(`rlflx:${key}`)) > 19000)
      const [sentBlock, blocked] = await commandsOf(the.raw, () => limiter.block(key, 30))
      assert.deepEqual(sentBlock, { set: 1 })
      assert.deepEqual([blocked.consumedPoints, blocked.msBeforeNext], [6, 30000])
      assert.deepEqual((await commandsOf(the.raw, () => limiter.delete(key)))[0], { del: 1 })
      assert.equal(await limiter.delete(key), false)
    })

    it('duration 0 never expires; customDuration sets the window; keyPrefix names the key', async () => {
      const key = freshKey('forever')
      const limiter = new RateLimiterGoblin({ storeClient: the.client, points: 2, duration: 0, keyPrefix: 'app' })
      const res = await limiter.consume(key)
      assert.equal(res.msBeforeNext, -1)
      assert.equal(await the.raw.pttl(`app:${key}`), -1)
      const custom = await new RateLimiterGoblin({ storeClient: the.client, points: 2, duration: 60 }).consume(key, 1, { customDuration: 2 })
      assert.ok(custom.msBeforeNext <= 2000)
    })

    it('the insurance limiter takes over when the store fails; a refused store is not insured', async () => {
      const broken = await library.connect(server)
      await close(broken)
      const limiter = new RateLimiterGoblin({
        storeClient: broken,
        points: 1,
        duration: 1,
        insuranceLimiter: new RateLimiterMemory({ points: 2, duration: 1 }),
      })
      const res = await limiter.consume(freshKey('insured'))
      assert.equal(res.remainingPoints, 1)
      const none = new RateLimiterGoblin({ storeClient: broken, points: 1, duration: 1 })
      await assert.rejects(none.consume('x'), (error) => error instanceof Error)
      const notReady = new RateLimiterGoblin({ storeClient: broken, points: 1, duration: 1, rejectIfRedisNotReady: true })
      await assert.rejects(notReady.get('x'), new Error('Redis connection is not ready'))
    })

    it('several limiters consumed together: all or nothing, in one GOBLIN.MFWINDOW', async () => {
      const key = `{${freshKey('union')}}`
      const second = new RateLimiterGoblin({ storeClient: the.client, keyPrefix: 'sec', points: 2, duration: 1 })
      const minute = new RateLimiterGoblin({ storeClient: the.client, keyPrefix: 'min', points: 10, duration: 60 })
      const union = new RateLimiterGoblinUnion(second, minute)
      const [sent, res] = await commandsOf(the.raw, () => union.consume(key))
      assert.deepEqual(sent, { 'goblin.mfwindow': 1 })
      assert.deepEqual(Object.keys(res).sort(), ['min', 'sec'])
      await union.consume(key)
      const [, refused] = await commandsOf(the.raw, () => union.consume(key))
      assert.deepEqual(Object.keys(refused), ['sec'])
      assert.equal(refused.sec.remainingPoints, 0)
      assert.equal(await the.raw.get(`min:${key}`), '2') // the refused consume charged neither
      await sleep(1100)
      await union.consume(key)
      assert.equal(await the.raw.get(`min:${key}`), '3')
    })

    it('the constructor refuses a script and a missing client', () => {
      assert.throws(() => new RateLimiterGoblin({ storeClient: the.client, points: 1, duration: 1, customIncrTtlLuaScript: 'return 1' }), TypeError)
      assert.throws(() => new RateLimiterGoblin({ points: 1, duration: 1 }), /storeClient is not set/)
      assert.throws(() => new RateLimiterGoblin({ storeClient: 'redis', points: 1, duration: 1 }), TypeError)
      assert.throws(() => new RateLimiterGoblinUnion(), TypeError)
    })
  })
}

/** An HTTP server on a free loopback port for `handler`; its base URL and a close. */
async function listen(handler) {
  const http = createServer(handler)
  http.listen(0, '127.0.0.1')
  await once(http, 'listening')
  return { url: `http://127.0.0.1:${http.address().port}`, close: () => new Promise((resolve) => http.close(resolve)) }
}

// The HTTP apps on a client of each library (the store code is the same on every client).
const HTTP_LIBRARIES = LIBRARIES.filter((library) => /^(ioredis 6 \(RESP3\)|node-redis 6 \(RESP3\))$/.test(library.name))

for (const library of HTTP_LIBRARIES) {
  describe(`express-rate-limit, express-slow-down and hono-rate-limiter on ${library.name}`, () => {
    const the = connection(library, server)

    async function app(options, route = (_req, res) => res.send('ok')) {
      const prefix = `${freshKey('erl')}:`
      const application = express()
      application.use(rateLimit({ windowMs: 10_000, limit: 2, store: new GoblinStore({ client: the.client, prefix }), ...options }))
      application.get('/', route)
      return { ...(await listen(application)), prefix }
    }

    it('counts each request, and fills the draft-7 and legacy headers from the server\'s TTL', async () => {
      const { url, close: stop, prefix } = await app({ standardHeaders: 'draft-7', legacyHeaders: true })
      try {
        const first = await fetch(url)
        assert.equal(first.status, 200)
        assert.equal(first.headers.get('ratelimit-policy'), '2;w=10')
        assert.equal(first.headers.get('ratelimit'), 'limit=2, remaining=1, reset=10')
        assert.equal(first.headers.get('x-ratelimit-limit'), '2')
        assert.equal(first.headers.get('x-ratelimit-remaining'), '1')
        const reset = Number(first.headers.get('x-ratelimit-reset'))
        assert.ok(Math.abs(reset - (Date.now() / 1000 + 10)) <= 2, `X-RateLimit-Reset ${reset}`)
        assert.equal((await fetch(url)).status, 200)
        const refused = await fetch(url)
        assert.equal(refused.status, 429)
        assert.equal(refused.headers.get('ratelimit'), 'limit=2, remaining=0, reset=10')
        assert.equal(refused.headers.get('retry-after'), '10')
        assert.equal(await the.raw.get(`${prefix}127.0.0.1`), '3')
      } finally {
        await stop()
      }
    })

    it('fills the draft-8 headers', async () => {
      const { url, close: stop } = await app({ standardHeaders: 'draft-8', legacyHeaders: false, identifier: 'api' })
      try {
        const res = await fetch(url)
        assert.equal(res.headers.get('ratelimit'), '"api"; r=1; t=10')
        assert.match(res.headers.get('ratelimit-policy'), /^"api"; q=2; w=10; pk=:.+:$/)
      } finally {
        await stop()
      }
    })

    it('skipFailedRequests gives a failed request back (decrement)', async () => {
      let fail = true
      const { url, close: stop, prefix } = await app({ skipFailedRequests: true }, (_req, res) => res.status(fail ? 500 : 200).send('x'))
      try {
        assert.equal((await fetch(url)).status, 500)
        await sleep(50)
        assert.equal(await the.raw.get(`${prefix}127.0.0.1`), '0')
        fail = false
        assert.equal((await fetch(url)).status, 200)
        assert.equal((await fetch(url)).status, 200)
        assert.equal((await fetch(url)).status, 429)
      } finally {
        await stop()
      }
    })

    it('resetKey deletes the count; get reads it without counting', async () => {
      const prefix = `${freshKey('erl-get')}:`
      const store = new GoblinStore({ client: the.client, prefix })
      store.init({ windowMs: 5000 })
      assert.equal(await store.get('ip'), undefined)
      const hit = await store.increment('ip')
      assert.equal(hit.totalHits, 1)
      assert.ok(hit.resetTime.getTime() - Date.now() > 4000)
      assert.equal((await store.get('ip')).totalHits, 1)
      await store.resetKey('ip')
      assert.equal(await store.get('ip'), undefined)
    })

    it('hono-rate-limiter takes the same store: counts, headers, 429', async () => {
      const prefix = `${freshKey('hono')}:`
      const app = new Hono()
      app.use(honoRateLimiter({ windowMs: 10_000, limit: 2, standardHeaders: 'draft-7', keyGenerator: () => 'client', store: new GoblinStore({ client: the.client, prefix }) }))
      app.get('/', (c) => c.text('ok'))
      const statuses = []
      for (let i = 0; i < 3; i++) {
        const res = await app.request('/')
        statuses.push([res.status, res.headers.get('ratelimit')])
      }
      assert.deepEqual(statuses, [
        [200, 'limit=2, remaining=1, reset=10'],
        [200, 'limit=2, remaining=0, reset=10'],
        [429, 'limit=2, remaining=0, reset=10'],
      ])
      assert.equal(await the.raw.get(`${prefix}client`), '3')
    })

    it('express-slow-down delays requests past delayAfter, on the same store', async () => {
      const application = express()
      application.use(slowDown({ windowMs: 10_000, delayAfter: 1, delayMs: () => 300, store: new GoblinStore({ client: the.client, prefix: `${freshKey('slow')}:` }) }))
      // What express-slow-down decided for the request, from the count the store gave it.
      application.get('/', (req, res) => res.json({ used: req.slowDown.used, delay: req.slowDown.delay }))
      const { url, close: stop } = await listen(application)
      try {
        assert.deepEqual(await (await fetch(url)).json(), { used: 1, delay: 0 })
        const started = performance.now()
        assert.deepEqual(await (await fetch(url)).json(), { used: 2, delay: 300 })
        assert.ok(performance.now() - started >= 290, 'the second request was not delayed')
      } finally {
        await stop()
      }
    })
  })

  describe(`@fastify/rate-limit's store option (goblinStore) on ${library.name}`, () => {
    const the = connection(library, server)

    async function app(options) {
      const nameSpace = `${freshKey('fst')}:`
      const fastify = Fastify()
      await fastify.register(fastifyRateLimitPlugin, { max: 2, timeWindow: 1000, store: goblinStore(the.client, { nameSpace }), ...options })
      fastify.get('/', async () => 'ok')
      await fastify.ready()
      return { fastify, nameSpace }
    }

    it('limits as the plugin\'s Redis store does: headers, 429, the window in ms', async () => {
      const { fastify, nameSpace } = await app({})
      let res = await fastify.inject('/')
      assert.deepEqual([res.statusCode, res.headers['x-ratelimit-remaining'], res.headers['x-ratelimit-reset']], [200, '1', '1'])
      res = await fastify.inject('/')
      assert.deepEqual([res.statusCode, res.headers['x-ratelimit-remaining']], [200, '0'])
      res = await fastify.inject('/')
      assert.deepEqual([res.statusCode, res.headers['retry-after']], [429, '1'])
      assert.equal(await the.raw.get(`${nameSpace}127.0.0.1`), '3')
      await sleep(1100)
      assert.equal((await fastify.inject('/')).statusCode, 200)
      await fastify.close()
    })

    it('continueExceeding starts the window again on every request over max; exponentialBackoff doubles it', async () => {
      // The window a request leaves, on the server's clock: its counter's expiry less the
      // server's time after and before the request, which wrote it in between.
      const serverMs = async () => {
        const [seconds, micros] = await the.raw.time()
        return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
      }
      const windowAfter = async ({ fastify, nameSpace }) => {
        const before = await serverMs()
        await fastify.inject('/')
        const after = await serverMs()
        const at = Number(await the.raw.call('PEXPIRETIME', `${nameSpace}127.0.0.1`))
        return { least: at - after, most: at - before }
      }
      const armed = (window, ms) => window.least <= ms && ms <= window.most
      const restarting = await app({ continueExceeding: true })
      for (let i = 0; i < 3; i++) {
        await restarting.fastify.inject('/')
      }
      // Some of the window gone, so that one started again is told from one left running.
      await sleep(300)
      const restarted = await windowAfter(restarting)
      assert.ok(armed(restarted, 1000), JSON.stringify(restarted))
      await restarting.fastify.close()
      const backing = await app({ exponentialBackoff: true })
      const windows = []
      for (let i = 0; i < 5; i++) {
        windows.push(await windowAfter(backing))
      }
      assert.ok(armed(windows[2], 1000) && armed(windows[3], 2000) && armed(windows[4], 4000), JSON.stringify(windows))
      await backing.fastify.close()
    })
  })

  describe(`NestJS's throttler on ${library.name}`, () => {
    const the = connection(library, server)

    /** A Nest app with one route, `GET /`, on `adapter`, listening on a free port. */
    const nest = (adapter, throttlers, guard) => nestApp(the.client, adapter, throttlers, guard)

    for (const [adapterName, makeAdapter] of ADAPTERS) {
      it(`on the ${adapterName} adapter: counts, headers, the block, and a flood of 1,000 lets exactly the limit through`, async () => {
        const { application, url } = await nest(makeAdapter(), [{ ttl: 2000, limit: 2, blockDuration: 3000 }], ThrottlerGuard)
        try {
          const first = await fetch(`${url}/`)
          assert.deepEqual([first.status, first.headers.get('x-ratelimit-remaining'), first.headers.get('x-ratelimit-reset')], [200, '1', '2'])
          assert.equal((await fetch(`${url}/`)).status, 200)
          const refused = await fetch(`${url}/`)
          assert.deepEqual([refused.status, refused.headers.get('retry-after')], [429, '3'])
        } finally {
          await application.close()
        }
        const flood = await nest(makeAdapter(), [{ ttl: 60_000, limit: 100 }], ThrottlerGuard)
        try {
          const statuses = await Promise.all(Array.from({ length: 1000 }, () => fetch(`${flood.url}/`).then((res) => res.status)))
          assert.deepEqual([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length], [100, 900])
        } finally {
          await flood.application.close()
        }
      })
    }

    it('GoblinThrottlerGuard decides named throttlers all or nothing: a request one refuses counts in none', async () => {
      const throttlers = [
        { name: 'short', ttl: 1000, limit: 2 },
        { name: 'long', ttl: 60_000, limit: 3 },
      ]
      const { application, url } = await nest(ADAPTERS[0][1](), throttlers, GoblinThrottlerGuard)
      try {
        const statuses = []
        for (let i = 0; i < 3; i++) {
          const res = await fetch(`${url}/`)
          statuses.push([res.status, res.headers.get('x-ratelimit-remaining-long'), res.headers.get('retry-after-short')])
        }
        assert.deepEqual(statuses, [
          [200, '2', null],
          [200, '1', null],
          [429, null, '1'],
        ])
        await sleep(1100)
        const res = await fetch(`${url}/`) // the refused request was not counted by "long"
        assert.deepEqual([res.status, res.headers.get('x-ratelimit-remaining-long')], [200, '0'])
        const refused = await fetch(`${url}/`)
        assert.equal(refused.status, 429)
        assert.ok(Number(refused.headers.get('retry-after-long')) > 50)
      } finally {
        await application.close()
      }
    })
  })
}

for (const library of libraries()) {
  describe(`the GCRA commands' replies (commands.clThrottle, commands.gcra) on ${library.name}`, () => {
    const the = connection(library, server)

    it("clThrottle is one CL.THROTTLE, read as GOBLIN.GCRA's reply, its key redis-cell's", async () => {
      const key = freshKey('cell')
      // redis-cell's README: 16 at once, then 30 a minute.
      const [sent, first] = await commandsOf(the.raw, () => call(the.client, commands.clThrottle(key, 15, 30, 60)))
      assert.deepEqual(sent, { 'cl.throttle': 1, 'module|list': 1 })
      assert.deepEqual(first, { limited: false, limit: 16, remaining: 15, retryAfter: -1, resetAfter: 2 })
      // The TAT in nanoseconds, expiring at it floored to the millisecond.
      const stored = await the.raw.get(key)
      assert.match(stored, /^[0-9]+$/)
      assert.equal(Number(BigInt(stored) / 1000000n), await the.raw.call('PEXPIRETIME', key))
      const spent = await call(the.client, commands.clThrottle(key, 15, 30, 60, 15))
      assert.deepEqual([spent.limited, spent.remaining], [false, 0])
      const refused = await call(the.client, commands.clThrottle(key, 15, 30, 60))
      assert.deepEqual(refused, { limited: true, limit: 16, remaining: 0, retryAfter: 2, resetAfter: 32 })
      assert.throws(() => commands.clThrottle(key, 15, 30, 1.5), TypeError)
      assert.throws(() => commands.clThrottle(key, 15, 30, 60, -1), RangeError)
    })

    it('gcra with peek replies as the same hit would, and writes nothing', async () => {
      const key = freshKey('gcra')
      const peeked = await call(the.client, commands.gcra(key, 4, 1, 2, 1, true))
      assert.deepEqual(peeked, { limited: false, limit: 5, remaining: 4, retryAfter: -1, resetAfter: 2 })
      assert.equal(await the.raw.exists(key), 0)
      assert.deepEqual(await call(the.client, commands.gcra(key, 4, 1, 2)), peeked)
      const tat = await the.raw.get(key)
      // Tokens 0 with peek: the state alone.
      const state = await call(the.client, commands.gcra(key, 4, 1, 2, 0, true))
      assert.deepEqual(state, { limited: false, limit: 5, remaining: 4, retryAfter: -1, resetAfter: 2 })
      assert.equal(await the.raw.get(key), tat)
      assert.throws(() => commands.gcra(key, 4, 1, 2, 0), RangeError)
    })
  })
}

describe('the rate limiters on a server without Goblin', () => {
  it('are GoblinModuleError, the module asked for before every call while it is missing', async () => {
    const bare = address('GOBLIN_TEST_BARE')
    const raw = await admin(bare)
    const client = await LIBRARIES[0].connect(bare)
    try {
      const before = await commandCalls(raw)
      await assert.rejects(new RateLimiterGoblin({ storeClient: client, points: 1, duration: 1 }).consume('k'), GoblinModuleError)
      const store = new GoblinStore({ client })
      store.init({ windowMs: 1000 })
      await assert.rejects(store.increment('k'), GoblinModuleError)
      await assert.rejects(new GoblinThrottlerStorage(client).increment('k', 1000, 1, 1000, 'default'), GoblinModuleError)
      assert.deepEqual(delta(before, await commandCalls(raw)), { 'module|list': 3 })
    } finally {
      await close(client)
      await close(raw)
    }
  })
})
