// A `--require` for redis-semaphore 5.7.0's own test suite (its test files unmodified): the
// modules its tests import from `../../src/` (the classes and the errors) are goblin-redis's,
// put in the require cache under the paths those imports resolve to. Its other modules (the
// `delay` of src/utils) stay its own. GOBLIN_RSEM_DIR is the suite's checkout.
'use strict'
const path = require('node:path')
const Module = require('node:module')
const goblin = require('goblin-redis')

const src = path.join(process.env.GOBLIN_RSEM_DIR ?? process.cwd(), 'src')
const ours = {
  'RedisMutex.ts': goblin.Mutex,
  'RedisSemaphore.ts': goblin.Semaphore,
  'RedisMultiSemaphore.ts': goblin.MultiSemaphore,
  'RedlockMutex.ts': goblin.RedlockMutex,
  'RedlockSemaphore.ts': goblin.RedlockSemaphore,
  'RedlockMultiSemaphore.ts': goblin.RedlockMultiSemaphore,
  'errors/LostLockError.ts': goblin.LostLockError,
  'errors/TimeoutError.ts': goblin.TimeoutError,
}
for (const [file, exported] of Object.entries(ours)) {
  const filename = path.join(src, file)
  const module = new Module(filename)
  module.filename = filename
  module.loaded = true
  module.exports = { __esModule: true, default: exported }
  require.cache[filename] = module
}
