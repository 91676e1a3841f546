/**
 * `goblin-redis/fastify`: @fastify/rate-limit's Redis store on GOBLIN.FWINDOW and GOBLIN.FWSTATS,
 * one command per request, no script.
 *
 * - `fastifyRateLimit(target)` defines `rateLimit` and `rateLimitRead` on `target`, an ioredis
 *   client or `Redis.prototype`: the plugin's own `RedisStore` finds them and defines no script
 *   (it skips `defineCommand` for a command the client has). Same arguments, callbacks and
 *   replies as its scripts: `rateLimit(key, timeWindow, max, continueExceeding,
 *   exponentialBackoff, cb)` gives `[current, ttl]`, `rateLimitRead(key, cb)` gives `[current,
 *   ttl]` (`[0, 0]` for a missing key, a TTL never below 0).
 * - `goblinStore(client)` is a store class for the plugin's `store` option, on ioredis or
 *   node-redis.
 *
 * `timeWindow` stays milliseconds; `continueExceeding` starts the window again on every request
 * over `max` (GOBLIN.FWINDOW's `RESTART`), and takes precedence, as in the plugin's script, over
 * `exponentialBackoff` (`BACKOFF`: the window doubles with every request over `max`).
 */
import { type RedisClient, call, checkClient } from './client.js'
import * as commands from './commands.js'

type Reply = [number, number]
type Callback = (error: Error | null, result?: Reply) => void

function window(timeWindow: unknown): number {
  const ms = Math.trunc(Number(timeWindow))
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`timeWindow must be a number of milliseconds, 0 or more, not ${String(timeWindow)}`)
  }
  return ms
}

/** The plugin's `rateLimit` script: count one request, the window as its options say. */
async function hit(client: RedisClient, key: string, timeWindow: unknown, max: unknown, continueExceeding: unknown, exponentialBackoff: unknown): Promise<Reply> {
  const limit = Math.trunc(Number(max))
  const over = continueExceeding === true || continueExceeding === 'true'
    ? { restart: true as const }
    : exponentialBackoff === true || exponentialBackoff === 'true'
      ? { backoff: true as const }
      : undefined
  const result = await call(client, commands.fwindow(key, window(timeWindow), { limit, ...(over === undefined ? {} : { over }) }))
  return [result.count, result.ttl]
}

/** The plugin's `rateLimitRead` script: the count and TTL, without counting. */
async function read(client: RedisClient, key: string): Promise<Reply> {
  const { count, ttl } = await call(client, commands.fwstats(key))
  return [count, Math.max(ttl, 0)]
}

/** Hands `promise`'s outcome to a Node-style callback. */
function settle<T>(promise: Promise<T>, callback: (error: Error | null, result?: T) => void): void {
  promise.then(
    (result) => {
      callback(null, result)
    },
    (error: unknown) => {
      callback(error instanceof Error ? error : new Error(String(error)))
    },
  )
}

/** `promise`, or, given a callback (ioredis's custom commands take either), nothing and the callback called. */
function promiseOr(promise: Promise<Reply>, callback: unknown): Promise<Reply> | undefined {
  if (typeof callback !== 'function') {
    return promise
  }
  settle(promise, callback as Callback)
  return undefined
}

/**
 * Defines `rateLimit` and `rateLimitRead` on `target` (an ioredis client, or `Redis.prototype`
 * for every client), so that @fastify/rate-limit's `RedisStore` uses Goblin's commands.
 */
export function fastifyRateLimit(target: object): void {
  if (typeof target !== 'object' || target === null) {
    throw new TypeError('fastifyRateLimit(target): target must be an ioredis client or Redis.prototype')
  }
  Object.defineProperties(target, {
    rateLimit: {
      configurable: true,
      writable: true,
      value: function rateLimit(this: RedisClient, key: string, timeWindow: unknown, max: unknown, continueExceeding: unknown, exponentialBackoff: unknown, callback?: Callback) {
        return promiseOr(hit(this, key, timeWindow, max, continueExceeding, exponentialBackoff), callback)
      },
    },
    rateLimitRead: {
      configurable: true,
      writable: true,
      value: function rateLimitRead(this: RedisClient, key: string, callback?: Callback) {
        return promiseOr(read(this, key), callback)
      },
    },
  })
}

/** What the plugin gives a store: the global or the route's settings. */
interface StoreParams {
  continueExceeding?: boolean
  exponentialBackoff?: boolean
  routeInfo?: { method?: string; url?: string }
}

type Result = { current: number; ttl: number }

/** A store class for @fastify/rate-limit's `store` option. */
export interface FastifyStore {
  incr(key: string, callback: (error: Error | null, result?: Result) => void, timeWindow: number, max: number): void
  read(key: string, callback: (error: Error | null, result?: Result) => void): void
  child(routeOptions: StoreParams): FastifyStore
}

/**
 * A store class for @fastify/rate-limit's `store` option, on `client` (ioredis or node-redis):
 * `fastify.register(rateLimit, { store: goblinStore(redis), max: 100, timeWindow: 60000 })`.
 * Keys are the plugin's own: `nameSpace` (`fastify-rate-limit-` by default), then, for a route's
 * own limit, `<METHOD><url>-`, then the request's key.
 */
export function goblinStore(client: RedisClient, options: { nameSpace?: string } = {}): new (params: StoreParams) => FastifyStore {
  checkClient(client)
  const nameSpace = options.nameSpace ?? 'fastify-rate-limit-'

  class GoblinFastifyStore implements FastifyStore {
    private readonly params: StoreParams
    private readonly prefix: string

    constructor(params: StoreParams, prefix = nameSpace) {
      this.params = params
      this.prefix = prefix
    }

    incr(key: string, callback: (error: Error | null, result?: Result) => void, timeWindow: number, max: number): void {
      const { continueExceeding, exponentialBackoff } = this.params
      settle(hit(client, this.prefix + key, timeWindow, max, continueExceeding, exponentialBackoff).then(asResult), callback)
    }

    read(key: string, callback: (error: Error | null, result?: Result) => void): void {
      settle(read(client, this.prefix + key).then(asResult), callback)
    }

    child(routeOptions: StoreParams): FastifyStore {
      const route = routeOptions.routeInfo ?? {}
      return new GoblinFastifyStore(routeOptions, `${this.prefix}${route.method ?? ''}${route.url ?? ''}-`)
    }
  }
  return GoblinFastifyStore
}

function asResult([current, ttl]: Reply): Result {
  return { current, ttl }
}
