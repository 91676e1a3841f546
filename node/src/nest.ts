/**
 * `goblin-redis/nest`: NestJS's throttler (@nestjs/throttler 6, NestJS 10 to 12) on Goblin, on
 * ioredis or node-redis.
 *
 * - `GoblinThrottlerStorage` is a `ThrottlerStorage` that decides as
 *   @nest-lab/throttler-storage-redis does, with its two keys per tracker and throttler
 *   (`{key:name}:hits`, `{key:name}:blocked`, after the storage's prefix): every hit is counted
 *   in a window of `ttl` ms armed by the first (GOBLIN.FWINDOW), blocked or not; the hit that finds
 *   the count above `limit` and no block blocks for `blockDuration` ms (`SET ... PX NX`); a hit
 *   within a block is blocked. When a block ends while its window still counts above the limit,
 *   the next hit blocks again. One round trip, `GOBLIN.FWINDOW` and `PTTL` sent together; a
 *   second (the `SET`) on the hit that blocks. `timeToExpire` and `timeToBlockExpire` are seconds,
 *   rounded up, as the guard sends them.
 * - `GoblinThrottlerGuard` is the `ThrottlerGuard` with a request's named throttlers counted all
 *   or nothing, in one GOBLIN.MFWINDOW: a request one of them refuses is counted by none of the
 *   others (with the plain guard, the throttlers before the one that refuses have counted it). The
 *   refusing throttler counts it and blocks as the storage above does, and a throttler under a
 *   block refuses. Each throttler's limit, window, block and headers are the plain guard's.
 */
import { ThrottlerGuard } from '@nestjs/throttler'
import type { ThrottlerRequest, ThrottlerStorage } from '@nestjs/throttler'
import type { ExecutionContext } from '@nestjs/common'
import { type RedisClient, call, checkClient } from './client.js'
import * as commands from './commands.js'

/** @nestjs/throttler's `ThrottlerStorageRecord`. */
export interface ThrottlerStorageRecord {
  totalHits: number
  timeToExpire: number
  isBlocked: boolean
  timeToBlockExpire: number
}

/** One throttler of a request decided together with the others. */
export interface ThrottlerWindow {
  /** The throttler's key for the request (the guard's `generateKey`, which names the throttler). */
  key: string
  ttl: number
  limit: number
  blockDuration: number
}

/** What a request's throttlers came to, together: refused by any, or counted by all. */
export interface ThrottlerDecision {
  refused: boolean
  /** Each throttler's count and the seconds until its window resets (and its block ends). */
  records: ThrottlerStorageRecord[]
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000)
}

/**
 * A `ttl` or `blockDuration`: whole milliseconds, 1 or more. @nest-lab's script fails at the
 * server on a fraction, and on a `blockDuration` of 0; it takes a `ttl` of 0 as a window that
 * ends at once (every hit counted 1): a RangeError here, never a limit that never limits.
 */
function milliseconds(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a whole number of milliseconds, 1 or more, not ${String(value)}`)
  }
  return value
}

/** A throttler's two keys: its hits, and its block. */
interface Keys {
  hits: string
  blocked: string
}

/** A `ThrottlerStorage` on Goblin. */
export class GoblinThrottlerStorage implements ThrottlerStorage {
  private readonly client: RedisClient
  /** Put before every key; `throttler:` by default. */
  readonly prefix: string

  constructor(client: RedisClient, options: { prefix?: string } = {}) {
    this.client = checkClient(client)
    this.prefix = options.prefix ?? 'throttler:'
  }

  /** One hit of one throttler (see the module's comment). */
  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const tag = `${this.prefix}{${key}:${throttlerName}}`
    const keys = { hits: `${tag}:hits`, blocked: `${tag}:blocked` }
    const [window, blockLeft] = await Promise.all([
      call(this.client, commands.fwindow(keys.hits, milliseconds(ttl, 'ttl'))),
      call(this.client, commands.pttl(keys.blocked)),
    ])
    return await this.afterHit(keys, window, blockLeft, ttl, limit, blockDuration)
  }

  /**
   * @nest-lab's decision for a hit counted in `window`, its block `blockLeft` ms from ending (-2:
   * none): blocked while the block lasts; else, above `limit`, blocked anew for `blockDuration`.
   * A block key without a TTL (never one this storage writes), or in its last millisecond, ends
   * the block and starts the window again, as @nest-lab's script has it.
   */
  private async afterHit(
    keys: Keys,
    window: commands.FixedWindow,
    blockLeft: number,
    ttl: number,
    limit: number,
    blockDuration: number,
  ): Promise<ThrottlerStorageRecord> {
    const record = (totalHits: number, expireMs: number, blockMs: number): ThrottlerStorageRecord => ({
      totalHits,
      timeToExpire: seconds(expireMs),
      isBlocked: blockMs > 0,
      timeToBlockExpire: seconds(blockMs),
    })
    if (blockLeft > 0) {
      return record(window.count, window.ttl, blockLeft)
    }
    if (blockLeft === -1 || blockLeft === 0) {
      await Promise.all([call(this.client, commands.del(keys.blocked)), call(this.client, commands.set(keys.hits, 1, ttl))])
      return record(1, ttl, 0)
    }
    if (window.count > limit) {
      const blockMs = milliseconds(blockDuration, 'blockDuration')
      await call(this.client, commands.setIfMissing(keys.blocked, 1, blockMs))
      return record(window.count, window.ttl, blockMs)
    }
    return record(window.count, window.ttl, 0)
  }

  /**
   * One hit of several throttlers, all or nothing: `GOBLIN.MFWINDOW`, with each throttler's block
   * read in the same round trip. The keys share a hash tag (the first one's), so that on a
   * cluster they are in one slot. Refused by a limit: the refusing throttlers count the hit, and
   * block, as `increment` does; the others do not count it. Refused by a block (counted by all,
   * as the limits allowed): the blocked throttlers say so.
   */
  async incrementAll(windows: readonly ThrottlerWindow[]): Promise<ThrottlerDecision> {
    const tag = `${this.prefix}{${windows[0]?.key ?? ''}}`
    const keys = windows.map((window) => ({ hits: `${tag}:${window.key}:hits`, blocked: `${tag}:${window.key}:blocked` }))
    const [result, ...blocks] = await Promise.all([
      call(
        this.client,
        commands.mfwindow(
          windows.map((window, i) => ({
            key: (keys[i] as Keys).hits,
            windowMs: milliseconds(window.ttl, 'ttl'),
            limit: Math.min(Math.floor(window.limit), Number.MAX_SAFE_INTEGER),
          })),
        ),
      ),
      ...keys.map((key) => call(this.client, commands.pttl(key.blocked))),
    ])
    if (!result.refused) {
      const records = await Promise.all(
        windows.map((window, i) =>
          this.afterHit(keys[i] as Keys, result.windows[i] as commands.FixedWindow, blocks[i] as number, window.ttl, window.limit, window.blockDuration),
        ),
      )
      return { refused: records.some((record) => record.isBlocked), records }
    }
    const hit = (i: number): Promise<ThrottlerStorageRecord> => {
      const window = windows[i] as ThrottlerWindow
      return call(this.client, commands.fwindow((keys[i] as Keys).hits, window.ttl)).then((counted) =>
        this.afterHit(keys[i] as Keys, counted, blocks[i] as number, window.ttl, window.limit, window.blockDuration),
      )
    }
    // Not the ones refusing (under their limits, and no block): left alone.
    const alone = windows.map((window, i) => (blocks[i] as number) <= 0 && (result.windows[i] as commands.FixedWindow).count + 1 <= window.limit)
    const records = await Promise.all(
      windows.map(async (_, i) => {
        const counted = result.windows[i] as commands.FixedWindow
        return alone[i] ? { totalHits: counted.count, timeToExpire: seconds(counted.ttl), isBlocked: false, timeToBlockExpire: 0 } : await hit(i)
      }),
    )
    if (!records.some((record) => record.isBlocked)) {
      // The refusing ones started afresh (their blocks had just ended): admitted after all, and
      // so counted by every throttler.
      return { refused: false, records: await Promise.all(records.map(async (record, i) => (alone[i] ? await hit(i) : record))) }
    }
    return { refused: true, records }
  }
}

/** The throttlers the plain guard handed to `handleRequest` for one request, while it collects them. */
const collecting = new WeakMap<ExecutionContext, ThrottlerRequest[]>()

/**
 * The `ThrottlerGuard` whose named throttlers are decided together, all or nothing, in one
 * GOBLIN.MFWINDOW (`APP_GUARD` with `useClass: GoblinThrottlerGuard`, and a
 * `GoblinThrottlerStorage` as the module's storage). The plain guard works out each throttler's
 * limit, window, tracker and key (skips, decorators, overrides); this one then counts them
 * together and sets the same headers.
 */
export class GoblinThrottlerGuard extends ThrottlerGuard {
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requests: ThrottlerRequest[] = []
    collecting.set(context, requests)
    try {
      await super.canActivate(context)
    } finally {
      collecting.delete(context)
    }
    return await this.decideTogether(context, requests)
  }

  protected async handleRequest(requestProps: ThrottlerRequest): Promise<boolean> {
    const requests = collecting.get(requestProps.context)
    if (requests === undefined) {
      return await super.handleRequest(requestProps)
    }
    requests.push(requestProps)
    return true
  }

  private async decideTogether(context: ExecutionContext, requests: ThrottlerRequest[]): Promise<boolean> {
    const storage = this.storageService
    if (!(storage instanceof GoblinThrottlerStorage)) {
      throw new TypeError('GoblinThrottlerGuard needs a GoblinThrottlerStorage as the throttler module\'s storage')
    }
    const { req, res } = this.getRequestResponse(context)
    const counted: { request: ThrottlerRequest; tracker: string; key: string }[] = []
    for (const request of requests) {
      const ignoreUserAgents = request.throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents
      const header = (req.headers as Record<string, unknown> | undefined)?.['user-agent']
      const agent = typeof header === 'string' ? header : ''
      if (Array.isArray(ignoreUserAgents) && ignoreUserAgents.some((pattern) => pattern.test(agent))) {
        continue
      }
      const tracker = await request.getTracker(req, context)
      counted.push({ request, tracker, key: request.generateKey(context, tracker, request.throttler.name ?? 'default') })
    }
    if (counted.length === 0) {
      return true
    }
    const decision = await storage.incrementAll(
      counted.map(({ request, key }) => ({ key, ttl: request.ttl, limit: request.limit, blockDuration: request.blockDuration })),
    )
    for (const [i, { request, tracker, key }] of counted.entries()) {
      const record = decision.records[i] as ThrottlerStorageRecord
      const name = request.throttler.name ?? 'default'
      const suffix = name === 'default' ? '' : `-${name}`
      const setHeaders = request.throttler.setHeaders ?? this.commonOptions.setHeaders ?? true
      if (record.isBlocked) {
        if (setHeaders) {
          this.setResponseHeader(res, `Retry-After${suffix}`, record.timeToBlockExpire)
        }
        await this.throwThrottlingException(context, { limit: request.limit, ttl: request.ttl, key, tracker, ...record })
      }
      if (setHeaders) {
        this.setResponseHeader(res, `${this.headerPrefix}-Limit${suffix}`, request.limit)
        this.setResponseHeader(res, `${this.headerPrefix}-Remaining${suffix}`, Math.max(0, request.limit - record.totalHits))
        this.setResponseHeader(res, `${this.headerPrefix}-Reset${suffix}`, record.timeToExpire)
      }
    }
    return true
  }
}
