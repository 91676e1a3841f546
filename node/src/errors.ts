import { MODULE_VERSION, versionText } from './version.js'

/**
 * The server has no Goblin module, or one older than this package needs: what every entry point
 * of the package rejects with (the locks, the rate limiters' stores, `call`) instead of the
 * server's bare `unknown command`.
 */
export class GoblinModuleError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'GoblinModuleError'
  }
}

/** A lock's lease was lost between refreshes: what `onLockLost` is given (redis-semaphore's). */
export class LostLockError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'LostLockError'
  }
}

/** `acquire()` gave up after `acquireTimeout` (redis-semaphore's). */
export class TimeoutError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TimeoutError'
  }
}

/**
 * A reader asked to write, waiting, while another reader of the lock already waits to write:
 * each would wait for the other to leave, for ever (GOBLIN.BWLOCK's `-DEADLOCK`). The reader
 * keeps its read lease.
 */
export class DeadlockError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DeadlockError'
  }
}

const LOAD_HINT =
  'load the Goblin module (loadmodule /path/to/libgoblin.so in its config file, or MODULE LOAD ' +
  '/path/to/libgoblin.so; on every node of a cluster)'

/** `what`: the command the server did not know, or how we learnt it lacks Goblin. */
export function missingModule(what: string): GoblinModuleError {
  return new GoblinModuleError(
    `the server has no ${what}: ${LOAD_HINT}; goblin-redis needs Goblin ` +
      `${versionText(MODULE_VERSION)} (MODULE LIST's ver ${MODULE_VERSION}) or later`,
  )
}

export function tooOld(version: number): GoblinModuleError {
  return new GoblinModuleError(
    `the server's Goblin module is version ${version} (${versionText(version)}); goblin-redis needs ` +
      `version ${MODULE_VERSION} (${versionText(MODULE_VERSION)}) or later: load a newer libgoblin.so ` +
      '(MODULE UNLOAD needs the module\'s allow-unload argument, so restart the server with the new loadmodule)',
  )
}

/**
 * What a client library's error about the Goblin command `command` says of the module, if
 * anything: the server lacks the command, or its Goblin takes other arguments than the ones this
 * package sends (an older module).
 */
export function moduleError(command: string, error: unknown): GoblinModuleError | undefined {
  if (!command.toUpperCase().startsWith('GOBLIN.')) {
    return undefined
  }
  const text = String(error instanceof Error ? error.message : error).toLowerCase()
  if (text.includes('unknown command')) {
    return missingModule(command)
  }
  if (text.includes('wrong number of arguments')) {
    return new GoblinModuleError(
      `the server's ${command} does not take these arguments: its Goblin module is older than ` +
        `goblin-redis needs (version ${MODULE_VERSION} or later): load a newer libgoblin.so`,
    )
  }
  return undefined
}
