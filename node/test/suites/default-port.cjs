// For third-party suites that hard-code a Redis on 127.0.0.1:6379 (ioredis's default port): a
// `--require` that sends every TCP connection to port 6379 of the loopback interface to
// GOBLIN_TEST_PORT instead, the test server's free port, and refuses any other host than
// loopback. Nothing ever connects to 6379 itself. The suite's files stay as they are.
'use strict'
const net = require('node:net')

const port = Number(process.env.GOBLIN_TEST_PORT)
if (!Number.isInteger(port) || port <= 0) {
  throw new Error('GOBLIN_TEST_PORT must name the test server\'s port')
}
const LOOPBACK = new Set([undefined, 'localhost', '127.0.0.1', '::1'])

function redirected(options) {
  if (!LOOPBACK.has(options.host)) {
    throw new Error(`a test connected to ${options.host}: only loopback is allowed`)
  }
  const wanted = options.port === undefined ? 6379 : Number(options.port)
  return wanted === 6379 ? { ...options, host: '127.0.0.1', port } : options
}

for (const name of ['createConnection', 'connect']) {
  const original = net[name]
  net[name] = function (...args) {
    if (typeof args[0] === 'object' && args[0] !== null && args[0].path === undefined) {
      args[0] = redirected(args[0])
    } else if (typeof args[0] === 'number' || typeof args[0] === 'string') {
      const options = redirected({ port: args[0], host: typeof args[1] === 'string' ? args[1] : undefined })
      args.splice(0, typeof args[1] === 'string' ? 2 : 1, options)
    }
    return original.apply(this, args)
  }
}
