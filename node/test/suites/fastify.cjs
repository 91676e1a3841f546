// A `--require` for @fastify/rate-limit 11.2.0's own test/redis-rate-limit.test.js (the npm
// tarball's file, unmodified): Goblin's rateLimit and rateLimitRead on ioredis's Redis.prototype,
// so that the plugin's RedisStore finds them on every client the tests make and defines no
// script; and the tests' clients, which name 127.0.0.1 and ioredis's default port, reach the
// test server (default-port.cjs).
'use strict'
require('./default-port.cjs')
const path = require('node:path')
const { fastifyRateLimit } = require('goblin-redis/fastify')

// The ioredis the test file resolves: the one beside the plugin.
const plugin = path.dirname(require.resolve('@fastify/rate-limit/package.json'))
const Redis = require(require.resolve('ioredis', { paths: [plugin] }))
fastifyRateLimit(Redis.prototype)
