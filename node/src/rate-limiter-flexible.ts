/**
 * `goblin-redis/rate-limiter-flexible`: `RateLimiterGoblin`, a drop-in for rate-limiter-flexible's
 * `RateLimiterRedis` (a `RateLimiterStoreAbstract`, with its options and its `RateLimiterRes`),
 * on ioredis or node-redis, every operation one command:
 *
 * | operation | command |
 * |---|---|
 * | `consume` | `GOBLIN.FWINDOW key duration [BY points] [LIMIT points BLOCK blockDuration]` (`BY` for points other than 1; the limit and block only with `blockDuration`, the limit `blockOnConsumed - 1` where it is set) |
 * | `penalty`, `reward` | `GOBLIN.FWINDOW key duration BY ±points` |
 * | `get` | `GOBLIN.FWSTATS key` |
 * | `set`, `block` | `SET key points [PX duration]` |
 * | `delete` | `DEL key` |
 *
 * The key is rate-limiter-flexible's (`rlflx:<key>`, a decimal string with whole-second TTLs), so
 * a limiter switched over keeps its counters. The call that crosses the limit blocks the key for
 * `blockDuration` (whole seconds, as RateLimiterRedis's `SET ... EX` has it) in the same command,
 * where RateLimiterRedis sends a second one; with `inMemoryBlockOnConsumed` and no
 * `inMemoryBlockDuration` rate-limiter-flexible may block the key in memory instead, and a
 * `blockDuration` under a second is a key without expiry in RateLimiterRedis: those calls send the
 * block as RateLimiterRedis does. A server without the module is `GoblinModuleError`, also with an
 * `insuranceLimiter` (never served from its memory). A
 * `customIncrTtlLuaScript` is refused: it is a script, and this limiter runs none (keep
 * RateLimiterRedis for that limiter).
 *
 * `RateLimiterGoblinUnion` consumes one key from several limiters all or nothing, in one
 * GOBLIN.MFWINDOW: a refused consume charges none of the limiters that would admit it
 * (rate-limiter-flexible's `RateLimiterUnion` charges every limiter, refused or not); the ones
 * that refuse it count it as their own `consume` does.
 */
import rateLimiterFlexible from 'rate-limiter-flexible'
import type { RateLimiterRes as Res, RateLimiterStoreAbstract as StoreAbstract } from 'rate-limiter-flexible'
import { type RedisClient, call } from './client.js'
import * as commands from './commands.js'
import { GoblinModuleError } from './errors.js'

const { RateLimiterRes } = rateLimiterFlexible
/** The store base class, which rate-limiter-flexible's index does not export: RateLimiterRedis's parent. */
const RateLimiterStoreAbstract = Object.getPrototypeOf(rateLimiterFlexible.RateLimiterRedis) as typeof StoreAbstract

/** RateLimiterRedis's options (rate-limiter-flexible's `IRateLimiterRedisOptions`). */
export interface RateLimiterGoblinOptions {
  /** An ioredis or node-redis client (one server or a cluster). */
  storeClient: RedisClient
  points?: number
  duration?: number
  keyPrefix?: string
  execEvenly?: boolean
  execEvenlyMinDelayMs?: number
  blockDuration?: number
  /** rate-limiter-flexible 11.4's: the count at which the key is blocked for `blockDuration` (from `points` on by default). */
  blockOnConsumed?: number
  inMemoryBlockOnConsumed?: number
  inMemoryBlockDuration?: number
  insuranceLimiter?: unknown
  /** Reject at once (or use the insurance limiter) while the client is not connected. */
  rejectIfRedisNotReady?: boolean
  /** Accepted and unused: the client's library is recognised by its shape. */
  useRedisPackage?: boolean
  /** Refused: node-redis 3's callback API. */
  useRedis3AndLowerPackage?: boolean
  /** Refused: a script; RateLimiterGoblin runs none. */
  customIncrTtlLuaScript?: string
}

type StoreOptions = ConstructorParameters<typeof RateLimiterStoreAbstract>[0]

/** What `_upsert` and `_get` resolve with: the window, and whether the consume blocked the key. */
interface StoreResult extends commands.FixedWindow {
  blocked?: boolean
}

/** Marks a consume's options (so its `_upsert` counts against the limit). */
const CONSUMING = Symbol('goblin-redis: consuming')
/** Marks the options of the block rate-limiter-flexible sends after a consume that GOBLIN.FWINDOW blocked already. */
const BLOCKED = Symbol('goblin-redis: blocked by GOBLIN.FWINDOW')

type Options = Record<string | symbol, unknown>

/** rate-limiter-flexible's protected hooks, which its types do not declare. */
interface StoreHooks {
  _consume(key: string | number, points: number, options: Options): Promise<Res>
  /** rate-limiter-flexible 11.4's `blockOnConsumed`: whether it is set (above `points`); absent before 11.4. */
  _isBlockOnConsumedEnabled?(): boolean
  _handleError(error: unknown, funcName: string, resolve: (res: unknown) => void, reject: (reason: unknown) => void, params: unknown[]): void
  getInMemoryBlockMsBeforeExpire(rlKey: string): number
  _afterConsume(
    resolve: (res: Res) => void,
    reject: (reason: unknown) => void,
    rlKey: string,
    changedPoints: number,
    storeResult: StoreResult,
    options?: Options,
  ): void
}

const hooks = RateLimiterStoreAbstract.prototype as unknown as StoreHooks

/** rate-limiter-flexible's checks of a number of points, with its messages. */
function checkPoints(points: unknown): number {
  if (typeof points === 'string') {
    if (!/^[1-9][0-9]*$/.test(points)) {
      throw new Error('Consuming string different than integer values is not supported by this package')
    }
    return Number(points)
  }
  if (!Number.isInteger(points)) {
    throw new Error('Consuming decimal number of points is not supported by this package')
  }
  return points as number
}

/**
 * The integer limit a count is compared with, for a limit of `points` (any finite number): a
 * whole count is above `points` exactly when it is above `Math.floor(points)`. Kept within safe
 * integers, which no count reaches.
 */
function integerLimit(points: number): number {
  return Math.min(Math.max(Math.floor(points), Number.MIN_SAFE_INTEGER), Number.MAX_SAFE_INTEGER)
}

/** RateLimiterRedis on Goblin's commands. */
export class RateLimiterGoblin extends RateLimiterStoreAbstract {
  declare client: RedisClient
  declare inMemoryBlockOnConsumed: number
  declare inMemoryBlockDuration: number
  private readonly _rejectIfRedisNotReady: boolean

  constructor(options: RateLimiterGoblinOptions) {
    super(options as unknown as StoreOptions)
    if (options.customIncrTtlLuaScript !== undefined) {
      throw new TypeError(
        'RateLimiterGoblin runs no script: customIncrTtlLuaScript is not supported (use RateLimiterRedis for a limiter with its own script)',
      )
    }
    if (options.useRedis3AndLowerPackage) {
      throw new TypeError('RateLimiterGoblin needs ioredis, or node-redis 4 or later: useRedis3AndLowerPackage is not supported')
    }
    if (options.storeClient === undefined) {
      throw new TypeError('storeClient is not set')
    }
    if (typeof options.storeClient !== 'object' || options.storeClient === null) {
      throw new TypeError('storeClient must be an ioredis or node-redis client')
    }
    this.client = options.storeClient
    this._rejectIfRedisNotReady = !!options.rejectIfRedisNotReady
  }

  _consume(key: string | number, points = 1, options: Options = {}): Promise<Res> {
    return hooks._consume.call(this, key, points, { ...options, [CONSUMING]: true })
  }

  _afterConsume(...[resolve, reject, rlKey, changedPoints, storeResult, options = {}]: Parameters<StoreHooks['_afterConsume']>): void {
    const marked = storeResult.blocked === true ? { ...options, [BLOCKED]: true } : options
    hooks._afterConsume.call(this, resolve, reject, rlKey, changedPoints, storeResult, marked)
  }

  /**
   * A server without the module is `GoblinModuleError`, never a store failure that the
   * `insuranceLimiter` would serve from its own memory: it is a deployment to fix, not an outage.
   */
  _handleError(error: unknown, funcName: string, resolve: (res: unknown) => void, reject: (reason: unknown) => void, params: unknown[]): void {
    if (error instanceof GoblinModuleError) {
      reject(error)
      return
    }
    hooks._handleError.call(this, error, funcName, resolve, reject, params)
  }

  /**
   * The block a consume's GOBLIN.FWINDOW sets itself (see the module's comment), in whole seconds
   * as RateLimiterRedis's `SET ... EX` has it (`blockDuration` 1.5 blocks 1 s); 0 when it sets
   * none: no `blockDuration`, a block in memory instead, or one under a second, which
   * RateLimiterRedis's `EX 0` makes a key without expiry (the block then goes as its own SET).
   */
  private get _storeBlockMs(): number {
    const inMemoryOnly = this.inMemoryBlockOnConsumed > 0 && !(this.inMemoryBlockDuration > 0)
    if (!(this.blockDuration > 0) || inMemoryOnly) {
      return 0
    }
    return Math.floor(this.blockDuration) * 1000
  }

  /** The count above which a consume blocks the key: `points`, or `blockOnConsumed` less one where set (11.4). */
  private get _blockLimit(): number {
    const enabled = typeof hooks._isBlockOnConsumedEnabled === 'function' && hooks._isBlockOnConsumedEnabled.call(this)
    return enabled ? integerLimit((this as unknown as { blockOnConsumed: number }).blockOnConsumed - 1) : integerLimit(this.points)
  }

  async _upsert(rlKey: string, points: unknown, msDuration: number, forceExpire = false, options: Options = {}): Promise<StoreResult> {
    const by = checkPoints(points)
    this._checkReady(rlKey, false)
    const windowMs = Math.floor(msDuration / 1000) * 1000
    if (forceExpire) {
      if (options[BLOCKED] === true) {
        return { count: by, ttl: windowMs } // GOBLIN.FWINDOW blocked it already
      }
      await call(this.client, commands.set(rlKey, by, windowMs))
      return { count: by, ttl: windowMs > 0 ? windowMs : -1 }
    }
    const blockMs = this._storeBlockMs
    if (options[CONSUMING] === true && blockMs > 0) {
      const limit = this._blockLimit
      const window = await call(this.client, commands.fwindow(rlKey, windowMs, { by, limit, over: { block: blockMs } }))
      // Blocked by the server: its TTL is the block's (read so, not from the count, which past
      // 2^53 is a rounded JavaScript number: there the block rate-limiter-flexible then asks for
      // is sent, as RateLimiterRedis sends it).
      return { ...window, blocked: window.count > limit && window.ttl === blockMs }
    }
    return await call(this.client, commands.fwindow(rlKey, windowMs, { by }))
  }

  async _get(rlKey: string): Promise<StoreResult | null> {
    this._checkReady(rlKey, true)
    const window = await call(this.client, commands.fwstats(rlKey))
    return window.ttl === -2 ? null : window
  }

  async _delete(rlKey: string): Promise<boolean> {
    return await call(this.client, commands.del(rlKey))
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, result: StoreResult): Res {
    const remaining = Math.max(this.points - result.count, 0)
    return new RateLimiterRes(remaining, result.ttl, result.count, result.count === changedPoints)
  }

  /** `rejectIfRedisNotReady`: RateLimiterRedis's checks of each client library's state. */
  private _checkReady(rlKey: string, readOnly: boolean): void {
    if (!this._isReady(rlKey, readOnly)) {
      throw new Error('Redis connection is not ready')
    }
  }

  /** @internal Whether a call may go to the client: always, without `rejectIfRedisNotReady`. */
  _isReady(rlKey: string, readOnly: boolean): boolean {
    return !this._rejectIfRedisNotReady || isReady(this.client, rlKey, readOnly)
  }
}

interface ReadyShape {
  status?: string
  isReady?: boolean | (() => boolean)
  isOpen?: boolean
  _slots?: { getClient(key: string, readOnly: boolean): { isReady?: boolean } | undefined }
}

/** Whether the client is connected, as RateLimiterRedis asks ioredis, node-redis 3, 4+ and 4+ clusters. */
function isReady(client: unknown, rlKey: string, readOnly: boolean): boolean {
  const shape = client as ReadyShape
  if (shape.status) {
    return shape.status === 'ready'
  }
  if (typeof shape.isReady === 'function') {
    return shape.isReady()
  }
  if (typeof shape.isReady === 'boolean') {
    return shape.isReady
  }
  if (shape._slots && typeof shape._slots.getClient === 'function') {
    if (typeof shape.isOpen === 'boolean' && !shape.isOpen) {
      return false
    }
    try {
      return shape._slots.getClient(rlKey, readOnly)?.isReady === true
    } catch {
      return false
    }
  }
  return true
}

/** What a union's consume resolves (every limiter's) or rejects with (the refusing limiters'): RateLimiterUnion's shape. */
export type UnionResult = Record<string, Res | Error>

/**
 * Several RateLimiterGoblin limiters consumed together in one GOBLIN.MFWINDOW on their shared
 * client, all or nothing for the limiters that would admit the consume: it is counted by every
 * limiter, or, if any would go past its `points`, by none of the others. Each refusing limiter
 * counts it as its own `consume` would (RateLimiterUnion's way), so its `RateLimiterRes`, its
 * `blockDuration`, `blockOnConsumed`, block in memory and `insuranceLimiter` are its own; a limiter
 * blocked in memory refuses without the store. On a cluster the limiters' keys must share a slot:
 * give keys with a hash tag (`consume('{user42}')`). Resolves and rejects as RateLimiterUnion does,
 * by `keyPrefix`.
 */
export class RateLimiterGoblinUnion {
  private readonly limiters: RateLimiterGoblin[]

  constructor(...limiters: RateLimiterGoblin[]) {
    if (limiters.length < 1) {
      throw new TypeError('RateLimiterGoblinUnion: at least one limiter have to be passed')
    }
    for (const limiter of limiters) {
      if (!(limiter instanceof RateLimiterGoblin)) {
        throw new TypeError('RateLimiterGoblinUnion: every limiter must be a RateLimiterGoblin')
      }
      if (limiter.client !== (limiters[0] as RateLimiterGoblin).client) {
        throw new TypeError('RateLimiterGoblinUnion: every limiter must use the same storeClient')
      }
    }
    this.limiters = limiters
  }

  /** Consumes `points` from every limiter, or from none but those that refuse it. */
  async consume(key: string | number, points = 1): Promise<UnionResult> {
    const all = this.limiters.map(() => true)
    const keys = this.limiters.map((limiter) => limiter.getKey(key))
    let by: number
    try {
      by = checkPoints(points)
    } catch {
      // Points the limiters refuse (1.5, '1.5'): each refuses them on its own, its insurance
      // limiter answering if it has one, as in RateLimiterUnion.
      return await this.eachOnItsOwn(key, points, all, {})
    }
    if (!this.limiters.every((limiter, i) => limiter._isReady(keys[i] as string, false))) {
      // `rejectIfRedisNotReady` and the client not ready: each limiter decides on its own.
      return await this.eachOnItsOwn(key, by, all, {})
    }
    // Blocked in memory: refused there, as the limiter's own consume refuses, nothing counted.
    const inMemory = this.limiters.map((limiter, i) => hooks.getInMemoryBlockMsBeforeExpire.call(limiter, keys[i] as string))
    if (inMemory.some((ms) => ms > 0)) {
      return await this.refusedInMemory(key, by, inMemory)
    }
    const windows = this.limiters.map((limiter, i) => ({
      key: keys[i] as string,
      windowMs: Math.floor(limiter.duration) * 1000,
      limit: integerLimit(limiter.points),
    }))
    let result: commands.MfwindowResult
    try {
      result = await call((this.limiters[0] as RateLimiterGoblin).client, commands.mfwindow(windows, by))
    } catch (error) {
      if (error instanceof GoblinModuleError) {
        throw error
      }
      return await this.eachOnItsOwn(key, by, all, { failed: error })
    }
    if (result.refused) {
      // The refusing limiters count it as their own consume does; the others are left alone.
      const refusing = result.windows.map((window, i) => window.count + by > (windows[i] as { limit: number }).limit)
      return await this.eachOnItsOwn(key, by, refusing, { refused: true })
    }
    const settled = await Promise.all(
      this.limiters.map(
        (limiter, i) =>
          new Promise<{ res: Res | Error; rejected: boolean }>((resolve) => {
            limiter._afterConsume(
              (res) => {
                resolve({ res, rejected: false })
              },
              (reason) => {
                resolve({ res: reason as Res | Error, rejected: true })
              },
              keys[i] as string,
              by,
              result.windows[i] as commands.FixedWindow,
            )
          }),
      ),
    )
    return unionOf(this.limiters, settled)
  }

  /**
   * A consume that a limiter blocked in memory refuses (`inMemory`: each limiter's block, ms): it
   * refuses as its own `consume` does, without the store; each other limiter that would refuse it
   * too (its count, read, plus `points` above its `points`) counts it as its own `consume` does,
   * and blocks, as in RateLimiterUnion; the others are not charged.
   */
  private async refusedInMemory(key: string | number, points: number, inMemory: number[]): Promise<UnionResult> {
    const settled = await Promise.all(
      this.limiters.map(async (limiter, i) => {
        const ms = inMemory[i] as number
        if (ms > 0) {
          return { res: new RateLimiterRes(0, ms), rejected: true }
        }
        // Its count now (undefined: the store out of reach, which its own consume then meets as
        // RateLimiterUnion's does, insurance and all).
        let count: number | undefined
        try {
          count = (await limiter.get(key))?.consumedPoints ?? 0
        } catch (error) {
          if (error instanceof GoblinModuleError) {
            throw error
          }
        }
        if (count !== undefined && count + points <= limiter.points) {
          return undefined
        }
        return await limiter.consume(key, points).then(
          (res) => ({ res, rejected: false }),
          (reason: unknown) => ({ res: reason as Res | Error, rejected: true }),
        )
      }),
    )
    // The limiters that were asked and admitted it (another client's counts moved meanwhile) are
    // left out of the rejection, as RateLimiterUnion leaves out the ones that resolved.
    return unionOf(this.limiters, settled)
  }

  /**
   * The limiters `chosen` consume `points` each on its own (its own `consume`: store, blocks,
   * insurance), as RateLimiterUnion has every limiter do; a store failure `failed` of the union's
   * command already, it goes to each chosen limiter's insurance, or is its rejection. `refused`:
   * the union's command found the consume refused, so it is refused whatever the limiters say.
   */
  private async eachOnItsOwn(
    key: string | number,
    points: unknown,
    chosen: boolean[],
    { failed, refused = false }: { failed?: unknown; refused?: boolean },
  ): Promise<UnionResult> {
    const settled = await Promise.all(
      this.limiters.map(async (limiter, i) => {
        if (!chosen[i]) {
          return undefined
        }
        const insurance = (limiter as unknown as { insuranceLimiter?: { consume(key: string | number, points: unknown): Promise<Res> } }).insuranceLimiter
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the store's own failure, passed on as it is
        const consuming = failed === undefined ? limiter.consume(key, points as number) : (insurance?.consume(key, points) ?? Promise.reject(failed))
        return await consuming.then(
          (res) => ({ res, rejected: false }),
          (reason: unknown) => ({ res: reason as Res | Error, rejected: true }),
        )
      }),
    )
    if (refused && settled.every((one) => one === undefined || !one.rejected)) {
      // Admitted by its own consume after all (another client's counts moved meanwhile): the
      // union was refused all the same, and the others were not counted.
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- RateLimiterUnion rejects with its limiters' results by keyPrefix
      throw unionOf(this.limiters, settled.map((one) => one && { ...one, rejected: true }))
    }
    return unionOf(this.limiters, settled)
  }
}

/** RateLimiterUnion's outcome: every limiter's result by `keyPrefix`, or, if any was rejected, the rejected ones' (thrown). */
function unionOf(limiters: RateLimiterGoblin[], settled: ({ res: Res | Error; rejected: boolean } | undefined)[]): UnionResult {
  const rejected = settled.some((one) => one?.rejected === true)
  const outcome: UnionResult = {}
  settled.forEach((one, i) => {
    if (one !== undefined && (!rejected || one.rejected)) {
      outcome[(limiters[i] as RateLimiterGoblin).keyPrefix] = one.res
    }
  })
  if (rejected) {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- RateLimiterUnion rejects with its limiters' results by keyPrefix
    throw outcome
  }
  return outcome
}
