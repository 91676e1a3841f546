// A Fastify app on Goblin: @fastify/rate-limit's own Redis store, whose scripts goblin-redis
// replaces with GOBLIN.FWINDOW and GOBLIN.FWSTATS (one command per request), a route with its
// own limit that keeps refusing a client who keeps exceeding it, and a route that backs off
// exponentially.
//
//   REDIS_URL=redis://127.0.0.1:6379 PORT=3000 node examples/node/fastify-app.mjs
import Fastify from 'fastify'
import rateLimit from '@fastify/rate-limit'
import Redis from 'ioredis'
import { fastifyRateLimit } from 'goblin-redis/fastify'

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
fastifyRateLimit(redis) // the plugin's RedisStore finds Goblin's rateLimit and rateLimitRead on it

const fastify = Fastify()
await fastify.register(rateLimit, { redis, max: 5, timeWindow: '1 minute' })

fastify.get('/', async () => 'hello\n')

// 3 a second; a client that keeps going over stays refused (the window starts again each time).
fastify.get('/search', { config: { rateLimit: { max: 3, timeWindow: 1000, continueExceeding: true } } }, async () => 'results\n')

// 2 a second, then 1 s, 2 s, 4 s ... of refusal for each request past them.
fastify.get('/login', { config: { rateLimit: { max: 2, timeWindow: 1000, exponentialBackoff: true } } }, async () => 'welcome\n')

const url = await fastify.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`listening on ${url}`)
