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
import { type AcquireOptions, Lock, type LockOptions, checkCount, checkKey, checkLockClient, checkPermits } from './lock.js'
import { type Claim, take } from './waiting.js'

/** What holding one lock or permit sends: taking it (waiting or not, and giving it back), and renewing it. */
export interface Lease {
  readonly claim: Claim
  /** The renewal of a held lease, which never takes a lease that was lost. */
  readonly renewal: commands.Command<boolean>
}

/** A token lock's: GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.CAD, and GOBLIN.EXTEND ... REPLACE. */
export function tokenLease(key: string, { identifier, lockTimeout }: AcquireOptions): Lease {
  return {
    claim: {
      once: commands.lock(key, identifier, lockTimeout),
      waiting: (wait) => commands.block(key, identifier, lockTimeout, wait),
      giveBack: commands.cad(key, identifier),
    },
    renewal: commands.extend(key, identifier, lockTimeout, true),
  }
}

/**
 * A permit's (`permits` slots of `limit`, a lease of `lockTimeout` on the server's clock):
 * GOBLIN.ZWINDOW, GOBLIN.BZWINDOW, GOBLIN.CAD, and GOBLIN.ZWINDOW ... XX.
 */
export function permitLease(key: string, { identifier, lockTimeout }: AcquireOptions, limit: number, permits: number): Lease {
  const lease = lockTimeout / 1000
  const options = { permits }
  return {
    claim: {
      once: commands.zwindow(key, '*', lease, limit, identifier, options),
      waiting: (wait) => commands.bzwindow(key, lease, limit, identifier, wait, options),
      giveBack: commands.cad(key, identifier, options),
    },
    renewal: commands.zwindow(key, '*', lease, limit, identifier, { ...options, xx: true }),
  }
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

  protected _lease(): Lease {
    return tokenLease(this._key, this._acquireOptions)
  }

  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    return await take(this._client, this._lease().claim, {
      timeoutMs: this._waitMs,
      signal: abortSignal,
      waitOn: this._waitOn,
    })
  }

  protected async _refresh(): Promise<boolean> {
    return await call(this._client, this._lease().renewal)
  }

  protected async _release(): Promise<void> {
    await call(this._client, this._lease().claim.giveBack)
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

  protected _lease(): Lease {
    return permitLease(this._key, this._acquireOptions, this._limit, this._permits)
  }
}

/** redis-semaphore's `MultiSemaphore`: a holder takes `permits` of the `limit`, all or nothing. */
export class MultiSemaphore extends Semaphore {
  protected _kind = 'multi-semaphore'

  constructor(client: RedisClient, key: string, limit: number, permits: number, options?: LockOptions) {
    super(client, key, limit, options)
    this._permits = checkPermits(permits, this._limit)
  }
}
