// The differential runs over HTTP: the same random sequence of requests sent, in the same tick,
// to an app on the original store and to the same app on goblin-redis's: express-rate-limit and
// express-slow-down (rate-limit-redis against GoblinStore), hono-rate-limiter (the same two),
// NestJS's ThrottlerGuard (@nest-lab/throttler-storage-redis against GoblinThrottlerStorage, and
// GoblinThrottlerGuard with one throttler against the plain guard) on both adapters, and
// @fastify/rate-limit (its RedisStore against goblinStore and fastifyRateLimit). Their statuses
// and rate-limit headers are compared; a reset time or Retry-After may differ by the second a
// window's end falls into (timing), as in differential.mjs. A request that meets a window's or a
// block's end may find the key on either side of it in either app (timing): for NestJS, judged
// on the server's clock from the keys themselves (`byServerClock`); for the others, on the test's
// clock from the keys' PTTLs (`byLocalClock`).
import http from 'node:http'
import express from 'express'
import { rateLimit } from 'express-rate-limit'
import { slowDown } from 'express-slow-down'
import { Hono } from 'hono'
import { rateLimiter as honoRateLimiter } from 'hono-rate-limiter'
import Fastify from 'fastify'
import fastifyRateLimitPlugin from '@fastify/rate-limit'
import 'reflect-metadata'
import { Controller, Get, Module } from '@nestjs/common'
import { APP_GUARD, NestFactory } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler'
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis'
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis'
import { GoblinStore } from 'goblin-redis/express'
import { GoblinThrottlerGuard, GoblinThrottlerStorage } from 'goblin-redis/nest'
import { fastifyRateLimit, goblinStore } from 'goblin-redis/fastify'
import { Tally, TOLERANCE_MS, random, rateLimitRedisOptions, seedOf } from './differential.mjs'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The headers a rate limiter sets, lower-cased, as compared: every `*ratelimit*` one and Retry-After. */
function limitHeaders(headers) {
  const picked = {}
  for (const [name, value] of Object.entries(headers)) {
    if (/ratelimit|retry-after/i.test(name)) {
      picked[name.toLowerCase()] = String(value)
    }
  }
  return picked
}

/** The seconds in a header (a reset, `t=`, `reset=`, Retry-After, an epoch second): each may be one apart for timing. */
const SECONDS = /(reset=|t=|^)(\d+)/g

/**
 * Two responses alike: the same status and body, each header the same but for the seconds of a
 * reset, which may differ by one (timing); any other difference is undocumented.
 */
function compareResponses(a, b) {
  if (a.status !== b.status || a.body !== b.body) {
    return ['undocumented', `${a.status} ${a.body} ${JSON.stringify(a.headers)} / ${b.status} ${b.body} ${JSON.stringify(b.headers)}`]
  }
  const names = new Set([...Object.keys(a.headers), ...Object.keys(b.headers)])
  let timing = false
  for (const name of names) {
    const [x, y] = [a.headers[name], b.headers[name]]
    if (x === y) {
      continue
    }
    const seconds = (text) => [...(text ?? '').matchAll(SECONDS)].map((match) => Number(match[2]))
    const shape = (text) => (text ?? '').replace(SECONDS, '$1#')
    const [sx, sy] = [seconds(x), seconds(y)]
    // Retry-After, and a named throttler's Retry-After-<name> (NestJS).
    const name1 = /^retry-after/.test(name) || /reset/.test(name) || /^ratelimit$/.test(name)
    if (name1 && shape(x) === shape(y) && sx.length === sy.length && sx.every((n, i) => Math.abs(n - sy[i]) <= 1)) {
      timing = true
      continue
    }
    return ['undocumented', `${name}: ${x} / ${y}`]
  }
  return timing ? ['timing', 'a reset a second apart'] : undefined
}

/** A text of the runs whose every request is written to stderr (GOBLIN_DIFF_TRACE), to read a difference. */
const TRACE = process.env.GOBLIN_DIFF_TRACE

/**
 * Sends `steps` requests (or pauses) to both apps: `send(side, request)` gives `{ status, body,
 * headers }`. `judge` decides what a request's outcome was: `before(request)` runs before it is
 * sent, and `after(request, event)` (`event`: `{ before, started, finished, difference }`, the
 * difference as `compareResponses` gives it) returns `{ records, note }`: the differences to
 * tally, each `[kind, detail]`, and a line for the trace.
 */
async function requests(tally, label, steps, r, choose, send, judge) {
  const tracing = TRACE !== undefined && label.includes(TRACE)
  for (let i = 0; i < steps; i++) {
    const request = choose(r)
    if (request.sleep !== undefined) {
      if (tracing) {
        console.error(`${label} #${i} sleep ${request.sleep}`)
      }
      await sleep(request.sleep)
      continue
    }
    const before = await judge.before(request)
    const started = performance.now()
    const [a, b] = await Promise.all([send(0, request), send(1, request)])
    const finished = performance.now()
    tally.calls += 2
    tally.saw(String(a.status))
    const difference = compareResponses(a, b)
    const { records, note } = await judge.after(request, { before, started, finished, difference })
    if (tracing) {
      const answer = (x) => `${x.status} ${JSON.stringify(x.headers)}`
      console.error(`${label} #${i} ${JSON.stringify(request)}: ${answer(a)} / ${answer(b)}: ${note}${records.map(([kind]) => ` -> ${kind}`).join('')}`)
    }
    for (const [kind, detail] of records) {
      tally.record(kind, `${label} #${i} ${request.path}: ${detail}`)
    }
  }
}

/**
 * Judged on the test's clock: a request that went out within TOLERANCE_MS of a window's end that
 * `observe` reports (the keys' PTTLs, read on the server after the request) counts a difference
 * as timing, and the keys drift until that window is over.
 */
function byLocalClock(observe) {
  const ends = []
  let drifting = -Infinity
  return {
    before: async () => undefined,
    async after(request, { started, finished, difference }) {
      const observing = performance.now()
      for (const ms of await observe(request)) {
        if (ms > 0) {
          ends.push([observing + ms - (finished - started), performance.now() + ms])
        }
      }
      if (difference === undefined) {
        return { records: [], note: 'same' }
      }
      const near = ends.some(([earliest, latest]) => latest >= started - TOLERANCE_MS - (finished - started) && earliest <= finished + TOLERANCE_MS)
      const timing = difference[0] === 'timing' || near || drifting >= started
      if (near) {
        drifting = Math.max(drifting, ...ends.map(([, latest]) => latest + TOLERANCE_MS), performance.now())
      }
      return { records: [[timing ? 'timing' : difference[0], difference[1]]], note: near ? 'near an end' : drifting >= started ? 'drifting' : '' }
    },
  }
}

/** The server's clock (TIME) in ms, from its reply. */
const serverMs = ([seconds, micros]) => Number(seconds) * 1000 + Number(micros) / 1000

/** An ioredis pipeline's replies, or its first error. */
async function piped(observer, commands) {
  return (await observer.pipeline(commands).exec()).map(([error, reply]) => {
    if (error) {
      throw error
    }
    return reply
  })
}

/**
 * Judged on the server's clock, from the keys themselves: for apps whose every key is found by
 * its side's `pattern` (KEYS) and named, by `id(key)`, alike on both sides (`hits` or `blocked`
 * of one tracker). Before each request and after it the test reads every key of both sides, its
 * value and the instant it expires (PEXPIRETIME), between two reads of the server's clock (TIME):
 * the apps' commands for the request ran between the first read before it and the last after it,
 * the request's span on the server's clock. Then:
 *
 * - the request met an end if a key of either side expires within that span: the two apps'
 *   calls may meet the server on either side of it (each app makes its calls when it gets to
 *   them, some milliseconds apart, more under load), or in its very millisecond (where the
 *   stores differ on purpose: docs/node.md's "A window's end");
 * - the stores were apart if, before the request, a key of one side was missing on the other or
 *   held another count: a request that met an end may leave them so, with alike answers (one
 *   store's block ended before its app's call, and that call blocked anew; the other's had
 *   not), and so may keys armed some milliseconds apart, one side's ended before the other's;
 * - a difference is timing if the request met an end or the stores were apart (or if it is a
 *   second of a header's rounding, as `compareResponses` says); any other is undocumented;
 * - stores alike before a request that met no end must be alike after it (the same keys, the
 *   same counts): else they parted where nothing explains it, which is undocumented even when
 *   the answers were alike;
 * - every key a request armed expires `durations[kind]` after an instant within its span, on
 *   both sides: else it was armed for another time, which is undocumented.
 */
function byServerClock(observer, sides, durations) {
  async function snapshot() {
    const [time, ...found] = await piped(observer, [['time'], ...sides.map(({ pattern }) => ['keys', pattern])])
    const reads = found.flatMap((keys) => keys.flatMap((key) => [['get', key], ['pexpiretime', key]]))
    const replies = await piped(observer, [...reads, ['time']])
    let at = 0
    const keys = found.map((names, side) => {
      const byId = new Map()
      for (const key of names) {
        const [value, expires] = [replies[at], replies[at + 1]]
        at += 2
        if (value !== null) {
          byId.set(sides[side].id(key), { key, value, expires })
        }
      }
      return byId
    })
    return { from: serverMs(time), to: serverMs(replies[replies.length - 1]), keys }
  }
  const ids = (state) => new Set([...state.keys[0].keys(), ...state.keys[1].keys()])
  /** How the two sides' keys differ: a key one side lacks, or another count. */
  const apart = (state) =>
    [...ids(state)]
      .filter((id) => state.keys[0].get(id)?.value !== state.keys[1].get(id)?.value)
      .map((id) => `${id} ${state.keys[0].get(id)?.value ?? 'missing'} / ${state.keys[1].get(id)?.value ?? 'missing'}`)
  const describe = (state) =>
    state.keys
      .map((byId) => [...byId].map(([id, { value, expires }]) => `${id.slice(-14)}=${value} ending in ${Math.round(expires - state.from)}`).join(', ') || 'none')
      .join(' / ')
  return {
    before: snapshot,
    async after(request, { before, difference }) {
      const after = await snapshot()
      const [from, to] = [Math.floor(before.from), Math.ceil(after.to)]
      const ended = [before, after].flatMap((state) => state.keys.flatMap((byId) => [...byId.values()])).filter(({ expires }) => expires >= from && expires <= to)
      const parted = apart(before)
      const records = []
      for (const [side, byId] of after.keys.entries()) {
        for (const [id, { key, expires }] of byId) {
          if (before.keys[side].get(id)?.expires === expires) {
            continue
          }
          const duration = durations[id.slice(id.lastIndexOf(':') + 1)]
          if (!(expires - duration >= from && expires - duration <= to)) {
            records.push(['undocumented', `${side === 0 ? 'the original' : "goblin-redis's store"} armed ${key} to expire at ${expires}, not ${duration} ms after an instant within the request (${from} to ${to})`])
          }
        }
      }
      if (parted.length === 0 && ended.length === 0 && apart(after).length > 0) {
        records.push(['undocumented', `the stores parted, meeting no end: ${apart(after).join(', ')}`])
      }
      if (difference !== undefined) {
        const timing = difference[0] === 'timing' || ended.length > 0 || parted.length > 0
        records.push([timing ? 'timing' : difference[0], difference[1]])
      }
      const why = [...ended.map(({ key }) => `met the end of ${key}`), ...parted.map((text) => `apart: ${text}`)].join('; ')
      return { records, note: `${to - from} ms on the server's clock: before ${describe(before)}; after ${describe(after)}${why === '' ? '' : `; ${why}`}` }
    },
  }
}

/** Listens on a free loopback port: its base URL and its close. */
async function listen(handler) {
  const server = http.createServer(handler)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

async function fetched(url, headers) {
  const response = await fetch(url, { headers })
  return { status: response.status, body: await response.text(), headers: limitHeaders(Object.fromEntries(response.headers)) }
}

// ------------------------------------------------ express-rate-limit, express-slow-down, hono
/**
 * express-rate-limit and express-slow-down on express, and hono-rate-limiter on hono, each on
 * rate-limit-redis's RedisStore (app A) and on GoblinStore (app B). A route may fail (for
 * `skipFailedRequests`) or answer late (a request in flight when its key is reset).
 */
export async function expressHttp({ client, kind, observer, seed, prefix, sequences = 3, steps = 18 }) {
  const tally = new Tally('express-rate-limit over HTTP')
  await Promise.all(
    Array.from({ length: sequences }, async (_, n) => {
      const r = random(seedOf(seed, 'express-http', String(n)))
      const options = {
        windowMs: r.pick([500, 1000, 1500]),
        limit: r.pick([1, 2, 3]),
        standardHeaders: r.pick(['draft-6', 'draft-7', 'draft-8']),
        legacyHeaders: true,
        skipSuccessfulRequests: r.chance(0.3),
        skipFailedRequests: r.chance(0.5),
      }
      const delayAfter = r.pick([1, 2])
      const prefixes = [0, 1].map((side) => `${prefix}:h${n}:${side}`)
      const storeFor = (side, name) =>
        side === 0
          ? new RateLimitRedisStore({ ...rateLimitRedisOptions(client, kind, false), prefix: `${prefixes[0]}:${name}:` })
          : new GoblinStore({ client, prefix: `${prefixes[1]}:${name}:` })
      const limiters = []
      const apps = await Promise.all(
        [0, 1].map(async (side) => {
          const app = express()
          const common = { keyGenerator: (req) => req.get('x-client') ?? 'c', validate: false }
          const limiter = rateLimit({ ...options, ...common, store: storeFor(side, 'rl'), identifier: 'api' })
          limiters[side] = limiter
          app.get('/limited', limiter, async (req, res) => {
            await sleep(Number(req.query.wait ?? 0))
            res.status(req.query.fail ? 500 : 200).send('ok')
          })
          app.get('/slow', slowDown({ windowMs: options.windowMs, delayAfter, delayMs: (used) => (used - delayAfter) * 5, ...common, store: storeFor(side, 'sd') }), (req, res) => {
            const { limit, used, remaining, delay } = req.slowDown
            res.json({ limit, used, remaining, delay })
          })
          const hono = new Hono()
          hono.use(
            '/hono',
            honoRateLimiter({ windowMs: options.windowMs, limit: options.limit, standardHeaders: options.standardHeaders, keyGenerator: (c) => c.req.header('x-client') ?? 'c', store: storeFor(side, 'hono') }),
          )
          hono.get('/hono', (c) => c.text('ok'))
          return { ...(await listen(app)), hono: await listen(honoHandler(hono)) }
        }),
      )
      const inFlight = []
      try {
        await requests(
          tally,
          `express ${JSON.stringify({ ...options, delayAfter })}`,
          steps,
          r,
          (rr) =>
            rr.weighted([
              [6, { path: rr.pick(['/limited', '/limited?fail=1', '/slow', '/hono']), client: rr.pick(['c1', 'c2']) }],
              [1, { path: '/limited?wait=150', client: rr.pick(['c1', 'c2']), background: true }],
              [1, { path: 'reset', client: rr.pick(['c1', 'c2']) }],
              [2, { sleep: rr.weighted([[3, rr.int(0, 200)], [1, rr.int(300, 900)]]) }],
            ]),
          async (side, request) => {
            if (request.path === 'reset') {
              await limiters[side].resetKey(request.client)
              return { status: 0, body: '', headers: {} }
            }
            const base = request.path === '/hono' ? apps[side].hono.url : apps[side].url
            const pending = fetched(`${base}${request.path}`, { 'x-client': request.client })
            if (request.background) {
              inFlight.push(pending)
              return { status: 0, body: 'in flight', headers: {} }
            }
            return await pending
          },
          byLocalClock((request) => {
            const name = request.path.startsWith('/slow') ? 'sd' : request.path.startsWith('/hono') ? 'hono' : 'rl'
            return Promise.all(prefixes.map((p) => observer.pttl(`${p}:${name}:${request.client}`)))
          }),
        )
      } finally {
        await Promise.allSettled(inFlight)
        await Promise.all(apps.flatMap((app) => [app.close(), app.hono.close()]))
      }
    }),
  )
  return tally
}

/** A node:http handler that serves a Hono app (its `fetch`), as a Node adapter does. */
function honoHandler(hono) {
  return async (req, res) => {
    const response = await hono.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers }))
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  }
}

// ---------------------------------------------------------------------------------- NestJS
/** A Nest app: `GET /` throttled by `throttlers` with `guard`, on `storage`, on the adapter named. */
async function nestApp(adapter, throttlers, storage, guard) {
  const controller = Reflect.decorate([Controller()], class {})
  const handler = Object.getOwnPropertyDescriptor({ hello: () => 'ok' }, 'hello')
  Object.defineProperty(controller.prototype, 'hello', Reflect.decorate([Get()], controller.prototype, 'hello', handler))
  const module = { imports: [ThrottlerModule.forRoot({ throttlers, storage })], controllers: [controller], providers: [{ provide: APP_GUARD, useClass: guard }] }
  const AppModule = Reflect.decorate([Module(module)], class {})
  const application = await NestFactory.create(AppModule, adapter === 'Express' ? new ExpressAdapter() : new FastifyAdapter(), { logger: false })
  await application.listen(0, '127.0.0.1')
  return { url: await application.getUrl(), close: () => application.close() }
}

/**
 * A Nest app whose ThrottlerGuard runs on @nest-lab/throttler-storage-redis (on `nest`, ioredis 5),
 * against the same app on GoblinThrottlerStorage (on `client`), and, with `goblinGuard`, on
 * GoblinThrottlerGuard (one throttler: all or nothing changes nothing).
 */
export async function nestHttp({ client, nest, observer, seed, prefix, adapter, goblinGuard }) {
  const tally = new Tally(`NestJS over HTTP (${adapter}${goblinGuard ? ', GoblinThrottlerGuard' : ''})`)
  const r = random(seedOf(seed, 'nest-http', adapter, String(goblinGuard)))
  // A name of its own, so that the test finds its keys (the guard hashes the rest of them).
  const name = `t${seedOf(seed, 'nest-http', adapter, String(goblinGuard)) % 1000000}`
  const throttler = { name, ttl: r.pick([500, 1000]), limit: r.pick([1, 2]), blockDuration: r.pick([300, 1000, 2000]) }
  const goblinPrefix = `${prefix}:nh:${adapter}:${goblinGuard}:`
  const apps = await Promise.all([
    nestApp(adapter, [throttler], new ThrottlerStorageRedisService(nest), ThrottlerGuard),
    nestApp(adapter, [throttler], new GoblinThrottlerStorage(client, { prefix: goblinPrefix }), goblinGuard ? GoblinThrottlerGuard : ThrottlerGuard),
  ])
  // Every hit and block key of either app (few: this throttler's, in a test server), named alike
  // on both sides by the tracker's key and the kind: @nest-lab's `{<key>:<name>}:hits`, the same
  // after GoblinThrottlerStorage's prefix, and GoblinThrottlerGuard's `{<key>}:<key>:hits` there.
  const id = (key) => {
    const match = /^\{([0-9a-f]+)(?::[^}]*)?\}:(?:[0-9a-f]+:)?(hits|blocked)$/.exec(key)
    if (match === null) {
      throw new Error(`a key the test does not know: ${key}`)
    }
    return `${match[1]}:${match[2]}`
  }
  const sides = [
    { pattern: `{*:${name}}:*`, id },
    { pattern: `${goblinPrefix}*`, id: (key) => id(key.slice(goblinPrefix.length)) },
  ]
  try {
    await requests(
      tally,
      `Nest ${adapter} ${JSON.stringify(throttler)}`,
      20,
      r,
      (rr) => rr.weighted([[5, { path: '/', client: rr.pick(['10.0.0.1', '10.0.0.2']) }], [2, { sleep: rr.weighted([[3, rr.int(0, 250)], [1, rr.int(300, 1200)]]) }]]),
      (side, request) => fetched(`${apps[side].url}${request.path}`, { 'x-client': request.client }),
      byServerClock(observer, sides, { hits: throttler.ttl, blocked: throttler.blockDuration }),
    )
  } finally {
    await Promise.all(apps.map((app) => app.close()))
  }
  return tally
}

// ------------------------------------------------------------------------ @fastify/rate-limit
/**
 * @fastify/rate-limit with its RedisStore (on ioredis: `ioredis`) against the plugin on
 * goblinStore (on `client`), and, where `defined` is given (an ioredis client), on its own
 * RedisStore over the commands fastifyRateLimit defines there.
 */
export async function fastifyHttp({ client, ioredis, defined, observer, seed, prefix }) {
  const tally = new Tally('@fastify/rate-limit over HTTP')
  const r = random(seedOf(seed, 'fastify-http'))
  const options = {
    max: r.pick([1, 2, 3]),
    timeWindow: r.pick([500, 1000]),
    continueExceeding: r.chance(0.3),
    exponentialBackoff: r.chance(0.3),
    keyGenerator: (request) => request.headers['x-client'] ?? 'c',
  }
  if (defined !== undefined) {
    fastifyRateLimit(defined)
  }
  const spaces = [0, 1, 2].map((side) => `${prefix}:fh:${side}:`)
  const stores = [
    { redis: ioredis, nameSpace: spaces[0] },
    { store: goblinStore(client, { nameSpace: spaces[1] }) },
    ...(defined === undefined ? [] : [{ redis: defined, nameSpace: spaces[2] }]),
  ]
  const apps = await Promise.all(
    stores.map(async (store) => {
      const app = Fastify()
      await app.register(fastifyRateLimitPlugin, { ...options, ...store })
      app.get('/', async () => 'ok')
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      return { app, url }
    }),
  )
  const inject = async ({ url }, request) => {
    const response = await fetched(`${url}/`, { 'x-client': request.client })
    return { ...response, body: response.status === 200 ? response.body : '' }
  }
  try {
    await requests(
      tally,
      `fastify ${JSON.stringify({ ...options, keyGenerator: undefined })}`,
      24,
      r,
      (rr) => rr.weighted([[5, { path: '/', client: rr.pick(['c1', 'c2']) }], [2, { sleep: rr.weighted([[3, rr.int(0, 200)], [1, rr.int(300, 1000)]]) }]]),
      async (side, request) => {
        if (side === 0) {
          return await inject(apps[0], request)
        }
        // Goblin's side is both of its apps: each must answer as the original's.
        const answers = await Promise.all(apps.slice(1).map((app) => inject(app, request)))
        const other = answers.find((answer) => compareResponses(answers[0], answer)?.[0] === 'undocumented')
        return other ?? answers[0]
      },
      byLocalClock((request) => Promise.all(spaces.slice(0, stores.length).map((space) => observer.pttl(`${space}${request.client}`)))),
    )
  } finally {
    await Promise.all(apps.map(({ app }) => app.close()))
  }
  return tally
}
