// What goblin-redis's own tests share: the servers the Rust drivers started (GOBLIN_TEST_SERVER,
// GOBLIN_TEST_BARE, a server without the module, GOBLIN_TEST_SERVERS, three for the Redlock
// classes, GOBLIN_TEST_CLUSTER, a three-node cluster), the client libraries at every major the
// package supports, each in every protocol it speaks, and the server's own counts.
import Redis5, { Cluster as Cluster5 } from 'ioredis'
import Redis6, { Cluster as Cluster6 } from 'ioredis6'
import * as redis4 from 'redis4'
import * as redis5 from 'redis5'
import * as redis6 from 'redis6'
import { after, before } from 'node:test'
import { EventEmitter } from 'node:events'
import net from 'node:net'

export function address(variable) {
  const value = process.env[variable]
  if (!value) {
    throw new Error(`${variable} must name a test server (host:port): the Rust drivers set it`)
  }
  const [host, port] = value.split(':')
  return { host, port: Number(port) }
}

export function addresses(variable) {
  const value = process.env[variable]
  if (!value) {
    throw new Error(`${variable} must name test servers (host:port,...): the Rust drivers set it`)
  }
  return value.split(',').map((one) => {
    const [host, port] = one.split(':')
    return { host, port: Number(port) }
  })
}

function nodeRedis(library, resp) {
  return async ({ host, port }, options = {}) => {
    const client = library.createClient({ socket: { host, port }, ...(resp ? { RESP: resp } : {}), ...options })
    client.on('error', () => {})
    await client.connect()
    return client
  }
}

function nodeRedisCluster(library, resp) {
  return async (nodes, options = {}) => {
    const cluster = library.createCluster({
      rootNodes: nodes.map(({ host, port }) => ({ socket: { host, port } })),
      ...(resp ? { RESP: resp } : {}),
      ...options,
    })
    cluster.on('error', () => {})
    await cluster.connect()
    return cluster
  }
}

function ioredis(Redis, protocol) {
  return async ({ host, port }, options = {}) => {
    const client = new Redis({ host, port, lazyConnect: true, ...(protocol ? { protocol } : {}), ...options })
    await client.connect()
    return client
  }
}

function ioredisCluster(Cluster, protocol) {
  return async (nodes, options = {}) => {
    const cluster = new Cluster(nodes, { lazyConnect: true, ...(protocol ? { redisOptions: { protocol } } : {}), ...options })
    await cluster.connect()
    return cluster
  }
}

/** Every client library and protocol: `connect(address, options)` and, for a cluster, `cluster(nodes, options)`. */
export const LIBRARIES = [
  { name: 'ioredis 5 (RESP2)', kind: 'ioredis', connect: ioredis(Redis5), cluster: ioredisCluster(Cluster5) },
  { name: 'ioredis 6 (RESP3)', kind: 'ioredis', connect: ioredis(Redis6), cluster: ioredisCluster(Cluster6) },
  { name: 'ioredis 6 (RESP2)', kind: 'ioredis', connect: ioredis(Redis6, 2), cluster: ioredisCluster(Cluster6, 2) },
  { name: 'node-redis 4 (RESP2)', kind: 'node-redis', connect: nodeRedis(redis4), cluster: nodeRedisCluster(redis4) },
  { name: 'node-redis 5 (RESP2)', kind: 'node-redis', connect: nodeRedis(redis5), cluster: nodeRedisCluster(redis5) },
  { name: 'node-redis 5 (RESP3)', kind: 'node-redis', connect: nodeRedis(redis5, 3), cluster: nodeRedisCluster(redis5, 3) },
  { name: 'node-redis 6 (RESP3)', kind: 'node-redis', connect: nodeRedis(redis6), cluster: nodeRedisCluster(redis6) },
  { name: 'node-redis 6 (RESP2)', kind: 'node-redis', connect: nodeRedis(redis6, 2), cluster: nodeRedisCluster(redis6, 2) },
]

/** The library and protocol a test file runs on: GOBLIN_TEST_LIBRARY (a name's start), or all of them. */
export function libraries() {
  const only = process.env.GOBLIN_TEST_LIBRARY
  return only ? LIBRARIES.filter((library) => library.name.startsWith(only)) : LIBRARIES
}

/** Closes a client of either library. */
export async function close(client) {
  if (typeof client.quit === 'function' && client.status !== undefined) {
    await client.quit().catch(() => client.disconnect())
  } else if (typeof client.close === 'function') {
    await client.close()
  } else {
    await client.quit()
  }
}

/** A client of `library` and a plain connection for the test's own reads, on `where`. */
export async function connected(library, where) {
  return { client: await library.connect(where), raw: await admin(where) }
}

/**
 * A describe's connections: `the.client` of `library` and `the.raw`, a plain one for the test's
 * own reads, both on `where`, opened before its tests and closed after them.
 */
export function connection(library, where) {
  const the = {}
  before(async () => Object.assign(the, await connected(library, where)))
  after(() => closeAll(the.client, the.raw))
  return the
}

/** Closes each of `clients`. */
export async function closeAll(...clients) {
  await Promise.all(clients.map(close))
}

/** A plain ioredis connection for the test's own reads (raw keys, INFO). */
export async function admin(where = address('GOBLIN_TEST_SERVER')) {
  return await ioredis(Redis5)(where)
}

/** `INFO <section>`'s `<prefix><name>:<field>=<n>,...` lines: n by name. */
async function infoCounts(conn, section, prefix, field) {
  const counts = {}
  const line = new RegExp(`^${prefix}([^:]+):.*\\b${field}=(\\d+)`)
  for (const text of (await conn.info(section)).split('\n')) {
    const match = line.exec(text.trim())
    if (match) {
      counts[match[1]] = Number(match[2])
    }
  }
  return counts
}

/** `INFO commandstats`: calls by command (lowercase, as the server lists them). */
export const commandCalls = (conn) => infoCounts(conn, 'commandstats', 'cmdstat_', 'calls')

/** `INFO errorstats`: error replies by prefix (MOVED, ERR, ...). */
export const errorCounts = (conn) => infoCounts(conn, 'errorstats', 'errorstat_', 'count')

/** Not the clients' commands: the test's own INFO, and the replica's acknowledgements (replica mode). */
const NOT_CLIENTS = new Set(['info', 'replconf'])

/** What `before` to `after` (commandstats) added, for the commands that moved. */
export function delta(before, after) {
  const moved = {}
  for (const [name, calls] of Object.entries(after)) {
    const added = calls - (before[name] ?? 0)
    if (added > 0 && !NOT_CLIENTS.has(name)) {
      moved[name] = added
    }
  }
  return moved
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** How many callers wait in the server's lines (INFO goblin). */
export async function goblinWaiting(conn) {
  const info = await conn.info('goblin')
  return Number(/goblin_waiting:(\d+)/.exec(info)[1])
}

/** Waits until the server says `n` callers wait. */
export async function untilWaiting(conn, n) {
  for (let i = 0; i < 500; i++) {
    if ((await goblinWaiting(conn)) === n) {
      return
    }
    await sleep(5)
  }
  throw new Error(`the server never had ${n} waiters`)
}

/** A key no other test uses. */
let serial = 0
export function freshKey(tag) {
  serial += 1
  return `${tag}:${process.pid}:${serial}:${Date.now()}`
}

/**
 * A relay between the clients and a server, on a port of its own, that can hold back the
 * server's replies: the test decides when a reply in flight arrives. Each connection through it
 * is a link: `sent`, what its client has sent (RESP, as text), and `held`, the server's bytes held
 * back for it. `hold(predicate)` holds every link the predicate picks (read afresh as each reply
 * comes) until `release()`, which delivers what was held in order. A client closing its side
 * closes the server's, after what it sent (and drops what was held for it); and the other way.
 * `cut()` makes the server gone for the clients, as a killed one is: every link is closed and
 * no connection is accepted, until `restore()`.
 */
export async function relay(target) {
  const events = new EventEmitter()
  const links = []
  let holding = () => false
  const server = net.createServer((socket) => {
    const upstream = net.connect(target.port, target.host)
    const link = { sent: '', held: [], closed: false, holding: false, deliver: (chunks) => chunks.forEach((chunk) => socket.write(chunk)) }
    links.push(link)
    // The server knows this link by the relay's end of it: CLIENT LIST's addr=127.0.0.1:<upstreamPort>.
    upstream.on('connect', () => {
      link.upstreamPort = upstream.localPort
    })
    const changed = () => events.emit('change')
    socket.on('data', (chunk) => {
      link.sent += chunk.toString('latin1')
      upstream.write(chunk)
      changed()
    })
    upstream.on('data', (chunk) => {
      if (link.holding || holding(link)) {
        link.holding = true
        link.held.push(chunk)
      } else {
        socket.write(chunk)
      }
      changed()
    })
    socket.on('end', () => upstream.end())
    upstream.on('end', () => socket.end())
    const close = () => {
      link.closed = true
      link.held.length = 0
      socket.destroy()
      upstream.destroy()
      changed()
    }
    link.cut = close
    for (const end of [socket, upstream]) {
      end.on('close', close)
      end.on('error', close)
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = server.address().port
  return {
    address: { host: '127.0.0.1', port },
    links,
    /** Closes every link and accepts none (a connection is refused) until `restore()`. */
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve))
      for (const link of links) {
        link.cut()
      }
      await closed
    },
    /** Accepts connections again, on the same port. */
    async restore() {
      await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve))
    },
    /** Holds the replies of every link `predicate(link)` picks, from now until `release()`. */
    hold(predicate) {
      holding = predicate
    },
    /** Delivers what was held, in order, and holds nothing more. */
    release() {
      holding = () => false
      for (const link of links) {
        link.holding = false
        const held = link.held.splice(0)
        if (!link.closed) {
          link.deliver(held)
        }
      }
    },
    /** Resolves once `condition()` holds, asked again at each byte through the relay. */
    until(condition, what = 'the relay condition') {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (condition()) {
            events.off('change', check)
            clearTimeout(guard)
            resolve()
          }
        }
        // Not a deadline of the test: a guard that names what never came instead of hanging.
        const guard = setTimeout(() => {
          events.off('change', check)
          reject(new Error(`the relay never saw ${what}`))
        }, 20_000)
        events.on('change', check)
        check()
      })
    },
    close() {
      for (const link of links) {
        link.closed = true
      }
      server.close()
      events.emit('close')
    },
  }
}

/** How many times a link's client sent `name` (a command's name, as RESP writes it: `$<len>\r\nNAME\r\n`). */
export function sentCount(link, name) {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return (link.sent.match(new RegExp(`\\$${name.length}\\r\\n${escaped}\\r\\n`, 'gi')) ?? []).length
}
