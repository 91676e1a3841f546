// make bench's Node lock part: the hand-off latency of goblin-redis's Mutex (GOBLIN.BLOCK,
// waiting in line in the server) against redis-semaphore's Mutex (SET NX PX, retried every
// `retryInterval`, 10 ms) and redlock's (its lock script, retried every `retryDelay`, 10 ms with
// 5 ms of jitter), with 1, 10 and 100 waiters, on one server (loopback), with how many commands a
// second the waiters send while the lock is held and whether they were served in arrival order;
// beside them the server's own blocking hand-off, BLPOP woken by LPUSH, the floor on this machine.
//
// The hand-off latency is the time from a holder's release (just before it sends it) to the next
// waiter holding the lock (when its acquire resolves), both on this process's clock. Each round:
// the driver takes the lock; N waiters start, one after another (each once the one before it
// waits: for Goblin, once INFO goblin counts it in the line; for the others, 2 ms apart, a few of
// their retries); the driver releases; each waiter that gets the lock notes the latency, holds it
// 1 ms, releases it and drops out, so a round gives N samples. In the first round of each case the
// driver first holds the lock 2 s and counts the commands the server runs meanwhile (commandstats,
// less the driver's INFO): the waiters' polling. Figures side by side only: nothing here passes
// or fails on time.
//
//   node bench/node/locks.mjs --module target/release/libgoblin.so --server "Valkey 9.1=PATH" [--quick] [--out FILE]
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import Redis from 'ioredis'
import { Mutex as RsemMutex } from 'redis-semaphore'
import Redlock from 'redlock'
import { Mutex, closeWaiters } from 'goblin-redis'
import { commandStats, parseArguments, quantile, sleep, startServer } from './server.mjs'

const options = parseArguments(process.argv.slice(2))
const KEY = 'bench:lock'
const LEASE = 30_000
const HOLD_MS = 1
const COUNT_WINDOW_MS = options.quick ? 200 : 2000
const SAMPLES = options.quick ? 10 : 600
const CLIENTS = options.quick ? [1, 10] : [1, 10, 100]

/** Each lock as the benchmark takes it: `make(client)` gives an object with acquire and release. */
const LOCKS = [
  {
    name: 'Goblin Mutex (GOBLIN.BLOCK)',
    goblin: true,
    make: (client) => {
      const mutex = new Mutex(client, KEY, { lockTimeout: LEASE, acquireTimeout: 600_000, refreshInterval: 0 })
      return { acquire: () => mutex.acquire(), release: () => mutex.release() }
    },
  },
  {
    // Not a lock: the server's own blocking hand-off, a token in a list, for reference (the floor
    // of a hand-off on this machine). Each waiter waits on a connection of its own.
    name: 'BLPOP / LPUSH (reference)',
    blocking: true,
    make: (client) => {
      let own
      return {
        acquire: async () => {
          own = client.duplicate()
          await own.blpop(`${KEY}:token`, 0)
        },
        release: async () => {
          await client.lpush(`${KEY}:token`, 'token')
          own?.disconnect()
        },
      }
    },
  },
  {
    name: 'redis-semaphore Mutex, retryInterval 10 ms',
    make: (client) => {
      const mutex = new RsemMutex(client, KEY, { lockTimeout: LEASE, acquireTimeout: 600_000, retryInterval: 10, refreshInterval: 0 })
      return { acquire: () => mutex.acquire(), release: () => mutex.release() }
    },
  },
  {
    name: 'redlock, retryDelay 10 ms (jitter 5)',
    make: (client) => {
      const redlock = new Redlock([client], { retryCount: -1, retryDelay: 10, retryJitter: 5 })
      let lock
      return {
        acquire: async () => {
          lock = await redlock.lock(KEY, LEASE)
        },
        release: () => lock.unlock(),
      }
    },
  },
]

async function waiting(admin) {
  return Number(/goblin_waiting:(\d+)/.exec(await admin.info('goblin'))[1])
}

async function blocked(admin) {
  return Number(/blocked_clients:(\d+)/.exec(await admin.info('clients'))[1])
}

async function commandsNow(admin) {
  const stats = await commandStats(admin)
  return Object.entries(stats).reduce((sum, [name, { calls }]) => (name === 'info' ? sum : sum + calls), 0)
}

/** One round of `n` waiters: their latencies, the order they were served in, and (if asked) their commands a second while the lock is held. */
async function round(server, lock, n, count, { driverClient, waiterClient }) {
  const driver = lock.make(driverClient)
  if (lock.blocking) {
    await driverClient.del(`${KEY}:token`) // the list starts empty: the token is held
  } else {
    await driver.acquire()
  }
  const latencies = []
  const served = []
  let releasedAt = 0
  const done = []
  const parked = lock.goblin ? waiting : lock.blocking ? blocked : undefined
  const base = parked ? await parked(server.admin) : 0
  for (let i = 0; i < n; i++) {
    const waiter = lock.make(waiterClient)
    done.push(
      waiter.acquire().then(async () => {
        latencies.push(performance.now() - releasedAt)
        served.push(i)
        await sleep(HOLD_MS)
        releasedAt = performance.now()
        await waiter.release()
      }),
    )
    if (parked) {
      while ((await parked(server.admin)) < base + i + 1) {
        await sleep(1)
      }
    } else {
      await sleep(2)
    }
  }
  await sleep(parked ? 5 : 50)
  let perSecond
  if (count) {
    const before = await commandsNow(server.admin)
    await sleep(COUNT_WINDOW_MS)
    perSecond = ((await commandsNow(server.admin)) - before) / (COUNT_WINDOW_MS / 1000)
  }
  releasedAt = performance.now()
  await driver.release()
  await Promise.all(done)
  return { latencies, inOrder: served.every((waiter, i) => waiter === i), perSecond }
}

const rows = []
const server = await startServer(options.servers[0].binary, options.module)
try {
  for (const n of CLIENTS) {
    for (const lock of LOCKS) {
      const rounds = Math.max(2, Math.ceil(SAMPLES / n))
      const latencies = []
      let inOrder = true
      let perSecond
      // The application's clients, for every round of the case: the driver's and the waiters'.
      const clients = { driverClient: new Redis({ port: server.port }), waiterClient: new Redis({ port: server.port }) }
      for (let r = 0; r < rounds; r++) {
        const result = await round(server, lock, n, r === 0, clients)
        latencies.push(...result.latencies)
        inOrder &&= result.inOrder
        perSecond ??= result.perSecond
      }
      closeWaiters(clients.waiterClient)
      clients.driverClient.disconnect()
      clients.waiterClient.disconnect()
      latencies.sort((a, b) => a - b)
      rows.push({ n, lock: lock.name, samples: latencies.length, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), perSecond, inOrder })
      console.error(`locks: ${n} waiting, ${lock.name}: p50 ${quantile(latencies, 0.5).toFixed(2)} ms, p99 ${quantile(latencies, 0.99).toFixed(2)} ms, ${perSecond.toFixed(1)} commands/s`)
    }
  }
} finally {
  await server.stop()
}

const goblinOf = (n) => rows.find((row) => row.n === n && row.lock === LOCKS[0].name)
const lines = [
  '## Locks: hand-off latency (Node)',
  '',
  `\`make bench\` (bench/node/locks.mjs), ${new Date().toISOString().slice(0, 10)}, ${os.arch()} with ${os.cpus().length} cores; ${options.servers[0].label} (${server.version}) on loopback; Node ${process.version}, ioredis 5.11.1, redis-semaphore 5.7.0, redlock 4.2.0. Generated: do not edit.`,
  '',
  "The hand-off latency is the time from a holder's release (just before it sends it) to the next waiter holding the lock (when its acquire resolves), in one Node process. Each round, N waiters wait while the lock is held; it is released, and each waiter that gets it holds it 1 ms, releases it and drops out (so a round gives N samples). Goblin's Mutex waits in line in the server (GOBLIN.BLOCK on a connection of its own, granted in the release's own step); redis-semaphore's Mutex sends SET NX PX every `retryInterval` and redlock its lock script every `retryDelay` (plus or minus its jitter), on the application's one client. BLPOP / LPUSH, a token handed through a list, is the server's own blocking hand-off: not a lock, the floor of a hand-off on this machine. \"In arrival order\" is whether every round served its waiters in the order they started waiting.",
  '',
  "| waiters | lock | samples | p50, ms | p99, ms | p50 / Goblin's | p99 / Goblin's | waiters' commands/s while held | in arrival order |",
  '|---:|---|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map((row) => {
    const goblin = goblinOf(row.n)
    return `| ${row.n} | ${row.lock} | ${row.samples} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${(row.p50 / goblin.p50).toFixed(1)} | ${(row.p99 / goblin.p99).toFixed(1)} | ${row.perSecond.toFixed(1)} | ${row.inOrder ? 'yes' : 'no'} |`
  }),
  '',
  `The commands per second are counted over ${COUNT_WINDOW_MS / 1000} s of the first round of each case, while the driver holds the lock and every waiter waits (all the commands the server ran, from \`INFO commandstats\`, less the driver's INFO). A Goblin waiter sends one GOBLIN.LOCK, then one GOBLIN.BLOCK, and then nothing until it is served (or until its slice ends, 60 s on a client without a reply timeout).`,
  '',
]
if (options.out) {
  writeFileSync(options.out, lines.join('\n'))
} else {
  process.stdout.write(lines.join('\n'))
}
