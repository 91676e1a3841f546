// A process of waiters, for reliability.test.mjs: GOBLIN_WAITERS locks (a Mutex, or a Semaphore
// of one permit: GOBLIN_SHAPE) on GOBLIN_KEY at GOBLIN_TEST_SERVER, all acquiring at once on one
// client. It tells its parent (IPC) its identifiers, then each grant as it comes; a holder checks
// that the server agrees it holds the lock, holds it GOBLIN_HOLD_MS, and releases it.
import Redis from 'ioredis'
import { Mutex, Semaphore } from 'goblin-redis'
import { address, sleep } from '../helpers.mjs'

const { host, port } = address('GOBLIN_TEST_SERVER')
const key = process.env.GOBLIN_KEY
const count = Number(process.env.GOBLIN_WAITERS)
const hold = Number(process.env.GOBLIN_HOLD_MS)
const options = {
  lockTimeout: Number(process.env.GOBLIN_LEASE_MS),
  acquireTimeout: 120_000,
  refreshInterval: Number(process.env.GOBLIN_REFRESH_MS ?? 0),
}
const client = new Redis({ host, port })
const semaphore = process.env.GOBLIN_SHAPE === 'semaphore'
const locks = Array.from({ length: count }, () => (semaphore ? new Semaphore(client, key, 1, options) : new Mutex(client, key, options)))

async function holds(lock) {
  if (semaphore) {
    return (await client.zscore(`semaphore:${key}`, lock.identifier)) !== null
  }
  return (await client.get(`mutex:${key}`)) === lock.identifier
}

process.send({ type: 'ready', ids: locks.map((lock) => lock.identifier) })
await Promise.all(
  locks.map(async (lock) => {
    await lock.acquire()
    process.send({ type: 'granted', id: lock.identifier, held: await holds(lock) })
    await sleep(hold)
    await lock.release()
  }),
)
await client.quit()
process.disconnect()
