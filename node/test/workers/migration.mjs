// Clients of a Valkey cluster whose slots move under them (CLUSTER MIGRATESLOTS), for
// tests/slot_migration.rs, as python/tests/migration_clients.py is on redis-py: every writing
// Goblin command through ioredis's Cluster, in a loop, each reply checked against what the calls
// before it make the next one (a counter one more, a window one fuller, a throttle one token
// lower, a fencing token larger); and goblin-redis's Mutex and Semaphore, a holder and a waiter
// on each, parked across the migrations.
//
// It prints `ready` once the holders hold and the waiters have sent their waits, runs until the
// file GOBLIN_STOP exists, then checks the holders (still held, their expiry unmoved, refused to
// a contender), releases them, checks that each waiter is granted then and not before, with a
// larger fencing token, and prints what it found, a line each: `rounds N`, `model KEY COUNT` for
// each key it counted, `failure TEXT` for each check that failed, and `done`.
//
// Environment: GOBLIN_TEST_CLUSTER (host:port,...), GOBLIN_TAG (the hash tag of every key),
// GOBLIN_STOP.
import { existsSync } from 'node:fs'
import { Cluster } from 'ioredis'
import { Mutex, Semaphore, call, closeWaiters, commands } from 'goblin-redis'
import { addresses } from '../helpers.mjs'

const tag = process.env.GOBLIN_TAG
const stopFile = process.env.GOBLIN_STOP
const failures = []

const key = (name) => `{${tag}}:${name}`
const fail = (what) => failures.push(what)

const send = (cluster, command) => call(cluster, command)
const raw = (cluster, ...args) => cluster.call(...args)

/** One round of every writing command, each reply checked against the rounds before. */
class Loop {
  constructor(cluster) {
    this.cluster = cluster
    this.rounds = 0
    this.incr = 0
    this.standin = 0
    this.fwindow = 0
    this.mfwindow = 0
    this.zwindow = 0
    this.swindow = 0
    this.gcra = undefined
    this.mgcra = undefined
    this.lockToken = 0
    this.bzwindowToken = 0
  }

  expect(what, got, wanted) {
    if (JSON.stringify(got) !== JSON.stringify(wanted)) {
      fail(`${what} in round ${this.rounds}: ${JSON.stringify(got)}, where ${JSON.stringify(wanted)} was due`)
    }
  }

  async round() {
    const c = this.cluster
    const i = this.rounds++
    const value = await send(c, commands.increx(key('incr'), 100000))
    this.expect('GOBLIN.INCREX', value, this.incr + 1)
    this.incr = value
    const [standin] = await raw(c, 'INCREX', key('standin'), 'BYINT', '1', 'EX', '100000')
    this.expect('INCREX', Number(standin), this.standin + 1)
    this.standin = Number(standin)
    const fixed = await send(c, commands.fwindow(key('fwindow'), 1e9))
    this.expect('GOBLIN.FWINDOW', fixed.count, this.fwindow + 1)
    this.fwindow = fixed.count
    const both = await send(
      c,
      commands.mfwindow([
        { key: key('mf:a'), windowMs: 1e9, limit: 1e9 },
        { key: key('mf:b'), windowMs: 1e9, limit: 1e9 },
      ]),
    )
    const counted = both.windows.map((window) => window.count)
    this.expect('GOBLIN.MFWINDOW', [both.refused, ...counted], [false, this.mfwindow + 1, this.mfwindow + 1])
    this.mfwindow = counted[0]
    this.expect('GOBLIN.ZWINDOW', await send(c, commands.zwindow(key('zwindow'), '*', 1e6, 1e9, `m${i}`)), true)
    this.zwindow += 1
    const sliding = await send(c, commands.swindow(key('swindow'), 1e6, 1e9))
    // A window of a million seconds: its counter only grows, unless the window turns over.
    if (!(sliding.admitted && (sliding.current === this.swindow + 1 || (sliding.current === 1 && sliding.previous === this.swindow)))) {
      fail(`GOBLIN.SWINDOW after ${this.swindow}: ${JSON.stringify(sliding)}`)
    }
    this.swindow = sliding.current
    // One token an emission interval of a thousand seconds: each allowed call takes one, and no
    // time the test takes gives one back.
    const throttle = await send(c, commands.gcra(key('gcra'), 1e6, 1, 1000))
    if (this.gcra !== undefined) {
      this.expect('GOBLIN.GCRA', throttle.remaining, this.gcra - 1)
    }
    this.gcra = throttle.remaining
    const policy = (name) => ({ key: key(name), maxBurst: 1e6, tokensPerPeriod: 1, period: 1000 })
    const policies = await send(c, commands.mgcra([policy('mg:a'), policy('mg:b')]))
    const remaining = policies.policies.map((one) => one.remaining)
    if (this.mgcra !== undefined) {
      this.expect('GOBLIN.MGCRA', [policies.limited, ...remaining], [false, this.mgcra - 1, this.mgcra - 1])
    }
    this.mgcra = remaining[0]
    const token = `t${i}`
    const fenced = await send(c, commands.fenced(commands.lock(key('lock'), token, 60000)))
    if (!(fenced > this.lockToken)) {
      fail(`GOBLIN.LOCK: token ${fenced} after ${this.lockToken}`)
    }
    this.lockToken = fenced
    this.expect('GOBLIN.EXTEND', await send(c, commands.fenced(commands.extend(key('lock'), token, 60000))), fenced)
    this.expect('GOBLIN.CAD', await send(c, commands.cad(key('lock'), token)), true)
    this.expect('GOBLIN.BLOCK', await send(c, commands.block(key('block'), token, 60000, 5000)), true)
    this.expect('GOBLIN.CAD', await send(c, commands.cad(key('block'), token)), true)
    const permit = await send(c, commands.fenced(commands.bzwindow(key('bzwindow'), 60, 1, token, 5000)))
    if (!(permit > this.bzwindowToken)) {
      fail(`GOBLIN.BZWINDOW: token ${permit} after ${this.bzwindowToken}`)
    }
    this.bzwindowToken = permit
    this.expect('GOBLIN.CAD', await send(c, commands.cad(key('bzwindow'), token)), true)
    await raw(c, 'SET', key('delex'), token)
    this.expect('DELEX', Number(await raw(c, 'DELEX', key('delex'), 'IFEQ', token)), 1)
  }

  /** What the keys hold after the last round, for the test to read on the owner. */
  model() {
    return {
      [key('incr')]: this.incr,
      [key('standin')]: this.standin,
      [key('fwindow')]: this.fwindow,
      [key('mf:a')]: this.mfwindow,
      [key('zwindow')]: this.zwindow,
    }
  }
}

/** A holder and a waiter on one lock or semaphore, parked across the migrations. */
class Parked {
  static async start(cluster, what, make, stored) {
    const parked = new Parked()
    Object.assign(parked, { cluster, what, stored, released: false, grantedBeforeRelease: false })
    parked.holder = make({ acquireAttemptsLimit: 1 })
    parked.waiter = make({ acquireTimeout: 120_000 })
    // One attempt, no wait (redis-semaphore's tryAcquire waits acquireTimeout otherwise).
    parked.contender = make({ acquireAttemptsLimit: 1 })
    if (!(await parked.holder.tryAcquire())) {
      fail(`${what}: the holder did not take it`)
    }
    parked.expiry = Number(await cluster.call('PEXPIRETIME', stored))
    parked.waiting = parked.waiter.acquire().then(
      () => {
        parked.grantedBeforeRelease = !parked.released
        return true
      },
      (error) => {
        fail(`${what}: the waiter's acquire failed: ${error}`)
        return false
      },
    )
    return parked
  }

  async finish() {
    const still = Number(await this.cluster.call('PEXPIRETIME', this.stored))
    if (still !== this.expiry) {
      fail(`${this.what}: its expiry moved from ${this.expiry} to ${still}`)
    }
    if (await this.contender.tryAcquire()) {
      fail(`${this.what}: a contender was granted it while held`)
    }
    const holderToken = this.holder.fencingToken
    this.released = true
    await this.holder.release()
    const granted = await this.waiting
    if (!granted) {
      fail(`${this.what}: the waiter was not granted after the release`)
    }
    if (this.grantedBeforeRelease) {
      fail(`${this.what}: the waiter was granted while the holder held it`)
    }
    const waiterToken = this.waiter.fencingToken
    if (!(waiterToken > holderToken)) {
      fail(`${this.what}: the waiter's token ${waiterToken} is not above the holder's ${holderToken}`)
    }
    if (granted) {
      await this.waiter.release()
    }
  }
}

function report(loop) {
  if (loop !== undefined) {
    console.log(`rounds ${loop.rounds}`)
    for (const [name, count] of Object.entries(loop.model())) {
      console.log(`model ${name} ${count}`)
    }
  }
  for (const failure of failures) {
    console.log(`failure ${failure.split(/\s+/).join(' ')}`)
  }
  console.log('done')
}

const cluster = new Cluster(addresses('GOBLIN_TEST_CLUSTER'))
try {
  const options = { lockTimeout: 600_000, refreshInterval: 0 }
  const mutex = await Parked.start(cluster, 'Mutex', (more = {}) => new Mutex(cluster, key('mutex'), { ...options, ...more }), `mutex:${key('mutex')}`)
  const semaphore = await Parked.start(
    cluster,
    'Semaphore',
    (more = {}) => new Semaphore(cluster, key('sem'), 1, { ...options, ...more }),
    `semaphore:${key('sem')}`,
  )
  const loop = new Loop(cluster)
  await loop.round()
  console.log('ready')
  while (!existsSync(stopFile) && failures.length === 0) {
    await loop.round()
  }
  await mutex.finish()
  await semaphore.finish()
  report(loop)
} catch (error) {
  fail(`threw ${error?.stack ?? error}`)
  report(undefined)
  process.exitCode = 1
} finally {
  closeWaiters(cluster)
  cluster.disconnect()
}
