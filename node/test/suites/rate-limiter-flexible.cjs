// A `--require` for rate-limiter-flexible's own RateLimiterRedis tests (v11.1.0, its newest tag; their files
// unmodified): `require('../lib/RateLimiterRedis')` gives goblin-redis's RateLimiterGoblin, built
// on the suite's own rate-limiter-flexible (so its RateLimiterRes, RateLimiterMemory and
// insurance checks are the ones the tests compare with), and the tests' clients, which name
// 127.0.0.1:6379, reach the test server (default-port.cjs). GOBLIN_RLF_DIR is the checkout.
'use strict'
const path = require('node:path')
const Module = require('node:module')
require('./default-port.cjs')

const root = path.resolve(process.env.GOBLIN_RLF_DIR ?? process.cwd())
const index = require.resolve(path.join(root, 'index.js'))
require(index)
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  return request === 'rate-limiter-flexible' ? index : resolve.call(this, request, ...rest)
}
const { RateLimiterGoblin } = require('goblin-redis/rate-limiter-flexible')
require.cache[require.resolve(path.join(root, 'lib/RateLimiterRedis.js'))].exports = RateLimiterGoblin
