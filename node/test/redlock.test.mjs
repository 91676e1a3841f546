// The Redlock classes hold a quorum or nothing, on every client library and protocol, against
// three servers (GOBLIN_TEST_SERVERS): no acquire resolves without a quorum, whatever its
// options (the key held on two of the three servers by others, in each placement, must time out;
// and, as the control that the same options can succeed, be acquired once they let go); `waitOn`
// is one connection per server, checked to reach it; and a refresh that still has a quorum keeps
// the lock while the third server is paused (SIGSTOP) or gone (its connections cut, the client
// holding its commands until it comes back), the time a lease takes read on the servers' clock.
import { strict as assert } from 'node:assert'
import { randomUUID } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { after, before, describe, it } from 'node:test'
import { MultiSemaphore, Mutex, RedlockMultiSemaphore, RedlockMutex, RedlockSemaphore, Semaphore } from 'goblin-redis'
import { addresses, admin, close, freshKey, goblinWaiting, libraries, relay, sleep, untilWaiting } from './helpers.mjs'

const nodes = addresses('GOBLIN_TEST_SERVERS')

/** Each class: a holder on one server, its Redlock twin, and whether `lock` holds it on a server. */
const KINDS = [
  {
    name: 'RedlockMutex',
    // A mutex's lease is its holder's own: a lock with a shorter one cannot cut it short.
    ownLease: true,
    make: (client, key, options) => new Mutex(client, key, options),
    redlock: (clients, key, options) => new RedlockMutex(clients, key, options),
    holds: async (raw, key, lock) => (await raw.get(`mutex:${key}`)) === lock.identifier,
  },
  {
    name: 'RedlockSemaphore',
    make: (client, key, options) => new Semaphore(client, key, 1, options),
    redlock: (clients, key, options) => new RedlockSemaphore(clients, key, 1, options),
    holds: async (raw, key, lock) => (await raw.zscore(`semaphore:${key}`, lock.identifier)) !== null,
  },
  {
    name: 'RedlockMultiSemaphore',
    // A holder takes 2 of the 3 permits: the 2 the Redlock lock asks for are not left.
    make: (client, key, options) => new MultiSemaphore(client, key, 3, 2, options),
    redlock: (clients, key, options) => new RedlockMultiSemaphore(clients, key, 3, 2, options),
    holds: async (raw, key, lock) => (await raw.zscore(`semaphore:${key}`, `${lock.identifier}_0`)) !== null,
  },
]

/** The two servers (of three) the others hold the key on: each placement. */
const PLACEMENTS = [
  [0, 1],
  [0, 2],
  [1, 2],
]

/**
 * The options every acquire is tried with (each with `acquireTimeout: 400` unless it names its
 * own): `waitOn` (`true`: one connection of the test's own per server, in order), a lease
 * shorter than the wait (re-armed in slices of half a lease while it waits), each retry and
 * attempt setting, fencing either way, no refresh, no wait at all, and an identifier taken over
 * from elsewhere. A mutex's holders take a lease of a minute, never refreshed: nothing the
 * Redlock lock does can end it early. A semaphore's holders take the lock's lease (a semaphore's
 * lease is the window of every call on its key: a shorter one would evict theirs), refreshed
 * every 100 ms where it is shorter than the wait, with 2.9 s to spare; a holder that loses it all
 * the same says how long the test's event loop was held up (the machine's load), which is the
 * only way it can.
 */
const OPTIONS = [
  ['the defaults', {}],
  ['waitOn', { waitOn: true }],
  ['a lease shorter than the wait', { lockTimeout: 3000, acquireTimeout: 5000 }],
  ['waitOn and a lease shorter than the wait', { waitOn: true, lockTimeout: 3000, acquireTimeout: 5000 }],
  ['retryInterval 1', { retryInterval: 1 }],
  ['acquireAttemptsLimit 1', { acquireAttemptsLimit: 1 }],
  ['acquireAttemptsLimit 3', { acquireAttemptsLimit: 3 }],
  ['refreshInterval 0', { refreshInterval: 0 }],
  ['fencing true', { fencing: true }],
  ['fencing false', { fencing: false }],
  ['acquireTimeout 0', { acquireTimeout: 0 }],
  ['acquiredExternally', { external: true }],
]

/** A command on a client of either library. */
function send(client, args) {
  return typeof client.call === 'function' && client.status !== undefined ? client.call(...args) : client.sendCommand(args)
}

/** The server's clock, in ms (TIME). */
async function serverMs(raw) {
  const [seconds, micros] = await raw.time()
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

/** Resolves once `check()` holds, asked every 10 ms; a guard of 20 s names what never came instead of hanging. */
async function until(check, what) {
  const guard = performance.now() + 20_000
  while (!(await check())) {
    if (performance.now() > guard) {
      throw new Error(`never: ${what}`)
    }
    await sleep(10)
  }
}

for (const library of libraries()) {
  describe(`Redlock on ${library.name}`, () => {
    let clients
    let raws
    before(async () => {
      clients = await Promise.all(nodes.map((node) => library.connect(node)))
      raws = await Promise.all(nodes.map((node) => admin(node)))
    })
    after(async () => {
      await Promise.all([...clients, ...raws].map(close))
    })

    const heldOn = (kind, key, lock) => Promise.all(raws.map((raw) => kind.holds(raw, key, lock)))
    const count = (held) => held.filter(Boolean).length

    for (const kind of KINDS) {
      it(`${kind.name} never resolves without a quorum, whatever its options`, async () => {
        const opened = []
        const own = async () => {
          const waitOn = await Promise.all(nodes.map((node) => library.connect(node)))
          opened.push(...waitOn)
          return waitOn
        }
        /** The lock of one case, its options made: a fresh connection per server for its waitOn, its own identifier. */
        const made = async (key, { waitOn, external, ...options }, identifier = randomUUID()) => {
          const given = { acquireTimeout: 400, onLockLost, ...options }
          if (waitOn) {
            given.waitOn = await own()
          }
          if (external) {
            Object.assign(given, { identifier, acquiredExternally: true })
          }
          return kind.redlock(clients, key, given)
        }
        const lost = []
        const onLockLost = (error) => lost.push(`${error.message} (the event loop held up ${stall()} at most)`)
        const delay = monitorEventLoopDelay({ resolution: 10 })
        delay.enable()
        const stall = () => `${Math.round(delay.max / 1e6)} ms`
        try {
          await Promise.all(
            OPTIONS.flatMap(([name, options]) =>
              PLACEMENTS.map(async (placement) => {
                const what = `${kind.name} with ${name}, the key held on servers ${placement.map((i) => i + 1)}`
                const key = freshKey(`quorum-${kind.name}`)
                const lease = kind.ownLease ? 60_000 : (options.lockTimeout ?? 10_000)
                const refreshInterval = options.acquireTimeout > lease ? 100 : 0
                const holders = placement.map((i) => kind.make(raws[i], key, { lockTimeout: lease, refreshInterval, onLockLost }))
                await Promise.all(holders.map((holder) => holder.acquire()))
                const lock = await made(key, options)
                assert.equal(await lock.tryAcquire(), false, `${what}: resolved holding ${await heldOn(kind, key, lock)} (leases lost: ${JSON.stringify(lost)})`)
                assert.equal(lock.isAcquired, false, what)
                assert.deepEqual(await heldOn(kind, key, lock), [false, false, false], `${what}: left held`)
                for (const [j, i] of placement.entries()) {
                  assert.equal(await kind.holds(raws[i], key, holders[j]), true, `${what}: a holder lost its lease`)
                }
                assert.deepEqual(lost, [], what)
                // The control: the same options acquire once the others have let go.
                await Promise.all(holders.map((holder) => holder.release()))
                const identifier = randomUUID()
                let owner
                if (options.external) {
                  owner = kind.redlock(clients, key, { identifier, onLockLost })
                  await owner.acquire()
                }
                const again = await made(key, options, identifier)
                assert.equal(await again.tryAcquire(), true, `${what}: not acquired once free`)
                assert.ok(count(await heldOn(kind, key, again)) >= 2, `${what}: acquired without a quorum`)
                owner?.stopRefresh()
                await again.release()
                assert.deepEqual(await heldOn(kind, key, again), [false, false, false], `${what}: left held after release`)
                assert.deepEqual(lost, [], what)
              }),
            ),
          )
        } finally {
          delay.disable()
          await Promise.all(opened.map(close))
        }
      })
    }

    it('waitOn is one connection per server, each checked to reach its server, and the waits go there', async () => {
      const own = await Promise.all(nodes.map((node) => library.connect(node)))
      try {
        for (const kind of KINDS) {
          assert.throws(() => kind.redlock(clients, 'k', { waitOn: own[0] }), TypeError)
          assert.throws(() => kind.redlock(clients, 'k', { waitOn: own.slice(1) }), RangeError)
          assert.throws(() => kind.redlock(clients, 'k', { waitOn: [own[0], own[1], {}] }), TypeError)

          // Held on servers 2 and 3 by others: the lock takes server 1, then waits on server 2,
          // for which the misordered waitOn gives a connection to server 1.
          const key = freshKey(`waiton-${kind.name}`)
          const holders = [1, 2].map((i) => kind.make(raws[i], key, { lockTimeout: 60_000, refreshInterval: 0 }))
          await Promise.all(holders.map((holder) => holder.acquire()))
          const misordered = kind.redlock(clients, key, { waitOn: [own[1], own[0], own[2]], acquireTimeout: 2000 })
          await assert.rejects(misordered.acquire(), /waitOn\[0\] reaches another server than clients\[0\]/)
          assert.deepEqual(await heldOn(kind, key, misordered), [false, false, false])

          // In order: the wait for server 2 is on own[1], seen blocked there by its id.
          const id = Number(await send(own[1], ['CLIENT', 'ID']))
          const waiter = kind.redlock(clients, key, { waitOn: own, acquireTimeout: 10_000 })
          const base = await goblinWaiting(raws[1])
          const acquiring = waiter.acquire()
          await untilWaiting(raws[1], base + 1)
          const entry = await raws[1].client('LIST', 'ID', String(id))
          assert.match(entry, / flags=b /, entry)
          assert.match(entry, /cmd=goblin\.b(lock|zwindow) /, entry)
          await holders[0].release()
          await acquiring
          assert.deepEqual(await heldOn(kind, key, waiter), [true, true, false])
          await waiter.release()
          await holders[1].release()
          assert.deepEqual(await heldOn(kind, key, waiter), [false, false, false])
        }
      } finally {
        await Promise.all(own.map(close))
      }
    })

    /**
     * Holds a lock of each class on the three servers, the client of server `faulty` reaching it
     * through a relay; `fault(relayed)` takes that server away once each lock has sent it a
     * renewal, after which each must hold on the other two servers for 3 leases of the servers'
     * clock, under load, and lose nothing; `mend(relayed)` brings it back, and each lock is taken
     * there again.
     */
    async function refreshesThrough(faulty, fault, mend) {
      const lease = 1000
      const relayed = await relay(nodes[faulty])
      const through = [...clients]
      through[faulty] = await library.connect(relayed.address)
      through[faulty].on('error', () => {}) // its reconnection attempts while the server is gone
      const lost = []
      const locks = KINDS.map((kind) => {
        const key = freshKey(`refresh-${kind.name}`)
        const onLockLost = (error) => lost.push(`${kind.name}: ${error.message}`)
        return { kind, key, lock: kind.redlock(through, key, { lockTimeout: lease, refreshInterval: 100, onLockLost }) }
      })
      const others = [0, 1, 2].filter((i) => i !== faulty)
      let loading = true
      try {
        await Promise.all(locks.map(({ lock }) => lock.acquire()))
        for (const { kind, key, lock } of locks) {
          assert.deepEqual(await heldOn(kind, key, lock), [true, true, true], kind.name)
        }
        // The event: each lock's next renewal sent to the server, then the fault.
        const link = relayed.links.find((one) => !one.closed)
        const from = link.sent.length
        await relayed.until(() => locks.every(({ lock }) => link.sent.slice(from).includes(lock.identifier)), 'a renewal of each lock')
        await fault(relayed)
        // Load beside: single-server locks taken and given back on the other servers' clients.
        const load = others.map(async (i) => {
          while (loading) {
            const mutex = new Mutex(clients[i], freshKey('load'), { refreshInterval: 0 })
            await mutex.acquire()
            await mutex.release()
          }
        })
        const start = await serverMs(raws[others[0]])
        await until(async () => (await serverMs(raws[others[0]])) >= start + 3 * lease, "3 leases of the server's clock")
        loading = false
        await Promise.all(load)
        for (const { kind, key, lock } of locks) {
          // Asked of the two servers that answer only: the third answers nobody meanwhile.
          const held = await Promise.all(others.map((i) => kind.holds(raws[i], key, lock)))
          assert.deepEqual(held, [true, true], `${kind.name}: not held on the two servers that answer, 3 leases after server ${faulty + 1} went`)
          assert.equal(lock.isAcquired, true, kind.name)
        }
        assert.deepEqual(lost, [])
        await mend(relayed)
        for (const { kind, key, lock } of locks) {
          await until(() => kind.holds(raws[faulty], key, lock), `${kind.name} taken again on server ${faulty + 1}`)
        }
        await Promise.all(locks.map(({ lock }) => lock.release()))
        for (const { kind, key, lock } of locks) {
          assert.deepEqual(await heldOn(kind, key, lock), [false, false, false], kind.name)
        }
        assert.deepEqual(lost, [])
      } finally {
        loading = false
        await mend(relayed)
        locks.forEach(({ lock }) => lock.stopRefresh())
        await close(through[faulty]).catch(() => undefined)
        relayed.close()
      }
    }

    it('a refresh with a quorum keeps the lock while the third server is paused (SIGSTOP), and takes it there again once it answers', async () => {
      const pid = Number(/process_id:(\d+)/.exec(await raws[2].info('server'))[1])
      let paused = false
      await refreshesThrough(
        2,
        () => {
          process.kill(pid, 'SIGSTOP')
          paused = true
        },
        () => {
          if (paused) {
            paused = false
            process.kill(pid, 'SIGCONT')
          }
        },
      )
    })

    it('a refresh with a quorum keeps the lock while the third server is gone (the client holds its commands), and takes it there again once it is back', async () => {
      let cut = false
      await refreshesThrough(
        2,
        async (relayed) => {
          await relayed.cut()
          cut = true
        },
        async (relayed) => {
          if (cut) {
            cut = false
            await relayed.restore()
          }
        },
      )
    })
  })
}
