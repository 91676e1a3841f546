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
 * What it cannot guarantee: the servers' lines are independent, so the order of waiters is the
 * order of the first server's line only while every server answers; a waiter that passed over a
 * failed server meets the others in a different order. And as for any Redlock, the quorum holds
 * only while the leases hold: a holder paused past `lockTimeout` (a long GC, a frozen VM) may find
 * the lock granted to another; refreshes and `onLockLost` say so at the next refresh.
 */
import { type RedisClient, call, checkClient, checkModule } from './client.js'
import { type Command } from './commands.js'
import { GoblinModuleError } from './errors.js'
import { Lock, type LockOptions, checkKey, checkPermits } from './lock.js'
import { take } from './waiting.js'

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

/** redis-semaphore's `RedlockMutex`: `mutex:<key>` held on a quorum of servers. */
export class RedlockMutex extends Lock {
  protected _kind = 'redlock-mutex'
  protected _key: string
  protected _clients: RedisClient[]

  constructor(clients: RedisClient[], key: string, options?: LockOptions) {
    super(options)
    this._fencing = false // tokens of independent servers do not compare: fencingToken stays undefined
    if (!clients || !Array.isArray(clients)) {
      throw new TypeError('"clients" array is required')
    }
    if (clients.length === 0) {
      throw new RangeError('"clients" must name at least one server')
    }
    this._clients = clients.map((client, i) => checkClient(client, `clients[${i}]`))
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
      while (!holding[i] && deadline - performance.now() > 0) {
        signal?.throwIfAborted()
        const timeoutMs = Math.min(deadline - performance.now(), halfLease)
        const granted = await take(client, claim, { timeoutMs, signal, waitOn: this._waitOn }).catch((error: unknown) => {
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
   * Refreshes the lease on every server; with a quorum refreshed, takes it again (without
   * waiting) where it was lost; without, gives it back everywhere: the lock is lost.
   */
  protected async _refresh(): Promise<boolean> {
    const { claim, renewal } = this._lease()
    const refreshed = await this._everywhere(renewal)
    if (count(refreshed) >= quorum(this._clients.length)) {
      await Promise.all(refreshed.map(async (ok, i) => ok || (await held(this._clients[i] as RedisClient, claim.once))))
      return true
    }
    await this._giveBack()
    return false
  }

  protected async _release(): Promise<void> {
    await this._giveBack()
  }
}

/** Whether `signal` has aborted (read afresh at each step). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

function count(holding: readonly boolean[]): number {
  return holding.filter(Boolean).length
}

/** redis-semaphore's `RedlockSemaphore`: a permit of `semaphore:<key>` on a quorum of servers. */
export class RedlockSemaphore extends RedlockMutex {
  protected _kind = 'redlock-semaphore'

  constructor(clients: RedisClient[], key: string, limit: number, options?: LockOptions) {
    super(clients, key, options)
    this._asSemaphore(key, limit)
  }
}

/** redis-semaphore's `RedlockMultiSemaphore`: `permits` of the `limit` on a quorum of servers, all or nothing on each. */
export class RedlockMultiSemaphore extends RedlockSemaphore {
  protected _kind = 'redlock-multi-semaphore'

  constructor(clients: RedisClient[], key: string, limit: number, permits: number, options?: LockOptions) {
    super(clients, key, limit, options)
    this._permits = checkPermits(permits, this._limit)
    this._separator = '_'
  }
}
