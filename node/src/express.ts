/**
 * `goblin-redis/express`: a store for express-rate-limit (and so for express-slow-down, which
 * runs on it, and hono-rate-limiter, whose stores have the same shape), on ioredis or node-redis,
 * one command per operation, no script:
 *
 * | store method | command |
 * |---|---|
 * | `increment(key)` | `GOBLIN.FWINDOW prefix+key windowMs` |
 * | `decrement(key)` (`skipFailedRequests`, `skipSuccessfulRequests`) | `INCREX prefix+key BYINT -1 LBOUND 0` |
 * | `get(key)` | `GOBLIN.FWSTATS prefix+key` (undefined for a key not counted) |
 * | `resetKey(key)` | `DEL prefix+key` |
 *
 * A fixed window of the limiter's `windowMs`, armed by the first hit and never moved, as
 * rate-limit-redis counts; `resetTime` is the server's TTL from now. A decrement takes one off a
 * window that is still counting, never below 0, and makes no key: a request counted in a window
 * that has since ended or been reset is not taken off the next one (rate-limit-redis's `DECR`
 * would leave -1 there, one request more for the next window).
 */
import { type RedisClient, call, checkClient } from './client.js'
import * as commands from './commands.js'

/** express-rate-limit's `ClientRateLimitInfo`. */
export interface ClientRateLimitInfo {
  totalHits: number
  resetTime: Date | undefined
}

/** The store's options. */
export interface GoblinStoreOptions {
  /** An ioredis or node-redis client (one server or a cluster). */
  client: RedisClient
  /** Put before every key; `rl:` by default (rate-limit-redis's). Give each limiter its own. */
  prefix?: string
}

/** An express-rate-limit `Store` on Goblin. */
export class GoblinStore {
  /** The keys' prefix (express-rate-limit checks that no two limiters share a store and prefix). */
  readonly prefix: string
  /** The counts live in the server, shared by every process. */
  readonly localKeys = false
  private readonly client: RedisClient
  private windowMs = 60_000

  constructor(options: GoblinStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('new GoblinStore({ client, prefix }): options are required')
    }
    if ('resetExpiryOnChange' in options) {
      throw new TypeError('GoblinStore: the resetExpiryOnChange option was removed in rate-limit-redis v6, and GoblinStore has none')
    }
    this.client = checkClient(options.client, 'client')
    if (options.prefix !== undefined && typeof options.prefix !== 'string') {
      throw new TypeError(`prefix must be a string, not ${String(options.prefix)}`)
    }
    this.prefix = options.prefix ?? 'rl:'
  }

  /**
   * express-rate-limit calls this once with its options: the window is `windowMs`, a whole number
   * of milliseconds, 1 or more. Another is kept, and each increment rejects with a RangeError, as
   * each of rate-limit-redis's fails on the server (its `SET ... PX` takes no other).
   */
  init(options: { windowMs: number }): void {
    this.windowMs = options.windowMs
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const window = await call(this.client, commands.fwstats(this.prefix + key))
    return window.ttl === -2 ? undefined : info(window)
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const windowMs = this.windowMs
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) {
      throw new RangeError(`windowMs must be a whole number of milliseconds, 1 or more, not ${String(windowMs)}`)
    }
    return info(await call(this.client, commands.fwindow(this.prefix + key, windowMs)))
  }

  async decrement(key: string): Promise<void> {
    await call(this.client, commands.decrementToZero(this.prefix + key))
  }

  async resetKey(key: string): Promise<void> {
    await call(this.client, commands.del(this.prefix + key))
  }
}

function info({ count, ttl }: commands.FixedWindow): ClientRateLimitInfo {
  return { totalHits: count, resetTime: ttl >= 0 ? new Date(Date.now() + ttl) : undefined }
}
