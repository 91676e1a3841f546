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
import { type Link, type RedisClient, call, checkClient, checkModule, linkOf, sendOn } from './client.js'

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
 * An acquire's abort signal, watched from the start of the acquire to its end, so that an abort
 * at any moment is seen: `aborted` once it has fired, `race` a step that an abort cuts short (the
 * step itself goes on, its outcome left to `settle`), and `onAbort` what an abort does at once.
 */
class Watch {
  aborted = false
  private readonly listeners: (() => void)[] = []
  private readonly listener = (): void => {
    this.aborted = true
    for (const listener of this.listeners.splice(0)) {
      listener()
    }
  }

  constructor(readonly signal: AbortSignal | undefined) {
    signal?.addEventListener('abort', this.listener, { once: true })
  }

  /** The signal's reason, to reject with. */
  get reason(): unknown {
    return this.signal?.reason as unknown
  }

  /** Calls `listener` when the signal aborts (now, if it has). */
  onAbort(listener: () => void): void {
    if (this.aborted) {
      listener()
    } else {
      this.listeners.push(listener)
    }
  }

  /**
   * `step`'s outcome, or the signal's reason as soon as it aborts; a step cut short is left to
   * `settle` (its value given to it, its failure dropped).
   */
  race<S>(step: Promise<S>, settle: (value: S) => unknown = () => undefined): Promise<S> {
    if (this.signal === undefined) {
      return step
    }
    return new Promise<S>((resolve, reject) => {
      let done = false
      this.onAbort(() => {
        if (!done) {
          done = true
          step.then(settle).catch(() => undefined)
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the signal's reason, whatever it is, as AbortSignal.throwIfAborted throws it
          reject(this.reason)
        }
      })
      step.then(
        (value) => {
          if (!done) {
            done = true
            resolve(value)
          }
        },
        (error: unknown) => {
          if (!done) {
            done = true
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the step's own failure, passed on as it is
            reject(error)
          }
        },
      )
    })
  }

  dispose(): void {
    this.listeners.length = 0
    this.signal?.removeEventListener('abort', this.listener)
  }
}

/** Gives back what an aborted acquire may hold (owner-checked); a failure is dropped: the lease ends by itself. */
async function giveBack(client: RedisClient, claim: Claim<boolean | number>): Promise<void> {
  await call(client, claim.giveBack).catch(() => undefined)
}

/**
 * Takes a lock or a permit: its grant (true, or its fencing token) once held, else false.
 * `claim.once` first, on the application's client: it never passes anyone waiting in line. Then
 * `claim.waiting`, in slices (each re-sent with the same token or member, which a holder's own
 * renewal lets through, so a grant whose reply was lost is granted again), until granted or
 * `timeoutMs` has passed, the last slice cut to the time left.
 *
 * An abort, at any moment from the call on, rejects with the signal's reason and leaves nothing
 * held. Before the first try (the module check), nothing is sent. While the first try's reply is
 * on its way, that reply is awaited (it is prompt: the try does not wait) and a grant in it given
 * back. While the waiter's connection is being set up, the acquire rejects at once (the
 * connection goes to the pool when ready, nothing sent on it). While a slice waits, or its reply
 * is on its way, the waiter's connection is closed, which takes the waiter out of the line, and
 * what the lost reply may have granted is given back on the application's client (after the
 * slice's command, which the server received first) before the acquire rejects. On a `waitOn`
 * connection, which the package does not close, the give-back is sent behind the slice on that
 * connection, so that it follows the slice's grant whenever it comes, and the acquire rejects at
 * once.
 */
export async function take<T extends boolean | number>(client: RedisClient, claim: Claim<T>, waiting: Waiting): Promise<T | false> {
  waiting.signal?.throwIfAborted()
  const watch = new Watch(waiting.signal)
  try {
    return await waitInLine(client, claim, waiting, watch)
  } finally {
    watch.dispose()
  }
}

async function waitInLine<T extends boolean | number>(client: RedisClient, claim: Claim<T>, waiting: Waiting, watch: Watch): Promise<T | false> {
  const deadline = performance.now() + waiting.timeoutMs
  // The module check first, on its own: an abort meanwhile sends nothing that could grant.
  await watch.race(checkModule(client))
  let once: T
  try {
    once = await call(client, claim.once)
  } catch (error) {
    if (watch.aborted) {
      await giveBack(client, claim) // its reply lost: what it may have granted
      throw watch.reason
    }
    throw error
  }
  if (watch.aborted) {
    if (once) {
      await giveBack(client, claim)
    }
    throw watch.reason
  }
  if (once || !(waiting.timeoutMs > 0)) {
    return once
  }
  if (waiting.waitOn !== undefined) {
    return await waitOn(client, ownConnection(waiting.waitOn), claim, deadline, watch)
  }
  const pool = waitersOf(client)
  const connection = await watch.race(pool.take(), (ready) => {
    pool.give(ready)
  })
  let closed = false
  let failed = false
  watch.onAbort(() => {
    closed = true
    pool.discard(connection) // out of the line; the slice's command fails at once
  })
  try {
    const slice = sliceMs(connection.link.replyLimitMs)
    for (;;) {
      const wait = Math.min(slice, deadline - performance.now())
      if (wait <= 0) {
        return false
      }
      let held: T
      try {
        held = await sendOn(connection.link, claim.waiting(wait))
      } catch (error) {
        if (watch.aborted) {
          await giveBack(client, claim)
          throw watch.reason
        }
        failed = true
        throw error
      }
      if (watch.aborted) {
        if (held) {
          await giveBack(client, claim)
        }
        throw watch.reason
      }
      if (held) {
        return held
      }
    }
  } finally {
    // A connection whose command failed is not reused: it may be the one at fault. One given back
    // (or closed, past the few kept idle) is given back once the acquire has resolved, not on
    // the way to the caller that waited for the lock.
    if (failed) {
      pool.discard(connection)
    } else if (!closed) {
      setImmediate(() => {
        pool.give(connection)
      })
    }
  }
}

/**
 * The wait on the lock's own `waitOn` connection, which the package never closes: an abort
 * rejects at once, and sends the give-back behind the slice under way on that connection, so it
 * is carried out after the slice's reply, grant or not, and before anything sent there later (on
 * the application's client instead if that connection has failed).
 */
async function waitOn<T extends boolean | number>(
  client: RedisClient,
  connection: Connection,
  claim: Claim<T>,
  deadline: number,
  watch: Watch,
): Promise<T | false> {
  let sliceUnderWay = false
  watch.onAbort(() => {
    if (sliceUnderWay) {
      void sendOn(connection.link, claim.giveBack).catch(() => giveBack(client, claim))
    }
  })
  const slice = sliceMs(connection.link.replyLimitMs)
  for (;;) {
    const wait = Math.min(slice, deadline - performance.now())
    if (wait <= 0) {
      return false
    }
    sliceUnderWay = true
    let held: T
    try {
      held = await watch.race(sendOn(connection.link, claim.waiting(wait)))
    } finally {
      sliceUnderWay = false
    }
    if (watch.aborted) {
      throw watch.reason // the give-back follows the slice on its connection
    }
    if (held) {
      return held
    }
  }
}

function ownConnection(client: RedisClient): Connection {
  return { client, link: linkOf(client) }
}
