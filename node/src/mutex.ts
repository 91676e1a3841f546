/**
 * redis-semaphore's `Mutex`, `Semaphore` and `MultiSemaphore`, on Goblin's commands: the same
 * constructors, options, methods, errors and keys, on ioredis or node-redis.
 *
 * | operation | Mutex (`mutex:<key>`, a string) | Semaphore, MultiSemaphore (`semaphore:<key>`, a sorted set) |
 * |---|---|---|
 * | acquire, not waiting | GOBLIN.LOCK key id lockTimeout | GOBLIN.ZWINDOW key * lease limit id [PERMITS n] |
 * | acquire, waiting in line | GOBLIN.BLOCK key id lockTimeout wait | GOBLIN.BZWINDOW key lease limit id wait [PERMITS n] |
 * | refresh | GOBLIN.EXTEND key id lockTimeout REPLACE | GOBLIN.ZWINDOW key * lease limit id [PERMITS n] XX |
 * | release | GOBLIN.CAD key id | GOBLIN.CAD key id [PERMITS n] |
 */
import { type RedisClient, call } from './client.js'
import * as commands from './commands.js'
import { Lock, type LockOptions, checkCount, checkKey, checkLockClient } from './lock.js'
import { type Claim, take } from './waiting.js'

/** A lease of `lockTimeout` ms as a window of seconds (millisecond precision). */
export function leaseSeconds(lockTimeout: number): number {
  return lockTimeout / 1000
}

/** redis-semaphore's `Mutex`: one holder of `mutex:<key>`, a string holding its identifier with a PX lease. */
export class Mutex extends Lock {
  protected _kind = 'mutex'
  protected _key: string
  protected _client: RedisClient

  constructor(client: RedisClient, key: string, options?: LockOptions) {
    super(options)
    this._client = checkLockClient(client)
    this._key = `mutex:${checkKey(key)}`
  }

  protected _claim(): Claim {
    const { lockTimeout, identifier } = this._acquireOptions
    return {
      once: commands.lock(this._key, identifier, lockTimeout),
      waiting: (wait) => commands.block(this._key, identifier, lockTimeout, wait),
      giveBack: commands.cad(this._key, identifier),
    }
  }

  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    return await take(this._client, this._claim(), { timeoutMs: this._waitMs, signal: abortSignal, waitOn: this._waitOn })
  }

  protected async _refresh(): Promise<boolean> {
    const { lockTimeout, identifier } = this._acquireOptions
    return await call(this._client, commands.extend(this._key, identifier, lockTimeout, true))
  }

  protected async _release(): Promise<void> {
    await call(this._client, commands.cad(this._key, this._identifier))
  }
}

/**
 * redis-semaphore's `Semaphore`: at most `limit` holders of `semaphore:<key>`, a sorted set of
 * their identifiers scored by the server's clock (seconds), each a lease of `lockTimeout`.
 */
export class Semaphore extends Mutex {
  protected _kind = 'semaphore'
  protected _limit: number
  protected _permits = 1

  constructor(client: RedisClient, key: string, limit: number, options?: LockOptions) {
    super(client, key, options)
    this._limit = checkCount(limit, 'limit')
    this._key = `semaphore:${key}`
  }

  protected _claim(): Claim {
    const lease = leaseSeconds(this._acquireOptions.lockTimeout)
    const { identifier } = this._acquireOptions
    const permits = { permits: this._permits }
    return {
      once: commands.zwindow(this._key, '*', lease, this._limit, identifier, permits),
      waiting: (wait) => commands.bzwindow(this._key, lease, this._limit, identifier, wait, permits),
      giveBack: commands.cad(this._key, identifier, permits),
    }
  }

  protected async _refresh(): Promise<boolean> {
    const lease = leaseSeconds(this._acquireOptions.lockTimeout)
    const renewal = commands.zwindow(this._key, '*', lease, this._limit, this._identifier, {
      permits: this._permits,
      xx: true,
    })
    return await call(this._client, renewal)
  }

  protected async _release(): Promise<void> {
    await call(this._client, commands.cad(this._key, this._identifier, { permits: this._permits }))
  }
}

/** redis-semaphore's `MultiSemaphore`: a holder takes `permits` of the `limit`, all or nothing. */
export class MultiSemaphore extends Semaphore {
  protected _kind = 'multi-semaphore'

  constructor(client: RedisClient, key: string, limit: number, permits: number, options?: LockOptions) {
    super(client, key, limit, options)
    this._permits = checkCount(permits, 'permits')
    if (this._permits > this._limit) {
      throw new RangeError(`"permits" (${this._permits}) must not exceed "limit" (${this._limit}): it could never be acquired`)
    }
  }
}
