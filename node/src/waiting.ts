/**
 * Waiting in line, written once for every lock and semaphore: `take`, a claim tried once on the
 * application's client, then waited for inside the server (GOBLIN.BLOCK, GOBLIN.BZWINDOW) on a
 * connection of the waiter's own, in slices shorter than that connection's reply timeouts.
 *
 * A blocking command holds the connection it is sent on until the server answers: sent on the
 * application's client, it would stall every other command queued behind it. So a waiter takes a
 * connection from a small pool kept per client (`client.duplicate()`, connected once, reused;
 * idle ones let the process exit, and close after `IDLE_MS`, when the client ends, or on
 * `closeWaiters(client)`), or waits on the client the lock's `waitOn` option names.
 */
import { type Command } from './commands.js'
import { type Link, type RedisClient, call, checkClient, linkOf, sendOn } from './client.js'

/** The longest one blocking command waits when nothing limits it: a lost connection is noticed within this. */
export const LONGEST_SLICE_MS = 60_000

/** How many idle waiter connections a client keeps for reuse. */
export const MOST_IDLE = 4

/** How long an idle waiter connection is kept. */
export const IDLE_MS = 10_000

/**
 * How long one blocking command may wait on a connection whose replies are cut off after
 * `limitMs` (ioredis's `commandTimeout` or `socketTimeout`, node-redis's `socketTimeout` or
 * command `timeout`): a second less (a quarter of it for limits under 1⅓ s), so that the server's
 * nil at the slice's end always comes back before the client gives up; the margin covers the
 * server's timer, which meets a blocked client's timeout on its next tick.
 */
export function sliceMs(limitMs: number | undefined): number {
  if (limitMs === undefined) {
    return LONGEST_SLICE_MS
  }
  return Math.max(Math.min(limitMs - Math.min(1000, 0.75 * limitMs), LONGEST_SLICE_MS), 1)
}

interface Connection {
  readonly client: RedisClient
  readonly link: Link
  timer?: ReturnType<typeof setTimeout>
}

/** The waiter connections of one application client. */
class Waiters {
  private readonly idle: Connection[] = []
  private readonly open = new Set<Connection>()
  /** The application's client has ended: no connection is opened for it any more. */
  private ended = false

  constructor(private readonly parent: Link) {
    parent.onEnd(() => {
      this.ended = true
      this.close()
    })
  }

  async take(): Promise<Connection> {
    const reused = this.idle.pop()
    if (reused !== undefined) {
      clearTimeout(reused.timer)
      reused.link.hold(true)
      return reused
    }
    const client = await this.parent.duplicate()
    const connection: Connection = { client, link: linkOf(client) }
    this.open.add(connection)
    if (this.ended) {
      this.discard(connection)
      throw new Error('the client was closed while a waiter connected')
    }
    return connection
  }

  give(connection: Connection): void {
    if (this.ended || this.idle.length >= MOST_IDLE) {
      this.discard(connection)
      return
    }
    connection.link.hold(false)
    connection.timer = setTimeout(() => {
      this.idle.splice(this.idle.indexOf(connection), 1)
      this.discard(connection)
    }, IDLE_MS)
    connection.timer.unref()
    this.idle.push(connection)
  }

  discard(connection: Connection): void {
    clearTimeout(connection.timer)
    if (this.open.delete(connection)) {
      connection.link.close()
    }
  }

  /** Closes every connection, idle or waiting (its wait ends in an error). */
  close(): void {
    this.idle.length = 0
    for (const connection of [...this.open]) {
      this.discard(connection)
    }
  }
}

const pools = new WeakMap<object, Waiters>()

function waitersOf(client: RedisClient): Waiters {
  let waiters = pools.get(client)
  if (waiters === undefined) {
    waiters = new Waiters(linkOf(client))
    pools.set(client, waiters)
  }
  return waiters
}

/**
 * Closes the waiter connections the package opened for `client` (those waiting now: their waits
 * end in an error). They close by themselves when idle for `IDLE_MS`, or when the client ends.
 */
export function closeWaiters(client: RedisClient): void {
  pools.get(checkClient(client))?.close()
}

/**
 * What taking one lock or permit sends. A grant reads as `T`: true, or a fencing token (a number
 * above 0); a refusal as false or 0.
 */
export interface Claim<T extends boolean | number = boolean> {
  /** The attempt that does not wait, on the application's client. */
  readonly once: Command<T>
  /** The attempt that waits in the server's line up to `waitMs`, on a waiter's connection. */
  waiting(waitMs: number): Command<T>
  /** The release of what an aborted waiter may have been granted. */
  readonly giveBack: Command<boolean>
}

/** How long and where a `take` waits. */
export interface Waiting {
  /** The longest it waits, in ms (0 or less: `once` alone). */
  readonly timeoutMs: number
  /** Ends the wait with its reason; what was granted meanwhile is given back. */
  readonly signal?: AbortSignal | undefined
  /** A client to wait on instead of a pooled connection. */
  readonly waitOn?: RedisClient | undefined
}

/**
 * Takes a lock or a permit: its grant (true, or its fencing token) once held, else false.
 * `claim.once` first, on the application's client: it never passes anyone waiting in line. Then
 * `claim.waiting`, in slices (each re-sent with the same token or member, which a holder's own
 * renewal lets through, so a grant whose reply was lost is granted again), until granted or `timeoutMs` has passed, the last slice cut to the time
 * left. An aborted wait closes its connection, which takes the waiter out of the line, gives back
 * what may have been granted in the reply it did not read, and rejects with the signal's reason.
 */
export async function take<T extends boolean | number>(client: RedisClient, claim: Claim<T>, waiting: Waiting): Promise<T | false> {
  const { signal } = waiting
  signal?.throwIfAborted()
  const deadline = performance.now() + waiting.timeoutMs
  const once = await call(client, claim.once)
  if (once) {
    return once
  }
  if (!(waiting.timeoutMs > 0)) {
    return false
  }
  const own = waiting.waitOn === undefined
  const pool = own ? waitersOf(client) : undefined
  const connection = pool === undefined ? ownConnection(waiting.waitOn as RedisClient) : await pool.take()
  let aborted = false
  let failed = false
  const abort = (): void => {
    aborted = true
    if (pool !== undefined) {
      pool.discard(connection)
    }
  }
  signal?.addEventListener('abort', abort, { once: true })
  try {
    const slice = sliceMs(connection.link.replyLimitMs)
    for (;;) {
      if (aborted) {
        throw signal?.reason
      }
      const wait = Math.min(slice, deadline - performance.now())
      if (wait <= 0) {
        return false
      }
      let held: T
      try {
        held = await sendOn(connection.link, claim.waiting(wait))
      } catch (error) {
        if (aborted) {
          await call(client, claim.giveBack)
          throw signal?.reason
        }
        failed = true
        throw error
      }
      if (aborted) {
        await call(client, claim.giveBack)
        throw signal?.reason
      }
      if (held) {
        return held
      }
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    // A connection whose command failed is not reused: it may be the one at fault. One given back
    // (or closed, past the few kept idle) is given back once the acquire has resolved, not on
    // the way to the caller that waited for the lock.
    if (pool !== undefined && failed) {
      pool.discard(connection)
    } else if (pool !== undefined && !aborted) {
      setImmediate(() => {
        pool.give(connection)
      })
    }
  }
}

function ownConnection(client: RedisClient): Connection {
  return { client, link: linkOf(client) }
}
