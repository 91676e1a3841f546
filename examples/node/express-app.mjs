// An Express app on Goblin: express-rate-limit with goblin-redis's store (every request one
// GOBLIN.FWINDOW, no script), express-slow-down on the same store, and a report that only one
// request at a time may build, under a Mutex that waits in line inside the server.
//
//   REDIS_URL=redis://127.0.0.1:6379 PORT=3000 node examples/node/express-app.mjs
import express from 'express'
import { rateLimit } from 'express-rate-limit'
import { slowDown } from 'express-slow-down'
import Redis from 'ioredis'
import { Mutex } from 'goblin-redis'
import { GoblinStore } from 'goblin-redis/express'

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const app = express()

// The API: 5 requests a minute per client address, with the IETF RateLimit headers.
app.use('/api', rateLimit({ windowMs: 60_000, limit: 5, standardHeaders: 'draft-8', legacyHeaders: false, store: new GoblinStore({ client: redis, prefix: 'rl:api:' }) }))
app.get('/api/hello', (_req, res) => {
  res.send('hello\n')
})

// Log-ins slow down after 2 a minute: 250 ms more for each one past that.
app.post('/login', slowDown({ windowMs: 60_000, delayAfter: 2, delayMs: (used) => (used - 2) * 250, store: new GoblinStore({ client: redis, prefix: 'rl:login:' }) }), (_req, res) => {
  res.send('welcome\n')
})

// One report at a time: the others wait in line (first come, first served), up to 5 s.
app.get('/report', async (_req, res) => {
  const mutex = new Mutex(redis, 'report', { lockTimeout: 10_000, acquireTimeout: 5_000 })
  await mutex.acquire()
  try {
    res.send(`report built by ${mutex.identifier}\n`)
  } finally {
    await mutex.release()
  }
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
