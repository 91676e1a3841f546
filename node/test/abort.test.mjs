// An aborted acquire never comes back holding the lock: the abort placed, deterministically, at
// each moment of an acquire, for every lock class on every client library and protocol. The
// clients reach the server (GOBLIN_TEST_SERVER; GOBLIN_TEST_SERVERS for the Redlock classes)
// through a relay that holds the server's replies back, so that the test decides when a reply in
// flight arrives: before the first try (the module check under way), the first try's grant in
// flight, the waiter's connection being set up, between two slices (a slice's nil in flight),
// and a grant in flight to a waiter in line. Each must reject with the signal's reason and leave
// nothing held, read on the server itself.
import { strict as assert } from 'node:assert'
import { after, before, describe, it } from 'node:test'
import { MultiSemaphore, Mutex, RedlockMultiSemaphore, RedlockMutex, RedlockSemaphore, Semaphore, closeWaiters } from 'goblin-redis'
import { address, addresses, admin, close, freshKey, goblinWaiting, libraries, relay, sentCount, untilWaiting } from './helpers.mjs'

const server = address('GOBLIN_TEST_SERVER')

/** Each class: how it is made (a holder and a waiter alike: two holders fill it), and whether `lock` holds it on a server. */
const KINDS = [
  {
    name: 'Mutex',
    make: (client, key, options) => new Mutex(client, key, options),
    redlock: (clients, key, options) => new RedlockMutex(clients, key, options),
    holds: async (raw, key, lock) => (await raw.get(`mutex:${key}`)) === lock.identifier,
    stored: (key) => `mutex:${key}`,
    first: 'GOBLIN.LOCK',
    wait: 'GOBLIN.BLOCK',
  },
  {
    name: 'Semaphore',
    make: (client, key, options) => new Semaphore(client, key, 1, options),
    redlock: (clients, key, options) => new RedlockSemaphore(clients, key, 1, options),
    holds: async (raw, key, lock) => (await raw.zscore(`semaphore:${key}`, lock.identifier)) !== null,
    stored: (key) => `semaphore:${key}`,
    first: 'GOBLIN.ZWINDOW',
    wait: 'GOBLIN.BZWINDOW',
  },
  {
    name: 'MultiSemaphore',
    make: (client, key, options) => new MultiSemaphore(client, key, 3, 2, options),
    redlock: (clients, key, options) => new RedlockMultiSemaphore(clients, key, 3, 2, options),
    holds: async (raw, key, lock) => (await raw.zscore(`semaphore:${key}`, `${lock.identifier}_0`)) !== null,
    stored: (key) => `semaphore:${key}`,
    first: 'GOBLIN.ZWINDOW',
    wait: 'GOBLIN.BZWINDOW',
  },
]

/** A held-back reply that is a nil, in either protocol: the end of a slice. */
const NIL = /^(\$-1|\*-1|_)\r\n$/

/** The options that make `library`'s client cut a reply off after `ms` (and so the package's slices shorter). */
function replyLimit(library, where, ms) {
  if (library.kind === 'ioredis') {
    return { commandTimeout: ms }
  }
  // node-redis 5 and 6 close a socket silent for socketTimeout; node-redis 4 has no such option
  // and ignores it, but the package reads it all the same, and slices its waits by it.
  return { socket: { host: where.host, port: where.port, socketTimeout: ms } }
}

/**
 * Makes `client`'s next waiter connection abort `controller` while it connects: `duplicate()`
 * (the package's only way to open one) gives a copy whose `connect()` aborts once started.
 */
function abortWhileConnecting(client, controller, reason) {
  const duplicate = client.duplicate
  client.duplicate = function (...args) {
    client.duplicate = duplicate
    const copy = duplicate.apply(this, args)
    const connect = copy.connect
    copy.connect = function (...connectArgs) {
      const connecting = connect.apply(this, connectArgs)
      controller.abort(reason)
      return connecting
    }
    return copy
  }
}

/** Two round trips on `client`: whatever a reply before them set off has been sent by then. */
async function settled(client) {
  await client.ping()
  await client.ping()
}

const rejectedWith = (reason) => (error) => error === reason

/** Resolves once the server no longer lists the relay's connection of `link` (CLIENT LIST's addr). */
async function untilDropped(raw, link) {
  const addr = ` addr=127.0.0.1:${link.upstreamPort} `
  for (let i = 0; (await raw.client('LIST')).includes(addr); i++) {
    // Not a deadline of the test: a guard that names what never came instead of hanging.
    if (i > 2000) {
      throw new Error(`the server still lists the closed connection${addr}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

for (const library of libraries()) {
  describe(`an aborted acquire on ${library.name}`, () => {
    let relayed
    let raw
    let client
    let limited
    before(async () => {
      relayed = await relay(server)
      raw = await admin(server)
      client = await library.connect(relayed.address)
      // Replies cut off after 1.2 s: the package waits in slices of 200 ms.
      limited = await library.connect(relayed.address, replyLimit(library, relayed.address, 1200))
    })
    after(async () => {
      await Promise.all([client, limited, raw].map(close))
      relayed.close()
    })

    it('before the first try (the module check under way, or the signal aborted already): nothing is sent', async () => {
      // A client of its own, whose module check is under way at the first abort (at the next
      // ones it has passed, and the abort lands before the first try is sent).
      const since = relayed.links.length
      const client = await library.connect(relayed.address)
      try {
        for (const kind of KINDS) {
          const key = freshKey(`abort-first-${kind.name}`)
          const lock = kind.make(client, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          const acquiring = lock.acquire(controller.signal) // its MODULE LIST is on its way
          controller.abort(reason)
          await assert.rejects(acquiring, rejectedWith(reason))
          await assert.rejects(lock.acquire(AbortSignal.abort(reason)), rejectedWith(reason))
          await assert.rejects(lock.tryAcquire(AbortSignal.abort(reason)), rejectedWith(reason))
          await settled(client)
          const sent = relayed.links.slice(since).reduce((n, link) => n + sentCount(link, kind.first) + sentCount(link, kind.wait), 0)
          assert.equal(sent, 0, `${kind.name}: a try was sent after the abort`)
          assert.equal(await raw.exists(kind.stored(key)), 0)
          assert.equal(lock.isAcquired, false)
        }
      } finally {
        await close(client)
      }
    })

    it("the first try's grant in flight: rejects, and the grant is given back", async () => {
      for (const kind of KINDS) {
        try {
          await settled(client)
          const key = freshKey(`abort-once-${kind.name}`)
          const lock = kind.make(client, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          relayed.hold((link) => sentCount(link, kind.first) > 0)
          const acquiring = lock.acquire(controller.signal)
          await relayed.until(() => relayed.links.some((link) => link.held.length > 0), `${kind.name}'s first try's reply`)
          assert.equal(await kind.holds(raw, key, lock), true, 'the server granted it; its reply is held back')
          controller.abort(reason)
          relayed.release()
          await assert.rejects(acquiring, rejectedWith(reason))
          assert.equal(lock.isAcquired, false)
          assert.equal(lock.fencingToken, undefined)
          assert.equal(await kind.holds(raw, key, lock), false, `${kind.name}: still held after the abort`)
          assert.equal(await raw.exists(kind.stored(key)), 0)
        } finally {
          relayed.release()
        }
      }
    })

    it("while the waiter's connection is set up: rejects at once, nothing waits or is granted", async () => {
      for (const kind of KINDS) {
        const since = relayed.links.length
        closeWaiters(client) // no idle waiter connection: the next is set up
        try {
          const key = freshKey(`abort-setup-${kind.name}`)
          const holder = kind.make(raw, key, { refreshInterval: 0 })
          await holder.acquire()
          const base = await goblinWaiting(raw)
          const waiter = kind.make(client, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          abortWhileConnecting(client, controller, reason)
          await assert.rejects(waiter.acquire(controller.signal), rejectedWith(reason))
          await settled(client)
          assert.equal(await goblinWaiting(raw), base)
          const waits = relayed.links.slice(since).reduce((n, link) => n + sentCount(link, kind.wait), 0)
          assert.equal(waits, 0, `${kind.name}: a wait was sent after the abort`)
          await holder.release()
          await settled(client)
          assert.equal(await kind.holds(raw, key, waiter), false)
          assert.equal(await raw.exists(kind.stored(key)), 0)
        } finally {
          await settled(client)
        }
      }
    })

    it("between two slices (a slice's nil in flight): rejects, and no slice follows", async () => {
      for (const kind of KINDS) {
        const since = relayed.links.length
        closeWaiters(limited) // the waiter's connection is a new link of the relay
        try {
          const key = freshKey(`abort-slices-${kind.name}`)
          const holder = kind.make(raw, key, { refreshInterval: 0 })
          await holder.acquire()
          const base = await goblinWaiting(raw)
          const waiter = kind.make(limited, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          relayed.hold((link) => sentCount(link, kind.wait) > 0)
          const acquiring = waiter.acquire(controller.signal)
          const slicing = () => relayed.links.slice(since).find((link) => sentCount(link, kind.wait) > 0 && link.held.length > 0)
          await relayed.until(() => slicing() !== undefined, `${kind.name}'s first slice's end`)
          const link = slicing()
          assert.match(Buffer.concat(link.held).toString('latin1'), NIL)
          controller.abort(reason)
          relayed.release()
          await assert.rejects(acquiring, rejectedWith(reason))
          // The abort closes the waiter's connection: once the relay has seen it closed, it has
          // seen every byte that connection will ever send; and once the server has dropped it,
          // it has carried out every command it got there.
          await relayed.until(() => link.closed, `${kind.name}'s waiter connection closed`)
          assert.equal(sentCount(link, kind.wait), 1, `${kind.name}: a slice was sent after the abort`)
          const waits = relayed.links.slice(since).reduce((n, one) => n + sentCount(one, kind.wait), 0)
          assert.equal(waits, 1, `${kind.name}: a slice was sent on another connection after the abort`)
          await untilDropped(raw, link)
          assert.equal(await goblinWaiting(raw), base)
          await holder.release()
          await settled(limited)
          assert.equal(await kind.holds(raw, key, waiter), false)
          assert.equal(await raw.exists(kind.stored(key)), 0)
        } finally {
          relayed.release()
        }
      }
    })

    it('a grant in flight to a waiter in line: rejects, and the grant is given back', async () => {
      for (const kind of KINDS) {
        const since = relayed.links.length
        closeWaiters(client) // the waiter's connection is a new link of the relay
        try {
          const key = freshKey(`abort-grant-${kind.name}`)
          const holder = kind.make(raw, key, { refreshInterval: 0 })
          await holder.acquire()
          const base = await goblinWaiting(raw)
          const waiter = kind.make(client, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          relayed.hold((link) => sentCount(link, kind.wait) > 0)
          const acquiring = waiter.acquire(controller.signal)
          await untilWaiting(raw, base + 1)
          await holder.release() // the server grants the waiter: its reply is held back
          const granted = () => relayed.links.slice(since).some((link) => sentCount(link, kind.wait) > 0 && link.held.length > 0)
          await relayed.until(granted, `${kind.name}'s grant`)
          assert.equal(await kind.holds(raw, key, waiter), true)
          controller.abort(reason)
          relayed.release()
          await assert.rejects(acquiring, rejectedWith(reason))
          assert.equal(waiter.isAcquired, false)
          assert.equal(await kind.holds(raw, key, waiter), false, `${kind.name}: still held after the abort`)
          assert.equal(await raw.exists(kind.stored(key)), 0)
          assert.equal(await goblinWaiting(raw), base)
        } finally {
          relayed.release()
        }
      }
    })
  })

  describe(`an aborted Redlock acquire on ${library.name}`, () => {
    const nodes = addresses('GOBLIN_TEST_SERVERS')
    let relays
    let raws
    let clients
    before(async () => {
      relays = await Promise.all(nodes.map((node) => relay(node)))
      raws = await Promise.all(nodes.map((node) => admin(node)))
      clients = await throughAll()
    })
    after(async () => {
      await Promise.all([...clients, ...raws].map(close))
      relays.forEach((one) => one.close())
    })

    const throughAll = () => Promise.all(relays.map((one) => library.connect(one.address)))
    const heldAnywhere = (kind, key, lock) => Promise.all(raws.map((raw) => kind.holds(raw, key, lock)))
    const noneHeld = [false, false, false]

    it('before the first try (the module checks under way): nothing is sent', async () => {
      const since = relays.map((one) => one.links.length)
      const clients = await throughAll() // their own: the first abort lands while their module checks are under way
      try {
        for (const kind of KINDS) {
          const key = freshKey(`rl-abort-first-${kind.name}`)
          const lock = kind.redlock(clients, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          const acquiring = lock.acquire(controller.signal)
          controller.abort(reason)
          await assert.rejects(acquiring, rejectedWith(reason))
          await Promise.all(clients.map(settled))
          const sent = relays.flatMap((one, i) => one.links.slice(since[i])).reduce((n, link) => n + sentCount(link, kind.first), 0)
          assert.equal(sent, 0)
          assert.deepEqual(await heldAnywhere(kind, key, lock), noneHeld)
        }
      } finally {
        await Promise.all(clients.map(close))
      }
    })

    it("the first tries' grants in flight: rejects, and every grant is given back", async () => {
      for (const kind of KINDS) {
        try {
          await Promise.all(clients.map(settled))
          const key = freshKey(`rl-abort-once-${kind.name}`)
          const lock = kind.redlock(clients, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          relays.forEach((one) => one.hold((link) => sentCount(link, kind.first) > 0))
          const acquiring = lock.acquire(controller.signal)
          await Promise.all(relays.map((one) => one.until(() => one.links.some((link) => link.held.length > 0), 'a first try')))
          assert.deepEqual(await heldAnywhere(kind, key, lock), [true, true, true])
          controller.abort(reason)
          relays.forEach((one) => one.release())
          await assert.rejects(acquiring, rejectedWith(reason))
          assert.equal(lock.isAcquired, false)
          assert.deepEqual(await heldAnywhere(kind, key, lock), noneHeld)
        } finally {
          relays.forEach((one) => one.release())
        }
      }
    })

    it("while the waiter's connection is set up: rejects, nothing held anywhere", async () => {
      for (const kind of KINDS) {
        closeWaiters(clients[0]) // no idle waiter connection: the next is set up
        try {
          const key = freshKey(`rl-abort-setup-${kind.name}`)
          const holders = [0, 1].map((i) => kind.make(raws[i], key, { refreshInterval: 0 }))
          await Promise.all(holders.map((holder) => holder.acquire()))
          const lock = kind.redlock(clients, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          abortWhileConnecting(clients[0], controller, reason)
          await assert.rejects(lock.acquire(controller.signal), rejectedWith(reason))
          await Promise.all(holders.map((holder) => holder.release()))
          await Promise.all(clients.map(settled))
          assert.deepEqual(await heldAnywhere(kind, key, lock), noneHeld)
        } finally {
          await Promise.all(clients.map(settled))
        }
      }
    })

    it('a grant in flight in the first server\'s line: rejects, and nothing is held anywhere', async () => {
      for (const kind of KINDS) {
        try {
          const key = freshKey(`rl-abort-grant-${kind.name}`)
          const holders = [0, 1].map((i) => kind.make(raws[i], key, { refreshInterval: 0 }))
          await Promise.all(holders.map((holder) => holder.acquire()))
          const base = await goblinWaiting(raws[0])
          const lock = kind.redlock(clients, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          relays[0].hold((link) => sentCount(link, kind.wait) > 0)
          const acquiring = lock.acquire(controller.signal)
          await untilWaiting(raws[0], base + 1)
          await holders[0].release()
          await relays[0].until(() => relays[0].links.some((link) => sentCount(link, kind.wait) > 0 && link.held.length > 0), 'the grant')
          assert.equal(await kind.holds(raws[0], key, lock), true)
          controller.abort(reason)
          relays[0].release()
          await assert.rejects(acquiring, rejectedWith(reason))
          assert.deepEqual(await heldAnywhere(kind, key, lock), noneHeld)
          await holders[1].release()
        } finally {
          relays[0].release()
        }
      }
    })

    it('holding the first server, waiting on the second: rejects, and the first is given back', async () => {
      for (const kind of KINDS) {
        const key = freshKey(`rl-abort-second-${kind.name}`)
        const holders = [1, 2].map((i) => kind.make(raws[i], key, { refreshInterval: 0 }))
        await Promise.all(holders.map((holder) => holder.acquire()))
        try {
          const base = await goblinWaiting(raws[1])
          const lock = kind.redlock(clients, key, { acquireTimeout: 5000 })
          const reason = new Error('given up')
          const controller = new AbortController()
          const acquiring = lock.acquire(controller.signal)
          await untilWaiting(raws[1], base + 1)
          assert.equal(await kind.holds(raws[0], key, lock), true) // granted in the first server's line
          controller.abort(reason)
          await assert.rejects(acquiring, rejectedWith(reason))
          assert.deepEqual(await heldAnywhere(kind, key, lock), noneHeld)
          assert.equal(await goblinWaiting(raws[1]), base)
        } finally {
          await Promise.all(holders.map((holder) => holder.release()))
        }
      }
    })
  })
}
