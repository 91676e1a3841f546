// The differential runs: each store goblin-redis replaces, driven by the same seeded random
// sequence of calls beside the original, Lua-backed store, on one server (or one cluster). Each
// call is sent to both in the same tick and their outcomes compared. A difference is one of:
//
// - timing: the call met a window's or a block's end (of either store's key) within TOLERANCE_MS,
//   or a time it reports (ms, or seconds rounded up) is within TOLERANCE_MS of the other's;
// - documented: a difference docs/node.md names and explains (each named below, where it is
//   recognised), never one where goblin-redis admits what the original refuses;
// - undocumented: any other. The tests assert there are none.
//
// Every store is built by the library's own documented options and driven through every
// operation it documents: rate-limiter-flexible (RateLimiterRedis against RateLimiterGoblin, and
// RateLimiterUnion against RateLimiterGoblinUnion), express-rate-limit's rate-limit-redis against
// GoblinStore, @nest-lab/throttler-storage-redis against GoblinThrottlerStorage, and
// @fastify/rate-limit's RedisStore against goblinStore (and against its own RedisStore on the
// commands fastifyRateLimit defines).
import { createRequire } from 'node:module'
import 'reflect-metadata'
import rlf from 'rate-limiter-flexible'
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis'
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis'
import { RateLimiterGoblin, RateLimiterGoblinUnion } from 'goblin-redis'
import { GoblinStore } from 'goblin-redis/express'
import { GoblinThrottlerStorage } from 'goblin-redis/nest'
import { fastifyRateLimit, goblinStore } from 'goblin-redis/fastify'

const require = createRequire(import.meta.url)
const FastifyRedisStore = require('@fastify/rate-limit/store/RedisStore')
const { RateLimiterMemory, RateLimiterRedis, RateLimiterUnion, RateLimiterRes } = rlf

/** A text of the sequences whose every call is written to stderr (GOBLIN_DIFF_TRACE), to read a difference. */
const TRACE = process.env.GOBLIN_DIFF_TRACE

/** How far apart two stores' times may be, and how near a window's end a call may meet it, to count as timing. */
export const TOLERANCE_MS = 120

/** A seeded generator (mulberry32): the same seed, the same sequence. */
export function random(seed) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
    /** One of `[weight, value]` pairs. */
    weighted(pairs) {
      let roll = next() * pairs.reduce((sum, [weight]) => sum + weight, 0)
      for (const [weight, value] of pairs) {
        roll -= weight
        if (roll < 0) {
          return value
        }
      }
      return pairs[pairs.length - 1][1]
    },
  }
}

/** A seed from a text (the store, the library), so each run of a pair is its own sequence. */
export function seedOf(base, ...names) {
  let hash = base >>> 0
  for (const char of names.join('/')) {
    hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0
  }
  return hash
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A promise's outcome, as data: resolved with a value, or rejected with a reason. */
async function outcome(promise) {
  try {
    return { resolved: true, value: await promise }
  } catch (reason) {
    return { resolved: false, value: reason }
  }
}

/** The tally of one store's run: calls sent, and differences by kind. */
export class Tally {
  constructor(store) {
    this.store = store
    this.calls = 0
    this.timing = 0
    this.documented = {}
    this.undocumented = []
    /** The original's outcomes by kind (resolved, rejected; or an HTTP status): each run must meet both sides of its limit. */
    this.seen = {}
  }

  saw(kind) {
    this.seen[kind] = (this.seen[kind] ?? 0) + 1
  }

  add(other) {
    this.calls += other.calls
    this.timing += other.timing
    for (const [name, n] of Object.entries(other.documented)) {
      this.documented[name] = (this.documented[name] ?? 0) + n
    }
    this.undocumented.push(...other.undocumented)
    for (const [kind, n] of Object.entries(other.seen)) {
      this.seen[kind] = (this.seen[kind] ?? 0) + n
    }
    return this
  }

  record(kind, detail) {
    if (kind === 'timing') {
      this.timing += 1
    } else if (kind === 'undocumented') {
      this.undocumented.push(detail)
    } else {
      this.documented[kind] = (this.documented[kind] ?? 0) + 1
    }
  }

  get summary() {
    const documented = Object.entries(this.documented).map(([name, n]) => `${name} ${n}`).join(', ') || 'none'
    const seen = Object.entries(this.seen).map(([kind, n]) => `${kind} ${n}`).join(', ')
    return `${this.store}: ${this.calls} calls (the original: ${seen}), ${this.undocumented.length} undocumented differences, ${this.timing} timing, documented: ${documented}`
  }
}

/**
 * What a sequence knows of when its keys' windows and blocks end (performance.now() ms), from
 * both stores' replies (or the test's own reads of the keys' TTLs). A call that meets an end
 * within TOLERANCE_MS may find the key on either side of it in either store: a difference then
 * is timing. After one, the two stores may count in windows out of phase (one counted a call in
 * the window that was ending, the other in the next) for as long as their ends stay apart: the
 * key drifts, and its differences are timing, until both stores' ends agree again.
 */
class Ends {
  constructor() {
    this.byKey = new Map()
    this.sides = new Map()
    this.drifting = new Map()
    this.calls = new Map()
    this.key = ''
    this.span = [0, 0]
    this.reported = [undefined, undefined]
  }

  /** The key the next calls are about, and when its call went out and came back. */
  about(key, started, finished) {
    this.key = key
    this.span = [started, finished]
    this.reported = [undefined, undefined]
  }

  list() {
    let list = this.byKey.get(this.key)
    if (list === undefined) {
      list = []
      this.byKey.set(this.key, list)
    }
    return list
  }

  /**
   * The key ends `ms` after the server ran the call, in the store of `side` (0, the original; 1,
   * goblin-redis's) if given: some time between when the call went out and a round trip after its
   * reply came back (a store that sends a second command, as RateLimiterRedis's block and
   * GoblinThrottlerStorage's do, runs it then). -1 or -2: no end.
   */
  add(ms, side) {
    const [started, finished] = this.span
    const valid = typeof ms === 'number' && Number.isFinite(ms)
    if (valid && ms > 0) {
      this.list().push([started + ms, finished + (finished - started) + ms])
    }
    if (side !== undefined && valid) {
      this.reported[side] = Math.max(this.reported[side] ?? 0, ms > 0 ? finished + ms : 0)
    }
  }

  /** The longest round trip of a call on the key, this one's (`ms`) included. */
  longestCall(ms) {
    const longest = Math.max(this.calls.get(this.key) ?? 0, ms)
    this.calls.set(this.key, longest)
    return longest
  }

  /** Whether one of the key's ends may fall within TOLERANCE_MS of [from, to]. */
  near(from, to) {
    return this.list().some(([earliest, latest]) => latest >= from - TOLERANCE_MS && earliest <= to + TOLERANCE_MS)
  }

  /** Whether the key's two stores end apart (as their last replies said). */
  apart() {
    const [a, b] = this.sides.get(this.key) ?? [0, 0]
    const now = performance.now()
    const alive = (end) => end > now
    if (!alive(a) && !alive(b)) {
      return false
    }
    if (alive(a) !== alive(b)) {
      return true
    }
    return Math.abs(a - b) > 2 * TOLERANCE_MS
  }

  /**
   * Whether the key drifts: a call met a window's end, and since then either the windows known
   * at that call have not all ended (the call may have been counted in the old one by one store
   * and in the next by the other), or the stores' ends have not agreed.
   */
  drifts() {
    const until = this.drifting.get(this.key)
    return until !== undefined && (performance.now() <= until || this.apart())
  }

  /** The call is over: what both stores reported is their state; a key drifts from a call that met an end. */
  settle(metEnd) {
    const [a, b] = this.reported
    if (a !== undefined && b !== undefined) {
      this.sides.set(this.key, [a, b])
    }
    if (metEnd) {
      const last = Math.max(performance.now(), ...this.list().map(([, latest]) => latest))
      this.drifting.set(this.key, Math.max(this.drifting.get(this.key) ?? 0, last + slack))
    } else if (!this.drifts()) {
      this.drifting.delete(this.key)
    }
  }
}

/**
 * How far apart two stores' times of one key may be: TOLERANCE_MS, and the longest round trip a
 * call on the key has taken (a window or a block starts when its command runs, at some moment
 * of its call's round trip, which the machine's load stretches: RateLimiterRedis's block, sent
 * a round trip after its consume's reply, starts up to one round trip later than GOBLIN.FWINDOW's).
 */
let slack = TOLERANCE_MS

/** Two times (ms) that agree, beyond timing: both none (≤ 0) alike, or within `slack`. */
function sameMs(a, b) {
  if (a <= 0 || b <= 0) {
    return a === b
  }
  return Math.abs(a - b) <= slack
}

/**
 * Runs one sequence of `steps` calls: `step(i)` gives `{ name, a, b, compare }` (the two calls,
 * as functions, and a comparison of their outcomes returning undefined, or a difference's kind
 * and detail), or `{ sleep: ms }`. Both calls go out in the same tick.
 */
async function sequence(tally, label, steps, step, ends) {
  for (let i = 0; i < steps; i++) {
    const next = step(i)
    if (next.sleep !== undefined) {
      if (TRACE !== undefined && label.includes(TRACE)) {
        console.error(`${label} #${i} sleep ${next.sleep}`)
      }
      await sleep(next.sleep)
      continue
    }
    const started = performance.now()
    const [a, b] = await Promise.all([outcome(next.a()), outcome(next.b())])
    const finished = performance.now()
    tally.calls += 2
    tally.saw(next.outcome?.(a) ?? (a.resolved ? 'resolved' : 'rejected'))
    const drifting = (() => {
      ends.about(next.key ?? '', started, finished)
      return ends.drifts()
    })()
    if (next.observe !== undefined) {
      // The test's own reads of the keys' TTLs, [side, ms] each, for their ends (not counted as calls).
      const observing = performance.now()
      const ttls = await next.observe()
      ends.about(next.key ?? '', observing, performance.now())
      ttls.forEach(([side, ms]) => ends.add(ms, side))
      ends.settle(false)
    }
    ends.about(next.key ?? '', started, finished)
    slack = TOLERANCE_MS + ends.longestCall(finished - started)
    const difference = next.compare(a, b)
    const [kind, detail] = difference ?? ['same', '']
    const near = ends.near(started, finished)
    const timing = kind === 'timing' || (kind === 'undocumented' && (near || drifting))
    ends.settle(near && difference !== undefined)
    if (TRACE !== undefined && label.includes(TRACE)) {
      console.error(`${label} #${i} ${next.name} at ${Math.round(started)}-${Math.round(finished)}: ${describe(a.value)} / ${describe(b.value)} -> ${timing ? 'timing' : kind}`)
    }
    if (difference === undefined) {
      continue
    }
    tally.record(timing ? 'timing' : kind, `${label} #${i} ${next.name}: ${detail}`)
  }
}

const describe = (value) => {
  if (value instanceof Error) {
    return `${value.name}: ${value.message}`
  }
  return JSON.stringify(value, (_, v) => (typeof v === 'number' && Number.isNaN(v) ? 'NaN' : v))
}

// ------------------------------------------------------------------------ rate-limiter-flexible
/** A RateLimiterRes as the fields a caller reads. */
function resOf(value) {
  return value instanceof RateLimiterRes ? value : undefined
}

function compareRes(a, b) {
  const [x, y] = [resOf(a), resOf(b)]
  if (x === undefined || y === undefined) {
    return x === y ? undefined : ['undocumented', `${describe(a)} / ${describe(b)}`]
  }
  const exact = x.remainingPoints === y.remainingPoints && x.consumedPoints === y.consumedPoints && x.isFirstInDuration === y.isFirstInDuration
  if (exact && sameMs(x.msBeforeNext, y.msBeforeNext)) {
    return undefined
  }
  if (exact) {
    return ['undocumented', `msBeforeNext ${x.msBeforeNext} / ${y.msBeforeNext}`]
  }
  if (Math.max(Math.abs(x.consumedPoints), Math.abs(y.consumedPoints)) > Number.MAX_SAFE_INTEGER && x.remainingPoints === y.remainingPoints) {
    // Counts past 2^53 are JavaScript numbers a few units apart: RateLimiterRedis's script reads
    // them as Lua doubles and its block writes its rounded count back; GOBLIN.FWINDOW keeps it.
    return ['count past 2^53', `${x.consumedPoints} / ${y.consumedPoints}`]
  }
  return ['undocumented', `${describe(x)} / ${describe(y)}`]
}

/** Both outcomes alike: resolved or rejected alike, each with an equal RateLimiterRes, null, a boolean, or an error. */
function compareOutcomes(a, b) {
  if (!a.resolved && a.value instanceof Error && /^MOVED /.test(a.value.message) && !(b.value instanceof Error)) {
    // RateLimiterRedis on node-redis 4's cluster client now and then sends a call to a node that
    // does not own its key; goblin-redis routes every command by its key.
    return ['the original answered MOVED', a.value.message]
  }
  if (a.resolved !== b.resolved) {
    return ['undocumented', `${a.resolved ? 'resolved' : 'rejected'} ${describe(a.value)} / ${b.resolved ? 'resolved' : 'rejected'} ${describe(b.value)}`]
  }
  const [x, y] = [a.value, b.value]
  if (x instanceof Error || y instanceof Error) {
    return x instanceof Error && y instanceof Error ? undefined : ['undocumented', `${describe(x)} / ${describe(y)}`]
  }
  if (x === null || y === null || typeof x === 'boolean' || typeof y === 'boolean') {
    return x === y ? undefined : ['undocumented', `${describe(x)} / ${describe(y)}`]
  }
  return compareRes(x, y)
}

/** A limiter's options, drawn from every option RateLimiterRedis documents (11.4). */
function limiterOptions(r) {
  const points = r.pick([1, 2, 3, 5, 2.5, 0])
  const options = {
    points,
    duration: r.pick([1, 2, 1.5, 0, 1]),
    blockDuration: r.pick([0, 0, 1, 2, 1.5, 0.5]),
  }
  if (options.blockDuration > 0 && r.chance(0.35)) {
    options.blockOnConsumed = Math.ceil(points) + r.pick([0, 1, 2])
  }
  if (r.chance(0.25)) {
    options.execEvenly = true
    if (r.chance(0.5)) {
      options.execEvenlyMinDelayMs = r.pick([5, 20])
    }
  }
  if (r.chance(0.25)) {
    options.inMemoryBlockOnConsumed = Math.max(Math.ceil(points), 1) + r.pick([0, 1])
    if (r.chance(0.5)) {
      options.inMemoryBlockDuration = 1
    }
  }
  if (r.chance(0.3)) {
    // Each limiter its own RateLimiterMemory of the same points and duration (limiterPair): it
    // answers the calls the server fails (a consume of 2 ** 64 points, or of 1.5).
    options.insuranceLimiter = 'RateLimiterMemory'
  }
  if (r.chance(0.25)) {
    options.rejectIfRedisNotReady = true
  }
  return options
}

/**
 * The limiter and its insurance limiter forget `key`: after a consume the server refused, which
 * leaves the two sides in different states (documented), each starts again.
 */
async function forget(limiter, key) {
  await Promise.all([limiter.delete(key), limiter.insuranceLimiter?.delete(key)].map((deleting) => Promise.resolve(deleting).catch(() => false)))
}

/**
 * A pair of limiters with the same options (each its own keyPrefix, and its own insurance
 * limiter): the original on `original` (a client and whether it is node-redis), goblin-redis's
 * on `client`.
 */
function limiterPair(client, original, options, prefix) {
  const own = () =>
    options.insuranceLimiter === undefined ? {} : { insuranceLimiter: new RateLimiterMemory({ points: options.points, duration: options.duration }) }
  return [
    new RateLimiterRedis({ storeClient: original.client, useRedisPackage: original.useRedisPackage, keyPrefix: `${prefix}:a`, ...options, ...own() }),
    new RateLimiterGoblin({ storeClient: client, keyPrefix: `${prefix}:b`, ...options, ...own() }),
  ]
}

/** The next call of a limiter sequence (both limiters given the same arguments), or a sleep. */
function limiterStep(r, keys, ends) {
  const key = r.pick(keys)
  const remember = (outcome, side) => {
    const res = resOf(outcome.value)
    if (res !== undefined) {
      ends.add(res.msBeforeNext, side)
    }
  }
  const compare = (a, b) => {
    remember(a, 0)
    remember(b, 1)
    const past = [a, b].some((o) => Math.abs(resOf(o.value)?.consumedPoints ?? 0) > Number.MAX_SAFE_INTEGER)
    if (past) {
      this.past53.add(key)
    }
    const difference = compareOutcomes(a, b)
    const [x, y] = [resOf(a.value), resOf(b.value)]
    if (difference?.[0] === 'undocumented' && this.past53.has(key) && x !== undefined && y !== undefined && Math.abs(x.consumedPoints - y.consumedPoints) <= 8) {
      // A count that went past 2^53 came back with RateLimiterRedis's rounding in it.
      return ['count past 2^53', `${x.consumedPoints} / ${y.consumedPoints}`]
    }
    return difference
  }
  const call = (name, f) => ({ name, key, a: () => f(0), b: () => f(1), compare })
  return r.weighted([
    [10, () => call(`consume(${key})`, (side) => this[side].consume(key))],
    [4, () => {
      const points = r.pick([2, 3])
      return call(`consume(${key}, ${points})`, (side) => this[side].consume(key, points))
    }],
    [1, () => call(`consume(${key}, 2 ** 53)`, (side) => this[side].consume(key, 2 ** 53))],
    // The server refuses it (past 64 bits), or the limiter does (not whole): the insurance limiter answers, if any.
    [1, () => {
      const points = r.pick([2 ** 64, 1.5])
      if (points === 1.5) {
        return call(`consume(${key}, 1.5)`, (side) => this[side].consume(key, points))
      }
      // RateLimiterRedis's script arms the key's window (SET NX EX) before its INCRBY fails: the
      // sequence deletes the key on both sides after the call, to go on from the same state.
      const step = call(`consume(${key}, 2 ** 64)`, async (side) => {
        try {
          return await this[side].consume(key, points)
        } finally {
          await forget(this[side], key)
        }
      })
      return {
        ...step,
        compare: (a, b) => {
          const difference = compare(a, b)
          if (difference?.[0] === 'undocumented' && a.resolved && Number.isNaN(resOf(a.value)?.consumedPoints) && !b.resolved) {
            // RateLimiterRedis on ioredis without a window reads its MULTI's error as a count: NaN points, resolved.
            return ['points past 64 bits', difference[1]]
          }
          return difference
        },
      }
    }],
    [2, () => {
      const customDuration = r.pick([1, 2])
      return call(`consume(${key}, 1, { customDuration: ${customDuration} })`, (side) => this[side].consume(key, 1, { customDuration }))
    }],
    [2, () => {
      const points = r.pick([1, 2])
      return call(`penalty(${key}, ${points})`, (side) => this[side].penalty(key, points))
    }],
    [2, () => {
      const points = r.pick([1, 2])
      return call(`reward(${key}, ${points})`, (side) => this[side].reward(key, points))
    }],
    [3, () => call(`get(${key})`, (side) => this[side].get(key))],
    [1, () => {
      const [points, seconds] = [r.pick([0, 1, 3]), r.pick([0, 1, 1.5])]
      return call(`set(${key}, ${points}, ${seconds})`, (side) => this[side].set(key, points, seconds))
    }],
    [1, () => {
      const seconds = r.pick([1, 1.5, 2])
      return call(`block(${key}, ${seconds})`, (side) => this[side].block(key, seconds))
    }],
    [1, () => call(`delete(${key})`, (side) => this[side].delete(key))],
    [5, () => ({ sleep: r.weighted([[3, r.int(0, 300)], [1, r.int(500, 1300)]]) })],
  ])()
}

/**
 * RateLimiterRedis against RateLimiterGoblin: `sequences` limiters of drawn options, each pair
 * driven through `steps` calls on two keys, all at once.
 */
export async function rateLimiterFlexible({ client, kind, seed, prefix, sequences = 8, steps = 28, original }) {
  const tally = new Tally('rate-limiter-flexible')
  original ??= { client, useRedisPackage: kind === 'node-redis' }
  await Promise.all(
    Array.from({ length: sequences }, async (_, n) => {
      const r = random(seedOf(seed, 'rlf', String(n)))
      const options = limiterOptions(r)
      const pair = limiterPair(client, original, options, `${prefix}:rlf${n}`)
      /** Keys whose count went past 2^53. */
      pair.past53 = new Set()
      const keys = ['k1', 'k2']
      const ends = new Ends()
      const label = `RateLimiterRedis ${JSON.stringify(options)}`
      await sequence(tally, label, steps, () => limiterStep.call(pair, r, keys, ends), ends)
      await Promise.all(keys.flatMap((key) => pair.map((limiter) => limiter.delete(key).catch(() => false))))
    }),
  )
  return tally
}

/**
 * RateLimiterUnion against RateLimiterGoblinUnion, two limiters each: alike until a refused
 * consume that a limiter would have admitted, which RateLimiterUnion counts there and
 * RateLimiterGoblinUnion does not (all or nothing, documented); that key is left from then on.
 */
export async function rateLimiterUnion({ client, kind, seed, prefix, sequences = 6, steps = 16, original }) {
  const tally = new Tally('RateLimiterGoblinUnion')
  original ??= { client, useRedisPackage: kind === 'node-redis' }
  await Promise.all(
    Array.from({ length: sequences }, async (_, n) => {
      const r = random(seedOf(seed, 'union', String(n)))
      const first = limiterOptions(r)
      const second = limiterOptions(r)
      const [a1, b1] = limiterPair(client, original, first, `${prefix}:u${n}:x`)
      const [a2, b2] = limiterPair(client, original, second, `${prefix}:u${n}:y`)
      const unions = [new RateLimiterUnion(a1, a2), new RateLimiterGoblinUnion(b1, b2)]
      const prefixes = [a1.keyPrefix, a2.keyPrefix, b1.keyPrefix, b2.keyPrefix]
      const keys = ['{k1}', '{k2}']
      const apart = new Set()
      const ends = new Ends()
      const label = `union ${JSON.stringify([first, second])}`
      // The two unions' results are keyed by their own limiters' prefixes: read them by position.
      const byPosition = (result) => {
        if (result === null || typeof result !== 'object' || result instanceof Error) {
          return result
        }
        const out = {}
        for (const [name, value] of Object.entries(result)) {
          out[prefixes.indexOf(name) % 2] = value
        }
        return out
      }
      await sequence(
        tally,
        label,
        steps,
        () => {
          const key = r.pick(keys.filter((k) => !apart.has(k)).concat(['sleep']))
          if (key === 'sleep') {
            return { sleep: r.int(0, 900) }
          }
          // Now and then points the server (2 ** 64) or the limiters (1.5) refuse: each limiter's insurance answers, if any.
          const points = r.weighted([[8, 1], [4, 2], [1, 2 ** 64], [1, 1.5]])
          const huge = points === 2 ** 64
          // A limiter of RateLimiterUnion's that resolves NaN points where the server refused the
          // consume (RateLimiterRedis on ioredis without a window reads its MULTI's error as a count).
          const nanInA = (x, position) =>
            huge && kind === 'ioredis' && Math.floor([first, second][position].duration) === 0 && (x?.[position] === undefined || Number.isNaN(x[position].consumedPoints))
          const consume = async (union, limiters) => {
            try {
              return await union.consume(key, points)
            } finally {
              if (huge) {
                // RateLimiterRedis's script arms the window before its INCRBY fails: both sides start again.
                await Promise.all(limiters.map((limiter) => forget(limiter, key)))
              }
            }
          }
          return {
            name: `consume(${key}, ${points})`,
            key,
            a: () => consume(unions[0], [a1, a2]),
            b: () => consume(unions[1], [b1, b2]),
            compare: (a, b) => {
              const [x, y] = [byPosition(a.value), byPosition(b.value)]
              for (const [side, results] of [x, y].entries()) {
                for (const res of Object.values(results ?? {})) {
                  ends.add(resOf(res)?.msBeforeNext, side)
                }
              }
              if (a.resolved !== b.resolved) {
                if (a.resolved && ['0', '1'].every((position) => nanInA(x, position))) {
                  return ['points past 64 bits', `${describe(x)} / ${describe(y)}`]
                }
                return ['undocumented', `${a.resolved} ${describe(x)} / ${b.resolved} ${describe(y)}`]
              }
              if (a.resolved) {
                for (const position of ['0', '1']) {
                  const difference = compareOutcomes({ resolved: true, value: x?.[position] ?? null }, { resolved: true, value: y?.[position] ?? null })
                  if (difference !== undefined) {
                    return difference
                  }
                }
                return undefined
              }
              if (!huge && (Object.keys(x ?? {}).length < 2 || Object.keys(y ?? {}).length < 2)) {
                // Refused by one limiter: RateLimiterUnion counted it in the other, this union did not.
                apart.add(key)
              }
              for (const position of ['0', '1']) {
                const [inA, inB] = [x?.[position], y?.[position]]
                if (inB !== undefined && inA === undefined) {
                  if (nanInA(x, position)) {
                    return ['points past 64 bits', `resolved NaN / ${describe(inB)}`]
                  }
                  return ['undocumented', `a refusal RateLimiterUnion does not make: ${describe(inB)}`]
                }
                if (inA !== undefined && inB === undefined) {
                  return ['undocumented', `a refusal RateLimiterGoblinUnion does not make: ${describe(inA)}`]
                }
                if (inA !== undefined) {
                  const difference = compareOutcomes({ resolved: true, value: inA }, { resolved: true, value: inB })
                  if (difference !== undefined) {
                    return difference
                  }
                }
              }
              return undefined
            },
          }
        },
        ends,
      )
      const all = [a1, a2, b1, b2]
      await Promise.all(keys.flatMap((key) => all.map((limiter) => limiter.delete(key).catch(() => false))))
    }),
  )
  return tally
}

// -------------------------------------------------------------------- express-rate-limit's store
/** rate-limit-redis's `sendCommand` on `client` (or `sendCommandCluster` on a cluster). */
export function rateLimitRedisOptions(client, kind, cluster) {
  if (kind === 'ioredis' && cluster) {
    // ioredis routes a command by its keys: SCRIPT LOAD has none, so it goes to every primary.
    return {
      sendCommandCluster: async ({ command }) =>
        command[0] === 'SCRIPT' ? (await Promise.all(client.nodes('master').map((node) => node.call(...command))))[0] : await client.call(...command),
    }
  }
  if (kind === 'ioredis') {
    return { sendCommand: (...args) => client.call(...args) }
  }
  if (cluster) {
    return { sendCommandCluster: ({ key, isReadOnly, command }) => client.sendCommand(key, isReadOnly, command) }
  }
  return { sendCommand: (...args) => client.sendCommand(args) }
}

/**
 * rate-limit-redis's RedisStore against GoblinStore. Documented: `get` of a key never counted
 * (`NaN` hits against `undefined`), a decrement where no window counts (rate-limit-redis's
 * `DECR` leaves -1 without an expiry, GoblinStore leaves nothing; the next increment counts 1 on
 * both), and a decrement below 0 in a window (GoblinStore stops at 0: it counts more, never fewer).
 */
export async function expressRateLimit({ client, kind, cluster = false, seed, prefix, sequences = 8, steps = 26 }) {
  const tally = new Tally('express-rate-limit')
  await Promise.all(
    Array.from({ length: sequences }, async (_, n) => {
      const r = random(seedOf(seed, 'express', String(n)))
      const windowMs = r.weighted([[6, r.pick([300, 700, 1000, 1500])], [1, r.pick([0, 1000.5])]])
      const stores = [
        new RateLimitRedisStore({ ...rateLimitRedisOptions(client, kind, cluster), prefix: `${prefix}:e${n}:a:` }),
        new GoblinStore({ client, prefix: `${prefix}:e${n}:b:` }),
      ]
      await Promise.all(stores.map((store) => store.init({ windowMs })))
      const keys = ['{k1}', '{k2}']
      const ends = new Ends()
      /** Keys where rate-limit-redis went below 0 (or holds -1 without a window): GoblinStore counts more there. */
      const below = new Set()
      const label = `RedisStore windowMs ${windowMs}`
      const hits = (o) => (o.resolved && o.value !== undefined ? o.value.totalHits : undefined)
      await sequence(
        tally,
        label,
        steps,
        () => {
          const key = r.pick(keys)
          const call = (name, f, compare) => ({ name: `${name}(${key})`, key, a: () => f(0), b: () => f(1), compare })
          return r.weighted([
            [8, () =>
              call('increment', (side) => stores[side].increment(key), (a, b) => {
                const [x, y] = [a.value, b.value]
                if (a.resolved && b.resolved) {
                  ends.add(x.resetTime - Date.now(), 0)
                  ends.add(y.resetTime - Date.now(), 1)
                  if (x.totalHits === y.totalHits) {
                    if (x.totalHits === 1) {
                      below.delete(key)
                    }
                    return sameMs(x.resetTime - Date.now(), y.resetTime - Date.now()) ? undefined : ['undocumented', `resetTime ${x.resetTime.toISOString()} / ${y.resetTime.toISOString()}`]
                  }
                  if (below.has(key) && y.totalHits > x.totalHits) {
                    return ['decrement below 0', `${x.totalHits} / ${y.totalHits}`]
                  }
                  return ['undocumented', `${describe(x)} / ${describe(y)}`]
                }
                return a.resolved === b.resolved ? undefined : ['undocumented', `${describe(x)} / ${describe(y)}`]
              })],
            [3, () =>
              call('decrement', async (side) => {
                await stores[side].decrement(key)
                return side === 0 ? await stores[0].get(key) : undefined
              }, (a) => {
                // rate-limit-redis's count after its DECR, read back: below 0 is the documented case.
                if (a.resolved && !(hits(a) >= 0)) {
                  below.add(key)
                }
                return undefined
              })],
            [3, () =>
              call('get', (side) => stores[side].get(key), (a, b) => {
                const [x, y] = [a.value, b.value]
                if (!a.resolved || !b.resolved) {
                  return a.resolved === b.resolved ? undefined : ['undocumented', `${describe(x)} / ${describe(y)}`]
                }
                if (y === undefined && x !== undefined && Number.isNaN(x.totalHits)) {
                  return ['get of a key never counted', `${describe(x)} / undefined`]
                }
                if (y === undefined && x !== undefined && x.totalHits < 0) {
                  return ['decrement where no window counts', `${describe(x)} / undefined`]
                }
                if (x === undefined || y === undefined) {
                  return x === y ? undefined : ['undocumented', `${describe(x)} / ${describe(y)}`]
                }
                if (x.totalHits !== y.totalHits) {
                  return below.has(key) && y.totalHits > x.totalHits ? ['decrement below 0', `${x.totalHits} / ${y.totalHits}`] : ['undocumented', `${describe(x)} / ${describe(y)}`]
                }
                return undefined
              })],
            [1, () =>
              call('resetKey', (side) => stores[side].resetKey(key), () => {
                below.delete(key)
                return undefined
              })],
            [4, () => ({ sleep: r.weighted([[3, r.int(0, 250)], [1, r.int(300, 1200)]]) })],
          ])()
        },
        ends,
      )
      await Promise.all(keys.flatMap((key) => stores.map((store) => store.resetKey(key).catch(() => undefined))))
    }),
  )
  return tally
}

// --------------------------------------------------------------------------------- NestJS
/**
 * @nest-lab/throttler-storage-redis (on `nest`, a client of the ioredis 5 it imports, on the same server)
 * against GoblinThrottlerStorage (on `client`); `observer`, an ioredis client, reads the keys'
 * TTLs, which the replies give in seconds only.
 */
export async function nestStorage({ client, nest, observer, seed, prefix, sequences = 8, steps = 26 }) {
  const tally = new Tally('@nest-lab/throttler-storage-redis')
  const storages = [new ThrottlerStorageRedisService(nest), new GoblinThrottlerStorage(client, { prefix: `${prefix}:nest:b:` })]
  await Promise.all(
    Array.from({ length: sequences }, async (_, n) => {
      const r = random(seedOf(seed, 'nest', String(n)))
      const throttler = {
        ttl: r.pick([300, 700, 1000, 1500]),
        limit: r.pick([1, 2, 3, 2.5]),
        blockDuration: r.pick([300, 1000, 2000]),
        name: r.pick(['default', 'short']),
      }
      const keys = [`${prefix}:nest${n}:k1`, `${prefix}:nest${n}:k2`]
      const ends = new Ends()
      const label = `throttler ${JSON.stringify(throttler)}`
      await sequence(
        tally,
        label,
        steps,
        () => {
          if (r.chance(0.3)) {
            return { sleep: r.weighted([[3, r.int(0, 300)], [1, r.int(400, 1500)]]) }
          }
          const key = r.pick(keys)
          const { ttl, limit, blockDuration, name } = throttler
          return {
            name: `increment(${key})`,
            key,
            outcome: (a) => (a.resolved ? (a.value.isBlocked ? 'blocked' : 'allowed') : 'rejected'),
            a: () => storages[0].increment(key, ttl, limit, blockDuration, name),
            b: () => storages[1].increment(key, ttl, limit, blockDuration, name),
            // The replies say seconds, rounded up: the ends are read from the keys themselves.
            observe: () =>
              Promise.all(
                [`{${key}:${name}}`, `${storages[1].prefix}{${key}:${name}}`].flatMap((tag, side) =>
                  [`${tag}:hits`, `${tag}:blocked`].map(async (one) => [side, await observer.pttl(one)]),
                ),
              ),
            compare: (a, b) => {
              if (!a.resolved || !b.resolved) {
                return a.resolved === b.resolved ? undefined : ['undocumented', `${describe(a.value)} / ${describe(b.value)}`]
              }
              const [x, y] = [a.value, b.value]
              // The replies' seconds, rounded up, bound the ends too (the reads after the call
              // miss a key that ended before them): within the second before each.
              for (const record of [x, y]) {
                for (const seconds of [record.timeToExpire, record.timeToBlockExpire]) {
                  if (seconds > 0) {
                    ends.add(seconds * 1000 - 1000 + 1)
                    ends.add(seconds * 1000)
                  }
                }
              }
              if (x.totalHits !== y.totalHits || x.isBlocked !== y.isBlocked) {
                return ['undocumented', `${describe(x)} / ${describe(y)}`]
              }
              // Seconds rounded up: two times a few ms apart may round either side of one.
              if (Math.abs(x.timeToExpire - y.timeToExpire) > 1 || Math.abs(x.timeToBlockExpire - y.timeToBlockExpire) > 1) {
                return ['undocumented', `${describe(x)} / ${describe(y)}`]
              }
              if (x.timeToExpire === y.timeToExpire && x.timeToBlockExpire === y.timeToBlockExpire) {
                return undefined
              }
              // A second apart: rounding up, if the keys themselves end together.
              return [ends.apart() ? 'undocumented' : 'timing', `${describe(x)} / ${describe(y)}`]
            },
          }
        },
        ends,
      )
    }),
  )
  return tally
}

// ------------------------------------------------------------------------- @fastify/rate-limit
/**
 * The plugin's RedisStore (its scripts, on ioredis: `ioredis`, the same server) against
 * goblinStore on `client`; and, on an ioredis `defined` given, the plugin's own RedisStore on the
 * commands fastifyRateLimit defines there.
 */
export async function fastifyStore({ client, ioredis, defined, seed, prefix, sequences = 8, steps = 26 }) {
  const tally = new Tally('@fastify/rate-limit')
  if (defined !== undefined) {
    fastifyRateLimit(defined)
  }
  await Promise.all(
    Array.from({ length: sequences }, async (_, n) => {
      const r = random(seedOf(seed, 'fastify', String(n)))
      const params = { continueExceeding: r.chance(0.3), exponentialBackoff: r.chance(0.3) }
      const timeWindow = r.pick([300, 700, 1000])
      const max = r.pick([1, 2, 3])
      const Goblin = goblinStore(client, { nameSpace: `${prefix}:f${n}:b:` })
      const stores = [new FastifyRedisStore(params.continueExceeding, params.exponentialBackoff, ioredis, `${prefix}:f${n}:a:`), new Goblin(params)]
      if (defined !== undefined) {
        stores.push(new FastifyRedisStore(params.continueExceeding, params.exponentialBackoff, defined, `${prefix}:f${n}:c:`))
      }
      const promised = (store, method, ...args) =>
        new Promise((resolve, reject) => {
          store[method](args[0], (error, result) => (error ? reject(error) : resolve(result)), ...args.slice(1))
        })
      const keys = ['{k1}', '{k2}']
      const ends = new Ends()
      const label = `RedisStore ${JSON.stringify({ ...params, timeWindow, max })}`
      await sequence(
        tally,
        label,
        steps,
        () => {
          if (r.chance(0.25)) {
            return { sleep: r.weighted([[3, r.int(0, 250)], [1, r.int(300, 1100)]]) }
          }
          const key = r.pick(keys)
          const method = r.weighted([[5, 'incr'], [1, 'read']])
          const run = (store) => promised(store, method, key, timeWindow, max)
          return {
            name: `${method}(${key})`,
            key,
            outcome: (a) => (a.resolved ? (a.value.current > max ? 'over' : 'within') : 'rejected'),
            a: () => run(stores[0]),
            b: () => Promise.all(stores.slice(1).map(run)),
            compare: (a, b) => {
              if (!a.resolved || !b.resolved) {
                return a.resolved === b.resolved ? undefined : ['undocumented', `${describe(a.value)} / ${describe(b.value)}`]
              }
              ends.add(a.value.ttl, 0)
              for (const result of b.value) {
                ends.add(result.ttl, 1)
              }
              for (const y of b.value) {
                if (a.value.current !== y.current || !sameMs(a.value.ttl, y.ttl)) {
                  return ['undocumented', `${describe(a.value)} / ${describe(y)}`]
                }
              }
              return undefined
            },
          }
        },
        ends,
      )
    }),
  )
  return tally
}
