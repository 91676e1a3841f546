// goblin-redis's stores against the Lua-backed stores they replace, call for call, on one server
// (GOBLIN_TEST_SERVER), on every client library and protocol at once: the same seeded random
// sequence of every operation and option each library documents, each call sent to both in the
// same tick (differential.mjs). No undocumented difference may remain; each test prints its
// tally (calls, timing, documented differences), which tests/node_differential.rs reports.
import { strict as assert } from 'node:assert'
import { after, before, describe, it } from 'node:test'
import { checkModule } from 'goblin-redis'
import { address, admin, close, libraries } from './helpers.mjs'
import * as differential from './differential.mjs'
import * as overHttp from './differential-http.mjs'

const server = address('GOBLIN_TEST_SERVER')
const SEED = Number(process.env.GOBLIN_DIFF_SEED ?? 40)

describe(`the stores against the originals, seed ${SEED}`, () => {
  /** Per library: its client, an ioredis client for the originals that need one, and one for fastifyRateLimit. */
  const runs = []
  let raw
  before(async () => {
    raw = await admin(server)
    for (const library of libraries()) {
      const client = await library.connect(server)
      await checkModule(client) // the module check's round trip, not in the first call of a sequence
      const ioredis = library.kind === 'ioredis' ? client : raw
      // @nest-lab takes only a client of the ioredis it imports (5): another it reads as options.
      const nest = library.name.startsWith('ioredis 5') ? client : raw
      const defined = library.kind === 'ioredis' ? await library.connect(server) : undefined
      if (defined !== undefined) {
        await checkModule(defined) // as above: its first rateLimit not a round trip behind the others
      }
      runs.push({ library, client, ioredis, nest, observer: raw, defined, kind: library.kind, prefix: `diff:${process.pid}:${library.name.replace(/\W+/g, '')}` })
    }
  })
  after(async () => {
    await Promise.all(runs.flatMap((run) => [run.client, run.defined].filter(Boolean).map(close)))
    await close(raw)
  })

  /**
   * Runs `store` on every library at once; its tallies printed, and none with an undocumented
   * difference. The original's outcomes must have met each kind in `met` (both sides of a limit).
   */
  async function everyLibrary(name, store, met = []) {
    const tallies = await Promise.all(
      runs.map(async (run, i) => {
        const tally = await store({ ...run, seed: differential.seedOf(SEED, run.library.name) }, i)
        console.log(`# differential ${run.library.name}: ${tally.summary}`)
        return tally
      }),
    )
    const total = tallies.reduce((sum, tally) => sum.add(tally), new differential.Tally(name))
    console.log(`# differential total: ${total.summary}`)
    assert.deepEqual(total.undocumented, [], total.summary)
    assert.ok(total.calls > 0)
    for (const kind of met) {
      assert.ok(total.seen[kind] > 0, `never ${kind}: ${total.summary}`)
    }
  }

  it('RateLimiterGoblin decides as RateLimiterRedis', async () => {
    await everyLibrary('rate-limiter-flexible', differential.rateLimiterFlexible, ['resolved', 'rejected'])
  })

  it('RateLimiterGoblinUnion decides as RateLimiterUnion, but for all or nothing', async () => {
    await everyLibrary('RateLimiterGoblinUnion', differential.rateLimiterUnion, ['resolved', 'rejected'])
  })

  it('GoblinStore decides as rate-limit-redis', async () => {
    await everyLibrary('express-rate-limit', differential.expressRateLimit)
  })

  it('GoblinThrottlerStorage decides as @nest-lab/throttler-storage-redis', async () => {
    await everyLibrary('@nest-lab/throttler-storage-redis', differential.nestStorage, ['allowed', 'blocked'])
  })

  it("goblinStore and fastifyRateLimit decide as @fastify/rate-limit's RedisStore", async () => {
    await everyLibrary('@fastify/rate-limit', differential.fastifyStore, ['within', 'over'])
  })

  it('over HTTP: express-rate-limit, express-slow-down and hono-rate-limiter on GoblinStore answer as on rate-limit-redis', async () => {
    await everyLibrary('express-rate-limit over HTTP', overHttp.expressHttp, ['200', '429'])
  })

  it("over HTTP: NestJS's guards on GoblinThrottlerStorage answer as on @nest-lab/throttler-storage-redis, on both adapters", async () => {
    // Each library on one adapter, with the plain guard or GoblinThrottlerGuard, in turn: every
    // pairing of adapter and guard is met.
    await everyLibrary('NestJS over HTTP', (run, i) => overHttp.nestHttp({ ...run, adapter: i % 2 === 0 ? 'Express' : 'Fastify', goblinGuard: i % 4 >= 2 }), ['200', '429'])
  })

  it('over HTTP: @fastify/rate-limit on goblinStore and fastifyRateLimit answers as on its RedisStore', async () => {
    await everyLibrary('@fastify/rate-limit over HTTP', overHttp.fastifyHttp, ['200', '429'])
  })
})
