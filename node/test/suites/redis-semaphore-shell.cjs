// A `--require` for redis-semaphore 5.7.0's `[Node shutdown]` tests (its test files unmodified),
// after redis-semaphore.cjs: its `test/shell.ts`, which stops and starts its three servers with
// docker compose and `yarn wait-for`, is replaced in the require cache by servers of this
// process's own, each with the module loaded, on the ports GOBLIN_RSEM_PORTS names (the tests'
// REDIS_URI1 to 3):
//
// - `downRedisServer(n)`: SIGTERM to server n's process, as `docker compose stop` sends it;
//   resolves once that process has exited (its own exit event, no polling of the port);
// - `upRedisServer(n)`: starts server n again on its port (nothing if it runs), with no data, as
//   a container comes back; resolves once that very process answers (`INFO`'s process_id).
//
// The servers are started before the tests (a root hook), and each is stopped by its pid when
// the process exits, pass or fail; each pid is also written to GOBLIN_RSEM_PIDS, so that the
// driver stops any that a killed run left behind. GOBLIN_RSEM_SERVER is the server binary,
// GOBLIN_MODULE the module, GOBLIN_RSEM_SCRATCH a directory for the servers' files.
'use strict'
const path = require('node:path')
const fs = require('node:fs')
const net = require('node:net')
const Module = require('node:module')
const { spawn } = require('node:child_process')
const { once } = require('node:events')

const binary = required('GOBLIN_RSEM_SERVER')
const modulePath = required('GOBLIN_MODULE')
const scratch = required('GOBLIN_RSEM_SCRATCH')
const pidFile = required('GOBLIN_RSEM_PIDS')
const ports = required('GOBLIN_RSEM_PORTS').split(',').map(Number)
ports.forEach((port, i) => {
  process.env[`REDIS_URI${i + 1}`] = `redis://127.0.0.1:${port}`
})

function required(name) {
  const value = process.env[name]
  if (!value) {
    throw new Error(`${name} must be set (tests/node_suites.rs sets it)`)
  }
  return value
}

/** The running server of each number (1 to 3): its child process, or undefined while it is down. */
const running = new Map()

function log(text) {
  console.log(`[goblin shell] ${text}`)
}

/** One command on a fresh connection: its bulk reply's text, or undefined if the server did not answer. */
function ask(port, ...args) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((arg) => `$${arg.length}\r\n${arg}\r\n`).join('')}`))
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1')
      if (/^\$(\d+)\r\n/.test(text) && text.length >= Number(/^\$(\d+)/.exec(text)[1]) + 7) {
        socket.destroy()
        resolve(text)
      }
    })
    socket.on('error', () => resolve(undefined))
    socket.on('close', () => resolve(text || undefined))
  })
}

async function upRedisServer(num) {
  if (running.has(num)) {
    return
  }
  const port = ports[num - 1]
  const dir = path.join(scratch, `server${num}`)
  fs.mkdirSync(dir, { recursive: true })
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', 'server.log', '--loadmodule', modulePath],
    { stdio: 'ignore' },
  )
  running.set(num, child)
  fs.appendFileSync(pidFile, `${child.pid}\n`)
  const exited = once(child, 'exit')
  // Ready once this very process answers, having loaded its (empty) data.
  for (;;) {
    const text = await Promise.race([ask(port, 'INFO'), exited.then(() => 'exited')])
    if (text === 'exited') {
      running.delete(num)
      throw new Error(`server ${num} exited while starting (see ${dir}/server.log)`)
    }
    if (text !== undefined && text.includes(`process_id:${child.pid}\r\n`) && text.includes('loading:0\r\n')) {
      break
    }
    await sleep(20)
  }
  log(`server ${num} (pid ${child.pid}) up on ${port}`)
  child.unref() // a running server does not keep the tests' process alive (it is killed at exit)
  if (!starting) {
    // As `yarn wait-for` and a container's start take a while, the tests' own client (named
    // client<n>) has reconnected by the time they go on: wait for that, seen by the server.
    while (!(await ask(port, 'CLIENT', 'LIST'))?.includes(`name=client${num} `)) {
      await sleep(20)
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
/** Whether the servers are being started before the tests (no client of theirs yet). */
let starting = false

async function downRedisServer(num) {
  const child = running.get(num)
  if (child === undefined) {
    return
  }
  const exited = child.exitCode === null && child.signalCode === null ? once(child, 'exit') : Promise.resolve()
  child.ref()
  process.kill(child.pid, 'SIGTERM')
  await exited
  running.delete(num)
  log(`server ${num} (pid ${child.pid}) stopped`)
}

process.on('exit', () => {
  for (const child of running.values()) {
    try {
      process.kill(child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

const shell = path.join(process.env.GOBLIN_RSEM_DIR ?? process.cwd(), 'test', 'shell.ts')
const stand = new Module(shell)
stand.filename = shell
stand.loaded = true
stand.exports = { __esModule: true, upRedisServer, downRedisServer }
require.cache[shell] = stand

exports.mochaHooks = {
  async beforeAll() {
    starting = true
    await Promise.all(ports.map((_, i) => upRedisServer(i + 1)))
    starting = false
  },
}
