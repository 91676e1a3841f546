// goblin-redis's stores against the Lua-backed originals on a three-node cluster
// (GOBLIN_TEST_CLUSTER), with the cluster client of every library and protocol: the sequences of
// differential.mjs, shorter, for rate-limiter-flexible (RateLimiterRedis and RateLimiterUnion),
// express-rate-limit, NestJS and @fastify/rate-limit, each key on the node its slot names (a
// union's keys share one by their hash tag). No undocumented difference may remain.
import { strict as assert } from 'node:assert'
import { after, before, describe, it } from 'node:test'
import { LIBRARIES, addresses, close, freshKey, libraries } from './helpers.mjs'
import * as differential from './differential.mjs'

const nodes = addresses('GOBLIN_TEST_CLUSTER')

describe('the stores against the originals on a cluster', () => {
  /** An ioredis 5 cluster client, for the originals that take only ioredis (and for reading TTLs). */
  let ioredis
  before(async () => {
    ioredis = await LIBRARIES[0].cluster(nodes)
  })
  after(() => close(ioredis))

  it("decide as the originals, call for call, with every library's cluster client at once", async () => {
    const tallies = await Promise.all(
      libraries().map(async (library) => {
        const cluster = await library.cluster(nodes)
        try {
          const prefix = freshKey('cdiff')
          const seed = differential.seedOf(Number(process.env.GOBLIN_DIFF_SEED ?? 40), 'cluster', library.name)
          const own = library.kind === 'ioredis' ? cluster : ioredis
          const nest = library.name.startsWith('ioredis 5') ? cluster : ioredis
          // node-redis 4's cluster client now and then sends RateLimiterRedis's script to a node
          // that does not own its key (MOVED), and the original loses that count (to its
          // insurance limiter, if it has one): there the originals run on ioredis's cluster client.
          const original = library.name.startsWith('node-redis 4') ? { client: ioredis, useRedisPackage: false } : undefined
          const run = { client: cluster, kind: library.kind, cluster: true, ioredis: own, nest, observer: ioredis, seed, prefix, sequences: 3, steps: 16, original }
          const tallies = await Promise.all([
            differential.rateLimiterFlexible(run),
            differential.rateLimiterUnion(run),
            differential.expressRateLimit(run),
            differential.nestStorage(run),
            differential.fastifyStore(run),
          ])
          for (const tally of tallies) {
            console.log(`# differential cluster ${library.name}: ${tally.summary}`)
          }
          return tallies
        } finally {
          await close(cluster)
        }
      }),
    )
    for (const [n, store] of ['rate-limiter-flexible', 'RateLimiterGoblinUnion', 'express-rate-limit', '@nest-lab/throttler-storage-redis', '@fastify/rate-limit'].entries()) {
      const total = tallies.reduce((sum, one) => sum.add(one[n]), new differential.Tally(store))
      console.log(`# differential cluster total: ${total.summary}`)
      assert.deepEqual(total.undocumented, [], total.summary)
    }
  })
})
