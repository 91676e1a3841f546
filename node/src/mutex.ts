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
 *
 * A MultiSemaphore's permits are `<id>_0` to `<id>_<permits - 1>`, redis-semaphore's names
 * (`PERMITS n SEPARATOR _`).
 *
 * Every grant and refresh is sent with `FENCE` (unless `fencing: false`): `fencingToken` is the
 * grant's token.
 */
import { type RedisClient, call } from './client.js'
import { Lock, type LockOptions, checkKey, checkLockClient, checkPermits } from './lock.js'
import { take } from './waiting.js'

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

  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const grant = await take(this._client, this._grants().claim, {
      timeoutMs: this._waitMs,
      signal: abortSignal,
      waitOn: this._waitOn,
    })
    return this._granted(grant)
  }

  protected async _refresh(): Promise<boolean> {
    return this._granted(await call(this._client, this._grants().renewal))
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

  constructor(client: RedisClient, key: string, limit: number, options?: LockOptions) {
    super(client, key, options)
    this._asSemaphore(key, limit)
  }
}

/** redis-semaphore's `MultiSemaphore`: a holder takes `permits` of the `limit`, all or nothing. */
export class MultiSemaphore extends Semaphore {
  protected _kind = 'multi-semaphore'

  constructor(client: RedisClient, key: string, limit: number, permits: number, options?: LockOptions) {
    super(client, key, limit, options)
    this._permits = checkPermits(permits, this._limit)
    this._separator = '_'
  }
}
