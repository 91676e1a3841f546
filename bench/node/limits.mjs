// make bench's Node rate-limit part: for each library, its own Redis store against goblin-redis's,
// on the same server, in one run: rate-limiter-flexible (RateLimiterRedis and RateLimiterGoblin),
// @fastify/rate-limit (its RedisStore with its scripts, and with goblin-redis's rateLimit on the
// client), express-rate-limit (rate-limit-redis and GoblinStore), NestJS's throttler
// (@nest-lab/throttler-storage-redis and GoblinThrottlerStorage), each on ioredis 5.
//
// For each store: DECISIONS decisions (rate-limiter-flexible's consume, the plugin's incr, the
// store's increment) over 1,000 keys, CONCURRENCY in flight at once from this one process, as
// each library issues them (each its own command on the shared client, pipelined on its socket),
// after a warm-up. Measured: the server's CPU per decision, from INFO commandstats' usec of every
// command the decisions ran (the scripts' EVAL/EVALSHA with all they call, or the Goblin
// command), and from used_cpu_user + used_cpu_sys (the whole process, its event loop included);
// and decisions per second. Figures side by side: nothing passes or fails on them.
//
//   node bench/node/limits.mjs --module PATH --server "Label=PATH" ... [--quick] [--out FILE]
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import Redis from 'ioredis'
import rateLimiterFlexible from 'rate-limiter-flexible'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import { RedisStore as RateLimitRedis } from 'rate-limit-redis'
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis'
import { RateLimiterGoblin } from 'goblin-redis/rate-limiter-flexible'
import { fastifyRateLimit } from 'goblin-redis/fastify'
import { GoblinStore } from 'goblin-redis/express'
import { GoblinThrottlerStorage } from 'goblin-redis/nest'
import { commandStats, parseArguments, serverCpu, startServer } from './server.mjs'

const { RateLimiterRedis } = rateLimiterFlexible
const options = parseArguments(process.argv.slice(2))
const DECISIONS = options.quick ? 500 : 100_000
const WARM_UP = options.quick ? 100 : 2_000
const CONCURRENCY = 64
const KEYS = 1000
const BIG = 1e9 // a limit no run reaches: every decision is an allowed one

/** Each library's two stores, as `make(client)` → a decision on a key. */
const LIBRARIES = [
  {
    library: 'rate-limiter-flexible 11.1.0',
    stores: [
      ['RateLimiterRedis (a Lua script)', (client) => { const l = new RateLimiterRedis({ storeClient: client, points: BIG, duration: 60 }); return (key) => l.consume(key) }],
      ['RateLimiterGoblin (GOBLIN.FWINDOW)', (client) => { const l = new RateLimiterGoblin({ storeClient: client, points: BIG, duration: 60 }); return (key) => l.consume(key) }],
    ],
  },
  {
    library: '@fastify/rate-limit 11.2.0',
    stores: [
      ['RedisStore (its Lua script)', (client) => fastifyDecision(new RedisStore(false, false, client))],
      ['RedisStore on goblin-redis (GOBLIN.FWINDOW)', (client) => { fastifyRateLimit(client); return fastifyDecision(new RedisStore(false, false, client)) }],
    ],
  },
  {
    library: 'express-rate-limit 8.7.5',
    stores: [
      ['rate-limit-redis 6.0.1 (a Lua script)', (client) => expressDecision(new RateLimitRedis({ sendCommand: (...args) => client.call(...args), prefix: 'erl:' }))],
      ['GoblinStore (GOBLIN.FWINDOW)', (client) => expressDecision(new GoblinStore({ client, prefix: 'erl:' }))],
    ],
  },
  {
    library: '@nestjs/throttler 6.7.1',
    stores: [
      ['@nest-lab/throttler-storage-redis 1.2.0 (a Lua script)', (client) => { const s = new ThrottlerStorageRedisService(client); return (key) => s.increment(key, 60_000, BIG, 60_000, 'default') }],
      ['GoblinThrottlerStorage (GOBLIN.FWINDOW)', (client) => { const s = new GoblinThrottlerStorage(client); return (key) => s.increment(key, 60_000, BIG, 60_000, 'default') }],
    ],
  },
]

function fastifyDecision(store) {
  return (key) => new Promise((resolve, reject) => store.incr(key, (error, result) => (error ? reject(error) : resolve(result)), 60_000, BIG))
}

function expressDecision(store) {
  store.init({ windowMs: 60_000 })
  return (key) => store.increment(key)
}

/** `count` decisions, `CONCURRENCY` in flight; the seconds they took. */
async function decide(decision, count, offset) {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++
        await decision(`k${(offset + i) % KEYS}`)
      }
    }),
  )
  return (performance.now() - started) / 1000
}

function usecOf(before, after) {
  let usec = 0
  for (const [name, { usec: total }] of Object.entries(after)) {
    if (name !== 'info') {
      usec += total - (before[name]?.usec ?? 0)
    }
  }
  return usec
}

const results = []
for (const { label, binary } of options.servers) {
  const server = await startServer(binary, options.module)
  try {
    for (const { library, stores } of LIBRARIES) {
      for (const [store, make] of stores) {
        const client = new Redis({ port: server.port })
        const decision = make(client)
        await decide(decision, WARM_UP, 0)
        const stats = await commandStats(server.admin)
        const cpu = await serverCpu(server.admin)
        const seconds = await decide(decision, DECISIONS, WARM_UP)
        const usec = usecOf(stats, await commandStats(server.admin))
        const cpuUsec = ((await serverCpu(server.admin)) - cpu) * 1e6
        results.push({ label, version: server.version, library, store, perDecision: usec / DECISIONS, cpuPerDecision: cpuUsec / DECISIONS, perSecond: DECISIONS / seconds })
        console.error(`limits: ${label}, ${store}: ${(usec / DECISIONS).toFixed(2)} us/decision (commandstats), ${(cpuUsec / DECISIONS).toFixed(2)} (used_cpu), ${Math.round(DECISIONS / seconds)} decisions/s`)
        await server.admin.flushall()
        client.disconnect()
      }
    }
  } finally {
    await server.stop()
  }
}

const geometric = (values) => Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length)
const pairs = []
for (let i = 0; i < results.length; i += 2) {
  pairs.push([results[i], results[i + 1]])
}
const lines = [
  '## Rate limiters: server CPU and throughput (Node)',
  '',
  `\`make bench\` (bench/node/limits.mjs), ${new Date().toISOString().slice(0, 10)}, ${os.arch()} with ${os.cpus().length} cores; ${[...new Set(results.map((r) => `${r.label} (${r.version})`))].join(', ')} on loopback; Node ${process.version}, ioredis 5.11.1. Generated: do not edit.`,
  '',
  `Each store made ${DECISIONS.toLocaleString('en')} decisions (after ${WARM_UP.toLocaleString('en')} to warm up) over ${KEYS.toLocaleString('en')} keys, ${CONCURRENCY} in flight at once from one Node process, each the library's own call (rate-limiter-flexible's \`consume\`, the plugin store's \`incr\`, the store's \`increment\`), every one allowed. "CPU per decision" is the server's: from INFO commandstats (the usec of every command the decisions ran: a script's EVAL or EVALSHA with what it calls, or the Goblin command) and from used_cpu_user + used_cpu_sys (the whole server process, its event loop and network included). The ratios are Goblin's store over the library's own.`,
  '',
  '| server | library | store | CPU per decision, us (commandstats) | CPU per decision, us (used_cpu) | decisions/s | CPU ratio (commandstats) | CPU ratio (used_cpu) | speed ratio |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|',
]
for (const [theirs, ours] of pairs) {
  for (const row of [theirs, ours]) {
    const isOurs = row === ours
    lines.push(
      `| ${row.label} | ${row.library} | ${row.store} | ${row.perDecision.toFixed(2)} | ${row.cpuPerDecision.toFixed(2)} | ${Math.round(row.perSecond).toLocaleString('en')} | ${isOurs ? (ours.perDecision / theirs.perDecision).toFixed(2) : ''} | ${isOurs ? (ours.cpuPerDecision / theirs.cpuPerDecision).toFixed(2) : ''} | ${isOurs ? (ours.perSecond / theirs.perSecond).toFixed(2) : ''} |`,
    )
  }
}
lines.push(
  '',
  `Geometric means over the ${pairs.length} pairs: CPU per decision ${geometric(pairs.map(([t, o]) => o.perDecision / t.perDecision)).toFixed(2)}x (commandstats), ${geometric(pairs.map(([t, o]) => o.cpuPerDecision / t.cpuPerDecision)).toFixed(2)}x (used_cpu); decisions per second ${geometric(pairs.map(([t, o]) => o.perSecond / t.perSecond)).toFixed(2)}x.`,
  '',
)
if (options.out) {
  writeFileSync(options.out, lines.join('\n'))
} else {
  process.stdout.write(lines.join('\n'))
}
