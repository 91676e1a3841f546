/**
 * `goblin-redis/rate-limiter-flexible`: `RateLimiterGoblin`, a drop-in for rate-limiter-flexible's
 * `RateLimiterRedis` (a `RateLimiterStoreAbstract`, with its options and its `RateLimiterRes`),
 * on ioredis or node-redis, every operation one command:
 *
 * | operation | command |
 * |---|---|
 * | `consume` | `GOBLIN.FWINDOW key duration BY points [LIMIT points BLOCK blockDuration]` |
 * | `penalty`, `reward` | `GOBLIN.FWINDOW key duration BY ±points` |
 * | `get` | `GOBLIN.FWSTATS key` |
 * | `set`, `block` | `SET key points [PX duration]` |
 * | `delete` | `DEL key` |
 *
 * The key is rate-limiter-flexible's (`rlflx:<key>`, a decimal string with whole-second TTLs), so
 * a limiter switched over keeps its counters. The call that crosses the limit blocks the key for
 * `blockDuration` in the same command, where RateLimiterRedis sends a second one; with
 * `inMemoryBlockOnConsumed` and no `inMemoryBlockDuration` rate-limiter-flexible may block the
 * key in memory instead, so that call sends the block as RateLimiterRedis does. A
 * `customIncrTtlLuaScript` is refused: it is a script, and this limiter runs none (keep
 * RateLimiterRedis for that limiter).
 *
 * `RateLimiterGoblinUnion` consumes one key from several limiters all or nothing, in one
 * GOBLIN.MFWINDOW: a refused consume charges none of them (rate-limiter-flexible's
 * `RateLimiterUnion` charges every limiter, refused or not).
 */
import rateLimiterFlexible from 'rate-limiter-flexible'
import type { RateLimiterRes as Res, RateLimiterStoreAbstract as StoreAbstract } from 'rate-limiter-flexible'
import { type RedisClient, call } from './client.js'
import * as commands from './commands.js'

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

  /** Whether a consume's GOBLIN.FWINDOW blocks the key itself (see the module's comment). */
  private get _blocksInStore(): boolean {
    const inMemoryOnly = this.inMemoryBlockOnConsumed > 0 && !(this.inMemoryBlockDuration > 0)
    return this.blockDuration > 0 && !inMemoryOnly
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
    if (options[CONSUMING] === true && this._blocksInStore) {
      const limit = this.points
      const blockMs = Math.round(this.msBlockDuration)
      const window = await call(this.client, commands.fwindow(rlKey, windowMs, { by, limit, over: { block: blockMs } }))
      return { ...window, blocked: window.count > limit && window.count - by <= limit }
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
    if (this._rejectIfRedisNotReady && !isReady(this.client, rlKey, readOnly)) {
      throw new Error('Redis connection is not ready')
    }
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
export type UnionResult = Record<string, Res>

/**
 * Several RateLimiterGoblin limiters consumed together, all or nothing, in one GOBLIN.MFWINDOW on
 * their shared client: a consume is counted by every limiter, or, if any would go past its
 * `points`, by none. On a cluster the limiters' keys must share a slot: give keys with a hash tag
 * (`consume('{user42}')`). Resolves and rejects as RateLimiterUnion does, by `keyPrefix`.
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

  /** Consumes `points` from every limiter, or from none. */
  async consume(key: string | number, points = 1): Promise<UnionResult> {
    const by = checkPoints(points)
    const windows = this.limiters.map((limiter) => ({
      key: limiter.getKey(key),
      windowMs: Math.floor(limiter.duration) * 1000,
      limit: limiter.points,
    }))
    const result = await call((this.limiters[0] as RateLimiterGoblin).client, commands.mfwindow(windows, by))
    const byPrefix: UnionResult = {}
    result.windows.forEach((window, i) => {
      const limiter = this.limiters[i] as RateLimiterGoblin
      const refusing = window.count + by > limiter.points
      if (!result.refused || refusing) {
        byPrefix[limiter.keyPrefix] = limiter._getRateLimiterRes(windows[i]?.key as string, by, window)
      }
    })
    if (result.refused) {
      // RateLimiterUnion rejects with its limiters' RateLimiterRes, by keyPrefix, not an Error.
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw byPrefix
    }
    return byPrefix
  }
}
