/**
 * goblin-redis: Goblin's native rate-limit and lock commands beneath Node's rate limiters and
 * locks, on the application's own ioredis or node-redis client.
 *
 * This entry point has the locks (redis-semaphore's `Mutex`, `Semaphore`, `MultiSemaphore` and
 * their Redlock twins, and a `ReadWriteLock`), rate-limiter-flexible's `RateLimiterGoblin` and `RateLimiterGoblinUnion`
 * (rate-limiter-flexible is a peer dependency, installed with the package by npm 7 and later),
 * the command vocabulary (`commands`, sent with `call`) and the package's errors. Each store also
 * has an import path of its own: `goblin-redis/rate-limiter-flexible`, `goblin-redis/fastify`,
 * `goblin-redis/express`, `goblin-redis/nest` (these last three load their frameworks only there).
 */
export { MODULE_VERSION, VERSION } from './version.js'
export { DeadlockError, GoblinModuleError, LostLockError, TimeoutError } from './errors.js'
export * as commands from './commands.js'
export type { Arg, Command } from './commands.js'
export { type IoredisClient, type NodeRedisClient, type RedisClient, call, checkModule } from './client.js'
export { closeWaiters } from './waiting.js'
export { type LockLostCallback, type LockOptions, type TimeoutOptions, Lock, defaultTimeoutOptions } from './lock.js'
export { Mutex, Semaphore, MultiSemaphore } from './mutex.js'
export { type ReadWriteSide, ReadWriteLock } from './rwlock.js'
export { type RateLimiterGoblinOptions, RateLimiterGoblin, RateLimiterGoblinUnion } from './rate-limiter-flexible.js'
export { type RedlockOptions, RedlockMutex, RedlockSemaphore, RedlockMultiSemaphore } from './redlock.js'
