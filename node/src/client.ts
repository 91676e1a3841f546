/**
 * The application's own client, as the package sends on it: ioredis (5 or 6, a `Redis` or a
 * `Cluster`) or node-redis (`redis` 4, 5 or 6, a client or a cluster). A `Command`'s keys are
 * routed and prefixed as a core command's are: on ioredis through a `Command` of the client's own
 * copy of ioredis whose `getKeys()` names them (its cluster routes by them, and `keyPrefix` is
 * put on them), on node-redis through `sendCommand` with the first key (a cluster routes by it;
 * node-redis 6's `keyPrefix` is put on every key). No client library is imported: each is
 * recognised by its shape, and the package never opens a connection of its own, but the ones a
 * waiter needs (`waiting.ts`).
 *
 * The module check is here too: before a client's first Goblin command, `MODULE LIST` once per
 * client (concurrent first calls share it); a check that fails is asked again at the next call.
 */
import { type Arg, type Command, moduleList } from './commands.js'
import { moduleError } from './errors.js'

/** An ioredis `Redis` or `Cluster` (ioredis 5 or 6). */
export interface IoredisClient {
  readonly isCluster: boolean
  readonly options: object
  sendCommand(command: never): unknown
  call(...args: never[]): unknown
  duplicate(...args: never[]): unknown
}

/** A node-redis client or cluster (`redis` 4, 5 or 6). */
export interface NodeRedisClient {
  readonly isOpen: boolean
  sendCommand(...args: never[]): Promise<unknown>
  duplicate(...args: never[]): unknown
}

/** The application's client: ioredis or node-redis, one server or a cluster. */
export type RedisClient = IoredisClient | NodeRedisClient

/** How the package sends on one client. */
export interface Link {
  /** The command `args`, its keys at `keys` routed (and prefixed); its raw reply. */
  send(args: readonly Arg[], keys: readonly number[], readOnly: boolean): Promise<unknown>
  /** The shortest of the client's own timeouts that would cut a blocked command short (ms). */
  readonly replyLimitMs: number | undefined
  /** A new connection of the same kind, to the same server(s), ready: a waiter's. */
  duplicate(): Promise<RedisClient>
  /** Closes this connection at once (a duplicate: pending commands are rejected). */
  close(): void
  /** Whether the process may exit while this connection is open. */
  hold(held: boolean): void
  /** Calls `listener` once the client has ended (quit, disconnect). */
  onEnd(listener: () => void): void
}

// Shapes of the parts of each library the package reads, beyond the public types above.
interface IoredisShape {
  isCluster: boolean
  options: { keyPrefix?: string; commandTimeout?: number; socketTimeout?: number; redisOptions?: IoredisShape['options'] }
  call(this: unknown, ...args: unknown[]): unknown
  sendCommand(command: unknown): Promise<unknown>
  duplicate(...args: unknown[]): IoredisShape
  connect(): Promise<void>
  disconnect(): void
  stream?: { ref?(): void; unref?(): void }
  on(event: string, listener: (...args: unknown[]) => void): unknown
  once(event: string, listener: () => void): unknown
}

interface NodeRedisShape {
  isOpen: boolean
  _keyPrefix?: string
  options?: {
    socket?: { socketTimeout?: number }
    commandOptions?: { timeout?: number }
    defaults?: { socket?: { socketTimeout?: number }; commandOptions?: { timeout?: number } }
  }
  getSlotMaster?: unknown
  sendCommand(...args: unknown[]): Promise<unknown>
  duplicate(...args: unknown[]): NodeRedisShape
  connect(): Promise<unknown>
  destroy?(): void
  disconnect?(): Promise<void>
  ref?(): void
  unref?(): void
  on(event: string, listener: (...args: unknown[]) => void): unknown
  once(event: string, listener: () => void): unknown
}

type CommandClass = new (name: string, args: Arg[], options: object) => object

function isIoredis(client: object): client is IoredisShape {
  const shape = client as Partial<IoredisShape>
  return typeof shape.isCluster === 'boolean' && typeof shape.call === 'function' && typeof shape.sendCommand === 'function'
}

function isNodeRedis(client: object): client is NodeRedisShape {
  const shape = client as Partial<NodeRedisShape>
  return typeof shape.isOpen === 'boolean' && typeof shape.sendCommand === 'function' && typeof shape.duplicate === 'function'
}

/** Whether `client` is one the package can send on (checked where it is given). */
export function isRedisClient(client: unknown): client is RedisClient {
  return typeof client === 'object' && client !== null && (isIoredis(client) || isNodeRedis(client))
}

/** A TypeError unless `client` is an ioredis or node-redis client. */
export function checkClient(client: unknown, what = 'client'): RedisClient {
  if (!isRedisClient(client)) {
    throw new TypeError(
      `${what} must be an ioredis client (Redis or Cluster) or a node-redis client (createClient or createCluster), not ${describe(client)}`,
    )
  }
  return client
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return String(value)
  }
  return `a ${value.constructor.name}`
}

function prefixed(prefix: string, key: Arg): Arg {
  if (prefix === '') {
    return key
  }
  return Buffer.isBuffer(key) ? Buffer.concat([Buffer.from(prefix), key]) : prefix + key
}

/** A slice of a blocked command's wait under a reply limit: a margin shorter (a second; a quarter of short limits). */
function shortest(...limits: (number | undefined)[]): number | undefined {
  const set = limits.filter((limit): limit is number => typeof limit === 'number' && limit > 0 && Number.isFinite(limit))
  return set.length === 0 ? undefined : Math.min(...set)
}

// ----------------------------------------------------------------------------------- ioredis
const commandClasses = new WeakMap<CommandClass, CommandClass>()

/**
 * The `Command` class of the client's own copy of ioredis, subclassed so that `getKeys()` (which
 * a cluster routes by: `getSlot()` reads its first key) names the module command's keys, that
 * ioredis does not know. The class is found by the one command the client makes through `call`
 * on a stand-in that keeps it instead of sending it.
 */
function keyedCommandClass(client: IoredisShape): new (name: string, args: Arg[], options: object, keys: Arg[]) => object {
  let made: object | undefined
  const probe = {
    options: {},
    sendCommand(command: object) {
      made = command
      return Promise.resolve(null)
    },
  }
  void client.call.call(probe, 'PING')
  const base = (made as { constructor: CommandClass } | undefined)?.constructor
  if (base === undefined) {
    throw new TypeError("the ioredis client's call() made no Command")
  }
  let keyed = commandClasses.get(base)
  if (keyed === undefined) {
    keyed = class KeyedCommand extends base {
      private readonly goblinKeys: Arg[]
      constructor(name: string, args: Arg[], options: object, keys: Arg[]) {
        super(name, args, options)
        this.goblinKeys = keys
      }
      getKeys(): Arg[] {
        return this.goblinKeys
      }
    } as unknown as CommandClass
    commandClasses.set(base, keyed)
  }
  return keyed
}

class IoredisLink implements Link {
  private readonly Keyed: new (name: string, args: Arg[], options: object, keys: Arg[]) => object

  constructor(private readonly client: IoredisShape) {
    this.Keyed = keyedCommandClass(client)
  }

  send(args: readonly Arg[], keys: readonly number[], readOnly: boolean): Promise<unknown> {
    const prefix = this.client.options.keyPrefix ?? ''
    const argv = args.slice(1)
    const named: Arg[] = []
    for (const position of keys) {
      const key = prefixed(prefix, argv[position - 1] as Arg)
      argv[position - 1] = key
      named.push(key)
    }
    const options = readOnly ? { replyEncoding: 'utf8', readOnly } : { replyEncoding: 'utf8' }
    return this.client.sendCommand(new this.Keyed(String(args[0]), argv, options, named))
  }

  get replyLimitMs(): number | undefined {
    const options = this.client.isCluster ? (this.client.options.redisOptions ?? {}) : this.client.options
    return shortest(options.commandTimeout, options.socketTimeout)
  }

  async duplicate(): Promise<RedisClient> {
    const copy = this.client.isCluster
      ? this.client.duplicate([], { lazyConnect: true })
      : this.client.duplicate({ lazyConnect: true, connectionName: 'goblin-waiter' })
    // A waiter's connection reports its errors through the command it sends.
    copy.on('error', () => undefined)
    await copy.connect()
    return copy
  }

  close(): void {
    this.client.disconnect()
  }

  hold(held: boolean): void {
    const stream = this.client.stream
    if (held) {
      stream?.ref?.()
    } else {
      stream?.unref?.()
    }
  }

  onEnd(listener: () => void): void {
    this.client.once('end', listener)
  }
}

// -------------------------------------------------------------------------------- node-redis
class NodeRedisLink implements Link {
  private readonly cluster: boolean

  constructor(private readonly client: NodeRedisShape) {
    this.cluster = typeof client.getSlotMaster === 'function'
  }

  send(args: readonly Arg[], keys: readonly number[], readOnly: boolean): Promise<unknown> {
    const prefix = this.client._keyPrefix ?? ''
    const argv = args.slice()
    for (const position of keys) {
      argv[position] = prefixed(prefix, argv[position] as Arg)
    }
    if (this.cluster) {
      const first = keys.length === 0 ? undefined : argv[keys[0] as number]
      return this.client.sendCommand(first, readOnly, argv)
    }
    return this.client.sendCommand(argv)
  }

  get replyLimitMs(): number | undefined {
    const options = this.client.options ?? {}
    const defaults = options.defaults ?? {}
    return shortest(
      options.socket?.socketTimeout,
      options.commandOptions?.timeout,
      defaults.socket?.socketTimeout,
      defaults.commandOptions?.timeout,
    )
  }

  async duplicate(): Promise<RedisClient> {
    const copy = this.client.duplicate()
    // A waiter's connection reports its errors through the command it sends.
    copy.on('error', () => undefined)
    await copy.connect()
    return copy
  }

  close(): void {
    if (typeof this.client.destroy === 'function') {
      this.client.destroy()
    } else {
      this.client.disconnect?.().catch(() => undefined)
    }
  }

  hold(held: boolean): void {
    if (held) {
      this.client.ref?.()
    } else {
      this.client.unref?.()
    }
  }

  onEnd(listener: () => void): void {
    this.client.once('end', listener)
  }
}

// --------------------------------------------------------------------------------- sending
const links = new WeakMap<object, Link>()

/** How the package sends on `client`. */
export function linkOf(client: RedisClient): Link {
  let link = links.get(client)
  if (link === undefined) {
    const checked = checkClient(client)
    link = isIoredis(checked) ? new IoredisLink(checked) : new NodeRedisLink(checked as unknown as NodeRedisShape)
    links.set(client, link)
  }
  return link
}

/** Sends `command` on `link`; its reply parsed, an error about a missing Goblin command explained. */
export function sendOn<T>(link: Link, command: Command<T>): Promise<T> {
  return link.send(command.args, command.keys, command.readOnly).then(
    (reply) => command.parse(reply),
    (error: unknown) => {
      const explained = moduleError(String(command.args[0]), error)
      if (explained === undefined) {
        throw error
      }
      explained.cause = error
      throw explained
    },
  )
}

/** Whether `error` is the server's error reply (not a connection's failure). */
export function isErrorReply(error: unknown): boolean {
  for (let proto: unknown = error; proto !== null && proto !== undefined; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: string } }).constructor?.name
    if (name === 'ReplyError' || name === 'ErrorReply') {
      return true
    }
  }
  return false
}

const passed = new WeakSet()
const checking = new WeakMap<object, Promise<void>>()

/**
 * Goblin must be loaded, at this package's version or later: `MODULE LIST`, once per client. A
 * server that refuses MODULE LIST (an ACL, a proxy) is taken at its word: a Goblin command it then
 * lacks is the same GoblinModuleError, naming the command. A failed check is not kept.
 */
export async function checkModule(client: RedisClient): Promise<void> {
  if (passed.has(client)) {
    return
  }
  let check = checking.get(client)
  if (check === undefined) {
    check = askModuleList(client)
    checking.set(client, check)
    check.then(
      () => checking.delete(client),
      () => checking.delete(client),
    )
  }
  await check
}

async function askModuleList(client: RedisClient): Promise<void> {
  try {
    await sendOn(linkOf(client), moduleList)
  } catch (error) {
    if (!isErrorReply(error)) {
      throw error
    }
  }
  passed.add(client)
}

/**
 * Sends one Goblin command on the application's client, after the module check, and reads its
 * reply: `await call(redis, fwindow('rl:user42', 60000, { limit: 100 }))`.
 */
export function call<T>(client: RedisClient, command: Command<T>): Promise<T> {
  if (passed.has(client)) {
    return sendOn(linkOf(client), command)
  }
  return checkModule(client).then(() => sendOn(linkOf(client), command))
}
