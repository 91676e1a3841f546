/**
 * `goblin-redis/nest`: NestJS's throttler (@nestjs/throttler 6) on Goblin, on ioredis or
 * node-redis.
 *
 * - `GoblinThrottlerStorage` is a `ThrottlerStorage`: each `increment(key, ttl, limit,
 *   blockDuration, throttlerName)` is one `GOBLIN.FWINDOW key ttl LIMIT limit BLOCK
 *   blockDuration`: the window counts `ttl` ms from the first hit; the hit that crosses the limit
 *   blocks the key for `blockDuration` ms, and the hits after it, within the block, are blocked
 *   too. `timeToExpire` and `timeToBlockExpire` are seconds, rounded up, as the guard sends them.
 * - `GoblinThrottlerGuard` is the `ThrottlerGuard` with a request's named throttlers decided all
 *   or nothing, in one GOBLIN.MFWINDOW: a request one of them refuses is counted by none (with
 *   the plain guard, the throttlers before the one that refuses have counted it). Each
 *   throttler's limit, window and headers are the plain guard's. A refused request is not
 *   counted, so it does not block: it is refused until the window that refused it resets, which
 *   `Retry-After` says.
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
  key: string
  ttl: number
  limit: number
}

/** What a request's throttlers came to, together: refused by any, or counted by all. */
export interface ThrottlerDecision {
  refused: boolean
  /** Each throttler's count and the seconds until its window resets. */
  records: ThrottlerStorageRecord[]
}

function seconds(ms: number): number {
  return ms > 0 ? Math.ceil(ms / 1000) : 0
}

function whole(value: number, what: string, least: number): number {
  if (!Number.isFinite(value) || value < least) {
    throw new RangeError(`${what} must be a number of at least ${least}, not ${String(value)}`)
  }
  return Math.ceil(value)
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

  /** One hit of one throttler: `GOBLIN.FWINDOW key ttl LIMIT limit [BLOCK blockDuration]`. */
  async increment(key: string, ttl: number, limit: number, blockDuration: number, _throttlerName: string): Promise<ThrottlerStorageRecord> {
    const windowMs = whole(ttl, 'ttl', 0)
    const max = Math.floor(limit)
    const blockMs = whole(blockDuration, 'blockDuration', 0)
    const over = blockMs > 0 ? { block: blockMs } : undefined
    const { count, ttl: left } = await call(
      this.client,
      commands.fwindow(this.prefix + key, windowMs, { limit: max, ...(over === undefined ? {} : { over }) }),
    )
    const isBlocked = count > max
    return { totalHits: count, timeToExpire: seconds(left), isBlocked, timeToBlockExpire: isBlocked ? seconds(left) : 0 }
  }

  /**
   * One hit of several throttlers, all or nothing: `GOBLIN.MFWINDOW`. The keys share a hash tag
   * (the first one's), so that on a cluster they are in one slot.
   */
  async incrementAll(windows: readonly ThrottlerWindow[]): Promise<ThrottlerDecision> {
    const tag = windows[0]?.key ?? ''
    const result = await call(
      this.client,
      commands.mfwindow(
        windows.map((window) => ({
          key: `${this.prefix}{${tag}}:${window.key}`,
          windowMs: whole(window.ttl, 'ttl', 0),
          limit: Math.floor(window.limit),
        })),
      ),
    )
    const records = result.windows.map(({ count, ttl }, i) => {
      const refusing = result.refused && count + 1 > Math.floor((windows[i] as ThrottlerWindow).limit)
      return {
        totalHits: count,
        timeToExpire: seconds(ttl),
        isBlocked: refusing,
        timeToBlockExpire: refusing ? seconds(ttl) : 0,
      }
    })
    return { refused: result.refused, records }
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
      counted.map(({ request, key }) => ({ key, ttl: request.ttl, limit: request.limit })),
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
