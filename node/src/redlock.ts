/**
 * redis-semaphore's `RedlockMutex`, `RedlockSemaphore` and `RedlockMultiSemaphore`: the lock held
 * on a quorum (`Math.round((n + 1) / 2)`, 2 of 3) of `n` independent servers, each running
 * Goblin's commands exactly as the single-server classes do, one command per server and step.
 *
 * Waiting in line across servers: each server has its own line, and no server knows of the
 * others. A waiter first tries every server at once without waiting (GOBLIN.LOCK, GOBLIN.ZWINDOW);
 * a quorum there and it holds the lock. Otherwise it gives back what it took and waits in line on
 * the servers one after another, in the order they were given, until it holds a quorum: a
 * waiter only ever waits for a server later than every one it holds, so two waiters can never
 * each hold what the other waits for (with the same order in every process, there is no
 * deadlock). While it waits, it re-arms the leases it holds every half lease, so none runs out
 * under it; a lease found lost is dropped. A server that fails (down, refused) is passed over.
 * When the quorum cannot be had before `acquireTimeout`, everything taken is given back.
 *
 * `waitOn`, a connection of the user's own for the waits, is one per server here, in the order
 * of `clients` (`waitOn[i]` waits on the server of `clients[i]`): a wait for a server sent on
 * a connection to another would be let through there by a grant held there, and count as a
 * server held that is not. Before it waits on `waitOn[i]`, an acquire checks that both reach
 * the same server (INFO's `run_id`).
 *
 * A refresh renews the lease on every server at once and is decided by the first answers that
 * decide it: a quorum renewed, or so many not renewed that no quorum is left. A server that has
 * not answered (paused, or gone with the client holding its commands until it reconnects) is
 * not waited for once a quorum has answered, and is sent nothing more until it answers; where
 * a lease was lost on a server that answers, it is taken again, without waiting, while the lock
 * is held. The refresh waits at most `lockTimeout` for a quorum of answers: by then no lease
 * it renewed can be proven to hold, and the lock is lost.
 *
 * What it cannot guarantee: the servers' lines are independent, so the order of waiters is the
 * order of the first server's line only while every server answers; a waiter that passed over a
 * failed server meets the others in a different order. And as for any Redlock, the quorum holds
 * only while the leases hold: a holder paused past `lockTimeout` (a long GC, a frozen VM) may find
 * the lock granted to another; refreshes and `onLockLost` say so at the next refresh.
 */
import { type RedisClient, call, checkClient, checkModule, isErrorReply } from './client.js'
import { type Command, serverRunId } from './commands.js'
import { GoblinModuleError } from './errors.js'
import { Lock, type LockOptions, checkKey, checkPermits } from './lock.js'
import { take } from './waiting.js'

/**
 * A Redlock lock's options: redis-semaphore's, and `waitOn` one connection per server, in the
 * order of `clients`.
 */
export interface RedlockOptions extends Omit<LockOptions, 'waitOn'> {
  /** A client for the waits on each server, `waitOn[i]` reaching the server of `clients[i]`. */
  waitOn?: RedisClient[]
}

/** `waitOn` checked: one client per server. */
function checkWaitOn(waitOn: unknown, servers: number): RedisClient[] | undefined {
  if (waitOn === undefined) {
    return undefined
  }
  if (!Array.isArray(waitOn)) {
    throw new TypeError(
      'a Redlock lock waits on each of its servers: give waitOn as an array of one client per server, ' +
        'in the order of "clients" (a connection reaches one server, and a wait for another sent there would count a server not held)',
    )
  }
  if (waitOn.length !== servers) {
    throw new RangeError(`waitOn must give one client per server, in the order of "clients": ${servers}, not ${waitOn.length}`)
  }
  return waitOn.map((client, i) => checkClient(client, `waitOn[${i}]`))
}

/** redis-semaphore's quorum: 2 of 3, 3 of 5, 1 of 1. */
export function quorum(servers: number): number {
  return Math.round((servers + 1) / 2)
}

/** What a step on one server came to: held or not (a server that fails holds nothing). */
async function held(client: RedisClient, step: Command<boolean>): Promise<boolean> {
  try {
    return await call(client, step)
  } catch (error) {
    if (error instanceof GoblinModuleError) {
      throw error
    }
    return false
  }
}

/**
 * The answers of `steps` (one per server; undefined for a server not asked), as soon as they
 * are `enough(answers, unanswered)`, or after `withinMs`: a server that has not answered by
 * then is undefined (its step goes on). A step that fails answers false.
 */
async function answered(
  steps: readonly (Promise<boolean> | undefined)[],
  withinMs: number,
  enough: (answers: readonly (boolean | undefined)[], unanswered: number) => boolean,
): Promise<(boolean | undefined)[]> {
  const answers: (boolean | undefined)[] = steps.map(() => undefined)
  let unanswered = steps.filter((step) => step !== undefined).length
  return await new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const check = (): void => {
      if (timer !== undefined && enough(answers, unanswered)) {
        clearTimeout(timer)
        timer = undefined
        resolve([...answers])
      }
    }
    timer = setTimeout(() => {
      timer = undefined
      resolve([...answers])
    }, withinMs)
    steps.forEach((step, i) => {
      void step
        ?.catch(() => false)
        .then((answer) => {
          answers[i] = answer
          unanswered -= 1
          check()
        })
    })
    check()
  })
}

/** redis-semaphore's `RedlockMutex`: `mutex:<key>` held on a quorum of servers. */
export class RedlockMutex extends Lock {
  protected _kind = 'redlock-mutex'
  protected _key: string
  protected _clients: RedisClient[]
  /** `waitOn[i]`: where the waits for server i are sent, instead of a connection of the package's own. */
  private readonly _waitOns: RedisClient[] | undefined
  /** The servers a step of a refresh was sent to that have not answered: nothing more is sent there until they do. */
  private readonly _unanswered = new Set<number>()
  /** Counts the releases: a refresh started before the latest one takes nothing again. */
  private _releases = 0

  constructor(clients: RedisClient[], key: string, options: RedlockOptions = {}) {
    const { waitOn, ...lockOptions } = options
    super(lockOptions)
    this._fencing = false // tokens of independent servers do not compare: fencingToken stays undefined
    if (!clients || !Array.isArray(clients)) {
      throw new TypeError('"clients" array is required')
    }
    if (clients.length === 0) {
      throw new RangeError('"clients" must name at least one server')
    }
    this._clients = clients.map((client, i) => checkClient(client, `clients[${i}]`))
    this._waitOns = checkWaitOn(waitOn, clients.length)
    this._key = `mutex:${checkKey(key)}`
  }

  /**
   * An abort at any moment gives back what was taken on every server (owner-checked, so a
   * server where nothing was taken is left as it is) and rejects with the signal's reason; a
   * wait under way on one server ends as `take` ends it, its grant given back there.
   */
  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const { claim } = this._lease()
    const need = quorum(this._clients.length)
    const deadline = performance.now() + this._waitMs
    const stop = async (): Promise<never> => {
      await this._giveBack()
      throw abortSignal?.reason
    }
    // The module checks first (a server that fails them is passed over, as any failed step):
    // an abort meanwhile rejects with nothing sent that could grant.
    await Promise.all(
      this._clients.map(async (client) => {
        await checkModule(client).catch((error: unknown) => {
          if (error instanceof GoblinModuleError) {
            throw error
          }
        })
      }),
    )
    abortSignal?.throwIfAborted()
    const taken = await this._everywhere(claim.once)
    if (isAborted(abortSignal)) {
      return await stop()
    }
    if (count(taken) >= need) {
      return true
    }
    await this._giveBack(taken)
    const holding = this._clients.map(() => false)
    try {
      if (await this._waitInOrder(holding, need, deadline, abortSignal)) {
        // The quorum is held: the servers not waited on are taken too where they are free.
        await Promise.all(holding.map(async (isHeld, i) => isHeld || (await held(this._clients[i] as RedisClient, claim.once))))
        if (isAborted(abortSignal)) {
          return await stop()
        }
        return true
      }
    } catch (error) {
      if (isAborted(abortSignal)) {
        return await stop()
      }
      await this._giveBack(holding)
      throw error
    }
    await this._giveBack(holding)
    return false
  }

  /**
   * Waits in line on each server in turn until `need` are held or `deadline` passes; each wait
   * a slice of at most half a lease, after which what is held is re-armed and the wait goes on.
   */
  private async _waitInOrder(holding: boolean[], need: number, deadline: number, signal?: AbortSignal): Promise<boolean> {
    const { claim } = this._lease()
    const halfLease = this._acquireOptions.lockTimeout / 2
    for (const [i, client] of this._clients.entries()) {
      const waitOn = this._waitOns?.[i]
      if (!holding[i] && waitOn !== undefined && deadline - performance.now() > 0 && !(await this._sameServer(i, waitOn))) {
        continue // the server failed: pass it over
      }
      while (!holding[i] && deadline - performance.now() > 0) {
        signal?.throwIfAborted()
        const timeoutMs = Math.min(deadline - performance.now(), halfLease)
        const granted = await take(client, claim, { timeoutMs, signal, waitOn }).catch((error: unknown) => {
          if (signal?.aborted === true || error instanceof GoblinModuleError) {
            throw error
          }
          return undefined // the server failed: pass it over
        })
        if (granted === undefined) {
          break
        }
        holding[i] = granted
        await this._rearm(holding, i)
        signal?.throwIfAborted()
        if (count(holding) >= need) {
          return true
        }
      }
    }
    return false
  }

  /**
   * Whether `waitOn` and `clients[i]` reach the same server (INFO's `run_id`): false if either
   * fails to answer (the server is passed over, as any that fails); an error if they reach two
   * servers, or if the server refuses INFO, which the check needs.
   */
  private async _sameServer(i: number, waitOn: RedisClient): Promise<boolean> {
    const ask = (client: RedisClient): Promise<string | undefined> =>
      call(client, serverRunId).catch((error: unknown) => {
        if (isErrorReply(error) || error instanceof GoblinModuleError) {
          const reason = error instanceof Error ? error.message : String(error)
          throw new Error(`waitOn[${i}] cannot be checked against clients[${i}]: INFO server was refused (${reason}); give no waitOn`, {
            cause: error,
          })
        }
        return undefined
      })
    const [server, waiter] = await Promise.all([ask(this._clients[i] as RedisClient), ask(waitOn)])
    if (server === undefined || waiter === undefined) {
      return false
    }
    if (server !== waiter) {
      throw new Error(
        `waitOn[${i}] reaches another server than clients[${i}] (run_id ${waiter}, not ${server}): ` +
          'give waitOn one connection to each server, in the order of "clients"',
      )
    }
    return true
  }

  /** Re-arms the leases held on servers other than `current`; a lost one is dropped. */
  private async _rearm(holding: boolean[], current: number): Promise<void> {
    const { renewal } = this._lease()
    await Promise.all(
      holding.map(async (isHeld, i) => {
        if (isHeld && i !== current) {
          holding[i] = await held(this._clients[i] as RedisClient, renewal)
        }
      }),
    )
  }

  private async _everywhere(step: Command<boolean>): Promise<boolean[]> {
    return await Promise.all(this._clients.map((client) => held(client, step)))
  }

  private async _giveBack(holding: readonly boolean[] = this._clients.map(() => true)): Promise<void> {
    const { giveBack } = this._lease().claim
    await Promise.all(holding.map(async (isHeld, i) => isHeld && (await held(this._clients[i] as RedisClient, giveBack))))
  }

  /**
   * Renews the lease on every server that has answered the previous refresh, and is decided by
   * the first answers that decide it: a quorum renewed (the lock is held; where a server
   * answers that it lost the lease, now or later, the lease is taken again there without
   * waiting, unless the lock has been released meanwhile), or too few left to make one, or no
   * quorum of answers within `lockTimeout` (the lock is lost: it is given back everywhere,
   * without waiting for the answers).
   */
  protected async _refresh(): Promise<boolean> {
    const { claim, renewal } = this._lease()
    const need = quorum(this._clients.length)
    const releases = this._releases
    let decided: (held: boolean) => void = () => undefined
    const outcome = new Promise<boolean>((resolve) => {
      decided = resolve
    })
    const steps = this._clients.map((_, i) => {
      if (this._unanswered.has(i)) {
        return undefined // still silent since the last step sent there
      }
      const step = this._step(i, renewal)
      void Promise.all([step, outcome]).then(([renewed, held]) => {
        if (!renewed && held && releases === this._releases) {
          void this._step(i, claim.once) // lost there: taken again where it is free
        }
      })
      return step
    })
    const answers = await answered(steps, this._acquireOptions.lockTimeout, (some, unanswered) => {
      const renewed = count(some)
      return renewed >= need || renewed + unanswered < need
    })
    const held = count(answers) >= need
    decided(held)
    if (!held) {
      void this._giveBack().catch(() => undefined)
    }
    return held
  }

  /** `step` on server i, noted as unanswered until it answers. */
  private async _step(i: number, step: Command<boolean>): Promise<boolean> {
    this._unanswered.add(i)
    try {
      return await held(this._clients[i] as RedisClient, step).catch(() => false)
    } finally {
      this._unanswered.delete(i)
    }
  }

  /**
   * Gives the lock back on every server, and resolves once each has answered, or after
   * `lockTimeout`: a server that has not answered by then (paused) carries the give-back out
   * after what was sent to it before, and a lease it holds ends by itself meanwhile, unrenewed.
   */
  protected async _release(): Promise<void> {
    this._releases += 1
    const { giveBack } = this._lease().claim
    let missing: GoblinModuleError | undefined
    const steps = this._clients.map((client) =>
      held(client, giveBack).catch((error: unknown) => {
        missing = error as GoblinModuleError // held() lets only this one through
        return false
      }),
    )
    await answered(steps, this._acquireOptions.lockTimeout, (_, unanswered) => unanswered === 0)
    if (missing !== undefined) {
      throw missing
    }
  }
}

/** Whether `signal` has aborted (read afresh at each step). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

function count(holding: readonly (boolean | undefined)[]): number {
  return holding.filter(Boolean).length
}

/** redis-semaphore's `RedlockSemaphore`: a permit of `semaphore:<key>` on a quorum of servers. */
export class RedlockSemaphore extends RedlockMutex {
  protected _kind = 'redlock-semaphore'

  constructor(clients: RedisClient[], key: string, limit: number, options?: RedlockOptions) {
    super(clients, key, options)
    this._asSemaphore(key, limit)
  }
}

/** redis-semaphore's `RedlockMultiSemaphore`: `permits` of the `limit` on a quorum of servers, all or nothing on each. */
export class RedlockMultiSemaphore extends RedlockSemaphore {
  protected _kind = 'redlock-multi-semaphore'

  constructor(clients: RedisClient[], key: string, limit: number, permits: number, options?: RedlockOptions) {
    super(clients, key, limit, options)
    this._permits = checkPermits(permits, this._limit)
    this._separator = '_'
  }
}
