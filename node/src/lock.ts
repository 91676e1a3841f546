/**
 * What every lock and semaphore shares: redis-semaphore 5.7.0's `Lock`, its options, methods and
 * errors, over Goblin's commands. Acquiring waits in line inside the server (`waiting.ts`), first
 * come, first served, with no sleep loop: `retryInterval` is accepted and unused. Leases run on
 * the server's clock. A refresh never re-admits a holder that lost its lease: `onLockLost` fires
 * instead.
 */
import { randomUUID } from 'node:crypto'
import { type RedisClient, checkClient } from './client.js'
import * as commands from './commands.js'
import { LostLockError, TimeoutError } from './errors.js'
import { type Claim } from './waiting.js'

/** redis-semaphore's timing options (milliseconds). */
export interface TimeoutOptions {
  /** How long a lease lasts unless refreshed; 10000 by default. */
  lockTimeout?: number
  /** How long `acquire` waits in line; 10000 by default. */
  acquireTimeout?: number
  /** 1: `acquire` tries once and never waits; more (Infinity by default): it waits up to `acquireTimeout`. */
  acquireAttemptsLimit?: number
  /** Accepted and unused: a waiter waits in the server's line, it does not poll. */
  retryInterval?: number
  /** How often the lease is refreshed while held (0: never); 0.8 × `lockTimeout` by default. */
  refreshInterval?: number
}

/** redis-semaphore's `onLockLost`: called with the lock as `this`, its lease lost. */
export type LockLostCallback = (this: Lock, error: LostLockError) => void

/** redis-semaphore's lock options, and where a waiter waits. */
export interface LockOptions extends TimeoutOptions {
  /** @deprecated redis-semaphore's: use `identifier` and `acquiredExternally: true`. */
  externallyAcquiredIdentifier?: string
  /** @deprecated redis-semaphore's: the identifier is `${randomUUID()}-${identifierSuffix}`. */
  identifierSuffix?: string
  /** The holder's identifier (its token, or its member); `crypto.randomUUID()` by default. */
  identifier?: string
  /** With `identifier`: the lock is held already (another process took it); `acquire` refreshes it. */
  acquiredExternally?: true
  /**
   * Whether each grant carries a fencing token (`fencingToken`), sent as `FENCE`; true by default.
   * false sends none: for a key holding a `}` and no hash tag, where the server can keep no token
   * (it refuses `FENCE` there), or to spare the token's cost. The Redlock classes send none.
   */
  fencing?: boolean
  /** Called when a refresh finds the lease lost; by default it throws (an unhandled rejection). */
  onLockLost?: LockLostCallback
  /**
   * A client for the waits instead of a connection of the package's own: every wait of this
   * lock is sent there, and holds that connection while it waits (give each waiter its own).
   * The Redlock classes take one per server instead (`RedlockOptions`).
   */
  waitOn?: RedisClient
}

/** redis-semaphore's defaults. */
export const defaultTimeoutOptions = {
  lockTimeout: 10000,
  acquireTimeout: 10000,
  acquireAttemptsLimit: Number.POSITIVE_INFINITY,
  retryInterval: 10,
}

/** The timing of one lock, checked. */
export interface AcquireOptions {
  identifier: string
  lockTimeout: number
  acquireTimeout: number
  acquireAttemptsLimit: number
  retryInterval: number
}

const REFRESH_INTERVAL_COEF = 0.8

/** The largest lease in ms (GOBLIN.GCRA's bound on a period, far below any overflow). */
const LONGEST_LEASE_MS = 1e15

function defaultOnLockLost(error: LostLockError): never {
  throw error
}

function number(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`${what} must be a number of milliseconds, not ${String(value)}`)
  }
  return value
}

/** A lease: a whole number of milliseconds, 1 or more. */
export function checkLease(value: unknown, what = 'lockTimeout'): number {
  const ms = number(value, what)
  if (!Number.isInteger(ms) || ms < 1 || ms > LONGEST_LEASE_MS) {
    throw new RangeError(`${what} must be a whole number of milliseconds, from 1 to ${LONGEST_LEASE_MS}, not ${ms}`)
  }
  return ms
}

function checkSpan(value: unknown, what: string, infinite: boolean): number {
  const ms = number(value, what)
  if (ms < 0 || (!infinite && !Number.isFinite(ms))) {
    throw new RangeError(`${what} must be ${infinite ? '0 or more' : 'a finite number, 0 or more'}, not ${ms}`)
  }
  return ms
}

function checkAttempts(value: unknown): number {
  const attempts = number(value, 'acquireAttemptsLimit')
  if (!(attempts >= 1) || (Number.isFinite(attempts) && !Number.isInteger(attempts))) {
    throw new RangeError(`acquireAttemptsLimit must be a whole number, 1 or more, or Infinity, not ${attempts}`)
  }
  return attempts
}

/** redis-semaphore's `"key" is required` and `"key" must be a string`. */
export function checkKey(key: unknown): string {
  if (!key) {
    throw new TypeError('"key" is required')
  }
  if (typeof key !== 'string') {
    throw new TypeError('"key" must be a string')
  }
  return key
}

/** redis-semaphore's `"client" is required`, and the client one the package can send on. */
export function checkLockClient(client: unknown): RedisClient {
  if (!client) {
    throw new TypeError('"client" is required')
  }
  return checkClient(client)
}

/** A semaphore's `limit`, or a multi-semaphore's `permits`: a whole number, 1 or more. */
export function checkCount(value: unknown, what: 'limit' | 'permits'): number {
  if (!value) {
    throw new TypeError(`"${what}" is required`)
  }
  if (typeof value !== 'number') {
    throw new TypeError(`"${what}" must be a number`)
  }
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`"${what}" must be a whole number, 1 or more, not ${value}`)
  }
  return value
}

/**
 * A multi-semaphore's `permits`: a whole number from 1 to its `limit` (more could never be
 * acquired), and at most `commands.MOST_PERMITS`, the most the server takes for one holder.
 */
export function checkPermits(permits: unknown, limit: number): number {
  const count = checkCount(permits, 'permits')
  if (count > limit) {
    throw new RangeError(`"permits" (${count}) must not exceed "limit" (${limit}): it could never be acquired`)
  }
  if (count > commands.MOST_PERMITS) {
    throw new RangeError(`"permits" (${count}) must be at most ${commands.MOST_PERMITS}, the most the server takes for one holder`)
  }
  return count
}

/**
 * What holding one lock or permit sends: taking it (waiting or not, and giving it back), and
 * renewing it. A grant reads as `T`: true, or its fencing token.
 */
export interface Lease<T extends boolean | number = boolean> {
  readonly claim: Claim<T>
  /** The renewal of a held lease, which never takes a lease that was lost. */
  readonly renewal: commands.Command<T>
}

/** A lease whose grants and renewals are sent with `FENCE`: each reads as its fencing token, 0 for none. */
export function fencedLease({ claim, renewal }: Lease): Lease<number> {
  return {
    claim: {
      once: commands.fenced(claim.once),
      waiting: (waitMs) => commands.fenced(claim.waiting(waitMs)),
      giveBack: claim.giveBack,
    },
    renewal: commands.fenced(renewal),
  }
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
 * A permit's (`permits` slots of `limit`, a lease of `lockTimeout` on the server's clock, named
 * with `separator` if given): GOBLIN.ZWINDOW, GOBLIN.BZWINDOW, GOBLIN.CAD, and GOBLIN.ZWINDOW ... XX.
 */
export function permitLease(
  key: string,
  { identifier, lockTimeout }: AcquireOptions,
  limit: number,
  permits: number,
  separator?: string,
): Lease {
  const lease = lockTimeout / 1000
  const options = separator === undefined ? { permits } : { permits, separator }
  return {
    claim: {
      once: commands.zwindow(key, '*', lease, limit, identifier, options),
      waiting: (wait) => commands.bzwindow(key, lease, limit, identifier, wait, options),
      giveBack: commands.cad(key, identifier, options),
    },
    renewal: commands.zwindow(key, '*', lease, limit, identifier, { ...options, xx: true }),
  }
}

/** redis-semaphore's `Lock`: the acquire, refresh and release cycle, over `_acquire`, `_refresh` and `_release`. */
export abstract class Lock {
  protected abstract _kind: string
  protected abstract _key: string
  protected _identifier: string
  protected _acquireOptions: AcquireOptions
  protected _refreshTimeInterval: number
  protected _refreshInterval: ReturnType<typeof setInterval> | undefined
  protected _refreshing = false
  protected _acquired = false
  protected _acquiredExternally = false
  protected _onLockLost: LockLostCallback
  protected _waitOn: RedisClient | undefined
  /** Whether grants are sent with `FENCE`, and the token of the grant held now. */
  protected _fencing: boolean
  private _fencingToken: number | undefined
  /** A semaphore's: how many permits there are (0: a mutex, a token lock), and how many a holder takes. */
  protected _limit = 0
  protected _permits = 1
  /** A multi-semaphore's: its permits named `<identifier>_0` to `_<permits - 1>`, as redis-semaphore names them. */
  protected _separator: string | undefined
  /** When the lease was last taken or refreshed (performance.now()). */
  private _leasedAt = 0

  protected abstract _refresh(): Promise<boolean>
  protected abstract _acquire(abortSignal?: AbortSignal): Promise<boolean>
  protected abstract _release(): Promise<void>

  constructor(options: LockOptions = defaultTimeoutOptions) {
    const {
      lockTimeout = defaultTimeoutOptions.lockTimeout,
      acquireTimeout = defaultTimeoutOptions.acquireTimeout,
      acquireAttemptsLimit = defaultTimeoutOptions.acquireAttemptsLimit,
      retryInterval = defaultTimeoutOptions.retryInterval,
      onLockLost = defaultOnLockLost,
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- redis-semaphore's, accepted as it accepts it
      externallyAcquiredIdentifier,
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- the same
      identifierSuffix,
      identifier,
      acquiredExternally,
      waitOn,
      fencing = true,
    } = options
    const lease = checkLease(lockTimeout)
    const refreshInterval = options.refreshInterval ?? Math.round(lease * REFRESH_INTERVAL_COEF)
    if (identifier !== undefined && (!identifier || typeof identifier !== 'string')) {
      throw new TypeError('identifier must be not empty random string')
    }
    if (acquiredExternally && !identifier) {
      throw new TypeError('acquiredExternally=true meanless without custom identifier')
    }
    if (externallyAcquiredIdentifier && (identifier || acquiredExternally)) {
      throw new TypeError('Invalid usage. Use custom identifier and acquiredExternally: true')
    }
    if (typeof onLockLost !== 'function') {
      throw new TypeError(`onLockLost must be a function, not ${String(onLockLost)}`)
    }
    this._identifier = identifier || externallyAcquiredIdentifier || Lock.newIdentifier(identifierSuffix)
    this._acquiredExternally = !!acquiredExternally || !!externallyAcquiredIdentifier
    this._acquireOptions = {
      identifier: this._identifier,
      lockTimeout: lease,
      acquireTimeout: checkSpan(acquireTimeout, 'acquireTimeout', true),
      acquireAttemptsLimit: checkAttempts(acquireAttemptsLimit),
      retryInterval: checkSpan(retryInterval, 'retryInterval', false),
    }
    this._refreshTimeInterval = checkSpan(refreshInterval, 'refreshInterval', false)
    this._onLockLost = onLockLost
    if (typeof fencing !== 'boolean') {
      throw new TypeError(`fencing must be true or false, not ${String(fencing)}`)
    }
    this._fencing = fencing
    this._waitOn = waitOn === undefined ? undefined : checkClient(waitOn, 'waitOn')
  }

  private static newIdentifier(suffix: string | undefined): string {
    const uuid = randomUUID()
    return suffix ? `${uuid}-${suffix}` : uuid
  }

  /** A semaphore of `limit` permits on `semaphore:<key>`, where a mutex is a token lock on `mutex:<key>`. */
  protected _asSemaphore(key: string, limit: unknown): void {
    this._limit = checkCount(limit, 'limit')
    this._key = `semaphore:${key}`
  }

  /** What this lock sends to take, renew and give back its lease. */
  protected _lease(): Lease {
    return this._limit === 0
      ? tokenLease(this._key, this._acquireOptions)
      : permitLease(this._key, this._acquireOptions, this._limit, this._permits, this._separator)
  }

  /**
   * What this lock sends, each grant read as its fencing token (with `fencing`), or as 1: 0
   * when nothing was granted.
   */
  protected _grants(): Lease<number> {
    const lease = this._lease()
    if (this._fencing) {
      return fencedLease(lease)
    }
    const counted = (grant: commands.Command<boolean>): commands.Command<number> => ({
      ...grant,
      parse: (reply) => (grant.parse(reply) ? 1 : 0),
    })
    const { claim, renewal } = lease
    return {
      claim: { once: counted(claim.once), waiting: (waitMs) => counted(claim.waiting(waitMs)), giveBack: claim.giveBack },
      renewal: counted(renewal),
    }
  }

  /** Whether `grant` (a reply of `_grants()`'s, false for none) granted; its fencing token kept. */
  protected _granted(grant: number | false): boolean {
    this._fencingToken = this._fencing && grant !== false && grant > 0 ? grant : undefined
    return grant !== false && grant > 0
  }

  /**
   * The fencing token of the grant held now: an integer larger than every earlier grant's of
   * the key, on this server, across waiters, restarts and failovers (Goblin's `FENCE`). Set by
   * `acquire`, kept by each refresh, undefined once released or lost, and always undefined with
   * `fencing: false` and on the Redlock classes (tokens of independent servers do not compare).
   * Hand it to the resource the lock guards, which refuses a token smaller than the largest it
   * has seen.
   */
  get fencingToken(): number | undefined {
    return this._fencingToken
  }

  /** This holder's identifier. */
  get identifier(): string {
    return this._identifier
  }

  /** Whether this object holds the lock (as far as its last acquire or refresh knows). */
  get isAcquired(): boolean {
    return this._acquired
  }

  /** How long `acquire` waits: 0 when `acquireAttemptsLimit` is 1 (one attempt, no wait). */
  protected get _waitMs(): number {
    return this._acquireOptions.acquireAttemptsLimit <= 1 ? 0 : this._acquireOptions.acquireTimeout
  }

  /** Takes the lock, waiting in line up to `acquireTimeout`; TimeoutError if it did not come. */
  async acquire(abortSignal?: AbortSignal): Promise<void> {
    if (!(await this.tryAcquire(abortSignal))) {
      throw new TimeoutError(`Acquire ${this._kind} ${this._key} timeout`)
    }
  }

  /**
   * Takes the lock, waiting in line up to `acquireTimeout`; whether it came. An abort of
   * `abortSignal` at any moment rejects with its reason, and leaves nothing held: what was
   * granted meanwhile is given back (owner-checked) before the rejection.
   */
  async tryAcquire(abortSignal?: AbortSignal): Promise<boolean> {
    abortSignal?.throwIfAborted()
    const acquired = this._acquiredExternally ? await this._refresh() : await this._acquire(abortSignal)
    if (acquired && abortSignal?.aborted === true && !this._acquiredExternally) {
      // Granted as the abort landed (the acquire's last reply and the abort in the same turn).
      this._granted(false)
      await this._release().catch(() => undefined)
      throw abortSignal.reason
    }
    if (!acquired) {
      return false
    }
    this._acquired = true
    this._acquiredExternally = false
    this._leasedAt = performance.now()
    if (this._refreshTimeInterval > 0) {
      this._startRefresh()
    }
    return true
  }

  /** Gives the lock back (owner-checked: a lost lease is left alone) and stops refreshing. */
  async release(): Promise<void> {
    this.stopRefresh()
    if (this._acquired || this._acquiredExternally) {
      await this._release()
    }
    this._fencingToken = undefined
    this._acquired = false
    this._acquiredExternally = false
  }

  /** Stops refreshing the lease (it then ends `lockTimeout` after the last refresh). */
  stopRefresh(): void {
    if (this._refreshInterval !== undefined) {
      clearInterval(this._refreshInterval)
      this._refreshInterval = undefined
    }
  }

  private _startRefresh(): void {
    this.stopRefresh()
    // A rejection (the default onLockLost throws) is left unhandled, as redis-semaphore leaves it.
    this._refreshInterval = setInterval(() => void this._processRefresh(), this._refreshTimeInterval)
    this._refreshInterval.unref()
  }

  /**
   * One refresh, unless one is under way. A refresh the server answers 0 lost the lease: the lock
   * is no longer held and `onLockLost` is called. One that fails (the server out of reach) is
   * tried again at the next interval, and the lease counts as lost once `lockTimeout` has passed
   * since the last refresh that succeeded.
   */
  private readonly _processRefresh = async (): Promise<void> => {
    if (this._refreshing) {
      return
    }
    this._refreshing = true
    try {
      let refreshed: boolean
      try {
        refreshed = await this._refresh()
      } catch {
        refreshed = performance.now() - this._leasedAt < this._acquireOptions.lockTimeout
        if (refreshed) {
          return
        }
      }
      if (refreshed) {
        this._leasedAt = performance.now()
        return
      }
      if (!this._acquired) {
        return // released meanwhile, on purpose
      }
      this._acquired = false
      this._fencingToken = undefined
      this.stopRefresh()
      this._onLockLost(new LostLockError(`Lost ${this._kind} for key ${this._key}`))
    } finally {
      this._refreshing = false
    }
  }
}
