/**
 * A readers-writer lock on Goblin's commands, in the style of redis-semaphore's `Mutex` (the same
 * options, errors, refresh cycle and `fencingToken`) and Redisson's `RReadWriteLock` (`readLock()`
 * and `writeLock()` of one holder): many readers at once, or one writer, all waiting in one line
 * inside the server, first come, first served, so a stream of readers never starves a writer.
 *
 * | operation | command (each grant with `FENCE` unless `fencing: false`) |
 * |---|---|
 * | acquire, not waiting | GOBLIN.RLOCK / GOBLIN.WLOCK key id lockTimeout |
 * | acquire, waiting in line | GOBLIN.BRLOCK / GOBLIN.BWLOCK key id lockTimeout wait |
 * | refresh | GOBLIN.RWEXTEND key id lockTimeout REPLACE |
 * | release | GOBLIN.RWUNLOCK key id |
 * | `held()` | GOBLIN.RWHELD key id |
 *
 * The key is `rwlock:<key>`: the readers' sorted set (each scored by its lease's end), or the
 * writer's string.
 */
import { type RedisClient, call } from './client.js'
import * as commands from './commands.js'
import { DeadlockError } from './errors.js'
import { type Lease, Lock, type LockOptions, checkKey, checkLockClient } from './lock.js'
import { take } from './waiting.js'

/** One mode of a `ReadWriteLock` (Redisson's `readLock()` / `writeLock()`): acquires in it, releases the holder. */
export interface ReadWriteSide {
  readonly mode: commands.Mode
  /** Takes the lock in this mode, waiting in line up to `acquireTimeout`; TimeoutError if it did not come. */
  acquire(abortSignal?: AbortSignal): Promise<void>
  /** Takes the lock in this mode, waiting in line up to `acquireTimeout`; whether it came. */
  tryAcquire(abortSignal?: AbortSignal): Promise<boolean>
  /** Gives the holder's lease back, whichever its mode. */
  release(): Promise<void>
  /** Whether the holder holds the lock in this mode (as far as its last acquire or refresh knows). */
  readonly isAcquired: boolean
}

/**
 * One holder of a readers-writer lock on `rwlock:<key>`. It holds one mode at a time: acquiring
 * the write lease while it reads **promotes** it once the other readers have left (it waits ahead
 * of the line; `DeadlockError` if another reader already waits so, and it keeps its read lease);
 * acquiring the read lease while it writes **demotes** it at once; acquiring in its own mode
 * renews. Not reentrant: one `release` releases. `acquire()` and `tryAcquire()`, as a `Mutex`'s,
 * take the write lease.
 */
export class ReadWriteLock extends Lock {
  protected _kind = 'read-write lock'
  protected _key: string
  protected _client: RedisClient
  /** The mode the next acquire asks for, and the mode held now. */
  private _asking: commands.Mode = 'write'
  private _mode: commands.Mode | undefined
  private readonly _sides: Record<commands.Mode, ReadWriteSide>

  constructor(client: RedisClient, key: string, options?: LockOptions) {
    super(options)
    this._client = checkLockClient(client)
    this._key = `rwlock:${checkKey(key)}`
    this._sides = { read: new Side(this, 'read'), write: new Side(this, 'write') }
  }

  /** The read side: many holders at once, while no writer holds or waits. */
  readLock(): ReadWriteSide {
    return this._sides.read
  }

  /** The write side: one holder, alone. */
  writeLock(): ReadWriteSide {
    return this._sides.write
  }

  /** The mode this holder holds the lock in, as its last grant left it; undefined while it holds none. */
  get mode(): commands.Mode | undefined {
    return this.isAcquired ? this._mode : undefined
  }

  /** The mode this holder's lease runs in on the server now (GOBLIN.RWHELD), or null. */
  async held(): Promise<commands.Mode | null> {
    return await call(this._client, commands.rwHeld(this._key, this._identifier))
  }

  /** Takes the lock in `mode`, waiting in line up to `acquireTimeout`; whether it came. */
  async tryAcquireIn(mode: commands.Mode, abortSignal?: AbortSignal): Promise<boolean> {
    this._asking = mode
    const acquired = await this.tryAcquire(abortSignal)
    if (acquired) {
      this._mode = mode
    }
    return acquired
  }

  /** Takes the lock in `mode`, waiting in line up to `acquireTimeout`; TimeoutError if it did not come. */
  async acquireIn(mode: commands.Mode, abortSignal?: AbortSignal): Promise<void> {
    this._asking = mode
    await this.acquire(abortSignal)
    this._mode = mode
  }

  protected _lease(): Lease {
    const { identifier, lockTimeout } = this._acquireOptions
    const key = this._key
    const mode = this._asking
    return {
      claim: {
        once: commands.rwLock(key, identifier, lockTimeout, mode),
        waiting: (waitMs) => commands.rwWait(key, identifier, lockTimeout, mode, waitMs),
        giveBack: commands.rwUnlock(key, identifier),
      },
      renewal: commands.rwExtend(key, identifier, lockTimeout, true),
    }
  }

  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    try {
      const grant = await take(this._client, this._grants().claim, {
        timeoutMs: this._waitMs,
        signal: abortSignal,
        waitOn: this._waitOn,
      })
      return this._granted(grant)
    } catch (error) {
      if (commands.isDeadlock(error)) {
        throw new DeadlockError(`Another reader of ${this._key} already waits to write: each would wait for the other to leave`)
      }
      throw error
    }
  }

  protected async _refresh(): Promise<boolean> {
    return this._granted(await call(this._client, this._grants().renewal))
  }

  protected async _release(): Promise<void> {
    await call(this._client, commands.rwUnlock(this._key, this._identifier))
  }
}

/** A mode of a `ReadWriteLock`, as `readLock()` and `writeLock()` give it. */
class Side implements ReadWriteSide {
  constructor(
    private readonly lock: ReadWriteLock,
    readonly mode: commands.Mode,
  ) {}

  acquire(abortSignal?: AbortSignal): Promise<void> {
    return this.lock.acquireIn(this.mode, abortSignal)
  }

  tryAcquire(abortSignal?: AbortSignal): Promise<boolean> {
    return this.lock.tryAcquireIn(this.mode, abortSignal)
  }

  release(): Promise<void> {
    return this.lock.release()
  }

  get isAcquired(): boolean {
    return this.lock.mode === this.mode
  }
}
