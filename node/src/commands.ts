/**
 * Goblin's command vocabulary, written once: every Goblin command the package sends, built as its
 * arguments with the positions of its keys; every reply it reads, parsed; and `MODULE LIST`, the
 * module check's one command. No client library is imported here: `client.ts` sends a `Command`
 * on ioredis or node-redis, routing it by its keys. The locks and the rate limiters' stores are
 * thin shells over these builders.
 */
import { missingModule, tooOld } from './errors.js'
import { MODULE_VERSION } from './version.js'

/** A key or an argument, as the client libraries send them. */
export type Arg = string | Buffer

/** One command: what is sent, where its keys are, and how its reply reads. */
export interface Command<T> {
  /** The command's name, then its arguments, as sent. */
  readonly args: readonly Arg[]
  /** The positions of its keys in `args` (the name is 0): routed, and prefixed as core commands' are. */
  readonly keys: readonly number[]
  /** Whether it only reads (it may go to a replica). */
  readonly readOnly: boolean
  /** Its reply, parsed. */
  parse(reply: unknown): T
}

function command<T>(args: Arg[], keys: number[], parse: (reply: unknown) => T, readOnly = false): Command<T> {
  return { args, keys, readOnly, parse }
}

// ---------------------------------------------------------------------------------- arguments
/** An integer argument: a safe integer (the server reads a signed 64-bit one). */
export function integer(value: number, what: string, least = Number.MIN_SAFE_INTEGER): string {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new TypeError(`${what} must be an integer, not ${String(value)}`)
  }
  if (value < least) {
    throw new RangeError(`${what} must be at least ${least}, not ${value}`)
  }
  return String(value)
}

/**
 * An integer argument of any size, written exactly (2 ** 53 as `9007199254740992`, not `9.007e15`):
 * the server refuses one past 64 bits, as it refuses it from any client.
 */
export function wholeNumber(value: number, what: string): string {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${what} must be an integer, not ${String(value)}`)
  }
  return Number.isSafeInteger(value) ? String(value) : BigInt(value).toString()
}

/** A number of seconds (a double), written as the shortest decimal that reads back the same. */
export function seconds(value: number, what: string): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${what} must be a finite number of seconds, not ${String(value)}`)
  }
  return String(value)
}

/** The shortest wait a blocking command is sent: 0 would wait for ever. */
export const SHORTEST_WAIT_MS = 1

/** A blocking command's timeout for a wait of `ms` milliseconds: seconds, at least a millisecond. */
export function waitSeconds(ms: number): string {
  return (Math.max(Math.ceil(ms), SHORTEST_WAIT_MS) / 1000).toFixed(3)
}

// ------------------------------------------------------------------------------------ replies
/** An integer reply, as any client and protocol gives it. */
export function asInteger(reply: unknown): number {
  if (typeof reply === 'number') {
    return reply
  }
  if (typeof reply === 'bigint') {
    return Number(reply)
  }
  if (typeof reply === 'string' || Buffer.isBuffer(reply)) {
    const value = Number(reply.toString())
    if (Number.isInteger(value)) {
      return value
    }
  }
  throw new TypeError(`expected an integer reply, got ${String(reply)}`)
}

function asArray(reply: unknown, length: number, what: string): unknown[] {
  if (!Array.isArray(reply) || reply.length < length) {
    throw new TypeError(`${what} replied ${JSON.stringify(reply)}, not ${length} fields`)
  }
  return reply
}

/** A bulk reply as text. */
function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value)
}

/** `OK` (in any protocol or decoding) or nil: GOBLIN.LOCK's and GOBLIN.BLOCK's replies. */
export function granted(reply: unknown): boolean {
  return reply !== null && reply !== undefined && reply !== false
}

/** 1, or 0 / nil: GOBLIN.ZWINDOW's, GOBLIN.BZWINDOW's, GOBLIN.CAD's and GOBLIN.EXTEND's replies. */
export function one(reply: unknown): boolean {
  return granted(reply) && asInteger(reply) === 1
}

/**
 * A fencing token, or 0: the reply of a grant sent with `FENCE` (an integer), or of none (0, or
 * nil after a wait). Tokens are microseconds of the server's clock or just above it, far inside a
 * safe integer (2^53 µs is in the year 2255).
 */
export function token(reply: unknown): number {
  return granted(reply) ? asInteger(reply) : 0
}

// ------------------------------------------------------------------------------ locks, leases
/**
 * A grant of GOBLIN.LOCK, GOBLIN.BLOCK, GOBLIN.EXTEND, GOBLIN.ZWINDOW (without `COST`) or
 * GOBLIN.BZWINDOW, sent with `FENCE`: its reply is the grant's fencing token (a holder's own
 * through its renewals, larger than every earlier grant's of the key), or 0 when nothing was
 * granted.
 */
export function fenced(grant: Command<boolean>): Command<number> {
  return command([...grant.args, 'FENCE'], [...grant.keys], token)
}

/** `GOBLIN.LOCK key token ms`: `SET NX PX` that never passes a caller waiting in line. */
export function lock(key: Arg, token: Arg, ms: number): Command<boolean> {
  return command(['GOBLIN.LOCK', key, token, integer(ms, 'ms', 0)], [1], granted)
}

/**
 * `GOBLIN.BLOCK key token ms timeout`: waits in the server's line up to `waitMs`, and holds the
 * lock the moment it is released or expires. Sent again with the same token, the holder's own
 * token re-arms: a grant whose reply was lost is granted again.
 */
export function block(key: Arg, token: Arg, ms: number, waitMs: number): Command<boolean> {
  return command(['GOBLIN.BLOCK', key, token, integer(ms, 'ms', 0), waitSeconds(waitMs)], [1], granted)
}

/** `GOBLIN.EXTEND key token ms [REPLACE]`: the lease of the lock `token` holds, lengthened or set. */
export function extend(key: Arg, token: Arg, ms: number, replace = false): Command<boolean> {
  const args: Arg[] = ['GOBLIN.EXTEND', key, token, integer(ms, 'ms', 1)]
  return command(replace ? [...args, 'REPLACE'] : args, [1], one)
}

// ------------------------------------------------------------------ a readers-writer lock
/** A readers-writer lock's modes, as GOBLIN.RWHELD names them. */
export type Mode = 'read' | 'write'

/**
 * `GOBLIN.RLOCK` or `GOBLIN.WLOCK key token ms`: the read or write lease, if the key lets the
 * caller in now (never before a caller waiting in line, unless it holds the key already: it
 * renews, is demoted or promoted). `OK`, or nil.
 */
export function rwLock(key: Arg, token: Arg, ms: number, mode: Mode): Command<boolean> {
  return command([mode === 'read' ? 'GOBLIN.RLOCK' : 'GOBLIN.WLOCK', key, token, integer(ms, 'ms', 1)], [1], granted)
}

/**
 * `GOBLIN.BRLOCK` or `GOBLIN.BWLOCK key token ms timeout`: waits in the key's one line of readers
 * and writers up to `waitMs`. A reader asking to write while another reader waits so is refused
 * with `-DEADLOCK` (`isDeadlock`).
 */
export function rwWait(key: Arg, token: Arg, ms: number, mode: Mode, waitMs: number): Command<boolean> {
  const name = mode === 'read' ? 'GOBLIN.BRLOCK' : 'GOBLIN.BWLOCK'
  return command([name, key, token, integer(ms, 'ms', 1), waitSeconds(waitMs)], [1], granted)
}

/** `GOBLIN.RWEXTEND key token ms [REPLACE]`: the lease `token` holds, in either mode, lengthened or set (1), or 0 if it holds none. */
export function rwExtend(key: Arg, token: Arg, ms: number, replace = false): Command<boolean> {
  const args: Arg[] = ['GOBLIN.RWEXTEND', key, token, integer(ms, 'ms', 1)]
  return command(replace ? [...args, 'REPLACE'] : args, [1], one)
}

/** `GOBLIN.RWUNLOCK key token`: releases the lease `token` holds, in either mode (1), or 0 if it holds none. */
export function rwUnlock(key: Arg, token: Arg): Command<boolean> {
  return command(['GOBLIN.RWUNLOCK', key, token], [1], one)
}

/** `GOBLIN.RWHELD key token` (read only): the mode of the lease `token` holds now, or null. */
export function rwHeld(key: Arg, token: Arg): Command<Mode | null> {
  return command(
    ['GOBLIN.RWHELD', key, token],
    [1],
    (reply) => {
      if (reply === null || reply === undefined) {
        return null
      }
      const mode = text(reply)
      if (mode !== 'read' && mode !== 'write') {
        throw new TypeError(`GOBLIN.RWHELD replied ${mode}`)
      }
      return mode
    },
    true,
  )
}

/** Whether an error is GOBLIN.BWLOCK's `-DEADLOCK`: another reader of the key already waits to write. */
export function isDeadlock(error: unknown): boolean {
  return String(error instanceof Error ? error.message : error).startsWith('DEADLOCK ')
}

/** Options of a lease or permit of a sliding window. */
export interface PermitOptions {
  /** How many slots the holder takes at once, all or nothing (1: the plain form). */
  permits?: number
  /**
   * `SEPARATOR sep`: every slot named the member, `sep` and its index from 0 (`id_0`, `id_1`:
   * redis-semaphore's MultiSemaphore's names), where without it they are the member and its
   * twins (the member, NUL, the index from 1).
   */
  separator?: Arg
}

/** The most permits one holder takes (the server refuses more). */
export const MOST_PERMITS = 10_000

function permitsArgs(options: PermitOptions): Arg[] {
  const permits = options.permits ?? 1
  if (permits > MOST_PERMITS) {
    throw new RangeError(`permits must be at most ${MOST_PERMITS}, not ${permits}`)
  }
  const counted = permits === 1 ? [] : ['PERMITS', integer(permits, 'permits', 1)]
  return options.separator === undefined ? counted : [...counted, 'SEPARATOR', options.separator]
}

/** `GOBLIN.CAD key value [PERMITS n] [SEPARATOR sep]`: releases a lock, or a lease of a window, only its holder's. */
export function cad(key: Arg, value: Arg, options: PermitOptions = {}): Command<boolean> {
  return command(['GOBLIN.CAD', key, value, ...permitsArgs(options)], [1], one)
}

/** Options of GOBLIN.ZWINDOW. */
export interface ZwindowOptions extends PermitOptions {
  /** A request of this many units (a rate limiter's cost): one member. */
  cost?: number
  /** Only renew a held slot: never admit (0 then says the lease was lost). */
  xx?: boolean
}

/** A slot of a window: its `window` (seconds), `limit` and `member`, as ZWINDOW and BZWINDOW take them. */
function slot(window: number, limit: number, member: Arg): Arg[] {
  return [seconds(window, 'window'), integer(limit, 'limit'), member]
}

/** `now` as sent: `*` (the server's clock) or seconds. */
function clock(now: number | '*'): Arg {
  return now === '*' ? '*' : seconds(now, 'now')
}

/**
 * `GOBLIN.ZWINDOW key now window limit member [COST n] [PERMITS n] [SEPARATOR sep] [XX]`: a slot of a sliding
 * window of `window` seconds (`now` `*`: the server's clock): a lease (limit 1), a permit
 * (limit N), or a request of a rate limiter.
 */
export function zwindow(key: Arg, now: number | '*', window: number, limit: number, member: Arg, options: ZwindowOptions = {}): Command<boolean> {
  const cost = options.cost === undefined ? [] : ['COST', integer(options.cost, 'cost', 1)]
  const xx = options.xx === true ? ['XX'] : []
  return command(['GOBLIN.ZWINDOW', key, clock(now), ...slot(window, limit, member), ...cost, ...permitsArgs(options), ...xx], [1], one)
}

/** `GOBLIN.BZWINDOW key window limit member timeout [PERMITS n] [SEPARATOR sep]`: a slot, waited for in line. */
export function bzwindow(key: Arg, window: number, limit: number, member: Arg, waitMs: number, options: PermitOptions = {}): Command<boolean> {
  return command(['GOBLIN.BZWINDOW', key, ...slot(window, limit, member), waitSeconds(waitMs), ...permitsArgs(options)], [1], one)
}

/** GOBLIN.ZWSTATS: the units inside a window and its oldest entry's time (seconds, as written). */
export interface WindowStats {
  units: number
  oldest: string | null
}

/** `GOBLIN.ZWSTATS key now window` (read only). */
export function zwstats(key: Arg, now: number | '*', window: number): Command<WindowStats> {
  const args: Arg[] = ['GOBLIN.ZWSTATS', key, clock(now), seconds(window, 'window')]
  return command(
    args,
    [1],
    (reply) => {
      const [units, oldest] = asArray(reply, 2, 'GOBLIN.ZWSTATS')
      return { units: asInteger(units), oldest: oldest === null || oldest === undefined ? null : text(oldest) }
    },
    true,
  )
}

// ------------------------------------------------------------------------------- rate limits
/** `GOBLIN.INCREX key seconds [COST n]`: a fixed-window counter, its TTL armed on the first hit. */
export function increx(key: Arg, windowSeconds: number, cost = 1): Command<number> {
  const args: Arg[] = ['GOBLIN.INCREX', key, integer(windowSeconds, 'seconds', 1)]
  return command(cost === 1 ? args : [...args, 'COST', integer(cost, 'cost', 1)], [1], asInteger)
}

/** A sliding window counter's state: both windows' counts and how long each weighs (ms). */
export interface SlidingStats {
  previous: number
  previousMs: number
  current: number
  currentMs: number
}

function slidingStats(fields: unknown[]): SlidingStats {
  const [previous, previousMs, current, currentMs] = fields.map(asInteger) as [number, number, number, number]
  return { previous, previousMs, current, currentMs }
}

/** `GOBLIN.SWINDOW key window limit [COST n]`: admitted, and the window's state. */
export function swindow(key: Arg, window: number, limit: number, cost = 1): Command<SlidingStats & { admitted: boolean }> {
  const args: Arg[] = ['GOBLIN.SWINDOW', key, integer(window, 'window', 1), integer(limit, 'limit')]
  return command(cost === 1 ? args : [...args, 'COST', integer(cost, 'cost', 1)], [1], (reply) => {
    const fields = asArray(reply, 5, 'GOBLIN.SWINDOW')
    return { admitted: asInteger(fields[0]) === 1, ...slidingStats(fields.slice(1, 5)) }
  })
}

/** `GOBLIN.SWSTATS key window` (read only). */
export function swstats(key: Arg, window: number): Command<SlidingStats> {
  return command(
    ['GOBLIN.SWSTATS', key, integer(window, 'window', 1)],
    [1],
    (reply) => slidingStats(asArray(reply, 4, 'GOBLIN.SWSTATS').slice(0, 4)),
    true,
  )
}

/** One GCRA policy's state, as GOBLIN.GCRA replies it (seconds; `retryAfter` -1 for none). */
export interface GcraState {
  limited: boolean
  limit: number
  remaining: number
  retryAfter: number
  resetAfter: number
}

function gcraState(reply: unknown, what: string): GcraState {
  const [limited, limit, remaining, retryAfter, resetAfter] = asArray(reply, 5, what).map(asInteger) as [
    number,
    number,
    number,
    number,
    number,
  ]
  return { limited: limited === 1, limit, remaining, retryAfter, resetAfter }
}

/**
 * `GOBLIN.GCRA key max_burst tokens_per_period period [TOKENS n] [PEEK]`; with `peek`, what the
 * same call would reply, writing nothing (`tokens` may then be 0: the state alone).
 */
export function gcra(
  key: Arg,
  maxBurst: number,
  tokensPerPeriod: number,
  period: number,
  tokens = 1,
  peek = false,
): Command<GcraState> {
  const args: Arg[] = [
    'GOBLIN.GCRA',
    key,
    integer(maxBurst, 'max_burst', 0),
    integer(tokensPerPeriod, 'tokens_per_period', 1),
    seconds(period, 'period'),
  ]
  if (tokens !== 1) {
    args.push('TOKENS', integer(tokens, 'tokens', peek ? 0 : 1))
  }
  if (peek) {
    args.push('PEEK')
  }
  return command(args, [1], (reply) => gcraState(reply, 'GOBLIN.GCRA'))
}

/**
 * `CL.THROTTLE key max_burst count_per_period period [quantity]`: redis-cell's command, Goblin's
 * stand-in where the server has none (the same keys and replies as redis-cell's), its reply read
 * as GOBLIN.GCRA's. `period` is a whole number of seconds; a `quantity` of 0 takes nothing (and,
 * as redis-cell, still stores the key's state with a fresh expiry).
 */
export function clThrottle(
  key: Arg,
  maxBurst: number,
  countPerPeriod: number,
  period: number,
  quantity = 1,
): Command<GcraState> {
  const args: Arg[] = [
    'CL.THROTTLE',
    key,
    integer(maxBurst, 'max_burst', 0),
    integer(countPerPeriod, 'count_per_period', 1),
    integer(period, 'period', 1),
  ]
  return command(quantity === 1 ? args : [...args, integer(quantity, 'quantity', 0)], [1], (reply) =>
    gcraState(reply, 'CL.THROTTLE'),
  )
}

/** One policy of GOBLIN.MGCRA. */
export interface GcraPolicy {
  key: Arg
  maxBurst: number
  tokensPerPeriod: number
  period: number
}

/** GOBLIN.MGCRA's reply: limited, the call's retry after, each policy's state. */
export interface MgcraResult {
  limited: boolean
  retryAfter: number
  policies: GcraState[]
}

/**
 * A command over `groups` (each a key and its arguments) counted by its first argument, as
 * GOBLIN.MGCRA and GOBLIN.MFWINDOW take them, then `tail`; its reply, a flag, a retry-after and
 * one field per group, read by `each`.
 */
function grouped<T, R>(
  name: string,
  groups: Arg[][],
  tail: Arg[],
  each: (field: unknown, what: string) => T,
  result: (flag: boolean, retryAfter: number, fields: T[]) => R,
): Command<R> {
  const args: Arg[] = [name, integer(groups.length, `the number of ${name}'s groups`, 1)]
  const keys: number[] = []
  for (const group of groups) {
    keys.push(args.length)
    args.push(...group)
  }
  return command([...args, ...tail], keys, (reply) => {
    const fields = asArray(reply, 2 + groups.length, name)
    return result(asInteger(fields[0]) === 1, asInteger(fields[1]), fields.slice(2).map((field) => each(field, name)))
  })
}

/** `GOBLIN.MGCRA n <policies> [TOKENS n] [PEEK | REFUND]`: several GCRA limits, all or nothing. */
export function mgcra(policies: readonly GcraPolicy[], tokens = 1, mode?: 'PEEK' | 'REFUND'): Command<MgcraResult> {
  const groups = policies.map((policy) => [
    policy.key,
    integer(policy.maxBurst, 'max_burst', 0),
    integer(policy.tokensPerPeriod, 'tokens_per_period', 1),
    seconds(policy.period, 'period'),
  ])
  const tail = ['TOKENS', integer(tokens, 'tokens', 0), ...(mode === undefined ? [] : [mode])]
  return grouped('GOBLIN.MGCRA', groups, tail, gcraState, (limited, retryAfter, states) => ({ limited, retryAfter, policies: states }))
}

/** A fixed window's count and the milliseconds until it resets (-1: it never does; -2: no key). */
export interface FixedWindow {
  count: number
  ttl: number
}

function fixedWindow(reply: unknown, what: string): FixedWindow {
  const [count, ttl] = asArray(reply, 2, what).map(asInteger) as [number, number]
  return { count, ttl }
}

/** What GOBLIN.FWINDOW does past its `limit`. */
export type OverLimit =
  | { restart: true } // the window starts over on every call above the limit
  | { block: number } // the call that crosses the limit sets the TTL to this many ms
  | { backoff: true } // every call above the limit sets the TTL to window × 2^(count − limit − 1)

/** Options of GOBLIN.FWINDOW. */
export interface FwindowOptions {
  /** Added to the count (negative: a reward); 1 by default. */
  by?: number
  /** The limit the over-limit option counts from. */
  limit?: number
  /** What happens past `limit`. */
  over?: OverLimit
}

/**
 * `GOBLIN.FWINDOW key window [BY n] [LIMIT max [RESTART | BLOCK ms | BACKOFF]]`: a fixed window of
 * `windowMs` milliseconds (0: it never expires), counted by `by`.
 */
export function fwindow(key: Arg, windowMs: number, options: FwindowOptions = {}): Command<FixedWindow> {
  const args: Arg[] = ['GOBLIN.FWINDOW', key, integer(windowMs, 'window', 0)]
  if (options.by !== undefined && options.by !== 1) {
    args.push('BY', wholeNumber(options.by, 'by'))
  }
  if (options.limit !== undefined) {
    args.push('LIMIT', integer(options.limit, 'limit'))
    const over = options.over
    if (over !== undefined && 'restart' in over) {
      args.push('RESTART')
    } else if (over !== undefined && 'block' in over) {
      args.push('BLOCK', integer(over.block, 'block', 1))
    } else if (over !== undefined) {
      args.push('BACKOFF')
    }
  } else if (options.over !== undefined) {
    throw new TypeError('GOBLIN.FWINDOW takes RESTART, BLOCK or BACKOFF only with a limit')
  }
  return command(args, [1], (reply) => fixedWindow(reply, 'GOBLIN.FWINDOW'))
}

/** `GOBLIN.FWSTATS key` (read only): the count and the PTTL; a missing key is `{count: 0, ttl: -2}`. */
export function fwstats(key: Arg): Command<FixedWindow> {
  return command(['GOBLIN.FWSTATS', key], [1], (reply) => fixedWindow(reply, 'GOBLIN.FWSTATS'), true)
}

/** One window of GOBLIN.MFWINDOW. */
export interface WindowLimit {
  key: Arg
  windowMs: number
  limit: number
}

/**
 * GOBLIN.MFWINDOW's reply: refused (nothing written) or not, the milliseconds until a refused
 * call could pass (-1: never, or allowed), and each window's count and TTL.
 */
export interface MfwindowResult {
  refused: boolean
  retryAfter: number
  windows: FixedWindow[]
}

/** `GOBLIN.MFWINDOW n key window limit ... [BY n]`: several fixed windows, counted all or nothing. */
export function mfwindow(windows: readonly WindowLimit[], by = 1): Command<MfwindowResult> {
  const groups = windows.map((window) => [window.key, integer(window.windowMs, 'window', 0), integer(window.limit, 'limit')])
  const tail = by === 1 ? [] : ['BY', wholeNumber(by, 'by')]
  return grouped('GOBLIN.MFWINDOW', groups, tail, fixedWindow, (refused, retryAfter, counted) => ({ refused, retryAfter, windows: counted }))
}

// --------------------------------------------------------------------- core commands, keyed
/** `SET key value [PX ms]`: a counter set outright (rate-limiter-flexible's `set` and `block`); no PX for no expiry. */
export function set(key: Arg, value: number, ms = 0): Command<boolean> {
  const args: Arg[] = ['SET', key, wholeNumber(value, 'value')]
  return command(ms > 0 ? [...args, 'PX', integer(ms, 'ms', 1)] : args, [1], granted)
}

/** `SET key value PX ms NX`: whether it was set (the key was missing). */
export function setIfMissing(key: Arg, value: number, ms: number): Command<boolean> {
  return command(['SET', key, wholeNumber(value, 'value'), 'PX', integer(ms, 'ms', 1), 'NX'], [1], granted)
}

/** `PTTL key`: milliseconds left, -1 for a key without a TTL, -2 for a missing key. */
export function pttl(key: Arg): Command<number> {
  return command(['PTTL', key], [1], asInteger, true)
}

/**
 * `INCREX key BYINT -1 LBOUND 0`: a counter taken down by one, never below 0 and never made: a
 * count of 0, or a missing key, is left as it is. The count after the call.
 */
export function decrementToZero(key: Arg): Command<number> {
  return command(['INCREX', key, 'BYINT', '-1', 'LBOUND', '0'], [1], (reply) => {
    const [value] = asArray(reply, 2, 'INCREX')
    return asInteger(value)
  })
}

/** `DEL key`: whether it existed. */
export function del(key: Arg): Command<boolean> {
  return command(['DEL', key], [1], (reply) => asInteger(reply) > 0)
}

// -------------------------------------------------------------------------- the module check
/** `MODULE LIST`: the module check's one command (no key: any node of a cluster answers). */
export const moduleList: Command<void> = command(['MODULE', 'LIST'], [], checkModuleList, true)

/** The fields of one module of a MODULE LIST reply: a flat array (RESP2), a map or an object (RESP3). */
function moduleFields(module: unknown): Map<string, unknown> {
  const fields = new Map<string, unknown>()
  if (module instanceof Map) {
    for (const [name, value] of module) {
      fields.set(text(name), value)
    }
  } else if (Array.isArray(module)) {
    for (let i = 0; i + 1 < module.length; i += 2) {
      fields.set(text(module[i]), module[i + 1])
    }
  } else if (typeof module === 'object' && module !== null) {
    for (const [name, value] of Object.entries(module)) {
      fields.set(name, value)
    }
  }
  return fields
}

/** Goblin's version in a MODULE LIST reply; undefined when Goblin is not loaded. */
export function moduleVersionIn(reply: unknown): number | undefined {
  if (!Array.isArray(reply)) {
    return undefined
  }
  for (const module of reply) {
    const fields = moduleFields(module)
    if (text(fields.get('name')) === 'goblin') {
      const version = fields.get('ver')
      return version === undefined ? 0 : asInteger(version)
    }
  }
  return undefined
}

/** Throws GoblinModuleError unless MODULE LIST lists Goblin, recent enough. */
export function checkModuleList(reply: unknown): void {
  const version = moduleVersionIn(reply)
  if (version === undefined) {
    throw missingModule('Goblin module (MODULE LIST lists none)')
  }
  if (version < MODULE_VERSION) {
    throw tooOld(version)
  }
}

// ------------------------------------------------------------------------ the server's identity
/**
 * `INFO server`'s `run_id`: the server process's identity (random at each start), which tells
 * whether two connections reach the same server. No key: on a cluster, some node's.
 */
export const serverRunId: Command<string> = command(['INFO', 'server'], [], runIdIn, true)

/** The `run_id` of an `INFO server` reply (a string, or a verbatim string object in RESP3). */
export function runIdIn(reply: unknown): string {
  const match = /^run_id:([0-9a-f]+)\s*$/m.exec(text(reply))
  if (match?.[1] === undefined) {
    throw new TypeError('INFO server names no run_id')
  }
  return match[1]
}
