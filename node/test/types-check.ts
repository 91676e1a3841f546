// make lint's check (tsc, never run) that the application's clients type as the package's
// RedisClient: ioredis 5 and 6 (Redis, Cluster), node-redis 4, 5 and 6 (client, cluster).
import Redis5, { Cluster as Cluster5 } from 'ioredis'
import Redis6, { Cluster as Cluster6 } from 'ioredis6'
import * as redis4 from 'redis4'
import * as redis5 from 'redis5'
import * as redis6 from 'redis6'
import { Mutex, RedlockMutex, type RedisClient } from '../src/index.js'
import { RateLimiterGoblin } from '../src/rate-limiter-flexible.js'
import { GoblinStore } from '../src/express.js'
import { GoblinThrottlerStorage } from '../src/nest.js'

export const clients: RedisClient[] = [
  new Redis5(),
  new Cluster5([]),
  new Redis6(),
  new Cluster6([]),
  redis4.createClient(),
  redis4.createCluster({ rootNodes: [] }),
  redis5.createClient(),
  redis5.createCluster({ rootNodes: [] }),
  redis6.createClient(),
  redis6.createCluster({ rootNodes: [] }),
]

export const uses = [
  new Mutex(new Redis5(), 'key', { lockTimeout: 1000 }),
  new RateLimiterGoblin({ storeClient: redis5.createClient(), points: 1, duration: 1 }),
  new GoblinStore({ client: new Cluster6([]) }),
  new GoblinThrottlerStorage(redis6.createCluster({ rootNodes: [] })),
  // The Redlock classes wait on one connection per server, in the order of their clients.
  new RedlockMutex([new Redis5(), redis5.createClient()], 'key', { waitOn: [new Redis6(), redis6.createClient()] }),
]

// @ts-expect-error -- one connection cannot wait on every server of a Redlock lock
export const oneWaitOn = new RedlockMutex([new Redis5(), new Redis5()], 'key', { waitOn: new Redis5() })
